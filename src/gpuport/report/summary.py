"""The one line each command says on stderr after its report: counts a person reads at a glance."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuport.edits import ChangeStatus

if TYPE_CHECKING:  # `gpuport scan` says its line without loading assess or port
    from gpuport.assess.verdict import Assessment
    from gpuport.port.model import PortResult
    from gpuport.scan.engine import ScanResult


def scan_summary_line(result: ScanResult) -> str:
    line = (
        f"{len(result.findings)} finding(s) in {result.stats.files_scanned} file(s); "
        f"{len(result.skipped)} input problem(s)"
    )
    if result.change is not None:
        line += (
            f"; only lines changed since {result.change.base} "
            f"({result.change.short_base}): {result.outside_change} finding(s) outside them"
        )
    return line


def assessment_summary_line(assessment: Assessment) -> str:
    scan = assessment.scan
    return (
        f"verdict: {assessment.verdict.value} · {len(scan.findings)} finding(s) · "
        f"{assessment.mechanical} in product code fixable by gpuport port · "
        f"{len(scan.skipped)} input problem(s)"
    )


def port_summary_line(result: PortResult) -> str:
    changed = sum(1 for f in result.files if f.changed)
    counts = {s: sum(f.count(s) for f in result.files) for s in ChangeStatus}
    return (
        f"{changed} file(s) changed · {counts[ChangeStatus.CONVERTED]} converted · "
        f"{counts[ChangeStatus.NEEDS_REVIEW]} need review · "
        f"{counts[ChangeStatus.UNCONVERTED]} unconverted · {len(result.problems)} problem(s)"
    )
