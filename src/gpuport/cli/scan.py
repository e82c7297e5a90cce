"""``gpuport scan PATH``: findings with rule ids, locations and fixes, for people or for CI.

Also what ``assess`` shares with it: settings from the flags and ``[tool.gpuport]``, the scan
with a progress bar, the baseline file, and the exit code of a scan.
"""

from __future__ import annotations

import dataclasses
import json
import re
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import click

from gpuport.cli.common import (
    CommandError,
    ExitCode,
    check_project_path,
    format_options,
    handle_errors,
    render_options,
    scan_options,
)
from gpuport.cli.ui import Progress, emit, say
from gpuport.config import Settings, load_baseline, load_settings
from gpuport.files import WalkOptions
from gpuport.findings import SkipKind
from gpuport.io import refuse_outputs, write_atomic
from gpuport.report import Format, render_chunks
from gpuport.report.common import fingerprint
from gpuport.report.summary import scan_summary_line
from gpuport.scan.engine import ScanOptions, ScanResult, scan_path
from gpuport.vcs import ChangedLines, ChangesError, changed_lines


def settings_from_flags(path: Path, flags: dict[str, Any]) -> Settings:
    """The scan settings: flags first, then ``[tool.gpuport]``, then the defaults."""
    return load_settings(
        path,
        {
            "fail_on": flags.get("fail_on"),
            "select": tuple(flags.get("select") or ()),
            "ignore": tuple(flags.get("ignore") or ()),
            "exclude": tuple(flags.get("exclude") or ()),
            "max_file_size": flags.get("max_file_size"),
            "baseline": str(flags["baseline"]) if flags.get("baseline") else None,
        },
    )


def run_scan(
    path: Path,
    settings: Settings,
    jobs: int,
    no_progress: bool,
    changed: ChangedLines | None = None,
) -> ScanResult:
    """Scan with the given settings, showing progress on stderr for big projects.

    With ``changed``, only the findings on those lines are kept, in the same step that leaves
    out the baseline's findings.
    """
    options = ScanOptions(
        walk=WalkOptions(exclude=settings.exclude, max_file_bytes=settings.max_file_size),
        select=frozenset(settings.select),
        ignore=frozenset(settings.ignore),
        baseline=load_baseline(settings),
        changed=changed,
        jobs=jobs,
    )
    with Progress(enabled=not no_progress, label="scanning") as progress:
        return scan_path(path, options, progress.update, display_root=str(path))


def write_baseline(result: ScanResult, path: Path) -> None:
    """Record the fingerprints of ``result``'s findings as the baseline in ``path``."""
    prints = sorted({fingerprint(f) for f in result.findings})
    write_atomic(
        path,
        json.dumps({"tool": "gpuport", "version": 1, "fingerprints": prints}, indent=2) + "\n",
    )
    say(f"wrote baseline of {len(prints)} finding(s) to {path}")


# Skipped on purpose, not for want of a way to read them: gpuport's own backups, journal and
# temporary files are listed in the report but do not make the input bad.
_NOT_INPUT_PROBLEMS = frozenset({SkipKind.PORT_ARTIFACT})


def scan_exit_code(result: ScanResult, settings: Settings, *, all_tiers: bool = False) -> ExitCode:
    """2 when input could not be analysed or a rule crashed; 1 at or above --fail-on; else 0.

    Only product code counts for --fail-on unless ``all_tiers`` (tests, benchmarks, examples,
    docs, CI, dev scripts, deprecated and vendored code are reported, not failed on).
    """
    problems = [s for s in result.skipped if s.kind not in _NOT_INPUT_PROBLEMS]
    if result.crashed or (not result.stats.files_seen and problems):
        return ExitCode.ERROR
    if any(not s.partial for s in problems):
        return ExitCode.ERROR
    if settings.fail_on is not None and result.at_or_above(settings.fail_on, all_tiers=all_tiers):
        return ExitCode.FINDINGS
    return ExitCode.CLEAN


# What a link base may hold: a URL's own characters less those that end a Markdown link or
# start markup (parentheses, brackets, angle brackets, quotes, backslash, space).
_URL_CHARS = re.compile(r"[A-Za-z0-9\-._~:/?#@!$&*+,;=%]+")


def check_link_base(ctx: click.Context, param: click.Parameter, value: str | None) -> str:
    """``--link-base``: an http(s) URL to put before each file's path, ending in ``/``."""
    if not value:
        return ""
    parts = urlsplit(value)
    if (
        parts.scheme not in ("http", "https")
        or not parts.netloc
        or parts.query
        or parts.fragment
        or not _URL_CHARS.fullmatch(value)
    ):
        raise click.BadParameter(
            f"{value!r} is not an http(s) URL without spaces, brackets, quotes, query or "
            "fragment (for example https://github.com/OWNER/REPO/blob/COMMIT/)"
        )
    return value if value.endswith("/") else value + "/"


@click.command("scan")
@scan_options
@format_options(ScanResult)
@click.option(
    "--diff",
    "--changed-since",
    "diff_base",
    metavar="BASE_REF",
    help="Only findings on lines changed since the merge base of BASE_REF and HEAD "
    "(uncommitted edits included; new files count wholly). Reads the git repository, "
    "never writes it.",
)
@click.option(
    "--link-base",
    metavar="URL",
    callback=check_link_base,
    help="Markdown: link each file to URL + its path + #L<line> (for example "
    "https://github.com/OWNER/REPO/blob/COMMIT/ in a pull-request comment), not to a "
    "relative path.",
)
@click.option(
    "--all-tiers",
    is_flag=True,
    help="Let findings in every tier (tests, benchmarks, examples, docs, CI, dev, deprecated, "
    "vendored) count for --fail-on; by default only product code does.",
)
@handle_errors
def scan(path: Path, fmt: str, output: Path | None, **flags: Any) -> None:
    """Findings with rule ids, locations and fixes, in a format for people or for CI."""
    check_project_path(path)
    refuse_outputs(path, output, flags.get("write_baseline"))
    if flags.get("diff_base") is not None and flags.get("write_baseline"):
        raise CommandError(
            "--write-baseline records every finding of the project, and --diff keeps only "
            "those of the change: run --write-baseline without --diff"
        )
    settings = settings_from_flags(path, flags)
    changed = None
    if flags.get("diff_base") is not None:
        try:
            changed = changed_lines(path, flags["diff_base"])
        except ChangesError as exc:
            raise CommandError(str(exc)) from None
    result = run_scan(path, settings, flags["jobs"], flags["no_progress"], changed)
    chosen = Format(fmt)
    options = render_options(chosen, output, fit_terminal=True)
    options = dataclasses.replace(options, link_base=flags["link_base"])
    emit(render_chunks(result, chosen, options), output)
    if flags.get("write_baseline"):
        write_baseline(result, flags["write_baseline"])
    if chosen is not Format.TERMINAL or output is not None:
        say(scan_summary_line(result))
    sys.exit(scan_exit_code(result, settings, all_tiers=flags["all_tiers"]))
