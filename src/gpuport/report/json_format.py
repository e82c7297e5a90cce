"""JSON output of scans and assessments: a stable, versioned document for machines.

Keys come in a fixed order and lists in a stable order, so two runs over the same project
give the same bytes except under ``"timing"``, the one key that golden tests strip.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gpuport.assess.verdict import HOURS_PER_DAY, Assessment, day_range
from gpuport.findings import Finding, Skipped
from gpuport.report import Format, RenderOptions, chunk_renderer, plan_formats
from gpuport.report.common import (
    TOOL_NAME,
    category_severity_table,
    fingerprint,
    fixable_counts,
    json_path,
    severity_counts,
    sorted_findings,
    tool_version,
)
from gpuport.report.json_stream import Deferred, json_chunks
from gpuport.rules import Rule
from gpuport.scan.engine import ScanResult

SCHEMA_VERSION = "1"


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
            **json_path(loc.path),
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
        **json_path(skipped.path),
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
        # made one at a time as the text is written: 50,000 findings' dicts never exist at once
        "findings": Deferred(lambda: (finding_dict(f, rules) for f in findings)),
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
        plan = plan_formats.plan_json(assessment.plan)
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


@chunk_renderer(ScanResult, Format.JSON)
def render_scan_json(result: ScanResult, options: RenderOptions) -> Iterable[str]:
    """The scan as a versioned JSON document."""
    return json_chunks(scan_document(result, options))


@chunk_renderer(Assessment, Format.JSON)
def render_assessment_json(assessment: Assessment, options: RenderOptions) -> Iterable[str]:
    """The assessment (verdict, effort, and the whole scan) as a versioned JSON document."""
    return json_chunks(assessment_document(assessment, options))
