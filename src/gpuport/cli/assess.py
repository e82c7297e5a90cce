"""``gpuport assess PATH``: the main job, one report on what breaks on ROCm and what it costs.

The scan, then the verdict and effort (and, given ``--model``, the GPU plan); the report in
the chosen format, the self-contained HTML report beside it, a one-line verdict on stderr.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from gpuport import __version__
from gpuport.assess import Assessment
from gpuport.assess import assess as make_assessment
from gpuport.cli.common import (
    check_project_path,
    format_options,
    handle_errors,
    render_options,
    scan_options,
)
from gpuport.cli.scan import run_scan, scan_exit_code, settings_from_flags, write_baseline
from gpuport.cli.ui import emit, say
from gpuport.io import refuse_outputs, write_atomic
from gpuport.plan.inputs import plan_for_assess
from gpuport.report import Format, RenderOptions, render_chunks
from gpuport.report.summary import assessment_summary_line


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
    refuse_outputs(path, output, None if no_html else html_path, flags.get("write_baseline"))
    settings = settings_from_flags(path, flags)
    result = run_scan(path, settings, flags["jobs"], flags["no_progress"])
    plan = None
    if model:
        plan = plan_for_assess(model, gpus, context=context, batch=batch, precision=precision)
    assessment = make_assessment(result, plan=plan)
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
