"""``gpuport assess PATH``: the main job, one report on what breaks on ROCm and what it costs.

The scan, then the verdict and effort (and, given ``--model``, the GPU plan); the report in
the chosen format, the self-contained HTML report beside it, a one-line verdict on stderr.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from gpuport import __version__
from gpuport.assess import Assessment
from gpuport.assess import assess as make_assessment
from gpuport.assess.decision import decide
from gpuport.assess.decision_model import DecisionSettings, Economics
from gpuport.assess.economics import estimate_economics
from gpuport.assess.settings import DEPLOYMENTS, ROCM_EXPERIENCE, WORKLOADS, load_decision_settings
from gpuport.cli.common import (
    check_project_path,
    format_options,
    handle_errors,
    render_options,
    scan_options,
)
from gpuport.cli.scan import run_scan, scan_exit_code, settings_from_flags, write_baseline
from gpuport.cli.ui import emit, say
from gpuport.config import ConfigError
from gpuport.io import refuse_outputs, write_atomic
from gpuport.plan.inputs import plan_for_assess
from gpuport.report import Format, RenderOptions, render_chunks
from gpuport.report.summary import assessment_summary_line

F = TypeVar("F", bound=Callable[..., Any])
DECISION_PREFIX = "decision_"  # the flags' parameter names: decision_<key of DecisionSettings>


def decision_options(function: F) -> F:
    """The flags that mirror ``[tool.gpuport.decision]``; each wins over the file's key."""
    options = [
        click.option("--current-gpu", "decision_current_gpu", help="The NVIDIA GPU used today."),
        click.option(
            "--current-gpu-count", "decision_current_gpu_count", type=int, help="How many of them."
        ),
        click.option(
            "--gpu-hours-per-month",
            "decision_gpu_hours_per_month",
            type=float,
            help="GPU-hours used a month today.",
        ),
        click.option(
            "--tokens-per-month",
            "decision_tokens_per_month",
            type=float,
            help="Output tokens served a month.",
        ),
        click.option(
            "--engineer-usd-per-hour",
            "decision_engineer_usd_per_hour",
            type=float,
            help="What an engineer's hour costs (USD).",
        ),
        click.option(
            "--rocm-experience",
            "decision_rocm_experience",
            type=click.Choice(ROCM_EXPERIENCE),
            help="The team's ROCm experience.",
        ),
        click.option(
            "--regulated/--not-regulated",
            "decision_regulated",
            default=None,
            help="Must it be revalidated when the GPU vendor changes?",
        ),
        click.option(
            "--revalidation-hours",
            "decision_revalidation_hours",
            type=float,
            help="Hours of revalidation a vendor change costs.",
        ),
        click.option(
            "--latency-target-ms",
            "decision_latency_target_ms",
            type=float,
            help="Target time per output token (ms, p50).",
        ),
        click.option(
            "--deployment",
            "decision_deployment",
            type=click.Choice(DEPLOYMENTS),
            help="Where it runs.",
        ),
        click.option(
            "--workload",
            "decision_workload",
            type=click.Choice(WORKLOADS),
            help="What the GPUs do.",
        ),
        click.option(
            "--candidate-gpus",
            "decision_candidate_gpus",
            help="AMD GPUs to compare, comma-separated.",
        ),
        click.option(
            "--serving-batch",
            "decision_batch",
            type=int,
            help="Concurrent sequences per GPU in production.",
        ),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def _decision_flags(flags: dict[str, Any]) -> dict[str, object]:
    """The decision flags given, by DecisionSettings key (taken out of ``flags``)."""
    names = [name for name in flags if name.startswith(DECISION_PREFIX)]
    return {name.removeprefix(DECISION_PREFIX): flags.pop(name) for name in names}


def _economics(
    settings: DecisionSettings, assessment: Assessment, context: int, batch: int
) -> Economics | None:
    """The economics of the move at the declared volume, with the plan's model when given."""
    model = assessment.plan.model if assessment.plan is not None else None
    hours = assessment.total_hours
    effort = (hours / 2, hours * 2)  # the effort range of verdict.day_range
    return estimate_economics(
        settings, effort, model, context=context, batch=settings.batch or batch
    )


def _declared_model(path: Path, declared: str | None) -> str | None:
    """The model `[tool.gpuport.decision]` names: a config.json in the project, else a preset."""
    if declared is None:
        return None
    root = (path if path.is_dir() else path.parent).resolve()
    in_project = (root / declared).resolve()
    if not in_project.is_relative_to(root):  # never read outside the project
        raise ConfigError(f"[tool.gpuport.decision] model: {declared!r} is outside the project")
    return str(in_project) if in_project.is_file() else declared


@click.command("assess")
@scan_options
@format_options(Assessment)
@click.option(
    "--html",
    "html_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("gpuport-report.html"),
    show_default=True,
    help="Where to write the self-contained HTML report.",
)
@click.option("--no-html", is_flag=True, help="Do not write the HTML report.")
@click.option("--model", help="A model (preset name or config.json) to add fit and cost.")
@click.option("--gpus", help="GPUs to compare for --model, comma-separated.")
@click.option(
    "--context",
    type=click.IntRange(min=1),
    default=8192,
    show_default=True,
    help="Tokens per sequence for --model.",
)
@click.option(
    "--batch",
    type=click.IntRange(min=1),
    default=32,
    show_default=True,
    help="Concurrent sequences for --model.",
)
@click.option("--precision", help="Weight precision for --model (bf16, fp8, int4-g128, Q4_K_M…).")
@decision_options
@handle_errors
def assess(
    path: Path,
    fmt: str,
    output: Path | None,
    html_path: Path,
    no_html: bool,
    model: str | None,
    gpus: str | None,
    context: int,
    batch: int,
    precision: str | None,
    **flags: Any,
) -> None:
    """The main job: one report on PATH — what breaks on ROCm, what gpuport fixes, effort, verdict."""
    check_project_path(path)
    decision_flags = _decision_flags(flags)
    refuse_outputs(path, output, None if no_html else html_path, flags.get("write_baseline"))
    settings = settings_from_flags(path, flags)
    # read before the scan, so that a bad [tool.gpuport.decision] fails fast
    decision = load_decision_settings(path, decision_flags)
    result = run_scan(path, settings, flags["jobs"], flags["no_progress"])
    plan = None
    model = model or _declared_model(path, decision.model)
    if model:
        plan = plan_for_assess(model, gpus, context=context, batch=batch, precision=precision)
    assessment = make_assessment(result, plan=plan)
    economics = _economics(decision, assessment, context, batch)
    assessment.recommendation = decide(assessment, decision, economics, exclude=settings.exclude)
    chosen = Format(fmt)
    options = render_options(chosen, output, fit_terminal=True)
    emit(render_chunks(assessment, chosen, options), output)
    if not no_html and not (chosen is Format.HTML and output == html_path):
        html = render_chunks(assessment, Format.HTML, RenderOptions(tool_version=__version__))
        write_atomic(html_path, html)
        say(f"HTML report: {html_path}")
    if flags.get("write_baseline"):
        write_baseline(result, flags["write_baseline"])
    say(assessment_summary_line(assessment))
    sys.exit(scan_exit_code(result, settings))
