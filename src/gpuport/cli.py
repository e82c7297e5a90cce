"""The ``gpuport`` command: parsing flags and wiring stages together, nothing more.

Data goes to stdout (or ``-o FILE``); the human summary and progress go to stderr.
Exit codes: 0 clean, 1 findings at or above ``--fail-on``, 2 usage, configuration or input
error (including files that could not be analysed and internal rule failures).
"""

from __future__ import annotations

import functools
import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from gpuport import __version__
from gpuport.config import ConfigError, Settings, load_settings
from gpuport.files import WalkOptions
from gpuport.options import ProjectPath, format_options
from gpuport.report import Format, RenderOptions, render
from gpuport.scan.engine import ScanOptions, ScanResult, scan_path
from gpuport.ui import Progress, emit, stderr_console

EXIT_CLEAN = 0
EXIT_FINDINGS = 1
EXIT_ERROR = 2

F = TypeVar("F", bound=Callable[..., Any])


def scan_options(function: F) -> F:
    """Options of every command that scans a project."""
    decorators = [
        click.argument("path", type=ProjectPath(), default=Path("."), required=False),
        click.option(
            "--fail-on",
            help="Exit 1 when a finding is at or above this severity "
            "(info, low, medium, high, blocker, never). Default: medium.",
        ),
        click.option("--select", multiple=True, help="Only these rule ids or prefixes (GP3)."),
        click.option("--ignore", multiple=True, help="Leave out these rule ids or prefixes."),
        click.option("--exclude", multiple=True, help="Glob of paths to leave out."),
        click.option("--max-file-size", help="Skip files larger than this (e.g. 8M)."),
        click.option(
            "--baseline",
            type=click.Path(dir_okay=False, path_type=Path),
            help="Leave out findings recorded in this baseline file.",
        ),
        click.option(
            "--write-baseline",
            type=click.Path(dir_okay=False, path_type=Path),
            help="Record the current findings as the baseline in FILE.",
        ),
        click.option("--jobs", type=click.IntRange(0, 256), default=0, help="Worker processes."),
        click.option("--no-progress", is_flag=True, help="No progress bar."),
    ]
    for decorator in reversed(decorators):
        function = decorator(function)
    return function


def _fail(message: str) -> None:
    stderr_console().print(f"[bold red]error:[/] {message}", highlight=False)
    sys.exit(EXIT_ERROR)


def _handle_errors(function: F) -> F:
    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except ConfigError as exc:
            _fail(str(exc))
        except OSError as exc:
            name = f" {exc.filename}" if exc.filename else ""
            _fail(f"cannot use{name}: {exc.strerror or exc}")

    return wrapper  # type: ignore[return-value]


def _settings(path: Path, kwargs: dict[str, Any]) -> Settings:
    return load_settings(
        path,
        {
            "fail_on": kwargs.get("fail_on"),
            "select": tuple(kwargs.get("select") or ()),
            "ignore": tuple(kwargs.get("ignore") or ()),
            "exclude": tuple(kwargs.get("exclude") or ()),
            "max_file_size": kwargs.get("max_file_size"),
            "baseline": str(kwargs["baseline"]) if kwargs.get("baseline") else None,
        },
    )


def _load_baseline(path: str | None) -> frozenset[str]:
    if not path:
        return frozenset()
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        prints = data["fingerprints"]
        if not isinstance(prints, list):
            raise TypeError("fingerprints is not a list")
        return frozenset(str(p) for p in prints)
    except FileNotFoundError:
        raise ConfigError(f"baseline file {path} does not exist") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{path}: not a gpuport baseline file ({exc})") from None


def run_scan(path: Path, settings: Settings, jobs: int, no_progress: bool) -> ScanResult:
    """Scan with the given settings, showing progress on stderr for big projects."""
    options = ScanOptions(
        walk=WalkOptions(exclude=settings.exclude, max_file_bytes=settings.max_file_size),
        select=frozenset(settings.select),
        ignore=frozenset(settings.ignore),
        baseline=_load_baseline(settings.baseline),
        jobs=jobs,
    )
    with Progress(enabled=not no_progress, label="scanning") as progress:
        return scan_path(path, options, progress.update, display_root=str(path))


def _write_baseline(result: ScanResult, path: Path) -> None:
    from gpuport.io import write_atomic

    prints = sorted(
        {
            f.fingerprint(
                f.excerpt.lines[f.location.line - f.excerpt.start_line]
                if f.excerpt and 0 <= f.location.line - f.excerpt.start_line < len(f.excerpt.lines)
                else ""
            )
            for f in result.findings
        }
    )
    write_atomic(
        path,
        json.dumps({"tool": "gpuport", "version": 1, "fingerprints": prints}, indent=2) + "\n",
    )
    stderr_console().print(f"wrote baseline of {len(prints)} finding(s) to {path}")


def exit_code(result: ScanResult, settings: Settings) -> int:
    if result.crashed or (not result.stats.files_seen and result.skipped):
        return EXIT_ERROR
    if any(not s.partial for s in result.skipped):
        return EXIT_ERROR
    if settings.fail_on is not None and result.at_or_above(settings.fail_on):
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _render_options(fmt: Format, output: Path | None) -> RenderOptions:
    on_terminal = fmt is Format.TERMINAL and output is None and sys.stdout.isatty()
    width = shutil.get_terminal_size((100, 24)).columns if on_terminal else 100
    return RenderOptions(
        color=on_terminal and not _no_color(), width=width, tool_version=__version__
    )


def _no_color() -> bool:
    import os

    return bool(os.environ.get("NO_COLOR"))


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, "-V", "--version", prog_name="gpuport")
def main() -> None:
    """gpuport: what breaks when your ML project moves from CUDA to ROCm, and how to fix it."""


@main.command()
@scan_options
@format_options()
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
@_handle_errors
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
    **kwargs: Any,
) -> None:
    """The main job: one report on PATH — what breaks on ROCm, what gpuport fixes, effort, verdict."""
    from gpuport.assess import assess as make_assessment

    settings = _settings(path, kwargs)
    result = run_scan(path, settings, kwargs["jobs"], kwargs["no_progress"])
    plan_result = (
        _plan_for_assess(model, gpus, context=context, batch=batch, precision=precision)
        if model
        else None
    )
    assessment = make_assessment(result, plan=plan_result)
    chosen = Format(fmt)
    emit(render(assessment, chosen, _render_options(chosen, output)), output)
    if not no_html and not (chosen is Format.HTML and output == html_path):
        from gpuport.io import write_atomic

        write_atomic(
            html_path, render(assessment, Format.HTML, RenderOptions(tool_version=__version__))
        )
        stderr_console().print(f"HTML report: {html_path}", highlight=False)
    if kwargs.get("write_baseline"):
        _write_baseline(result, kwargs["write_baseline"])
    stderr_console().print(
        f"verdict: {assessment.verdict.value} · {len(result.findings)} finding(s) · "
        f"{assessment.mechanical} fixable by gpuport port · "
        f"{len(result.skipped)} input problem(s)",
        highlight=False,
    )
    sys.exit(exit_code(result, settings))


def _plan_for_assess(model: str, gpus: str | None, **workload: Any) -> object:
    from gpuport.plan.command import plan_for_assess

    return plan_for_assess(model, gpus, **workload)


@main.command()
@scan_options
@format_options()
@_handle_errors
def scan(path: Path, fmt: str, output: Path | None, **kwargs: Any) -> None:
    """Findings with rule ids, locations and fixes, in a format for people or for CI."""
    settings = _settings(path, kwargs)
    result = run_scan(path, settings, kwargs["jobs"], kwargs["no_progress"])
    chosen = Format(fmt)
    emit(render(result, chosen, _render_options(chosen, output)), output)
    if kwargs.get("write_baseline"):
        _write_baseline(result, kwargs["write_baseline"])
    if chosen is not Format.TERMINAL or output is not None:
        stderr_console().print(
            f"{len(result.findings)} finding(s) in {result.stats.files_scanned} file(s); "
            f"{len(result.skipped)} input problem(s)",
            highlight=False,
        )
    sys.exit(exit_code(result, settings))


@main.command()
@click.argument("rule_id", required=False)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["terminal", "markdown", "json"]),
    default="terminal",
    show_default=True,
)
def explain(rule_id: str | None, fmt: str) -> None:
    """Explain RULE_ID (an id like GP301 or a slug); without one, list every rule."""
    from gpuport.scan.catalog import all_rules, get_rule

    if rule_id is None:
        rules = all_rules()
        if fmt == "json":
            click.echo(json.dumps([_rule_dict(r) for r in rules], indent=2))
            return
        for r in rules:
            click.echo(f"{r.id}  {r.slug:<34} {r.severity.label:<8} {r.summary}")
        return
    try:
        r = get_rule(rule_id)
    except KeyError:
        from difflib import get_close_matches

        names = [x.id for x in all_rules()] + [x.slug for x in all_rules()]
        close = get_close_matches(rule_id, names, n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        _fail(f"no rule {rule_id!r}{hint}; `gpuport explain` lists them")
        return
    if fmt == "json":
        click.echo(json.dumps(_rule_dict(r), indent=2))
    elif fmt == "markdown" or not sys.stdout.isatty():
        click.echo(r.markdown())
    else:
        from rich.console import Console
        from rich.markdown import Markdown

        Console().print(Markdown(r.markdown()))


def _rule_dict(r: Any) -> dict[str, Any]:
    return {
        "id": r.id,
        "slug": r.slug,
        "category": r.category.value,
        "severity": r.severity.label,
        "confidence": r.confidence.label,
        "summary": r.summary,
        "what": r.what,
        "why": r.why,
        "example": r.example,
        "instead": r.instead,
        "fix": r.fix,
        "mechanical": r.mechanical,
        "references": list(r.references),
    }


def _add_stage_commands() -> None:
    """Sub-commands that live in their own stage's package."""
    from gpuport.kb.command import kb
    from gpuport.plan.command import plan
    from gpuport.port.command import port

    for command in (kb, port, plan):
        main.add_command(command)


_add_stage_commands()

if __name__ == "__main__":  # pragma: no cover
    main()
