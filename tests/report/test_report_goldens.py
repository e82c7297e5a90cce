"""Golden outputs: every declared format of a hand-made result of every type, byte for byte."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from bench_report_samples import sample_bench_comparison, sample_bench_list, sample_bench_run
from doctor_samples import sample_doctor
from report_golden import GOLDEN_DIR, Golden
from report_samples import (
    TOOL_VERSION,
    decided_assessment,
    rocm_assessment,
    sample_assessment,
    sample_change_scan,
    sample_scan,
)
from result_samples import (
    sample_kb_counts,
    sample_kb_lookup,
    sample_kb_table,
    sample_plan,
    sample_plan_sweep,
    sample_port,
    sample_rule,
    sample_rule_index,
)
from serve_samples import sample_serve_bench, sample_serve_verify
from verify_samples import sample_verify

from gpuport.report import DECLARED_FORMATS, Format, RenderOptions, formats_for, render

SUFFIX = {
    Format.TERMINAL: "terminal.txt",
    Format.JSON: "json",
    Format.SARIF: "sarif",
    Format.MARKDOWN: "md",
    Format.HTML: "html",
}
SAMPLES: dict[str, Callable[[], object]] = {
    "scan": sample_scan,
    "scan-diff": sample_change_scan,
    "assessment": sample_assessment,
    "assessment-rocm": rocm_assessment,
    "assessment-decided": decided_assessment,
    "port": sample_port,
    "plan": sample_plan,
    "plan-sweep": sample_plan_sweep,
    "kb-lookup": sample_kb_lookup,
    "kb-table": sample_kb_table,
    "kb-counts": sample_kb_counts,
    "rule": sample_rule,
    "rule-index": sample_rule_index,
    "bench-run": sample_bench_run,
    "bench-list": sample_bench_list,
    "bench-compare": sample_bench_comparison,
    "verify": sample_verify,
    "doctor": sample_doctor,
    "serve-bench": sample_serve_bench,
    "serve-verify": sample_serve_verify,
}
TIMED = {
    "scan",
    "scan-diff",
    "assessment",
    "assessment-rocm",
    "assessment-decided",
}  # their JSON carries durations under "timing"
CASES = [(name, fmt) for name, build in SAMPLES.items() for fmt in formats_for(type(build()))]
IDS = [f"{name}-{fmt.value}" for name, fmt in CASES]
OPTIONS = RenderOptions(color=False, width=100, tool_version=TOOL_VERSION)


def without_timing(text: str) -> str:
    """JSON text with every "timing" key removed (durations change from run to run)."""
    document = json.loads(text)
    document.pop("timing", None)
    if isinstance(document.get("scan"), dict):
        document["scan"].pop("timing", None)
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def test_every_format_has_a_golden_suffix() -> None:
    assert set(SUFFIX) == set(Format)


def test_every_result_type_has_a_sample() -> None:
    assert {type(build()) for build in SAMPLES.values()} == set(DECLARED_FORMATS)


def test_every_golden_file_belongs_to_a_declared_format() -> None:
    expected = {f"{name}.{SUFFIX[fmt]}" for name, fmt in CASES}
    stray = {path.name for path in GOLDEN_DIR.iterdir()} - expected
    assert stray == set(), "golden files of formats nobody declares"


@pytest.mark.parametrize(("sample", "fmt"), CASES, ids=IDS)
def test_golden(sample: str, fmt: Format, golden: Golden) -> None:
    text = render(SAMPLES[sample](), fmt, OPTIONS)
    if fmt is Format.JSON and sample in TIMED:
        text = without_timing(text)
    golden.check(f"{sample}.{SUFFIX[fmt]}", text)


@pytest.mark.parametrize(("sample", "fmt"), CASES, ids=IDS)
def test_output_is_deterministic_and_clean(sample: str, fmt: Format) -> None:
    first = render(SAMPLES[sample](), fmt, OPTIONS)
    second = render(SAMPLES[sample](), fmt, OPTIONS)
    assert first == second
    assert first.endswith("\n")
    trailing = [line for line in first.splitlines() if line != line.rstrip()]
    assert trailing == [], "lines with trailing whitespace"
    assert "/work/" not in first and "/tmp/" not in first, "an absolute path leaked in"
