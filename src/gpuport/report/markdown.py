"""Markdown output of scans and assessments, sized and escaped for a pull-request comment.

Text from scanned files (paths, messages, excerpts, fixes) is escaped so that it renders
as the text it is: a hostile file name cannot add links, images, HTML, tables or mentions.
Escapes follow CommonMark (https://spec.commonmark.org/0.31.2/#backslash-escapes) and
GitHub Flavored Markdown (https://github.github.com/gfm/).
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping

from gpuport.assess.verdict import Assessment
from gpuport.findings import Finding, Severity, SkipKind, Skipped
from gpuport.report import Format, RenderOptions, plan_formats, renderer
from gpuport.report.common import (
    SEVERITIES_DESC,
    by_severity,
    category_severity_table,
    days_text,
    display_text,
    fingerprint,
    fixable_counts,
    folded_text,
    hours_text,
    is_mechanical,
    link_target,
    listed_findings,
    md_code_cell,
    md_text,
    plural,
    severity_counts,
    skipped_where,
    tier_text,
    tool_version,
)
from gpuport.report.recommendation import READINESS_TITLE, markdown_lines
from gpuport.rules import Rule
from gpuport.scan.engine import ScanResult
from gpuport.vcs import ChangedLines

MAX_FINDINGS = 200  # a GitHub comment holds 65,536 characters; the rest is in SARIF/HTML
COLLAPSE_AFTER = 10  # longer lists fold into <details>
ALWAYS_COLLAPSED = frozenset({Severity.LOW, Severity.INFO})
MAX_LINE = 300  # excerpt lines are cut here (minified files)

_LANGUAGE_BY_SUFFIX = {
    ".py": "python",
    ".cu": "cuda",
    ".cuh": "cuda",
    ".c": "c",
    ".h": "cpp",
    ".hpp": "cpp",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".sh": "bash",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".toml": "toml",
    ".cmake": "cmake",
}
_LANGUAGE_BY_NAME = {"dockerfile": "dockerfile", "cmakelists.txt": "cmake", "makefile": "make"}


def _language(path: str) -> str:
    name = path.rsplit("/", 1)[-1].lower()
    if name in _LANGUAGE_BY_NAME or name.startswith("dockerfile"):
        return _LANGUAGE_BY_NAME.get(name, "dockerfile")
    for suffix, language in _LANGUAGE_BY_SUFFIX.items():
        if name.endswith(suffix):
            return language
    return "text"


def _details(summary: str, body: list[str]) -> list[str]:
    """A collapsible block; ``summary`` must already be HTML-safe."""
    return [f"<details><summary>{summary}</summary>", "", *body, "", "</details>"]


def _excerpt(finding: Finding, indent: str) -> list[str]:
    excerpt = finding.excerpt
    if excerpt is None or not excerpt.lines:
        return []
    last = excerpt.start_line + len(excerpt.lines) - 1
    digits = len(str(last))
    rows = []
    for number, raw in enumerate(excerpt.lines, start=excerpt.start_line):
        line = display_text(raw)
        if len(line) > MAX_LINE:
            line = line[: MAX_LINE - 1] + "…"
        mark = ">" if number == finding.location.line else " "
        rows.append(f"{mark} {number:>{digits}} | {line}".rstrip())
    # A fence longer than any run of backticks in the code, so the code cannot close it.
    longest = max((len(m) for m in re.findall(r"`+", "\n".join(rows))), default=0)
    fence = "`" * max(3, longest + 1)
    body = [f"{fence}{_language(finding.location.path)}", *rows, fence]
    return ["", *(indent + row for row in body)]


def _finding(finding: Finding, rules: Mapping[str, Rule], base: str = "") -> list[str]:
    loc = finding.location
    rule = rules.get(finding.rule_id)
    slug = f" `{rule.slug}`" if rule is not None else ""
    where = f"[{md_text(str(loc))}]({link_target(loc.path, loc.line, base)})"
    head = (
        f"- **{md_text(finding.rule_id)}**{slug} · {where} · {finding.category.value},"
        f" {finding.confidence.label} confidence\\"  # a backslash ends a line: a hard break
    )
    lines = [head, f"  {md_text(finding.message)}"]
    fix = finding.fix
    if fix is not None and fix.text:
        lines[-1] += "\\"
        fix_line = f"  **Fix:** {md_text(fix.text)}"
        if fix.replacement is not None:
            fix_line += f" → {md_text(fix.replacement)}"
        if fix.mechanical:
            fix_line += " *(gpuport port can fix this)*"
        lines.append(fix_line)
    lines.extend(_excerpt(finding, "  "))
    return lines


def _findings_section(
    findings: list[Finding], rules: Mapping[str, Rule], level: str, base: str = ""
) -> list[str]:
    """Findings grouped by severity, most serious first; long or minor groups folded."""
    if not findings:
        return []
    out = [f"{level} Findings", ""]
    shown = by_severity(findings)[:MAX_FINDINGS]
    for severity in SEVERITIES_DESC:
        group = [f for f in shown if f.severity is severity]
        if not group:
            continue
        body: list[str] = []
        for finding in group:
            body.extend(_finding(finding, rules, base))
            body.append("")
        body.pop()
        title = f"{severity.label.capitalize()} ({len(group)})"
        out.append(f"{level}# {title}")
        out.append("")
        if len(group) > COLLAPSE_AFTER or severity in ALWAYS_COLLAPSED:
            out.extend(_details(f"Show {plural(len(group), severity.label + ' finding')}", body))
        else:
            out.extend(body)
        out.append("")
    if len(findings) > len(shown):
        out.append(
            f"*… and {len(findings) - len(shown)} more findings, left out to keep this comment"
            " short: the SARIF, JSON or HTML report lists every one.*"
        )
        out.append("")
    return out


def _skipped_line(skipped: Skipped, base: str = "") -> str:
    where = skipped_where(skipped)
    if skipped.kind is SkipKind.RULE_CRASH:
        verb = "**rule crash**"
    elif skipped.partial:
        verb = f"partly analysed ({skipped.kind.value})"
    else:
        verb = f"skipped ({skipped.kind.value})"
    link = f"[{md_text(where)}]({link_target(skipped.path, skipped.line, base)})"
    return f"- {link}: {verb}: {md_text(skipped.reason)}"


def _skipped_section(skipped: list[Skipped], level: str, base: str = "") -> list[str]:
    if not skipped:
        return []
    lines = [_skipped_line(s, base) for s in sorted(skipped)]
    out = [
        f"{level} Input problems ({len(skipped)})",
        "",
        "Not analysed, or only in part; the results do not cover these.",
        "",
    ]
    if len(lines) > COLLAPSE_AFTER:
        out.extend(_details(f"Show {plural(len(lines), 'input problem')}", lines))
    else:
        out.extend(lines)
    out.append("")
    return out


def _severity_table(findings: list[Finding]) -> list[str]:
    rows = ["| severity | findings | gpuport can fix |", "|---|---:|---:|"]
    for severity in SEVERITIES_DESC:
        group = [f for f in findings if f.severity is severity]
        if group:
            fixable = sum(1 for f in group if is_mechanical(f))
            rows.append(f"| {severity.label} | {len(group)} | {fixable} |")
    fixable = sum(1 for f in findings if is_mechanical(f))
    rows.append(f"| **total** | **{len(findings)}** | **{fixable}** |")
    return rows


def _problems(result: ScanResult, noun: bool = True) -> str:
    text = plural(len(result.skipped), "input problem") if noun else str(len(result.skipped))
    crashes = len(result.crashed)
    if crashes:
        text += f" ({crashes} rule crash{'es' if crashes > 1 else ''})"
    return text


def _footer(options: RenderOptions) -> list[str]:
    return [f"<sub>gpuport {html.escape(tool_version(options))}</sub>"]


# The first line of a `scan --diff` comment: CI finds its earlier comment by it and edits that
# one instead of adding another (scripts/ci/gpuport-pr.sh).
PR_COMMENT_MARKER = "<!-- gpuport:scan-diff -->"
# Opens the hidden list of the listed findings' fingerprints (rule, file and the line's text:
# not its number, so a finding that an edit above it moves keeps its fingerprint).
FINGERPRINTS_OPEN = "<!-- gpuport:fingerprints"


def _code_span(text: str) -> str:
    """Untrusted text as an inline code span outside a table (no ``|`` to escape there)."""
    text = " ".join(display_text(text).splitlines())
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    return f"{ticks} {text} {ticks}" if longest else f"{ticks}{text}{ticks}"


def _change_sentence(findings: list[Finding]) -> str:
    """'This change adds **2 ROCm blockers** and 3 other findings (1 high, 2 medium).'"""
    counts = severity_counts(findings)
    if not findings:
        return "This change adds no ROCm findings."
    blockers = counts.pop(Severity.BLOCKER.label, 0)
    others = ", ".join(f"{n} {label}" for label, n in counts.items())
    if not blockers:
        return f"This change adds **{plural(len(findings), 'ROCm finding')}** ({others})."
    head = f"This change adds **{plural(blockers, 'ROCm blocker')}**"
    if not others:
        return head + "."
    rest = len(findings) - blockers
    return f"{head} and {plural(rest, 'other finding')} ({others})."


def _fingerprint_block(findings: list[Finding]) -> list[str]:
    """The listed findings' fingerprints in an HTML comment: hidden, kept by a comment's edit."""
    prints = [f"{fingerprint(f)} {f.rule_id}" for f in findings]
    return [FINGERPRINTS_OPEN, *prints, "-->"]


def render_change_markdown(result: ScanResult, change: ChangedLines, options: RenderOptions) -> str:
    """`scan --diff` as a pull-request comment: what this change adds, most serious first."""
    rules = result.rules
    listed = listed_findings(result.findings).findings
    elsewhere = (
        f" {plural(result.outside_change, 'finding')} on lines this change does not touch"
        f" {'is' if result.outside_change == 1 else 'are'} not listed."
        if result.outside_change
        else ""
    )
    out = [
        PR_COMMENT_MARKER,
        "## gpuport: ROCm findings in this change",
        "",
        _change_sentence(result.findings),
        "",
        f"Checked: the lines changed since {_code_span(change.base)} (merge base"
        f" `{change.short_base}`), in {plural(len(change.files), 'file')}.{elsewhere}",
        "",
    ]
    if result.findings:
        out.extend([*_severity_table(result.findings), ""])
    out.extend(_findings_section(listed, rules, "###", options.link_base))
    out.extend(_skipped_section(result.skipped, "###", options.link_base))
    out.extend(_fingerprint_block(by_severity(listed)[:MAX_FINDINGS]))
    out.extend(_footer(options))
    return "\n".join(out) + "\n"


@renderer(ScanResult, Format.MARKDOWN)
def render_scan_markdown(result: ScanResult, options: RenderOptions) -> str:
    """A summary table, findings by severity with file:line links, then input problems.

    After `scan --diff`, a pull-request comment instead (:func:`render_change_markdown`).
    """
    if result.change is not None:
        return render_change_markdown(result, result.change, options)
    rules = result.rules
    findings = result.findings
    mechanical, actionable = fixable_counts(findings)
    stats = result.stats
    out = [
        f"## gpuport scan: {plural(len(findings), 'finding')}",
        "",
        f"**{md_text(result.root)}** · {stats.files_scanned} of"
        f" {plural(stats.files_seen, 'file')} scanned · gpuport can fix {mechanical} of"
        f" {actionable} · {_problems(result)}",
        "",
    ]
    if findings:
        out.extend([*_severity_table(findings), ""])
    else:
        out.extend(["No findings: nothing found that breaks on ROCm.", ""])
    out.extend(
        _findings_section(listed_findings(findings).findings, rules, "###", options.link_base)
    )
    out.extend(_skipped_section(result.skipped, "###", options.link_base))
    out.extend(_footer(options))
    return "\n".join(out) + "\n"


def _guidance(assessment: Assessment) -> list[str]:
    """Next steps, the heaviest findings with their fixes, and the folded components."""
    out: list[str] = []
    if assessment.next_steps:
        out.extend(["### Next steps", ""])
        for n, step in enumerate(assessment.next_steps, start=1):
            command = f": {md_code_cell(step.command)}" if step.command else ""
            out.append(f"{n}. {md_text(step.text)}{command}")
        out.append("")
    if assessment.top:
        out.extend(["### Most serious first, with the fix", ""])
        for f in assessment.top:
            fix = f" — fix: {md_text(f.fix.text)}" if f.fix is not None and f.fix.text else ""
            out.append(
                f"- **{f.severity.label}** {f.rule_id} at {md_code_cell(str(f.location))}: "
                f"{md_text(f.message)}{fix}"
            )
        out.append("")
    if assessment.folded:
        out.extend(
            [
                "### Folded components",
                "",
                *(f"- {md_text(folded_text(c))}" for c in assessment.folded),
                "",
            ]
        )
    return out


@renderer(Assessment, Format.MARKDOWN)
def render_assessment_markdown(assessment: Assessment, options: RenderOptions) -> str:
    """Verdict and reasons, a summary table, effort, the category table, findings, problems."""
    scan = assessment.scan
    rules = scan.rules
    counts = severity_counts(scan.findings)
    breakdown = ", ".join(f"{n} {label}" for label, n in counts.items())
    total = assessment.total_hours
    heading = f"## gpuport assess: **{assessment.verdict.value}**"
    out: list[str] = []
    if assessment.recommendation is not None:  # should we move, above what breaks
        out.extend(markdown_lines(assessment.recommendation))
        heading = f"## {READINESS_TITLE}: **{assessment.verdict.value}**"
    out += [
        heading,
        "",
        *(f"- {md_text(reason)}" for reason in assessment.reasons),
        "",
        *_guidance(assessment),
        "| | |",
        "|---|---|",
        f"| project | {md_text(scan.root)} |",
        f"| verdict | **{assessment.verdict.value}** |",
        f"| findings | {len(scan.findings)}{f' ({breakdown})' if breakdown else ''} |",
        f"| gpuport can fix | {assessment.mechanical} of {assessment.actionable}"
        f" ({assessment.mechanical_share:.0%}) |",
        f"| estimated effort | {hours_text(total)} hours ({days_text(total)} days) |",
        f"| input problems | {_problems(scan, noun=False)} |",
        *([f"| findings by tier | {tier_text(assessment)} |"] if assessment.tiers else []),
        "",
    ]
    if assessment.effort:
        out.extend(
            [
                # "Effort" for a port; the title says so when it is the gaps of a ROCm path
                "### Effort" if assessment.support is None else f"### {assessment.effort_title}",
                "",
                "| category | findings | gpuport fixes | hours | days |",
                "|---|---:|---:|---:|---:|",
                *(
                    f"| {e.category.value} | {e.findings} | {e.mechanical} | {hours_text(e.hours)}"
                    f" | {days_text(e.hours)} |"
                    for e in assessment.effort
                ),
                f"| **total** | **{sum(e.findings for e in assessment.effort)}**"
                f" | **{sum(e.mechanical for e in assessment.effort)}** | **{hours_text(total)}**"
                f" | **{days_text(total)}** |",
                "",
                *_details(
                    "Assumptions behind the estimate",
                    [f"- {md_text(a)}" for a in assessment.assumptions],
                ),
                "",
            ]
        )
    table = category_severity_table(assessment)
    if table:
        out.extend(
            [
                "### Findings by category and severity",
                "",
                "| category | " + " | ".join(s.label for s in SEVERITIES_DESC) + " | total |",
                "|---|" + "---:|" * (len(SEVERITIES_DESC) + 1),
                *(
                    f"| {category} | "
                    + " | ".join(str(row.get(s.label, 0)) for s in SEVERITIES_DESC)
                    + f" | {sum(row.values())} |"
                    for category, row in table.items()
                ),
                "",
            ]
        )
    out.extend(_findings_section(listed_findings(scan.findings).findings, rules, "###"))
    out.extend(_skipped_section(scan.skipped, "###"))
    if assessment.plan is not None:
        section = plan_formats.plan_markdown_section(assessment.plan)
        out.extend([section.rstrip("\n"), ""])
    out.extend(_footer(options))
    return "\n".join(out) + "\n"
