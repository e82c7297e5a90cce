"""``gpuport-pre-commit FILE...``: the scan pre-commit runs on the files a commit touches.

``gpuport scan`` takes one folder or file; pre-commit passes a list of files (relative to the
repository's root, which is the working directory). This scans each file gpuport reads, leaves
the others out without a word (pre-commit passes every staged file), and reports the findings
as one terminal report with paths as the repository names them. Settings come from
``[tool.gpuport]`` of the repository's ``pyproject.toml``, then the flags; tiers come from the
path (``tests/``, ``benchmarks/``, ...), so a test file's findings are listed but, as in
``gpuport scan``, only product code fails the hook unless ``--all-tiers``.

No project model is built (it reads the whole tree's build files): a commit hook stays fast.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path, PurePath
from typing import Any

import click

from gpuport import __version__
from gpuport.cli.common import ExitCode, handle_errors, render_options
from gpuport.cli.scan import scan_exit_code
from gpuport.cli.ui import emit, say
from gpuport.config import Settings, load_baseline, load_settings
from gpuport.files import WalkOptions, classify, is_excluded
from gpuport.findings import Finding
from gpuport.project.tiers import tier_by_name
from gpuport.report import Format, render_chunks
from gpuport.report.common import fingerprint
from gpuport.report.summary import scan_summary_line
from gpuport.scan.catalog import RuleTable, rule_ids
from gpuport.scan.engine import ScanOptions, ScanResult, scan_path


def _rel(name: str) -> str:
    """The path as pre-commit passed it, with forward slashes and no leading ``./``."""
    return PurePath(name).as_posix().removeprefix("./")


def _relocated(finding: Finding, own_name: str, rel: str) -> Finding:
    """A finding of a one-file scan, placed at the path the repository knows the file by."""
    if finding.location.path != own_name:
        return finding  # in a file the scanned one names (`-r base.txt`): relative to it
    tier = tier_by_name(rel)
    return replace(
        finding,
        location=replace(finding.location, path=rel),
        tier=tier if tier is not None else finding.tier,
    )


def scan_files(names: tuple[str, ...], flags: dict[str, Any]) -> tuple[ScanResult, Settings]:
    """One result for the files of ``names`` that gpuport reads, and the settings used.

    The baseline is applied here, once each finding has its repository path: the baseline
    ``gpuport scan --write-baseline`` records names files from the repository's root.
    """
    settings = load_settings(
        Path.cwd(),
        {
            "fail_on": flags.get("fail_on"),
            "select": tuple(flags.get("select") or ()),
            "ignore": tuple(flags.get("ignore") or ()),
        },
    )
    options = ScanOptions(
        walk=WalkOptions(max_file_bytes=settings.max_file_size),
        select=frozenset(settings.select),
        ignore=frozenset(settings.ignore),
        jobs=1,
        project_model=False,
    )
    baseline = load_baseline(settings)
    result = ScanResult(root=".", rules=RuleTable(ids=rule_ids()))
    for name in dict.fromkeys(names):  # in order, each once
        rel = _rel(name)
        path = Path(name)
        if classify(path.name, path.parent.name) is None or not path.is_file():
            continue  # not a kind of file gpuport reads, or deleted in this commit
        if settings.exclude and is_excluded(rel, settings.exclude):
            continue
        one = scan_path(path, options, display_root=rel)
        result.rules = one.rules
        for finding in (_relocated(f, path.name, rel) for f in one.findings):
            if baseline and fingerprint(finding) in baseline:
                result.baselined += 1
            else:
                result.findings.append(finding)
        result.skipped += (replace(s, path=rel) if s.path == path.name else s for s in one.skipped)
        result.suppressed += one.suppressed
        stats, more = result.stats, one.stats
        stats.files_seen += more.files_seen
        stats.files_scanned += more.files_scanned
        stats.bytes_scanned += more.bytes_scanned
        for kind, count in more.by_kind.items():
            stats.by_kind[kind] = stats.by_kind.get(kind, 0) + count
    result.findings.sort(key=lambda f: f.sort_key)
    result.skipped.sort()
    return result, settings


@click.command(
    "gpuport-pre-commit",
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.argument("files", nargs=-1, type=click.Path(path_type=str))
@click.option(
    "--fail-on",
    help="Fail the commit on a finding at or above this severity "
    "(info, low, medium, high, blocker, never). Default: [tool.gpuport]'s, else medium.",
)
@click.option("--select", multiple=True, help="Only these rule ids or prefixes (GP3).")
@click.option("--ignore", multiple=True, help="Leave out these rule ids or prefixes.")
@click.option(
    "--all-tiers",
    is_flag=True,
    help="Let findings in tests, benchmarks, examples... fail the commit too.",
)
@click.version_option(__version__, "-V", "--version", prog_name="gpuport-pre-commit")
@handle_errors
def main(files: tuple[str, ...], **flags: Any) -> None:
    """Scan FILES (those pre-commit passes) for what breaks on ROCm; exit 1 on findings."""
    result, settings = scan_files(files, flags)
    if not result.stats.files_seen:
        sys.exit(ExitCode.CLEAN)
    # pre-commit shows a hook's output when it fails (or with --verbose): the report when there
    # is something to report, its one summary line otherwise.
    if result.findings or result.skipped:
        emit(render_chunks(result, Format.TERMINAL, render_options(Format.TERMINAL, None)), None)
    else:
        say(scan_summary_line(result))
    sys.exit(scan_exit_code(result, settings, all_tiers=flags["all_tiers"]))


__all__ = ["main", "scan_files"]

if __name__ == "__main__":
    main()
