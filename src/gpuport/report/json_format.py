"""JSON output of scans and assessments: a stable, versioned document for machines.

Keys come in a fixed order and lists in a stable order, so two runs over the same project
give the same bytes except under ``"timing"``, the one key that golden tests strip.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from gpuport.assess.guidance import RocmSupport
from gpuport.assess.verdict import HOURS_PER_DAY, Assessment, count_by_tier, day_range
from gpuport.findings import Finding, Skipped
from gpuport.project.model import Evidence, ProjectModel
from gpuport.report import Format, RenderOptions, chunk_renderer
from gpuport.report.common import (
    TOOL_NAME,
    category_severity_table,
    change_dict,
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

# Additions keep the version (issue 9 added "tier" on findings, "by_tier", "set_aside" (a count
# in the summary, and the folded findings' places when there are any) and "project" to a scan, and "next_steps", "top", "tiers", "folded" and "rocm_support" to an
# assessment; issue 13 added "recommendation", first in an assessment that has one); a key that
# changes meaning or goes away would take "2".
SCHEMA_VERSION = "1"


# --- documents -----------------------------------------------------------------------------


def finding_dict(finding: Finding, rules: Mapping[str, Rule]) -> dict[str, Any]:
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
        "tier": finding.tier.value,
    }


def evidence_dict(evidence: Evidence) -> dict[str, Any]:
    return {**json_path(evidence.path), "line": evidence.line, "what": evidence.what}


def project_dict(model: ProjectModel | None) -> dict[str, Any] | None:
    """What the project model found (None when the scan built none)."""
    if model is None:
        return None
    return {
        "name": model.name,
        "supports_rocm": model.supports_rocm,
        "rocm_support": [evidence_dict(e) for e in model.rocm_support],
        "rocm_archs": list(model.rocm_archs),
        "components": [
            {
                **json_path(c.path),
                "status": c.status.value,
                "rocm_alternative": c.rocm_alternative,
                "evidence": [evidence_dict(e) for e in c.evidence],
                # files elsewhere that belong to it (an op's extra's requirements file)
                **({"files": list(c.files)} if c.files else {}),
            }
            for c in model.components
        ],
        "notes": list(model.notes),
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
    rules = result.rules
    findings = sorted_findings(result.findings)
    mechanical, actionable = fixable_counts(findings)
    worst = result.worst()
    stats = result.stats
    body: dict[str, Any] = {
        "root": result.root,
        "summary": {
            "findings": len(findings),
            "worst": worst.label if worst is not None else None,
            "by_severity": severity_counts(findings),
            "mechanical": mechanical,
            "actionable": actionable,
            "skipped": len(result.skipped),
            "crashed": len(result.crashed),
            "by_tier": {t.value: n for t, n in count_by_tier(findings).items()},
            "set_aside": len(result.set_aside),
        },
        "project": project_dict(result.project),
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
        "rules": list(result.rules),  # ids, sorted
    }
    if result.set_aside:  # where each folded finding is, so that a reader can find it again
        body["set_aside"] = [_set_aside_dict(f) for f in result.set_aside]
    if result.change is not None:  # `scan --diff`: the findings are those of a change only
        body["change"] = change_dict(result.change, result.outside_change)
    return body


def _set_aside_dict(finding: Finding) -> dict[str, Any]:
    """Where a set-aside finding is, with its line's text when its excerpt has it (so that a
    reader who pairs by text, like the precision scorer, finds it after lines moved)."""
    loc = finding.location
    place: dict[str, Any] = {"rule_id": finding.rule_id, "path": loc.path, "line": loc.line}
    excerpt = finding.excerpt
    if excerpt is not None and 0 <= loc.line - excerpt.start_line < len(excerpt.lines):
        place["text"] = excerpt.lines[loc.line - excerpt.start_line]
    return place


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
    rules = assessment.scan.rules
    total = assessment.total_hours
    plan: object = None
    if assessment.plan is not None:
        from gpuport.report import plan_formats  # only an assessment with a plan needs it

        plan = plan_formats.plan_json(assessment.plan)
    # The recommendation comes first; a document made without one (an assessment built before
    # the decision, as in older callers) keeps the shape it always had, without the key.
    decision: dict[str, Any] = {}
    if assessment.recommendation is not None:
        from gpuport.report.recommendation import recommendation_json  # loads plan's tables

        decision["recommendation"] = recommendation_json(assessment.recommendation)
    return {
        **_header("assessment", options),
        **decision,
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
            "title": assessment.effort_title,
        },
        "by_category_and_severity": category_severity_table(assessment),
        "next_steps": [
            {"step": n, "text": step.text, "command": step.command or None}
            for n, step in enumerate(assessment.next_steps, start=1)
        ],
        "top": [finding_dict(f, rules) for f in assessment.top],
        "tiers": {tier.value: n for tier, n in assessment.tiers.items()},
        "folded": [
            {
                **json_path(c.path),
                "status": c.status,
                "findings": c.findings,
                "rocm_alternative": c.alternative,
                "evidence": [evidence_dict(e) for e in c.evidence],
            }
            for c in assessment.folded
        ],
        "rocm_support": _support_dict(assessment.support),
        "rocm_elsewhere": assessment.elsewhere or None,
        "plan": plan,
        "extras": {k: assessment.extras[k] for k in sorted(assessment.extras)},
        "scan": scan_body(assessment.scan),
        "timing": {"scan_seconds": round(assessment.scan.stats.seconds, 3)},
    }


def _support_dict(support: RocmSupport | None) -> dict[str, Any] | None:
    if support is None:
        return None
    coverage = support.coverage
    return {
        "evidence": [evidence_dict(e) for e in support.evidence],
        "how": support.how,
        "package": support.package or None,
        "index": support.index or None,
        "archs": {
            "named": list(coverage.named),
            "instinct_covered": list(coverage.instinct_covered),
            "instinct_missing": list(coverage.instinct_missing),
            "radeon_covered": list(coverage.radeon_covered),
            "radeon_missing": list(coverage.radeon_missing),
            "summary": coverage.summary,
        },
    }


@chunk_renderer(ScanResult, Format.JSON)
def render_scan_json(result: ScanResult, options: RenderOptions) -> Iterable[str]:
    """The scan as a versioned JSON document."""
    return json_chunks(scan_document(result, options))


@chunk_renderer(Assessment, Format.JSON)
def render_assessment_json(assessment: Assessment, options: RenderOptions) -> Iterable[str]:
    """The assessment (verdict, effort, and the whole scan) as a versioned JSON document."""
    return json_chunks(assessment_document(assessment, options))
