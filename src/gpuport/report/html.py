"""The self-contained HTML report: one file, inline CSS and SVG, no script, no network.

Everything taken from the scanned project (paths, messages, excerpts, fixes, rule text)
reaches the page through Jinja2 with autoescaping on, or through :func:`html.escape` in the
SVG chart drawn here; a Content-Security-Policy forbids scripts and every outside fetch and
admits only the page's own stylesheet (by hash), so even a missed escape could not run code,
restyle the page or phone home. Filtering by severity is plain
CSS (``:has()`` on checkboxes); without it every finding is simply shown.
"""

from __future__ import annotations

import functools
import html
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

import jinja2
from markupsafe import Markup

from gpuport.assess.verdict import Assessment, Verdict, count_by_category
from gpuport.findings import Category, Finding, Severity, SkipKind, Skipped
from gpuport.report import Format, RenderOptions, chunk_renderer, plan_formats
from gpuport.report.common import (
    SEVERITIES_DESC,
    Listed,
    by_severity,
    days_text,
    display_text,
    fixable_counts,
    folded_text,
    hours_text,
    listed_findings,
    plural,
    skipped_where,
    tier_text,
    tool_version,
    with_content_security_policy,
)
from gpuport.report.recommendation import OUTCOME_TITLE
from gpuport.report.recommendation_html import payback_kpi, recommendation_section
from gpuport.rules import Rule
from gpuport.scan.engine import ScanResult

MAX_LINE = 400  # excerpt lines are cut here (minified files)

SEVERITY_COLOR = {
    Severity.BLOCKER: "#7f1d1d",
    Severity.HIGH: "#dc2626",
    Severity.MEDIUM: "#d97706",
    Severity.LOW: "#2563eb",
    Severity.INFO: "#6b7280",
}
VERDICT_TITLE = {
    Verdict.ALREADY_SUPPORTS_ROCM: "Already supports ROCm",
    Verdict.NOTHING_TO_ASSESS: "Nothing to assess",
    Verdict.READY: "Ready for ROCm",
    Verdict.READY_WITH_WORK: "Ready with work",
    Verdict.BLOCKED: "Blocked",
}


# --- view model: plain values, already made displayable; the template only escapes -------


@dataclass(frozen=True, slots=True)
class Segment:
    text: str
    marked: bool = False


@dataclass(frozen=True, slots=True)
class CodeLine:
    number: int
    segments: tuple[Segment, ...]
    hit: bool


@dataclass(frozen=True, slots=True)
class Reference:
    text: str
    href: str | None  # only http(s) links become links


@dataclass(frozen=True, slots=True)
class FindingView:
    anchor: str
    rule_id: str
    rule_anchor: str | None
    slug: str | None
    severity: str
    confidence: str
    category: str
    location: str
    message: str
    fix: str | None
    mechanical: bool
    replacement: str | None
    references: tuple[Reference, ...]
    code: tuple[CodeLine, ...]


@dataclass(frozen=True, slots=True)
class SeverityGroup:
    severity: str
    title: str
    findings: Iterable[FindingView]  # made one at a time, as the page is written


@dataclass(frozen=True, slots=True)
class SkippedView:
    where: str
    status: str
    kind: str
    reason: str
    css: str


@dataclass(frozen=True, slots=True)
class RuleView:
    anchor: str
    id: str
    slug: str
    summary: str
    category: str
    severity: str
    what: str
    why: str
    fix: str
    mechanical: bool
    references: tuple[Reference, ...]


@dataclass(frozen=True, slots=True)
class Banner:
    css: str
    kicker: str
    heading: str
    reasons: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class EffortRow:
    category: str
    findings: int
    mechanical: int
    hours: str
    days: str


@dataclass(frozen=True, slots=True)
class Effort:
    rows: tuple[EffortRow, ...]
    total: EffortRow
    assumptions: tuple[str, ...]
    title: str = "Estimated effort"


@dataclass(frozen=True, slots=True)
class StepView:
    text: str
    command: str


@dataclass(frozen=True, slots=True)
class TopView:
    anchor: str
    severity: str
    rule_id: str
    location: str
    message: str
    fix: str | None
    mechanical: bool


@dataclass(frozen=True, slots=True)
class Guidance:
    """What the assessment says to do, above everything else on the page."""

    steps: tuple[StepView, ...]
    top: tuple[TopView, ...]
    evidence: tuple[str, ...]  # the project's own ROCm path, file:line and what it shows
    how: str
    archs: str
    tiers: str
    folded: tuple[str, ...]


def _guidance(assessment: Assessment, listed: Listed) -> Guidance:
    ordered = by_severity(listed.findings)  # the order the page numbers its findings in
    position = {id(f): n for n, f in enumerate(ordered, start=1)}
    top = tuple(
        TopView(
            # a finding folded into its folder's line links to that line
            anchor=f"finding-{position.get(id(listed.shown_as(f)), 0)}",
            severity=f.severity.label,
            rule_id=display_text(f.rule_id),
            location=display_text(str(f.location)),
            message=display_text(f.message),
            fix=display_text(f.fix.text) if f.fix is not None and f.fix.text else None,
            mechanical=f.fix is not None and f.fix.mechanical,
        )
        for f in assessment.top
    )
    support = assessment.support
    return Guidance(
        steps=tuple(
            StepView(display_text(s.text), display_text(s.command)) for s in assessment.next_steps
        ),
        top=top,
        evidence=tuple(display_text(str(e)) for e in support.evidence) if support else (),
        how=display_text(support.how) if support else "",
        archs=display_text(support.coverage.summary) if support else "",
        tiers=display_text(tier_text(assessment)),
        folded=tuple(display_text(folded_text(c)) for c in assessment.folded),
    )


def _reference(text: str) -> Reference:
    scheme = urlsplit(text.strip()).scheme.lower() if text.strip() else ""
    shown = display_text(text)
    return Reference(shown, text.strip() if scheme in ("http", "https") else None)


def _segments(raw: str, finding: Finding, hit: bool) -> tuple[Segment, ...]:
    """The line, with the finding's columns marked on its own line when they are known."""
    loc = finding.location
    if not hit or loc.column <= 0 or loc.column > len(raw):
        return (Segment(_cut(raw)),)
    start = loc.column - 1
    end = start + 1
    if loc.end_line == loc.line and loc.end_column > loc.column:
        end = min(len(raw), loc.end_column - 1)
        end = max(end, start + 1)
    parts = (Segment(raw[:start]), Segment(raw[start:end], True), Segment(raw[end:]))
    return tuple(Segment(_cut(p.text), p.marked) for p in parts if p.text)


def _cut(text: str) -> str:
    text = display_text(text)
    return text if len(text) <= MAX_LINE else text[: MAX_LINE - 1] + "…"


def _code(finding: Finding) -> tuple[CodeLine, ...]:
    excerpt = finding.excerpt
    if excerpt is None:
        return ()
    lines = []
    for number, raw in enumerate(excerpt.lines, start=excerpt.start_line):
        hit = number == finding.location.line
        lines.append(CodeLine(number, _segments(raw, finding, hit), hit))
    return tuple(lines)


def _finding_view(index: int, finding: Finding, rules: Mapping[str, Rule]) -> FindingView:
    rule = rules.get(finding.rule_id)
    fix = finding.fix
    return FindingView(
        anchor=f"finding-{index}",
        rule_id=display_text(finding.rule_id),
        rule_anchor=f"rule-{rule.id}" if rule is not None else None,
        slug=rule.slug if rule is not None else None,
        severity=finding.severity.label,
        confidence=finding.confidence.label,
        category=finding.category.value,
        location=display_text(str(finding.location)),
        message=display_text(finding.message),
        fix=display_text(fix.text) if fix is not None and fix.text else None,
        mechanical=fix is not None and fix.mechanical,
        replacement=display_text(fix.replacement)
        if fix is not None and fix.replacement is not None
        else None,
        references=tuple(_reference(r) for r in finding.references),
        code=_code(finding),
    )


def _groups(
    findings: list[Finding], counts: dict[str, int], rules: Mapping[str, Rule]
) -> tuple[SeverityGroup, ...]:
    """The findings most serious first, a group per severity; each finding's view is made
    only when the page reaches it (a list of 50,000 views took hundreds of MB)."""
    ordered = by_severity(findings)  # most serious first: each severity's findings are a run
    groups = []
    start = 0
    for severity in SEVERITIES_DESC:
        count = counts[severity.label]
        if count:
            title = f"{severity.label.capitalize()} ({count})"
            members = _views(ordered, start, start + count, rules)
            groups.append(SeverityGroup(severity.label, title, members))
        start += count
    return tuple(groups)


def _views(
    ordered: list[Finding], start: int, stop: int, rules: Mapping[str, Rule]
) -> Iterator[FindingView]:
    """Views of ``ordered[start:stop]``, numbered from ``start + 1`` across the page."""
    for index in range(start, stop):
        yield _finding_view(index + 1, ordered[index], rules)


def _skipped_view(skipped: Skipped) -> SkippedView:
    where = skipped_where(skipped)
    if skipped.kind is SkipKind.RULE_CRASH:
        status, css = "rule crash", "crash"
    elif skipped.partial:
        status, css = "partly analysed", "partial"
    else:
        status, css = "skipped", "skipped"
    return SkippedView(
        display_text(where), status, skipped.kind.value, display_text(skipped.reason), css
    )


def _rule_views(findings: list[Finding], rules: Mapping[str, Rule]) -> tuple[RuleView, ...]:
    fired = sorted({f.rule_id for f in findings if f.rule_id in rules})
    return tuple(
        RuleView(
            anchor=f"rule-{r.id}",
            id=r.id,
            slug=r.slug,
            summary=display_text(r.summary),
            category=r.category.value,
            severity=r.severity.label,
            what=display_text(r.what),
            why=display_text(r.why),
            fix=display_text(r.fix),
            mechanical=r.mechanical,
            references=tuple(_reference(ref) for ref in r.references),
        )
        for r in (rules[i] for i in fired)
    )


def category_counts(findings: list[Finding]) -> dict[Category, dict[Severity, int]]:
    """Findings per category, every severity present (zeros too, for the chart's stacks)."""
    return {
        category: {s: row.get(s, 0) for s in SEVERITIES_DESC}
        for category, row in count_by_category(findings).items()
    }


def chart_svg(findings: list[Finding]) -> Markup:
    """Stacked horizontal bars: findings by category, each bar split by severity."""
    table = category_counts(findings)
    if not table:
        return Markup("")
    label_w, bar_w, count_w, row_h, bar_h, top = 120, 440, 48, 30, 20, 8
    width = label_w + bar_w + count_w
    legend_y = top + row_h * len(table) + 12
    height = legend_y + 28
    biggest = max(sum(row.values()) for row in table.values())
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        'aria-labelledby="chart-title chart-desc">',
        '<title id="chart-title">Findings by category and severity</title>',
        '<desc id="chart-desc">One bar per category; its segments count the findings of '
        "each severity, most serious first.</desc>",
    ]
    for row_index, (category, row) in enumerate(table.items()):
        y = top + row_index * row_h
        parts.append(
            f'<text x="{label_w - 8}" y="{y + bar_h - 5}" text-anchor="end" class="axis">'
            f"{html.escape(category.value)}</text>"
        )
        x = float(label_w)
        for severity, count in row.items():
            if not count:
                continue
            w = bar_w * count / biggest
            parts.append(
                f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{bar_h}" '
                f'fill="{SEVERITY_COLOR[severity]}"><title>'
                f"{html.escape(category.value)}, {severity.label}: {count}</title></rect>"
            )
            x += w
        parts.append(
            f'<text x="{x + 6:.1f}" y="{y + bar_h - 5}" class="count">{sum(row.values())}</text>'
        )
    x = float(label_w)
    for severity in SEVERITIES_DESC:
        parts.append(
            f'<rect x="{x:.0f}" y="{legend_y}" width="12" height="12" '
            f'fill="{SEVERITY_COLOR[severity]}"/>'
            f'<text x="{x + 16:.0f}" y="{legend_y + 11}" class="legend">{severity.label}</text>'
        )
        x += 16 + 8 * len(severity.label) + 18
    parts.append("</svg>")
    return Markup("".join(parts))


def _table_rows(findings: list[Finding]) -> list[tuple[str, list[int], int]]:
    return [
        (category.value, [row[s] for s in SEVERITIES_DESC], sum(row.values()))
        for category, row in category_counts(findings).items()
    ]


def _effort(assessment: Assessment) -> Effort | None:
    if not assessment.effort:
        return None
    rows = tuple(
        EffortRow(
            e.category.value, e.findings, e.mechanical, hours_text(e.hours), days_text(e.hours)
        )
        for e in assessment.effort
    )
    total_hours = assessment.total_hours
    total = EffortRow(
        "total",
        sum(e.findings for e in assessment.effort),
        sum(e.mechanical for e in assessment.effort),
        hours_text(total_hours),
        days_text(total_hours),
    )
    return Effort(
        rows,
        total,
        tuple(display_text(a) for a in assessment.assumptions),
        assessment.effort_title,
    )


# --- rendering ------------------------------------------------------------------------------


@functools.cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("gpuport.report", "templates"),
        autoescape=True,  # every {{ value }} is HTML-escaped unless it is Markup
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


# The page is written in pieces of about this many characters (jinja yields every fragment).
CHUNK_CHARS = 64 * 1024


def _render(
    *,
    kind: str,
    scan: ScanResult,
    banner: Banner,
    kpis: list[tuple[str, str]],
    options: RenderOptions,
    effort: Effort | None = None,
    plan_html: Markup | None = None,
    plan_summary: Markup | None = None,
    guidance: Guidance | None = None,
    listed: Listed | None = None,
    recommendation: Markup | None = None,
) -> Iterator[str]:
    """The page in pieces: jinja's ``generate`` over findings viewed as it reaches them."""
    rules = scan.rules
    findings = scan.findings
    # listed one line per folder for "one decision" mentions; tables and charts count them all
    shown = (listed or listed_findings(findings)).findings
    by_label = Counter(f.severity.label for f in shown)
    counts = {s.label: by_label[s.label] for s in SEVERITIES_DESC}
    template = _environment().get_template("report.html.j2")
    pieces = template.generate(
        kind=kind,
        root=display_text(scan.root),
        version=tool_version(options),
        banner=banner,
        kpis=kpis,
        effort=effort,
        chart=chart_svg(findings),
        severities=[s.label for s in SEVERITIES_DESC],
        severity_colors={s.label: SEVERITY_COLOR[s] for s in SEVERITIES_DESC},
        severity_counts=counts,
        category_rows=_table_rows(findings),
        groups=_groups(shown, counts, rules),
        skipped=[_skipped_view(s) for s in sorted(scan.skipped)],
        rules=_rule_views(findings, rules),
        plan_html=plan_html,
        plan_summary=plan_summary,
        guidance=guidance,
        recommendation=recommendation,
        suppressed=scan.suppressed,
        baselined=scan.baselined,
    )
    return _with_policy(_gathered(pieces))


def _gathered(pieces: Iterable[str]) -> Iterator[str]:
    """``pieces`` joined into runs of at least :data:`CHUNK_CHARS` characters."""
    run: list[str] = []
    size = 0
    for piece in pieces:
        run.append(piece)
        size += len(piece)
        if size >= CHUNK_CHARS:
            yield "".join(run)
            run, size = [], 0
    yield "".join(run)


def _with_policy(chunks: Iterable[str]) -> Iterator[str]:
    """The page with its Content-Security-Policy, added to the head once the head is whole.

    The policy hashes the page's <style> blocks, and only the template's head has one: text
    from the project after it is escaped, so it holds no tag at all.
    """
    head = ""
    chunks = iter(chunks)
    for chunk in chunks:
        seen = len(head)
        head += chunk
        if "</head>" in head[max(0, seen - len("</head>")) :]:
            break
    yield with_content_security_policy(head)  # the whole page, if it had no head
    yield from chunks


def _kpis(scan: ScanResult, mechanical: int, actionable: int) -> list[tuple[str, str]]:
    stats = scan.stats
    crashes = len(scan.crashed)
    problems = str(len(scan.skipped)) + (f" ({crashes} rule crash)" if crashes == 1 else "")
    if crashes > 1:
        problems = f"{len(scan.skipped)} ({crashes} rule crashes)"
    return [
        ("findings", str(len(scan.findings))),
        ("gpuport can fix", f"{mechanical} of {actionable}"),
        ("input problems", problems),
        ("files scanned", f"{stats.files_scanned} of {stats.files_seen}"),
    ]


@chunk_renderer(ScanResult, Format.HTML)
def render_scan_html(result: ScanResult, options: RenderOptions) -> Iterator[str]:
    """The scan as one self-contained HTML page, in pieces."""
    worst = result.worst()
    mechanical, actionable = fixable_counts(result.findings)
    count = len(result.findings)
    heading = f"{count} finding{'s' if count != 1 else ''}"
    reasons: tuple[str, ...] = ()
    kicker = "gpuport scan"
    kpis = _kpis(result, mechanical, actionable)
    if result.change is not None:  # `scan --diff`: say the page shows one change only
        change, outside = result.change, result.outside_change
        kicker = f"gpuport scan --diff {display_text(change.base)}"
        heading += " in this change"
        elsewhere = (
            f"{plural(outside, 'finding')} on other lines {'is' if outside == 1 else 'are'}"
            " not listed"
            if outside
            else "no finding is on other lines"
        )
        reasons = (
            f"Only the lines changed since {display_text(change.base)} (merge base"
            f" {change.short_base}) were checked, in {plural(len(change.files), 'file')};"
            f" {elsewhere}.",
        )
        kpis.append(("outside the change", str(outside)))
    if worst is not None:
        heading += f", the worst {worst.label}"
    if result.crashed:
        reasons += ("a gpuport rule crashed: results for some files are incomplete",)
    banner = Banner(f"worst-{worst.label}" if worst else "worst-none", kicker, heading, reasons)
    return _render(kind="scan", scan=result, banner=banner, kpis=kpis, options=options)


@chunk_renderer(Assessment, Format.HTML)
def render_assessment_html(assessment: Assessment, options: RenderOptions) -> Iterator[str]:
    """The assessment as one self-contained HTML page, in pieces: what `gpuport assess` writes."""
    scan = assessment.scan
    banner = Banner(
        "verdict-" + assessment.verdict.name.lower().replace("_", "-"),
        "gpuport assess",
        VERDICT_TITLE[assessment.verdict],
        tuple(display_text(r) for r in assessment.reasons),
    )
    kpis = _kpis(scan, assessment.mechanical, assessment.actionable)
    total = assessment.total_hours
    kpis.insert(2, ("estimated effort", f"{hours_text(total)} h ({days_text(total)} days)"))
    decision = None
    if assessment.recommendation is not None:
        # should we move heads the page; the verdict becomes the readiness part under it
        decided = assessment.recommendation
        decision = recommendation_section(
            decided, VERDICT_TITLE[assessment.verdict], banner.reasons
        )
        banner = Banner(
            "outcome-" + decided.outcome.value,
            "gpuport assess",
            OUTCOME_TITLE[decided.outcome],
            (display_text(decided.headline),),
        )
        kpis.insert(0, ("readiness", VERDICT_TITLE[assessment.verdict]))
        payback = payback_kpi(decided)
        if payback is not None:
            kpis.insert(1, payback)
    plan_html = plan_summary = None
    if assessment.plan is not None:
        # The plan helpers return already-escaped fragments (their own contract).
        plan_html = Markup(plan_formats.plan_html_section(assessment.plan))
        plan_summary = Markup(plan_formats.plan_html_summary(assessment.plan))
    listed = listed_findings(scan.findings)
    return _render(
        kind="assess",
        scan=scan,
        banner=banner,
        kpis=kpis,
        options=options,
        effort=_effort(assessment),
        plan_html=plan_html,
        plan_summary=plan_summary,
        guidance=_guidance(assessment, listed),
        listed=listed,
        recommendation=decision,
    )
