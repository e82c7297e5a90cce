"""The verdict and the effort model, on hand-made scans whose arithmetic can be checked."""

from __future__ import annotations

import pytest

from gpuport.assess import Verdict, assess
from gpuport.assess.verdict import HOURS_BY_SEVERITY, MECHANICAL_REVIEW_HOURS, REPEAT_FACTOR
from gpuport.findings import (
    Category,
    Confidence,
    Finding,
    Fix,
    Location,
    Severity,
    SkipKind,
    Skipped,
)
from gpuport.scan.engine import ScanResult


def finding(
    rule: str,
    path: str,
    line: int,
    severity: Severity,
    category: Category = Category.KERNELS,
    mechanical: bool = False,
) -> Finding:
    return Finding(
        rule_id=rule,
        message=f"{rule} happened. Do this instead.",
        location=Location(path, line, 1),
        severity=severity,
        confidence=Confidence.HIGH,
        category=category,
        fix=Fix("do it", mechanical),
    )


def scan(*findings: Finding, skipped: tuple[Skipped, ...] = ()) -> ScanResult:
    return ScanResult(root="p", findings=list(findings), skipped=list(skipped))


def medium_high_and_low() -> ScanResult:
    """Two kernel findings, medium and high, in one file, and a low Python one."""
    return scan(
        finding("GP302", "k.cu", 3, Severity.MEDIUM),
        finding("GP301", "k.cu", 9, Severity.HIGH),
        finding("GP204", "t.py", 1, Severity.LOW, Category.PYTHON),
    )


def test_nothing_found_is_ready() -> None:
    a = assess(scan(finding("GP208", "t.py", 1, Severity.INFO, Category.PYTHON)))
    assert a.verdict is Verdict.READY
    assert a.total_hours == 0 and a.actionable == 0 and a.mechanical_share == 1.0


def test_any_blocker_blocks_and_is_named_first() -> None:
    a = assess(
        scan(
            finding("GP302", "k.cu", 3, Severity.MEDIUM),
            finding("GP104", "requirements.txt", 2, Severity.BLOCKER, Category.DEPENDENCIES),
            finding("GP104", "setup.py", 9, Severity.BLOCKER, Category.DEPENDENCIES),
        )
    )
    assert a.verdict is Verdict.BLOCKED
    assert [f.location.path for f in a.blockers] == ["requirements.txt", "setup.py"]
    assert a.reasons == ["GP104 at requirements.txt:2:1: GP104 happened (and 1 more)"]


def test_medium_findings_mean_work_and_reasons_list_the_worst_first() -> None:
    a = assess(medium_high_and_low())
    assert a.verdict is Verdict.READY_WITH_WORK
    assert a.reasons[0].startswith("GP301 at k.cu:9:1")
    assert not any("GP204" in r for r in a.reasons)  # low findings are not reasons


def test_effort_arithmetic_repeats_and_mechanical_review() -> None:
    a = assess(
        scan(
            finding("GP302", "k.cu", 3, Severity.MEDIUM),
            finding("GP302", "k.cu", 7, Severity.MEDIUM),  # a repeat in the same file
            finding("GP302", "j.cu", 1, Severity.MEDIUM),  # first in another file
            finding("GP303", "k.cu", 4, Severity.MEDIUM, mechanical=True),
            finding("GP101", "r.txt", 1, Severity.MEDIUM, Category.DEPENDENCIES, mechanical=True),
        )
    )
    by_category = {line.category: line for line in a.effort}
    medium = HOURS_BY_SEVERITY[Severity.MEDIUM]
    kernels = by_category[Category.KERNELS]
    assert kernels.findings == 4 and kernels.mechanical == 1
    assert kernels.hours == pytest.approx(
        round(medium * (2 + REPEAT_FACTOR) + MECHANICAL_REVIEW_HOURS, 2)
    )
    assert by_category[Category.DEPENDENCIES].hours == pytest.approx(MECHANICAL_REVIEW_HOURS)
    assert a.mechanical == 2 and a.actionable == 5
    assert kernels.days_low < kernels.days_high


def test_files_that_could_not_be_read_are_a_stated_gap() -> None:
    a = assess(scan(skipped=(Skipped("big.cu", SkipKind.TOO_LARGE, "too big"),)))
    assert a.verdict is Verdict.READY
    assert any("could not be analysed" in r for r in a.reasons)
    partial = assess(scan(skipped=(Skipped("l.py", SkipKind.NOT_UTF8, "x", 1, partial=True),)))
    assert not any("could not be analysed" in r for r in partial.reasons)


def test_category_severity_table() -> None:
    a = assess(medium_high_and_low())
    assert a.by_category_and_severity() == {
        "python": {"low": 1},
        "kernels": {"medium": 1, "high": 1},
    }
