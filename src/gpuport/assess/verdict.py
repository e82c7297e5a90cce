"""Turn a scan into a verdict: ready / ready with work / blocked, with reasons and effort.

The effort model is deliberately simple and states its assumptions, so that a reader can
redo the arithmetic or disagree with a number rather than with a black box.
"""

from __future__ import annotations

import enum
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gpuport.findings import Category, Finding, Severity
from gpuport.scan.engine import ScanResult

if TYPE_CHECKING:
    from gpuport.plan.planner import PlanResult


class Verdict(enum.StrEnum):
    READY = "ready"
    READY_WITH_WORK = "ready with work"
    BLOCKED = "blocked"


# Hours of an engineer's time for the first occurrence of a rule in a file, by severity;
# mechanical fixes cost only their review. Later occurrences of the same rule in the same
# file cost REPEAT_FACTOR of that: the first one teaches the pattern.
HOURS_BY_SEVERITY = {
    Severity.INFO: 0.0,
    Severity.LOW: 0.25,
    Severity.MEDIUM: 1.0,
    Severity.HIGH: 4.0,
    Severity.BLOCKER: 16.0,
}
MECHANICAL_REVIEW_HOURS = 0.1
REPEAT_FACTOR = 0.25
HOURS_PER_DAY = 6.0
EFFORT_ASSUMPTIONS = (
    "an engineer who knows the code base but not ROCm",
    "hours per first occurrence of a rule in a file: low 0.25, medium 1, high 4, "
    "blocker 16 (replacing a component); info findings cost nothing",
    f"fixes gpuport applies (gpuport port) cost {MECHANICAL_REVIEW_HOURS} h each to review",
    f"repeats of a rule in the same file cost {int(REPEAT_FACTOR * 100)}% of the first",
    f"{HOURS_PER_DAY:g} productive hours a day; the range is half to double the estimate",
    "testing and performance tuning on the AMD GPU are not included",
)


def day_range(hours: float) -> tuple[float, float]:
    """The range of working days an estimate of ``hours`` stands for: half to double."""
    days = hours / HOURS_PER_DAY
    return days / 2, days * 2


def count_by_category(findings: list[Finding]) -> dict[Category, dict[Severity, int]]:
    """Findings per category and severity, in enum order; only categories that have some."""
    table: dict[Category, dict[Severity, int]] = {}
    for f in findings:
        row = table.setdefault(f.category, {})
        row[f.severity] = row.get(f.severity, 0) + 1
    return {c: table[c] for c in Category if c in table}


@dataclass(frozen=True, slots=True)
class EffortLine:
    category: Category
    findings: int
    mechanical: int
    hours: float

    @property
    def days_low(self) -> float:
        return day_range(self.hours)[0]

    @property
    def days_high(self) -> float:
        return day_range(self.hours)[1]


@dataclass(slots=True)
class Assessment:
    """The project report: verdict, reasons, effort, the scan behind it, and an optional plan."""

    scan: ScanResult
    verdict: Verdict
    reasons: list[str]
    blockers: list[Finding]
    mechanical: int  # findings gpuport can fix
    actionable: int  # findings at low severity or above
    effort: list[EffortLine]
    assumptions: tuple[str, ...] = EFFORT_ASSUMPTIONS
    plan: PlanResult | None = None  # the GPU plan, when --model was given
    extras: dict[str, object] = field(default_factory=dict)

    @property
    def total_hours(self) -> float:
        return sum(line.hours for line in self.effort)

    @property
    def mechanical_share(self) -> float:
        return self.mechanical / self.actionable if self.actionable else 1.0

    def by_category_and_severity(self) -> dict[str, dict[str, int]]:
        return {
            category.value: {severity.label: n for severity, n in row.items()}
            for category, row in count_by_category(self.scan.findings).items()
        }


def assess(scan: ScanResult, plan: PlanResult | None = None) -> Assessment:
    findings = scan.findings
    blockers = [f for f in findings if f.severity is Severity.BLOCKER]
    actionable = [f for f in findings if f.severity >= Severity.LOW]
    mechanical = sum(1 for f in actionable if f.fix is not None and f.fix.mechanical)
    effort = _effort(actionable)
    reasons: list[str] = []
    if blockers:
        verdict = Verdict.BLOCKED
        for rule_id, count in Counter(f.rule_id for f in blockers).most_common():
            example = next(f for f in blockers if f.rule_id == rule_id)
            more = f" (and {count - 1} more)" if count > 1 else ""
            reasons.append(f"{rule_id} at {example.location}: {_headline(example)}{more}")
    elif any(f.severity >= Severity.MEDIUM for f in findings):
        verdict = Verdict.READY_WITH_WORK
        worst = sorted(
            (f for f in findings if f.severity >= Severity.MEDIUM),
            key=lambda f: (-f.severity, f.sort_key),
        )
        for rule_id, count in Counter(f.rule_id for f in worst).most_common(5):
            example = next(f for f in worst if f.rule_id == rule_id)
            more = f" (and {count - 1} more)" if count > 1 else ""
            reasons.append(f"{rule_id} at {example.location}: {_headline(example)}{more}")
    else:
        verdict = Verdict.READY
        reasons.append("nothing found that breaks on ROCm")
    if scan.skipped:
        whole = [s for s in scan.skipped if not s.partial]
        if whole:
            reasons.append(
                f"{len(whole)} file(s) could not be analysed; the verdict does not cover them"
            )
    return Assessment(
        scan=scan,
        verdict=verdict,
        reasons=reasons,
        blockers=blockers,
        mechanical=mechanical,
        actionable=len(actionable),
        effort=effort,
        plan=plan,
    )


def _headline(finding: Finding) -> str:
    """The first sentence of a finding's message: a reason, not the whole advice."""
    first = re.split(r"(?<=[a-z0-9)`'])\. (?=[A-Z])", finding.message, maxsplit=1)[0]
    return first.rstrip(".")


def _effort(findings: list[Finding]) -> list[EffortLine]:
    seen: set[tuple[str, str]] = set()
    hours: dict[Category, float] = defaultdict(float)
    counts: Counter[Category] = Counter()
    mech: Counter[Category] = Counter()
    for f in sorted(findings, key=lambda f: f.sort_key):
        counts[f.category] += 1
        if f.fix is not None and f.fix.mechanical:
            mech[f.category] += 1
            hours[f.category] += MECHANICAL_REVIEW_HOURS
            continue
        base = HOURS_BY_SEVERITY[f.severity]
        key = (f.rule_id, f.location.path)
        hours[f.category] += base * (REPEAT_FACTOR if key in seen else 1.0)
        seen.add(key)
    return [
        EffortLine(cat, counts[cat], mech[cat], round(hours[cat], 2))
        for cat in Category
        if counts[cat]
    ]
