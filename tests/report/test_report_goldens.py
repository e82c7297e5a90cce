"""Golden outputs: every format of a hand-made scan and assessment, byte for byte."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from report_golden import Golden
from report_samples import TOOL_VERSION, sample_assessment, sample_scan

from gpuport.assess.verdict import Assessment
from gpuport.report import Format, RenderOptions, render
from gpuport.scan.engine import ScanResult

SUFFIX = {
    Format.TERMINAL: "terminal.txt",
    Format.JSON: "json",
    Format.SARIF: "sarif",
    Format.MARKDOWN: "md",
    Format.HTML: "html",
}
SAMPLES: dict[str, Callable[[], ScanResult | Assessment]] = {
    "scan": sample_scan,
    "assessment": sample_assessment,
}
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


@pytest.mark.parametrize("fmt", list(Format), ids=[f.value for f in Format])
@pytest.mark.parametrize("sample", list(SAMPLES))
def test_golden(sample: str, fmt: Format, golden: Golden) -> None:
    text = render(SAMPLES[sample](), fmt, OPTIONS)
    if fmt is Format.JSON:
        text = without_timing(text)
    golden.check(f"{sample}.{SUFFIX[fmt]}", text)


@pytest.mark.parametrize("fmt", list(Format), ids=[f.value for f in Format])
@pytest.mark.parametrize("sample", list(SAMPLES))
def test_output_is_deterministic_and_clean(sample: str, fmt: Format) -> None:
    first = render(SAMPLES[sample](), fmt, OPTIONS)
    second = render(SAMPLES[sample](), fmt, OPTIONS)
    assert first == second
    assert first.endswith("\n")
    trailing = [line for line in first.splitlines() if line != line.rstrip()]
    assert trailing == [], "lines with trailing whitespace"
    assert "/work/" not in first and "/tmp/" not in first, "an absolute path leaked in"
