"""JSON output of scans and assessments: a stable, versioned document for machines.

Keys come in a fixed order and lists in a stable order, so two runs over the same project
give the same bytes except under ``"timing"``, the one key that golden tests strip.

This module also holds the few text helpers that every format shares (ordering, the
baseline fingerprint of a finding, and making hostile text visible), because it is the
lightest of the format modules.
"""

from __future__ import annotations

import importlib
import json
import re
from types import ModuleType
from typing import Any

from gpuport.assess.verdict import HOURS_PER_DAY, Assessment, day_range
from gpuport.findings import Finding, Severity, Skipped
from gpuport.report import Format, RenderOptions, renderer
from gpuport.rules import Rule
from gpuport.scan.engine import ScanResult

SCHEMA_VERSION = "1"
TOOL_NAME = "gpuport"

# Most serious first: the order every format lists severities in.
SEVERITIES_DESC: tuple[Severity, ...] = tuple(sorted(Severity, reverse=True))

# C0/C1 control characters (tab and newline excepted) and the bidirectional overrides and
# isolates used in "Trojan Source" attacks (https://trojansource.codes/, CVE-2021-42574):
# shown as visible escapes so scanned text can neither drive a terminal nor reorder what a
# reader sees.
_INVISIBLE_RE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def tool_version(options: RenderOptions) -> str:
    """The version to print: the caller's, or this installation's."""
    if options.tool_version:
        return options.tool_version
    from gpuport import __version__

    return __version__


def display_text(text: str) -> str:
    """``text`` made safe to show: control and bidi characters and undecodable bytes visible.

    Paths and file contents may hold bytes that were not UTF-8 (kept by Python as lone
    surrogates); they are shown as ``\\xNN`` rather than crashing the writer.
    """
    if any("\ud800" <= ch <= "\udfff" for ch in text):
        try:
            raw = text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            raw = text.encode("utf-8", "backslashreplace")
        text = raw.decode("utf-8", "backslashreplace")
    return _INVISIBLE_RE.sub(lambda m: _escape_char(m.group()), text)


def path_bytes(path: str) -> bytes:
    """A path's original bytes (undecodable ones come back from surrogateescape)."""
    try:
        return path.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate that did not come from a file name
        return path.encode("utf-8", "backslashreplace")


def _escape_char(ch: str) -> str:
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def sorted_findings(findings: list[Finding]) -> list[Finding]:
    """Findings in file order (path, line, column, rule)."""
    return sorted(findings, key=lambda f: f.sort_key)


def by_severity(findings: list[Finding]) -> list[Finding]:
    """Findings most serious first, then in file order."""
    return sorted(findings, key=lambda f: (-f.severity, f.sort_key))


def line_text(finding: Finding) -> str:
    """The text of the finding's own line, from its excerpt ("" when unknown)."""
    excerpt = finding.excerpt
    if excerpt is None or finding.location.line <= 0:
        return ""
    index = finding.location.line - excerpt.start_line
    return excerpt.lines[index] if 0 <= index < len(excerpt.lines) else ""


def fingerprint(finding: Finding) -> str:
    """The finding's baseline fingerprint (the same one ``--write-baseline`` records)."""
    return finding.fingerprint(line_text(finding))


def is_mechanical(finding: Finding) -> bool:
    return finding.fix is not None and finding.fix.mechanical


def fixable_counts(findings: list[Finding]) -> tuple[int, int]:
    """(findings gpuport can fix, actionable findings) — low severity or above."""
    actionable = [f for f in findings if f.severity >= Severity.LOW]
    return sum(1 for f in actionable if is_mechanical(f)), len(actionable)


def severity_counts(findings: list[Finding]) -> dict[str, int]:
    """Findings per severity label, most serious first, only severities that occur."""
    counts = {s.label: 0 for s in SEVERITIES_DESC}
    for f in findings:
        counts[f.severity.label] += 1
    return {k: v for k, v in counts.items() if v}


def category_severity_table(assessment: Assessment) -> dict[str, dict[str, int]]:
    """The assessment's category-by-severity counts with severities most serious first."""
    table = assessment.by_category_and_severity()
    return {
        category: {s.label: row[s.label] for s in SEVERITIES_DESC if s.label in row}
        for category, row in table.items()
    }


def hours_text(hours: float) -> str:
    """Hours for people: one decimal; under an hour, two significant digits (0.25, not 0.2)."""
    return f"{hours:.1f}" if hours >= 1 or hours == 0 else f"{hours:.2g}"


def days_text(hours: float) -> str:
    """The day range of an estimate, as the effort model states it."""
    low, high = day_range(hours)
    return f"{low:.1f}\u2013{high:.1f}"  # an en dash between the two ends


def plan_formats() -> ModuleType:
    """The plan stage's formatters, imported only when an assessment carries a plan.

    They live in gpuport.report.plan_formats (owned by the plan stage); importing them by
    name keeps every format working, and type-checking, while that module is absent.
    """
    return importlib.import_module("gpuport.report.plan_formats")


def dumps(document: object) -> str:
    """JSON text, UTF-8 friendly; undecodable path bytes stay as JSON ``\\udcNN`` escapes."""
    text = json.dumps(document, indent=2, ensure_ascii=False, default=str)
    # Lone surrogates cannot be written as UTF-8; "\udcNN" is also their JSON escape.
    return text.encode("utf-8", "backslashreplace").decode("utf-8") + "\n"


# --- documents -----------------------------------------------------------------------------


def finding_dict(finding: Finding, rules: dict[str, Rule]) -> dict[str, Any]:
    loc = finding.location
    rule = rules.get(finding.rule_id)
    fix = finding.fix
    excerpt = finding.excerpt
    return {
        "rule_id": finding.rule_id,
        "slug": rule.slug if rule else None,
        "severity": finding.severity.label,
        "confidence": finding.confidence.label,
        "category": finding.category.value,
        "location": {
            "path": loc.path,
            "line": loc.line,
            "column": loc.column,
            "end_line": loc.end_line,
            "end_column": loc.end_column,
        },
        "message": finding.message,
        "fix": None
        if fix is None
        else {"text": fix.text, "mechanical": fix.mechanical, "replacement": fix.replacement},
        "references": list(finding.references),
        "excerpt": None
        if excerpt is None
        else {"start_line": excerpt.start_line, "lines": list(excerpt.lines)},
        "fingerprint": fingerprint(finding),
    }


def skipped_dict(skipped: Skipped) -> dict[str, Any]:
    return {
        "path": skipped.path,
        "line": skipped.line,
        "kind": skipped.kind.value,
        "reason": skipped.reason,
        "partial": skipped.partial,
    }


def scan_body(result: ScanResult) -> dict[str, Any]:
    """The scan's content, without the document header or timing."""
    rules = {r.id: r for r in result.rules}
    findings = sorted_findings(result.findings)
    mechanical, actionable = fixable_counts(findings)
    worst = result.worst()
    stats = result.stats
    return {
        "root": result.root,
        "summary": {
            "findings": len(findings),
            "worst": worst.label if worst is not None else None,
            "by_severity": severity_counts(findings),
            "mechanical": mechanical,
            "actionable": actionable,
            "skipped": len(result.skipped),
            "crashed": len(result.crashed),
        },
        "findings": [finding_dict(f, rules) for f in findings],
        "skipped": [skipped_dict(s) for s in sorted(result.skipped)],
        "stats": {
            "files_seen": stats.files_seen,
            "files_scanned": stats.files_scanned,
            "bytes_scanned": stats.bytes_scanned,
            "by_kind": dict(sorted(stats.by_kind.items())),
            "suppressed": result.suppressed,
            "baselined": result.baselined,
        },
        "rules": sorted(r.id for r in result.rules),
    }


def _header(kind: str, options: RenderOptions) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": TOOL_NAME, "version": tool_version(options)},
        "kind": kind,
    }


def scan_document(result: ScanResult, options: RenderOptions) -> dict[str, Any]:
    return {
        **_header("scan", options),
        **scan_body(result),
        "timing": {"seconds": round(result.stats.seconds, 3)},
    }


def assessment_document(assessment: Assessment, options: RenderOptions) -> dict[str, Any]:
    rules = {r.id: r for r in assessment.scan.rules}
    total = assessment.total_hours
    plan: object = None
    if assessment.plan is not None:
        plan = plan_formats().plan_json(assessment.plan)
    return {
        **_header("assessment", options),
        "verdict": assessment.verdict.value,
        "reasons": list(assessment.reasons),
        "blockers": [finding_dict(f, rules) for f in sorted_findings(assessment.blockers)],
        "mechanical": assessment.mechanical,
        "actionable": assessment.actionable,
        "mechanical_share": round(assessment.mechanical_share, 4),
        "effort": {
            "lines": [
                {
                    "category": line.category.value,
                    "findings": line.findings,
                    "mechanical": line.mechanical,
                    "hours": round(line.hours, 2),
                    "days_low": round(line.days_low, 2),
                    "days_high": round(line.days_high, 2),
                }
                for line in assessment.effort
            ],
            "total_hours": round(total, 2),
            "total_days_low": round(day_range(total)[0], 2),
            "total_days_high": round(day_range(total)[1], 2),
            "hours_per_day": HOURS_PER_DAY,
            "assumptions": list(assessment.assumptions),
        },
        "by_category_and_severity": category_severity_table(assessment),
        "plan": plan,
        "extras": {k: assessment.extras[k] for k in sorted(assessment.extras)},
        "scan": scan_body(assessment.scan),
        "timing": {"scan_seconds": round(assessment.scan.stats.seconds, 3)},
    }


@renderer(ScanResult, Format.JSON)
def render_scan_json(result: ScanResult, options: RenderOptions) -> str:
    """The scan as a versioned JSON document."""
    return dumps(scan_document(result, options))


@renderer(Assessment, Format.JSON)
def render_assessment_json(assessment: Assessment, options: RenderOptions) -> str:
    """The assessment (verdict, effort, and the whole scan) as a versioned JSON document."""
    return dumps(assessment_document(assessment, options))
