"""The table of formats: every declared (result type, format) pair has a renderer, and only those;
the scan and the assessment are declared in every format."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable

import pytest
from report_samples import (
    TOOL_VERSION,
    empty_assessment,
    empty_scan,
    hostile_assessment,
    hostile_decided_assessment,
    hostile_scan,
    sample_assessment,
)

from gpuport.assess.verdict import Assessment
from gpuport.kb.query import KbCounts
from gpuport.report import (
    DECLARED_FORMATS,
    Format,
    RenderOptions,
    origins,
    plan_formats,
    registered,
    render,
    renderer,
    renderer_module,
)
from gpuport.scan.engine import ScanResult

OPTIONS = RenderOptions(tool_version=TOOL_VERSION)
BUILDERS: list[Callable[[], ScanResult | Assessment]] = [
    empty_scan,
    empty_assessment,
    hostile_scan,
    hostile_assessment,
    hostile_decided_assessment,
]


@pytest.mark.parametrize("result_type", [ScanResult, Assessment])
def test_every_format_is_registered(result_type: type) -> None:
    table = registered()
    missing = [f.value for f in Format if (result_type, f) not in table]
    assert missing == [], f"{result_type.__name__} lacks renderers for {missing}"


def test_every_declared_format_has_a_renderer() -> None:
    table = registered()
    missing = [
        f"{result_type.__name__} {fmt.value}"
        for result_type, formats in DECLARED_FORMATS.items()
        for fmt in formats
        if (result_type, fmt) not in table
    ]
    assert missing == []


def test_every_renderer_is_declared() -> None:
    undeclared = [
        f"{result_type.__name__} {fmt.value}"
        for result_type, fmt in registered()
        if fmt not in DECLARED_FORMATS.get(result_type, ())
    ]
    assert undeclared == []


def test_a_renderer_for_an_undeclared_format_is_refused() -> None:
    with pytest.raises(LookupError, match="does not declare the sarif format"):
        renderer(KbCounts, Format.SARIF)
    with pytest.raises(LookupError, match="no sarif renderer for KbCounts"):
        render(KbCounts(()), Format.SARIF, OPTIONS)


@pytest.mark.parametrize("fmt", list(Format), ids=[f.value for f in Format])
@pytest.mark.parametrize("build", BUILDERS, ids=[b.__name__ for b in BUILDERS])
def test_renders_edge_cases_to_encodable_text(
    build: Callable[[], ScanResult | Assessment], fmt: Format
) -> None:
    text = render(build(), fmt, OPTIONS)
    assert text.strip()
    # Undecodable path bytes must not make the writer crash on a UTF-8 stdout or file.
    text.encode("utf-8")


@pytest.mark.parametrize("fmt", list(Format), ids=[f.value for f in Format])
def test_empty_results_say_nothing_was_found(fmt: Format) -> None:
    text = render(empty_scan(), fmt, OPTIONS)
    if fmt in (Format.JSON, Format.SARIF):
        assert '"findings": []' in text or '"results": []' in text
    else:
        assert "No findings" in text


def _fake_plan_module(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Stand in for the sections of gpuport.report.plan_formats and record their calls."""
    seen: list[object] = []

    def plan_terminal_section(plan: object, options: RenderOptions) -> str:
        seen.append(plan)
        return "PLAN-TERMINAL-SECTION\n"

    def plan_markdown_section(plan: object) -> str:
        seen.append(plan)
        return "### Plan\n\nPLAN-MARKDOWN-SECTION\n"

    def plan_html_section(plan: object) -> str:
        seen.append(plan)
        return '<h2>Plan</h2><p class="plan">PLAN-HTML-SECTION</p>'

    def plan_json(plan: object) -> dict[str, object]:
        seen.append(plan)
        return {"model": "PLAN-JSON"}

    monkeypatch.setattr(plan_formats, "plan_terminal_section", plan_terminal_section)
    monkeypatch.setattr(plan_formats, "plan_markdown_section", plan_markdown_section)

    def plan_html_summary(plan: object) -> str:
        seen.append(plan)
        return '<h2>Plan</h2><p class="plan">PLAN-HTML-SUMMARY</p>'

    monkeypatch.setattr(plan_formats, "plan_html_section", plan_html_section)
    monkeypatch.setattr(plan_formats, "plan_html_summary", plan_html_summary)
    monkeypatch.setattr(plan_formats, "plan_json", plan_json)
    return seen


@pytest.mark.parametrize(
    ("fmt", "marker"),
    [
        (Format.TERMINAL, "PLAN-TERMINAL-SECTION"),
        (Format.MARKDOWN, "PLAN-MARKDOWN-SECTION"),
        (Format.HTML, '<p class="plan">PLAN-HTML-SECTION</p>'),
        (Format.JSON, '"model": "PLAN-JSON"'),
        (Format.SARIF, '"model": "PLAN-JSON"'),
    ],
)
def test_plan_section_comes_from_the_plan_helper(
    fmt: Format, marker: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = _fake_plan_module(monkeypatch)
    assessment = sample_assessment()
    plan = object()
    assessment.plan = plan
    text = render(assessment, fmt, OPTIONS)
    assert marker in text
    assert seen and all(p is plan for p in seen)


@pytest.mark.parametrize("fmt", list(Format), ids=[f.value for f in Format])
def test_no_plan_no_plan_helper(fmt: Format, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _fake_plan_module(monkeypatch)
    render(sample_assessment(), fmt, OPTIONS)
    assert seen == []


def test_each_renderer_lives_in_the_module_the_table_names() -> None:
    # render() imports only renderer_module(type, format) before it looks the pair up.
    wrong = {
        f"{result_type.__name__} {fmt.value}": module
        for (result_type, fmt), module in origins().items()
        if module != renderer_module(result_type, fmt)
    }
    assert wrong == {}


def test_a_scan_writes_json_without_loading_other_stages() -> None:
    # `gpuport scan --format json` loads neither plan, port, the other renderers nor jinja2.
    code = (
        "import sys\n"
        "from gpuport.report import Format, render\n"
        "from gpuport.scan.engine import ScanResult\n"
        "from report_samples import empty_scan\n"
        "render(empty_scan(), Format.JSON)\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    ).stdout.split()
    unwanted = {"gpuport.plan.planner", "gpuport.port.model", "gpuport.report.html", "jinja2"}
    assert "gpuport.report.json_format" in loaded
    assert unwanted.isdisjoint(loaded)
