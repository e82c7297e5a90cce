"""SARIF 2.1.0 output, for GitHub code scanning and other CI viewers.

Spec: https://docs.oasis-open.org/sarif/sarif/v2.1.0/sarif-v2.1.0.html ; the tests validate
the output against the official schema (tests/data/sarif-schema-2.1.0.json).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gpuport.assess.verdict import Assessment
from gpuport.findings import Confidence, Finding, Severity, SkipKind, Skipped
from gpuport.report import Format, RenderOptions, chunk_renderer, plan_formats
from gpuport.report.common import (
    TOOL_NAME,
    category_severity_table,
    fingerprint,
    folded_text,
    path_uri,
    sorted_findings,
    tool_version,
)
from gpuport.report.json_stream import Deferred, json_chunks
from gpuport.rules import Rule
from gpuport.scan.engine import ScanResult

SARIF_VERSION = "2.1.0"
# The id of the official schema (OASIS, errata 01), which the tests validate against.
SARIF_SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
SRCROOT = "SRCROOT"
# partialFingerprints keys carry a version so a change of the basis can be told apart
# (SARIF §3.27.17); this is the baseline fingerprint of gpuport.findings.Finding.fingerprint.
FINGERPRINT_KEY = "gpuportFingerprint/v1"

# SARIF has three result levels (§3.27.10); severities map onto them.
LEVEL_BY_SEVERITY = {
    Severity.BLOCKER: "error",
    Severity.HIGH: "error",
    Severity.MEDIUM: "warning",
    Severity.LOW: "note",
    Severity.INFO: "note",
}
# GitHub code scanning shows a rule's "security-severity" (a CVSS-like score as a string:
# 9.0 and over critical, 7.0-8.9 high, 4.0-6.9 medium, 0.1-3.9 low) and, for rules without
# one, its "problem.severity" (error, warning, recommendation):
# https://docs.github.com/en/code-security/code-scanning/integrating-with-code-scanning/sarif-support-for-code-scanning#reportingdescriptor-object
# An info finding breaks nothing, so it gets no score: GitHub shows it as a recommendation.
SECURITY_SEVERITY = {
    Severity.BLOCKER: "9.0",
    Severity.HIGH: "7.5",
    Severity.MEDIUM: "5.0",
    Severity.LOW: "2.0",
}
PROBLEM_SEVERITY = {
    Severity.BLOCKER: "error",
    Severity.HIGH: "error",
    Severity.MEDIUM: "warning",
    Severity.LOW: "recommendation",
    Severity.INFO: "recommendation",
}
# GitHub code scanning reads the rule's "precision" property to rank alerts.
PRECISION_BY_CONFIDENCE = {
    Confidence.HIGH: "high",
    Confidence.MEDIUM: "medium",
    Confidence.LOW: "low",
}
SKIP_DESCRIPTIONS = {
    SkipKind.MISSING: "a path given to gpuport does not exist",
    SkipKind.UNREADABLE: "a file could not be read",
    SkipKind.BINARY: "a binary file was not analysed",
    SkipKind.TOO_LARGE: "a file over the size limit was not analysed",
    SkipKind.NOT_UTF8: "a file that is not valid UTF-8 was analysed with replacement characters",
    SkipKind.SYNTAX: "a file's own language could not be parsed",
    SkipKind.MALFORMED: "a configuration or requirements file does not parse",
    SkipKind.SYMLINK_LOOP: "a symbolic link loops back on itself",
    SkipKind.OUTSIDE_ROOT: "a symbolic link or include leads out of the project; not followed",
    SkipKind.NOT_REGULAR: "a FIFO, socket or device node with a source file's name; not read",
    SkipKind.PORT_ARTIFACT: "a backup, journal or temporary file written by gpuport port",
    SkipKind.RULE_CRASH: "a gpuport scanner crashed; its findings for that file are missing",
}


def _artifact(path: str) -> dict[str, Any]:
    return {"uri": path_uri(path), "uriBaseId": SRCROOT}


def rule_descriptor(rule: Rule) -> dict[str, Any]:
    """A rule's reportingDescriptor (§3.49), generated from its one declaration."""
    help_text = (
        f"{rule.summary}.\n\nWhat it does: {rule.what}\n\nWhy: {rule.why}\n\nFix: {rule.fix}"
    )
    if rule.references:
        help_text += "\n\nReferences:\n" + "\n".join(f"- {r}" for r in rule.references)
    return {
        "id": rule.id,
        "name": rule.slug,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.what},
        "help": {"text": help_text, "markdown": rule.markdown()},
        "defaultConfiguration": {"level": LEVEL_BY_SEVERITY[rule.severity]},
        "properties": {
            "category": rule.category.value,
            "severity": rule.severity.label,
            "confidence": rule.confidence.label,
            "precision": PRECISION_BY_CONFIDENCE[rule.confidence],
            "problem.severity": PROBLEM_SEVERITY[rule.severity],
            **(
                {"security-severity": SECURITY_SEVERITY[rule.severity]}
                if rule.severity in SECURITY_SEVERITY
                else {}
            ),
            "mechanical": rule.mechanical,
            "tags": ["rocm", "portability", rule.category.value],
        },
    }


def region(line: int, column: int = 0, end_line: int = 0, end_column: int = 0) -> dict[str, int]:
    """A region (§3.30) with unknown (zero) values left out; {} for a whole file."""
    if line <= 0:
        return {}
    out = {"startLine": line}
    if column > 0:
        out["startColumn"] = column
    if end_line >= line:
        out["endLine"] = end_line
        if end_column > 0 and (end_line > line or column <= 0 or end_column >= column):
            out["endColumn"] = end_column
    return out


def _message(finding: Finding) -> str:
    text = finding.message
    fix = finding.fix
    if fix is not None and fix.text:
        # SARIF `fixes` need the exact region each replacement covers; the fix is given as
        # text instead, which every viewer shows.
        how = "gpuport port can fix this" if fix.mechanical else "needs review"
        text += f"\n\nFix ({how}): {fix.text}"
        if fix.replacement is not None:
            text += f"\nReplacement: {fix.replacement}"
    return text


def result_object(finding: Finding, rule_index: dict[str, int]) -> dict[str, Any]:
    """A finding as a SARIF result (§3.27)."""
    loc = finding.location
    physical: dict[str, Any] = {"artifactLocation": _artifact(loc.path)}
    where = region(loc.line, loc.column, loc.end_line, loc.end_column)
    if where:
        physical["region"] = where
        excerpt = finding.excerpt
        if excerpt is not None and excerpt.lines:
            end = excerpt.start_line + len(excerpt.lines) - 1
            if excerpt.start_line <= loc.line <= end and where.get("endLine", loc.line) <= end:
                physical["contextRegion"] = {
                    "startLine": excerpt.start_line,
                    "endLine": end,
                    "snippet": {"text": "\n".join(excerpt.lines) + "\n"},
                }
    out: dict[str, Any] = {"ruleId": finding.rule_id}
    if finding.rule_id in rule_index:
        out["ruleIndex"] = rule_index[finding.rule_id]
    out.update(
        {
            "level": LEVEL_BY_SEVERITY[finding.severity],
            "message": {"text": _message(finding)},
            "locations": [{"physicalLocation": physical}],
            "partialFingerprints": {FINGERPRINT_KEY: fingerprint(finding)},
            "properties": {
                "severity": finding.severity.label,
                "confidence": finding.confidence.label,
                "category": finding.category.value,
                "mechanical": finding.fix is not None and finding.fix.mechanical,
                "tier": finding.tier.value,
            },
        }
    )
    if finding.references:
        out["properties"]["references"] = list(finding.references)
    return out


def notification(skipped: Skipped, kinds: list[SkipKind]) -> dict[str, Any]:
    """A skipped input as a tool execution notification (§3.58)."""
    if skipped.kind is SkipKind.RULE_CRASH:
        level = "error"
    elif skipped.partial:
        level = "note"
    else:
        level = "warning"
    physical: dict[str, Any] = {"artifactLocation": _artifact(skipped.path)}
    where = region(skipped.line)
    if where:
        physical["region"] = where
    return {
        "level": level,
        "message": {"text": str(skipped)},
        "locations": [{"physicalLocation": physical}],
        "descriptor": {"id": skipped.kind.value, "index": kinds.index(skipped.kind)},
        "properties": {"kind": skipped.kind.value, "partial": skipped.partial},
    }


def sarif_log(
    result: ScanResult, options: RenderOptions, run_properties: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The whole SARIF log of one scan: one run, every enabled rule, every result."""
    rules = list(result.rules.values())  # every rule, in id order
    rule_index = {r.id: i for i, r in enumerate(rules)}
    kinds = list(SkipKind)
    skipped = sorted(result.skipped)
    driver: dict[str, Any] = {
        "name": TOOL_NAME,
        "version": tool_version(options),
        "rules": [rule_descriptor(r) for r in rules],
        "notifications": [
            {"id": kind.value, "shortDescription": {"text": SKIP_DESCRIPTIONS[kind]}}
            for kind in kinds
        ],
    }
    run: dict[str, Any] = {
        "tool": {"driver": driver},
        "invocations": [
            {
                "executionSuccessful": not result.crashed,
                "toolExecutionNotifications": [notification(s, kinds) for s in skipped],
            }
        ],
        "originalUriBaseIds": {
            SRCROOT: {"description": {"text": "The root of the scanned project."}}
        },
        "columnKind": "unicodeCodePoints",
        # made one at a time as the text is written: 50,000 results never exist at once
        "results": Deferred(
            lambda: (result_object(f, rule_index) for f in sorted_findings(result.findings))
        ),
        "properties": {
            "suppressed": result.suppressed,
            "baselined": result.baselined,
            "filesScanned": result.stats.files_scanned,
            **(
                {
                    "change": {
                        "base": result.change.base,
                        "mergeBase": result.change.merge_base,
                        "files": len(result.change.files),
                        "outside": result.outside_change,
                    }
                }
                if result.change is not None
                else {}
            ),
            **(run_properties or {}),
        },
    }
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}


@chunk_renderer(ScanResult, Format.SARIF)
def render_scan_sarif(result: ScanResult, options: RenderOptions) -> Iterable[str]:
    """The scan as a SARIF 2.1.0 log."""
    return json_chunks(sarif_log(result, options))


@chunk_renderer(Assessment, Format.SARIF)
def render_assessment_sarif(assessment: Assessment, options: RenderOptions) -> Iterable[str]:
    """The assessment's scan as SARIF, with the verdict and effort in the run's properties."""
    verdict: dict[str, object] = {
        "verdict": assessment.verdict.value,
        "reasons": list(assessment.reasons),
        "mechanical": assessment.mechanical,
        "actionable": assessment.actionable,
        "effortHours": round(assessment.total_hours, 2),
        "byCategoryAndSeverity": category_severity_table(assessment),
        "nextSteps": [
            f"{n}. {step.text}" + (f": {step.command}" if step.command else "")
            for n, step in enumerate(assessment.next_steps, start=1)
        ],
        "byTier": {tier.value: n for tier, n in assessment.tiers.items()},
        "folded": [folded_text(c) for c in assessment.folded],
    }
    if assessment.support is not None:
        verdict["rocmSupport"] = {
            "evidence": [str(e) for e in assessment.support.evidence],
            "how": assessment.support.how,
            "architectures": assessment.support.coverage.summary,
        }
    if assessment.plan is not None:
        verdict["plan"] = plan_formats.plan_json(assessment.plan)
    return json_chunks(sarif_log(assessment.scan, options, {"gpuport": verdict}))
