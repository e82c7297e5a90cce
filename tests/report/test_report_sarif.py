"""SARIF output: valid against the official 2.1.0 schema, and saying the right things."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from report_samples import (
    RULES,
    TOOL_VERSION,
    empty_assessment,
    empty_scan,
    hostile_scan,
    sample_assessment,
    sample_change_scan,
    sample_scan,
)

from gpuport.assess.verdict import Assessment
from gpuport.findings import Severity
from gpuport.report import Format, RenderOptions, render
from gpuport.scan.engine import ScanResult

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "data" / "sarif-schema-2.1.0.json"
OPTIONS = RenderOptions(tool_version=TOOL_VERSION)
BUILDERS: list[Callable[[], ScanResult | Assessment]] = [
    sample_scan,
    sample_change_scan,
    sample_assessment,
    hostile_scan,
    empty_scan,
    empty_assessment,
]


@pytest.fixture(scope="module")
def validator() -> jsonschema.protocols.Validator:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def sarif(result: ScanResult | Assessment) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(render(result, Format.SARIF, OPTIONS))
    return document


def run_of(result: ScanResult | Assessment) -> dict[str, Any]:
    run: dict[str, Any] = sarif(result)["runs"][0]
    return run


@pytest.mark.parametrize("build", BUILDERS, ids=[b.__name__ for b in BUILDERS])
def test_valid_against_the_official_schema(
    build: Callable[[], ScanResult | Assessment], validator: jsonschema.protocols.Validator
) -> None:
    errors = sorted(validator.iter_errors(sarif(build())), key=lambda e: list(e.path))
    assert errors == [], "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:5])


def test_every_enabled_rule_is_described() -> None:
    run = run_of(sample_scan())
    driver = run["tool"]["driver"]
    assert driver["name"] == "gpuport" and driver["version"] == TOOL_VERSION
    assert [r["id"] for r in driver["rules"]] == sorted(r.id for r in RULES)
    nvcc = next(r for r in driver["rules"] if r["id"] == "GP502")  # enabled, found nothing
    assert nvcc["name"] == "nvcc-flags"
    assert nvcc["shortDescription"]["text"] == "Build passes nvcc-only flags"
    assert nvcc["defaultConfiguration"]["level"] == "warning"
    assert nvcc["properties"]["category"] == "build"
    assert nvcc["properties"]["confidence"] == "high"
    assert nvcc["help"]["markdown"].startswith("# GP502 nvcc-flags")
    assert "Why:" in nvcc["help"]["text"]


def test_results_point_at_their_rule() -> None:
    run = run_of(sample_scan())
    rules = run["tool"]["driver"]["rules"]
    assert len(run["results"]) == 9
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]


def test_levels_follow_severity() -> None:
    run = run_of(sample_scan())
    levels = {(r["ruleId"], r["properties"]["severity"]): r["level"] for r in run["results"]}
    assert levels == {
        ("GP101", "blocker"): "error",
        ("GP201", "high"): "error",
        ("GP301", "high"): "error",
        ("GP102", "medium"): "warning",
        ("GP401", "medium"): "warning",
        ("GP302", "low"): "note",
        ("GP501", "low"): "note",
        ("GP202", "info"): "note",
    }


def _location(run: dict[str, Any], rule_id: str, line: int = -1) -> dict[str, Any]:
    for result in run["results"]:
        physical: dict[str, Any] = result["locations"][0]["physicalLocation"]
        if result["ruleId"] == rule_id and (
            line < 0 or physical.get("region", {}).get("startLine") == line
        ):
            return physical
    raise AssertionError(f"no {rule_id} result at line {line}")


def test_regions_leave_out_unknown_values() -> None:
    run = run_of(sample_scan())
    full = _location(run, "GP302")
    assert full["artifactLocation"] == {"uri": "csrc/kernels.cu", "uriBaseId": "SRCROOT"}
    assert full["region"] == {"startLine": 12, "startColumn": 5, "endLine": 12, "endColumn": 15}
    no_column = _location(run, "GP301", 57)
    assert no_column["region"] == {"startLine": 57, "endLine": 57}
    whole_file = _location(run, "GP501")
    assert "region" not in whole_file
    assert whole_file["artifactLocation"]["uri"] == "CMakeLists.txt"


def test_context_snippet_and_fingerprint() -> None:
    run = run_of(sample_scan())
    physical = _location(run, "GP101")
    assert physical["contextRegion"]["startLine"] == 1
    assert "cupy-cuda12x==13.1.0" in physical["contextRegion"]["snippet"]["text"]
    result = next(r for r in run["results"] if r["ruleId"] == "GP101")
    json_finding = next(
        f
        for f in json.loads(render(sample_scan(), Format.JSON, OPTIONS))["findings"]
        if f["rule_id"] == "GP101"
    )
    assert result["partialFingerprints"] == {"gpuportFingerprint/v1": json_finding["fingerprint"]}


def test_fix_is_in_the_message() -> None:
    run = run_of(sample_scan())
    image = next(r for r in run["results"] if r["ruleId"] == "GP401")
    assert "gpuport port can fix this" in image["message"]["text"]
    assert "FROM rocm/dev-ubuntu-22.04:6.4" in image["message"]["text"]
    assert image["properties"]["mechanical"] is True


def test_skipped_files_and_crashes_are_notifications() -> None:
    invocation = run_of(sample_scan())["invocations"][0]
    assert invocation["executionSuccessful"] is False  # a rule crashed
    notes = invocation["toolExecutionNotifications"]
    by_kind = {n["descriptor"]["id"]: n for n in notes}
    assert set(by_kind) == {"binary", "not-utf8", "malformed", "rule-crash"}
    assert by_kind["rule-crash"]["level"] == "error"
    assert by_kind["binary"]["level"] == "warning"
    assert by_kind["not-utf8"]["level"] == "note"
    located = by_kind["not-utf8"]["locations"][0]["physicalLocation"]
    assert located["region"] == {"startLine": 7}
    assert located["artifactLocation"]["uri"] == "csrc/legacy.cu"
    notifications = run_of(sample_scan())["tool"]["driver"]["notifications"]
    for note in notes:
        assert notifications[note["descriptor"]["index"]]["id"] == note["descriptor"]["id"]


def test_successful_without_crash() -> None:
    scan = sample_scan()
    scan.skipped = [s for s in scan.skipped if s.kind.value != "rule-crash"]
    assert run_of(scan)["invocations"][0]["executionSuccessful"] is True


def test_uris_are_percent_encoded() -> None:
    run = run_of(hostile_scan())
    uris = [
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]
    ]
    for uri in uris:
        assert not set(uri) & set('<>"[]() '), uri
    notes = run["invocations"][0]["toolExecutionNotifications"]
    assert "bad%FFname.cu" in [
        n["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for n in notes
    ]


def test_assessment_adds_the_verdict() -> None:
    run = run_of(sample_assessment())
    verdict = run["properties"]["gpuport"]
    assert verdict["verdict"] == "blocked"
    assert verdict["mechanical"] == 3 and verdict["actionable"] == 8
    assert verdict["effortHours"] == 25.55
    assert len(run["results"]) == 9


def test_the_schema_check_catches_a_broken_log(validator: jsonschema.protocols.Validator) -> None:
    document = sarif(sample_scan())
    document["runs"][0]["results"][0]["level"] = "fatal"
    del document["runs"][0]["invocations"][0]["executionSuccessful"]
    assert len(list(validator.iter_errors(document))) == 2


# GitHub code scanning's bands for security-severity (docs.github.com, "SARIF support for code
# scanning", reportingDescriptor object): over 9.0 critical, 7.0-8.9 high, 4.0-6.9 medium,
# 0.1-3.9 low.
GITHUB_BANDS = {"blocker": "critical", "high": "high", "medium": "medium", "low": "low"}


def _band(score: float) -> str:
    if score >= 9.0:
        return "critical"
    if score >= 7.0:
        return "high"
    if score >= 4.0:
        return "medium"
    return "low" if score > 0 else "none"


def test_code_scanning_shows_each_rules_severity() -> None:
    rules = run_of(sample_scan())["tool"]["driver"]["rules"]
    seen = set()
    for rule in rules:
        props = rule["properties"]
        seen.add(props["severity"])
        expected_problem = {"blocker": "error", "high": "error", "medium": "warning"}
        assert props["problem.severity"] == expected_problem.get(
            props["severity"], "recommendation"
        )
        if props["severity"] == "info":
            assert "security-severity" not in props  # breaks nothing: shown as a recommendation
            continue
        score = props["security-severity"]
        assert isinstance(score, str) and re.fullmatch(r"\d+\.\d", score)
        assert _band(float(score)) == GITHUB_BANDS[props["severity"]]
    assert seen == {s.label for s in Severity}  # every severity was checked


def test_every_result_has_a_fingerprint_and_its_rule_has_help() -> None:
    run = run_of(sample_change_scan())
    rules = run["tool"]["driver"]["rules"]
    assert run["results"]
    for result in run["results"]:
        prints = result["partialFingerprints"]
        assert list(prints) == ["gpuportFingerprint/v1"]
        assert re.fullmatch(r"[0-9a-f]{24}", prints["gpuportFingerprint/v1"])
        rule = rules[result["ruleIndex"]]
        assert rule["help"]["text"].startswith(rule["shortDescription"]["text"])
        assert rule["help"]["markdown"].startswith(f"# {rule['id']} ")


def test_a_change_scan_names_its_base() -> None:
    change = run_of(sample_change_scan())["properties"]["change"]
    assert change == {
        "base": "origin/main",
        "mergeBase": "0123456789abcdef" * 2 + "01234567",
        "files": 5,
        "outside": 4,
    }
    assert "change" not in run_of(sample_scan())["properties"]
