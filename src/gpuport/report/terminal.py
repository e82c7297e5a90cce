"""Terminal output of scans and assessments, rendered with rich into text (a scan's in pieces).

Everything taken from scanned files goes through :func:`display_text` and into ``Text``
objects (never rich markup), so a file can neither style the output nor send escape codes
to the user's terminal.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping

from rich import box
from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from gpuport.assess.verdict import Assessment, Verdict
from gpuport.findings import Finding, Severity, SkipKind, Skipped, Tier
from gpuport.report import Format, RenderOptions, chunk_renderer, plan_formats, renderer
from gpuport.report.common import (
    SEVERITIES_DESC,
    TAB_SIZE,
    by_severity,
    category_severity_table,
    console_text,
    days_text,
    display_text,
    fixable_counts,
    folded_text,
    hours_text,
    listed_findings,
    memory_console,
    plural,
    severity_counts,
    skipped_where,
    sorted_findings,
    tier_text,
)
from gpuport.report.recommendation import terminal_renderables
from gpuport.rules import Rule
from gpuport.scan.engine import ScanResult

TOP_FINDINGS = 10  # how many findings `assess` shows in the terminal; `scan` shows them all
GUTTER = 8  # indent of a finding's message, excerpt and fix

SEVERITY_STYLE = {
    Severity.BLOCKER: "bold white on red",
    Severity.HIGH: "bold red",
    Severity.MEDIUM: "yellow",
    Severity.LOW: "cyan",
    Severity.INFO: "dim",
}
VERDICT_STYLE = {
    Verdict.ALREADY_SUPPORTS_ROCM: "bold green",
    Verdict.NOTHING_TO_ASSESS: "bold blue",
    Verdict.READY: "bold green",
    Verdict.READY_WITH_WORK: "bold yellow",
    Verdict.BLOCKED: "bold red",
}


def _indented(text: RenderableType, indent: int = GUTTER) -> Padding:
    """``text`` indented, wrapped lines included."""
    return Padding(text, (0, 0, 0, indent), expand=False)


def _severity(severity: Severity) -> Text:
    return Text(f"{severity.label:<7}", style=SEVERITY_STYLE[severity])


# --- pieces ---------------------------------------------------------------------------------


def _excerpt(finding: Finding, width: int) -> list[Text]:
    """Numbered lines around the finding; its own line marked, its column under a caret."""
    excerpt = finding.excerpt
    loc = finding.location
    if excerpt is None or not excerpt.lines:
        return []
    last = excerpt.start_line + len(excerpt.lines) - 1
    digits = len(str(last))
    room = max(10, width - GUTTER - digits - 5)
    out: list[Text] = []
    for number, raw in enumerate(excerpt.lines, start=excerpt.start_line):
        line = display_text(raw).expandtabs(TAB_SIZE)
        hit = number == loc.line
        if len(line) > room:
            line = line[: room - 1] + "…"
        row = Text(" " * (GUTTER - 2))
        row.append("> " if hit else "  ", style="bold red" if hit else "")
        row.append(f"{number:>{digits}} │ ", style="dim")
        row.append(line, style="bold" if hit else "")
        out.append(row)
        if hit and loc.column > 0:
            prefix = display_text(raw)[: loc.column - 1].expandtabs(TAB_SIZE)
            span = 1
            if loc.end_line == loc.line and loc.end_column > loc.column:
                span = loc.end_column - loc.column
            start = min(len(prefix), room - 1)
            span = max(1, min(span, room - start))
            caret = Text(" " * GUTTER + " " * digits + " │ " + " " * start)
            caret.append("^" * span, style="bold red")
            out.append(caret)
    return out


def _header(lead: Text, rest: Text, width: int) -> RenderableType:
    """``lead`` (where and severity) then ``rest`` (the rule), indented by 2; a wrapped line of
    ``rest`` hangs under its start, or, after a lead wider than half the line, under the lead."""
    start = 2 + lead.cell_len
    if start <= width // 2:
        grid = Table.grid()
        grid.add_column(width=start, no_wrap=True)
        grid.add_column(overflow="fold")
        grid.add_row(Text("  ").append_text(lead), rest)
        return grid
    lead.rstrip()
    return Group(_indented(lead, 2), _indented(rest, 4))


def _finding(finding: Finding, rules: Mapping[str, Rule], width: int, with_path: bool) -> Group:
    """One finding: where, severity and rule; the message; the excerpt; the fix."""
    loc = finding.location
    rule = rules.get(finding.rule_id)
    if with_path:
        where = display_text(str(loc))
    elif loc.line > 0:
        where = f"{loc.line}:{loc.column}" if loc.column > 0 else str(loc.line)
    else:
        where = "(file)"
    lead = Text(where, style="bold")
    lead.append("  ")
    lead.append_text(_severity(finding.severity))
    lead.append(" ")
    head = Text(finding.rule_id, style="bold")
    if rule is not None:
        head.append(f" {rule.slug}", style="dim")
    head.append(f"  ({finding.category.value}, {finding.confidence.label} confidence)", "dim")
    parts: list[RenderableType] = [
        _header(lead, head, width),
        _indented(Text(display_text(finding.message))),
    ]
    parts.extend(_excerpt(finding, width))
    fix = finding.fix
    if fix is not None and fix.text:
        fix_text = Text("fix: ", style="bold green")
        fix_text.append(display_text(fix.text))
        if fix.replacement is not None:
            fix_text.append("\nreplacement: ", style="bold green")
            fix_text.append(display_text(fix.replacement))
        parts.append(_indented(fix_text))
        if fix.mechanical:
            parts.append(_indented(Text("gpuport port can fix this", "bold green")))
    return Group(*parts)


def _skipped_cells(skipped: Skipped) -> tuple[Text, Text]:
    where = skipped_where(skipped)
    if skipped.kind is SkipKind.RULE_CRASH:
        verb, style = "rule crash", "bold red"
    elif skipped.partial:
        verb, style = f"partly analysed ({skipped.kind.value})", "yellow"
    else:
        verb, style = f"skipped ({skipped.kind.value})", "yellow"
    what = Text(verb, style=style)
    what.append(": " + display_text(skipped.reason))
    return Text(display_text(where), style="bold"), what


def _print_skipped(console: Console, skipped: list[Skipped]) -> None:
    if not skipped:
        return
    console.print()
    title = Text(f"Input problems ({len(skipped)})", style="bold")
    title.append(" — not analysed, or only in part; the results do not cover these", "dim")
    console.print(title)
    grid = Table.grid(padding=(0, 2), pad_edge=False)
    grid.add_column(overflow="fold", max_width=max(20, console.width // 3))
    grid.add_column(overflow="fold")
    for item in sorted(skipped):
        grid.add_row(*_skipped_cells(item))
    console.print(_indented(grid, 2))


def _summary(result: ScanResult, product: Assessment | None = None) -> Text:
    """The closing line; under an assessment, what gpuport fixes counts product code, as the
    assessment's own "gpuport can fix N of M" line above it does."""
    findings = result.findings
    counts = severity_counts(findings)
    mechanical, actionable = fixable_counts(findings)
    where = ""
    if product is not None:
        mechanical, actionable, where = product.mechanical, product.actionable, " in product code"
    files = len({f.location.path for f in findings})
    text = Text(plural(len(findings), "finding"), style="bold")
    if counts:
        text.append(" (" + ", ".join(f"{n} {label}" for label, n in counts.items()) + ")")
        text.append(f" in {plural(files, 'file')}")
    parts = [f"gpuport can fix {mechanical} of {actionable}{where}"] if actionable else []
    if result.skipped:
        crashes = len(result.crashed)
        extra = f" ({crashes} rule crash{'es' if crashes > 1 else ''})" if crashes else ""
        parts.append(plural(len(result.skipped), "input problem") + extra)
    stats = result.stats
    parts.append(f"{stats.files_scanned} of {plural(stats.files_seen, 'file')} scanned")
    if result.suppressed:
        parts.append(f"{result.suppressed} suppressed")
    if result.baselined:
        parts.append(f"{result.baselined} in the baseline")
    if result.change is not None:
        parts.append(
            f"only lines changed since {result.change.base}: {result.outside_change} outside them"
        )
    text.append(" · " + " · ".join(parts))
    return text


# --- scan -----------------------------------------------------------------------------------


# Rendered text is taken from the console once this much has gathered, so a scan of 50,000
# findings never holds its whole report (about 37 MB of text, several times that as rich's
# lines): benchmarks/scan_memory.py.
CHUNK_CHARS = 64 * 1024


def _taken(console: Console) -> str:
    """What the console printed since it was last taken (as :func:`console_text` gives it).

    Every print ends its line, so the pieces split where lines end and join to the text the
    console would have held whole.
    """
    text = console_text(console)
    console.file.seek(0)
    console.file.truncate()
    return text


@chunk_renderer(ScanResult, Format.TERMINAL)
def render_scan_terminal(result: ScanResult, options: RenderOptions) -> Iterator[str]:
    """Findings grouped by file, then input problems, then a summary line; in pieces."""
    console = memory_console(options)
    rules = result.rules
    header = Text("gpuport scan ", style="bold")
    header.append(display_text(result.root))
    console.print(header)
    ordered = sorted_findings(listed_findings(result.findings).findings)
    if not ordered and not result.stats.files_scanned and not result.skipped:
        console.print()
        console.print(
            Text(
                "Nothing to scan: no file here is one gpuport reads (Python, CUDA or C++ "
                "sources, notebooks, dependency files, Dockerfiles, build files).",
                style="bold",
            )
        )
    elif not ordered:
        console.print()
        console.print(Text("No findings: nothing found that breaks on ROCm.", style="green"))
    for path, findings in itertools.groupby(ordered, key=lambda f: f.location.path):
        console.print()
        console.print(Text(display_text(path), style="bold underline"))
        for index, finding in enumerate(findings):
            if index:
                console.print()
            console.print(_finding(finding, rules, options.width, with_path=False))
            if console.file.tell() >= CHUNK_CHARS:
                yield _taken(console)
    _print_skipped(console, result.skipped)
    console.print()
    console.print(_summary(result))
    yield _taken(console)


# --- assessment -----------------------------------------------------------------------------


def _verdict_panel(assessment: Assessment) -> Panel:
    style = VERDICT_STYLE[assessment.verdict]
    headline = Text("Verdict: ", style="bold")
    headline.append(assessment.verdict.value.upper(), style=style)
    # a grid, so that a reason's wrapped lines hang under its first word
    reasons = Table.grid()
    reasons.add_column(width=4, no_wrap=True)
    reasons.add_column()
    for reason in assessment.reasons:
        reasons.add_row(Text("  • "), Text(display_text(reason)))
    title = Text("gpuport assess ")
    title.append(display_text(assessment.scan.root))
    return Panel(
        Group(headline, reasons),
        title=title,
        title_align="left",
        border_style=style,
        box=box.ROUNDED,
    )


def _effort_table(assessment: Assessment) -> Table:
    table = Table(box=box.SIMPLE_HEAD, show_footer=True, pad_edge=False)
    total = assessment.total_hours
    table.add_column("category", footer="total")
    table.add_column(
        "findings", justify="right", footer=str(sum(e.findings for e in assessment.effort))
    )
    table.add_column(
        "gpuport fixes", justify="right", footer=str(sum(e.mechanical for e in assessment.effort))
    )
    table.add_column("hours", justify="right", footer=hours_text(total))
    table.add_column("days", justify="right", footer=days_text(total))
    for line in assessment.effort:
        table.add_row(
            line.category.value,
            str(line.findings),
            str(line.mechanical),
            hours_text(line.hours),
            days_text(line.hours),
        )
    return table


def _category_table(assessment: Assessment) -> Table:
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("category")
    for severity in SEVERITIES_DESC:
        table.add_column(severity.label, justify="right", style=SEVERITY_STYLE[severity])
    table.add_column("total", justify="right")
    for category, row in category_severity_table(assessment).items():
        cells = [str(row.get(s.label, 0) or "·") for s in SEVERITIES_DESC]
        table.add_row(category, *cells, str(sum(row.values())))
    return table


def _hanging_list(marks: list[str], lines: list[Text], style: str = "") -> Table:
    """A list whose wrapped lines hang under their first word (``1.``, ``•``)."""
    grid = Table.grid()
    grid.add_column(width=max((len(m) for m in marks), default=1) + 3, no_wrap=True)
    grid.add_column(overflow="fold")  # a long URL breaks across lines, never cut short
    for mark, line in zip(marks, lines, strict=True):
        grid.add_row(Text(f"  {mark} ", style), line)
    return grid


def _print_next_steps(console: Console, assessment: Assessment) -> None:
    if not assessment.next_steps:
        return
    console.print()
    console.print(Text("Next steps", style="bold"))
    lines = []
    for step in assessment.next_steps:
        line = Text(display_text(step.text))
        if step.command:  # on a line of its own, so that it copies whole
            line.append(":\n")
            line.append(display_text(step.command), style="bold cyan")
        lines.append(line)
    marks = [f"{n}." for n in range(1, len(lines) + 1)]
    console.print(_hanging_list(marks, lines))


def _print_top(console: Console, assessment: Assessment) -> None:
    if not assessment.top:
        return
    console.print()
    title = Text(f"Most serious first ({len(assessment.top)}, one per rule), with the fix", "bold")
    console.print(title)
    lines = []
    for finding in assessment.top:
        line = Text(display_text(str(finding.location)), style="bold")
        line.append("  ")
        line.append_text(_severity(finding.severity))
        line.append(f" {finding.rule_id}: ")
        line.append(display_text(finding.message))
        if finding.fix is not None and finding.fix.text:
            line.append("\nfix: ", style="bold green")
            line.append(display_text(finding.fix.text))
            if finding.fix.mechanical:
                line.append(" (gpuport port can fix this)", style="green")
        lines.append(line)
    console.print(_hanging_list(["•"] * len(lines), lines))


def _print_tiers_and_folded(console: Console, assessment: Assessment) -> None:
    tiers = tier_text(assessment)
    if tiers and set(assessment.tiers) != {Tier.PRODUCT}:
        console.print()
        line = Text("Findings by tier: ", style="bold")
        line.append(tiers)
        line.append(" (only product code counts toward the verdict and the effort)", "dim")
        console.print(line)
    if assessment.folded:
        console.print()
        console.print(Text(f"Folded components ({len(assessment.folded)})", style="bold"))
        lines = [Text(display_text(folded_text(c))) for c in assessment.folded]
        console.print(_hanging_list(["•"] * len(lines), lines))


@renderer(Assessment, Format.TERMINAL)
def render_assessment_terminal(assessment: Assessment, options: RenderOptions) -> str:
    """Verdict first, then blockers, what gpuport fixes, effort, the table, top findings."""
    console = memory_console(options)
    scan = assessment.scan
    rules = scan.rules
    if assessment.recommendation is not None:  # should we move, above what breaks
        for part in terminal_renderables(assessment.recommendation, scan.root, console.width):
            console.print(part)
    console.print(_verdict_panel(assessment))
    _print_next_steps(console, assessment)
    _print_top(console, assessment)
    _print_tiers_and_folded(console, assessment)

    if assessment.blockers:
        console.print()
        console.print(Text(f"Blockers ({len(assessment.blockers)})", style="bold red"))
        for finding in sorted_findings(assessment.blockers):
            line = Text("  ")
            line.append(display_text(str(finding.location)), style="bold")
            line.append(f"  {finding.rule_id}  ")
            line.append(display_text(finding.message))
            console.print(line)

    console.print()
    if assessment.actionable:
        share = Text("gpuport can fix ", style="bold")
        share.append(f"{assessment.mechanical} of {assessment.actionable}", style="bold green")
        share.append(
            f" actionable findings in product code ({assessment.mechanical_share:.0%}) with"
            " `gpuport port`;"
            " the rest need a person."
        )
    else:
        share = Text("No actionable findings: nothing to fix.", style="green")
    console.print(share)

    if assessment.effort:
        console.print()
        console.print(
            Text(
                f"{assessment.effort_title}: {hours_text(assessment.total_hours)} hours"
                f" ({days_text(assessment.total_hours)} days)",
                style="bold",
            )
        )
        console.print(_effort_table(assessment))
        console.print(Text("Assumptions:", style="dim"))
        assumptions = [Text(display_text(a), "dim") for a in assessment.assumptions]
        console.print(_hanging_list(["-"] * len(assumptions), assumptions, style="dim"))

    if scan.findings:
        console.print()
        console.print(Text("Findings by category and severity", style="bold"))
        console.print(_category_table(assessment))
        shown = listed_findings(scan.findings).findings  # one line per folder for renames
        top = by_severity(shown)[:TOP_FINDINGS]
        title = Text(f"Top findings ({len(top)} of {len(shown)}, most serious first)")
        title.stylize("bold")
        console.print(title)
        for finding in top:
            console.print()
            console.print(_finding(finding, rules, options.width, with_path=True))
        if len(shown) > len(top):
            more = Text(
                f"… and {len(shown) - len(top)} more: `gpuport scan` lists them all,"
                " and the HTML report shows each one.",
                style="dim",
            )
            console.print(_indented(more, 2))

    _print_skipped(console, scan.skipped)

    if assessment.plan is not None:
        console.print()
        # Rendered by the plan's own formatter (honouring options.color): written verbatim.
        section = plan_formats.plan_terminal_section(assessment.plan, options)
        console.file.write(section if section.endswith("\n") else section + "\n")
    console.print()
    console.print(_summary(scan, assessment))
    return console_text(console)
