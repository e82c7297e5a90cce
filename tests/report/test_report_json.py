"""JSON output: a versioned document with stable keys, every finding field, and timing apart."""

from __future__ import annotations

import json
from urllib.parse import unquote_to_bytes

from report_samples import (
    TOOL_VERSION,
    decided_assessment,
    hostile_scan,
    sample_assessment,
    sample_scan,
)

from gpuport.report import Format, RenderOptions, render
from gpuport.report.common import dumps

OPTIONS = RenderOptions(tool_version=TOOL_VERSION)


def test_scan_document_header_and_order() -> None:
    document = json.loads(render(sample_scan(), Format.JSON, OPTIONS))
    assert list(document)[:3] == ["schema_version", "tool", "kind"]
    assert document["schema_version"] == "1"
    assert document["tool"] == {"name": "gpuport", "version": TOOL_VERSION}
    assert document["kind"] == "scan"
    keys = [(f["location"]["path"], f["location"]["line"]) for f in document["findings"]]
    assert keys == sorted(keys)
    assert [s["path"] for s in document["skipped"]] == sorted(
        s["path"] for s in document["skipped"]
    )


def test_timing_is_kept_apart() -> None:
    document = json.loads(render(sample_scan(), Format.JSON, OPTIONS))
    assert document["timing"] == {"seconds": 0.842}
    assert "seconds" not in json.dumps({k: v for k, v in document.items() if k != "timing"})


def test_finding_fields() -> None:
    document = json.loads(render(sample_scan(), Format.JSON, OPTIONS))
    by_rule = {f["rule_id"]: f for f in document["findings"]}
    image = by_rule["GP401"]
    assert image["slug"] == "cuda-base-image"
    assert image["severity"] == "medium"
    assert image["confidence"] == "high"
    assert image["category"] == "containers"
    assert image["location"] == {
        "path": "Dockerfile",
        "line": 1,
        "column": 0,
        "end_line": 1,
        "end_column": 0,
    }
    assert image["fix"] == {
        "text": "Build on a ROCm image.",
        "mechanical": True,
        "replacement": "FROM rocm/dev-ubuntu-22.04:6.4",
    }
    assert image["excerpt"]["start_line"] == 1
    assert image["excerpt"]["lines"][0].startswith("FROM nvidia/cuda")
    assert by_rule["GP101"]["references"] == ["https://rocm.docs.amd.com/en/latest/"]
    assert len(image["fingerprint"]) == 24


def test_skipped_and_stats() -> None:
    document = json.loads(render(sample_scan(), Format.JSON, OPTIONS))
    crash = next(s for s in document["skipped"] if s["kind"] == "rule-crash")
    assert crash["path"] == "src/train.py" and crash["partial"] is False
    partial = next(s for s in document["skipped"] if s["kind"] == "not-utf8")
    assert partial == {
        "path": "csrc/legacy.cu",
        "line": 7,
        "kind": "not-utf8",
        "reason": "not valid UTF-8 (byte 0xff); analysed with replacement characters",
        "partial": True,
    }
    assert document["summary"]["crashed"] == 1
    assert document["summary"]["by_severity"] == {
        "blocker": 1,
        "high": 3,
        "medium": 2,
        "low": 2,
        "info": 1,
    }
    assert document["stats"]["by_kind"] == dict(sorted(document["stats"]["by_kind"].items()))
    assert document["stats"]["suppressed"] == 2 and document["stats"]["baselined"] == 1


def test_assessment_document() -> None:
    document = json.loads(render(sample_assessment(), Format.JSON, OPTIONS))
    assert document["kind"] == "assessment"
    assert document["verdict"] == "blocked"
    assert document["reasons"][0].startswith("GP101 at requirements.txt:3:1")
    assert [b["rule_id"] for b in document["blockers"]] == ["GP101"]
    assert document["mechanical"] == 3 and document["actionable"] == 8
    effort = document["effort"]
    assert [line["category"] for line in effort["lines"]] == [
        "dependencies",
        "python",
        "kernels",
        "containers",
        "build",
    ]
    assert effort["total_hours"] == 25.55
    assert effort["assumptions"][0] == "an engineer who knows the code but not ROCm"
    assert document["by_category_and_severity"]["kernels"] == {"high": 2, "low": 1}
    assert list(document["by_category_and_severity"]["python"]) == ["high", "info"]
    assert document["plan"] is None
    assert len(document["scan"]["findings"]) == 9
    assert "timing" not in document["scan"]
    assert document["timing"] == {"scan_seconds": 0.842}


def test_undecodable_path_is_valid_text_with_its_exact_bytes_beside_it() -> None:
    text = render(hostile_scan(), Format.JSON, OPTIONS)
    document = json.loads(text.encode("utf-8").decode("utf-8", "strict"))
    assert not any("\ud800" <= ch <= "\udfff" for ch in text)  # nothing a strict parser refuses
    (bad,) = [s for s in document["skipped"] if s["path"].startswith("bad")]
    assert bad["path"] == "bad\ufffdname.cu"
    assert unquote_to_bytes(bad["uri"]) == b"bad\xffname.cu"  # the name, exactly
    assert all("uri" not in s for s in document["skipped"] if s is not bad)


def test_json_escapes_c1_controls_and_line_separators() -> None:
    text = dumps({"k": "nel\x85 csi\x9b del\x7f ls\u2028 ps\u2029 esc\x1b lone\udc80\ud800"})
    assert text == (
        '{\n  "k": "nel\\u0085 csi\\u009b del\\u007f ls\\u2028 ps\\u2029 esc\\u001b'
        ' lone\ufffd\ufffd"\n}\n'
    )
    assert json.loads(text)["k"].startswith("nel\x85 csi\x9b")


def test_display_text_makes_hidden_characters_visible() -> None:
    from gpuport.report.common import display_text

    assert display_text("a\x1b[31mb\x07") == "a\\x1b[31mb\\x07"
    assert display_text("x\u202ey\u2066z") == "x\\u202ey\\u2066z"
    assert display_text("tab\tand\nnewline stay") == "tab\tand\nnewline stay"
    assert display_text("bad\udcffname") == "bad\\xffname"
    assert display_text("naïve ✓") == "naïve ✓"


def test_the_recommendation_comes_first_with_its_documented_shape() -> None:
    document = json.loads(render(decided_assessment(), Format.JSON, OPTIONS))
    assert list(document)[:5] == ["schema_version", "tool", "kind", "recommendation", "verdict"]
    decided = document["recommendation"]
    assert list(decided) == [
        "outcome",
        "title",
        "headline",
        "decisive",
        "factors",
        "economics",
        "missing",
        "asks",
        "settings",
    ]
    assert decided["asks"] == [{"factors": ["latency-critical"], "ask": decided["missing"][0]}]
    assert decided["outcome"] == "pilot-first"
    assert decided["decisive"] == ["custom-cuda-kernels", "team-rocm-experience"]
    # every factor, decisive first; an unknown one carries what to tell gpuport
    assert [f["id"] for f in decided["factors"]][:2] == decided["decisive"]
    unknown = next(f for f in decided["factors"] if f["state"] == "unknown")
    assert unknown["ask"] and unknown["direction"] == "neutral"
    economics = decided["economics"]
    assert economics["best"] == "mi300x"
    assert economics["today"]["usd_per_month"] == 17520.0
    assert economics["payback_months"] == {"low": 2.47, "high": 4.93}
    assert decided["settings"]["tokens_per_month"] == 2.0e10
    assert decided["settings"]["regulated"] is None


def test_an_assessment_without_a_recommendation_keeps_its_old_shape() -> None:
    document = json.loads(render(sample_assessment(), Format.JSON, OPTIONS))
    assert "recommendation" not in document
