"""Turn a scan into a verdict, with reasons, next steps and effort.

The verdict is "already supports ROCm" when the project model found the project's own ROCm path,
"nothing to assess" when gpuport found no file it reads, else "ready", "ready with work" or
"blocked" from the findings in product code (tests, benchmarks, examples, CI and the rest are
counted apart, and findings folded into an NVIDIA-only component cost nothing). Reasons are
ordered by severity times confidence. The effort model is deliberately simple and states its
assumptions, so that a reader can redo the arithmetic or disagree with a number rather than
with a black box.
"""

from __future__ import annotations

import enum
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gpuport.assess.decision_model import Recommendation
from gpuport.assess.guidance import (
    MAX_EVIDENCE,
    FoldedComponent,
    NextStep,
    RocmSupport,
    by_weight,
    folded_components,
    next_steps,
    rocm_elsewhere,
    rocm_support,
)
from gpuport.findings import Category, Finding, Severity, Tier
from gpuport.project.file_folds import gathered_by_hopper_lines
from gpuport.scan.engine import ScanResult

if TYPE_CHECKING:
    from gpuport.plan.planner import PlanResult


class Verdict(enum.StrEnum):
    ALREADY_SUPPORTS_ROCM = "already supports ROCm"
    NOTHING_TO_ASSESS = "nothing to assess"
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
    "only product code counts: tests, benchmarks, examples, docs, CI, developer tools, "
    "deprecated and vendored code are listed apart, and findings folded into a component the "
    "ROCm build leaves out cost nothing",
)
MAX_REASONS = 5  # rules named in the verdict; every finding is in the report below it
# Rules whose findings name a feature ROCm has no counterpart for (TMA and other Hopper-only
# hardware, thread-block clusters, the cuDNN graph API, CUTLASS/CuTe kernels): each file is a
# redesign on ROCm, not a port. Past REDESIGN_FILES product files, the verdict is "blocked": a
# rewrite that size is a fork (AMD's TransformerEngine fork is one), not a porting job.
REDESIGN_RULES = frozenset({"GP309", "GP310", "GP312", "GP314"})
REDESIGN_FILES = 20
GAP_PREFIX = "beyond its ROCm path: "
GAPS_ASSUMPTION = (
    "the project already builds for ROCm: these hours are for what gpuport still finds in product "
    "code (parts its ROCm path may not cover), not a cost of using its ROCm build"
)
MAX_TOP = 5  # findings shown with their fix under the verdict


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
    # The heaviest product findings (severity times confidence), one per rule, each with its fix.
    top: list[Finding] = field(default_factory=list)
    next_steps: list[NextStep] = field(default_factory=list)
    # Findings per tier (product first), of those listed; folded ones are in ``folded``.
    tiers: dict[Tier, int] = field(default_factory=dict)
    folded: list[FoldedComponent] = field(default_factory=list)
    support: RocmSupport | None = None  # the project's own ROCm path, when it has one
    # Where the knowledge base says this project's ROCm build lives when this checkout has no
    # ROCm path of its own (AMD's fork of apex or TransformerEngine): "" when it names none.
    elsewhere: str = ""
    recommendation: Recommendation | None = None  # should we move: assess/decision.py

    @property
    def effort_title(self) -> str:
        """What the effort numbers stand for: a port, or the gaps in an existing ROCm path."""
        if self.verdict is Verdict.ALREADY_SUPPORTS_ROCM:
            return "Effort for the gaps beyond its ROCm path"
        return "Estimated effort"

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
    """The verdict on ``scan``: from its project model and its product-tier findings."""
    product = [f for f in scan.findings if f.tier is Tier.PRODUCT]
    blockers = [f for f in product if f.severity is Severity.BLOCKER]
    actionable = [f for f in product if f.severity >= Severity.LOW]
    mechanical = sum(1 for f in actionable if f.fix is not None and f.fix.mechanical)
    support = rocm_support(scan.project) if scan.project is not None else None
    serious = by_weight(f for f in product if f.severity >= Severity.MEDIUM)
    elsewhere = rocm_elsewhere(scan.project) if support is None and scan.project else ""
    gathered = gathered_by_hopper_lines(scan.findings, scan.set_aside, scan.project)
    redesign = _redesign_files([*product, *(f for f in gathered if f.tier is Tier.PRODUCT)])
    reasons: list[str] = []
    if _nothing_read(scan):
        verdict = Verdict.NOTHING_TO_ASSESS
        reasons.append(
            "gpuport found no file it reads here (Python, CUDA or C++ sources, dependency "
            "files, Dockerfiles, build files): there is nothing to assess"
        )
    elif support is not None:
        verdict = Verdict.ALREADY_SUPPORTS_ROCM
        reasons.extend(str(e) for e in support.evidence[:MAX_EVIDENCE])
        if len(support.evidence) > MAX_EVIDENCE:
            reasons.append(f"and {len(support.evidence) - MAX_EVIDENCE} more signs of a ROCm path")
        reasons.append(support.coverage.summary)
        # what gpuport still finds is a gap beyond that path, not a reason to port it
        reasons.extend(f"{GAP_PREFIX}{r}" for r in _rule_reasons(serious, limit=2))
    elif blockers or len(redesign) > REDESIGN_FILES:
        verdict = Verdict.BLOCKED
        if elsewhere:
            reasons.append(f"its ROCm build lives elsewhere: {elsewhere}")
        if len(redesign) > REDESIGN_FILES:
            reasons.append(_redesign_reason(redesign))
        reasons.extend(_rule_reasons(by_weight(blockers or serious), limit=MAX_REASONS))
    elif serious:
        verdict = Verdict.READY_WITH_WORK
        if elsewhere:
            reasons.append(f"a ROCm build of it exists elsewhere: {elsewhere}")
        reasons.extend(_rule_reasons(serious, limit=MAX_REASONS))
    else:
        verdict = Verdict.READY
        reasons.append("nothing found that breaks on ROCm")
    if scan.skipped:
        whole = [s for s in scan.skipped if not s.partial]
        if whole:
            reasons.append(
                f"{len(whole)} file(s) could not be analysed; the verdict does not cover them"
            )
    top = _one_per_rule(serious)[:MAX_TOP]
    manual = [f for f in _one_per_rule(serious) if f.fix is None or not f.fix.mechanical]
    every_mechanical = sum(
        1
        for f in scan.findings
        if f.severity >= Severity.LOW and f.fix is not None and f.fix.mechanical
    )
    return Assessment(
        scan=scan,
        verdict=verdict,
        reasons=reasons,
        blockers=blockers,
        mechanical=mechanical,
        actionable=len(actionable),
        effort=_effort(actionable),
        plan=plan,
        top=top,
        next_steps=next_steps(
            root=scan.root,
            verdict=verdict.value,
            support=support,
            mechanical=every_mechanical,
            manual=manual,
            has_plan=plan is not None,
            elsewhere=elsewhere,
        ),
        tiers=count_by_tier(scan.findings),
        folded=folded_components(scan.project, scan.set_aside),
        support=support,
        elsewhere=elsewhere,
        assumptions=(
            (GAPS_ASSUMPTION, *EFFORT_ASSUMPTIONS)
            if verdict is Verdict.ALREADY_SUPPORTS_ROCM
            else EFFORT_ASSUMPTIONS
        ),
    )


def _redesign_files(product: list[Finding]) -> dict[str, set[str]]:
    """Product files with a feature ROCm has no counterpart for, and the rules that said so."""
    files: dict[str, set[str]] = defaultdict(set)
    for f in product:
        if f.rule_id in REDESIGN_RULES and f.severity >= Severity.HIGH:
            files[f.location.path].add(f.rule_id)
    return files


def _redesign_reason(files: dict[str, set[str]]) -> str:
    per_rule = Counter(rule for rules in files.values() for rule in rules)
    named = ", ".join(f"{rule} in {n}" for rule, n in sorted(per_rule.items()))
    return (
        f"{len(files)} product files use features ROCm has no counterpart for ({named} files): "
        "a redesign that size is a fork, not a port"
    )


def count_by_tier(findings: list[Finding]) -> dict[Tier, int]:
    """Findings per tier in the enum's order (product first); only tiers that have some."""
    counts = Counter(f.tier for f in findings)
    return {tier: counts[tier] for tier in Tier if counts[tier]}


def _nothing_read(scan: ScanResult) -> bool:
    """No file was read and nothing was found or skipped: an empty folder, or no known file."""
    return (
        scan.stats.files_scanned == 0
        and not scan.findings
        and not scan.skipped
        and not scan.set_aside
    )


def _one_per_rule(findings: list[Finding]) -> list[Finding]:
    """The first (heaviest) finding of each rule, in the order given."""
    seen: set[str] = set()
    out = []
    for f in findings:
        if f.rule_id not in seen:
            seen.add(f.rule_id)
            out.append(f)
    return out


def _rule_reasons(ordered: list[Finding], limit: int | None) -> list[str]:
    """One reason per rule, in the order of its heaviest finding: where, what, how many more."""
    counts = Counter(f.rule_id for f in ordered)
    reasons = []
    for example in _one_per_rule(ordered)[:limit]:
        count = counts[example.rule_id]
        more = f" (and {count - 1} more)" if count > 1 else ""
        reasons.append(f"{example.rule_id} at {example.location}: {_headline(example)}{more}")
    return reasons


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
