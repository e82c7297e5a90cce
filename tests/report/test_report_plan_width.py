"""The plan's terminal tables at 80, 100 and 120 columns: a column goes, a number is never cut.

Rich squeezes a table that is too wide by shortening cells ("17,…"); the plan's tables leave
whole columns out instead, say which, and wrap only a GPU's name. The real catalog carries
the long names ("Radeon AI PRO R9700", "A100 80GB PCIe") and engines ("tensorrt-llm").
"""

from __future__ import annotations

import re

import pytest
from report_samples import TOOL_VERSION

from gpuport.plan.catalog import resolve_gpus
from gpuport.plan.model_spec import load_model
from gpuport.plan.planner import PlanResult, plan, request_for
from gpuport.plan.prices import default_prices
from gpuport.report import Format, RenderOptions, render
from gpuport.report.plan_formats import TERMINAL_ROWS_IN_ASSESS, plan_terminal_section
from gpuport.report.plan_sweep import money_text

WIDTHS = (80, 100, 120)
RULE = re.compile(r"^─+$")
NUMBER = re.compile(r"\d")


def _plan(batch: int | tuple[int, ...]) -> PlanResult:
    spec = load_model("llama-3.1-8b")
    return plan(spec, request_for(spec, batch=batch), resolve_gpus("all"), default_prices())


END = re.compile(r"^(  \S|\S+:|Why$|Sweep$)")  # a legend, a note or the next section


def _tables(text: str) -> list[list[str]]:
    """Each table: its two header lines, its rule and its rows, up to a legend or a note."""
    lines = text.splitlines()
    tables = []
    for index, line in enumerate(lines):
        if RULE.match(line):
            end = index + 1
            while end < len(lines) and not END.match(lines[end]):
                end += 1
            tables.append(lines[index - 2 : end])
    return tables


def _rank_rows(table: list[str]) -> dict[int, str]:
    return {int(m.group(1)): line for line in table if (m := re.match(r"^\s?(\d+)\s{2,}", line))}


def _check(text: str, width: int, result: PlanResult, shown: int) -> None:
    assert max(len(line) for line in text.splitlines()) <= width
    tables = _tables(text)
    assert tables, text
    for table in tables:
        for line in table:
            assert "…" not in line, f"a cell is cut at {width} columns:\n{line}"
    rows = _rank_rows(tables[0])
    header = " ".join(tables[0][:2])
    fits = [e for e in result.entries[:shown] if e.fits]
    assert fits
    for entry in fits:
        row = rows[entry.rank]
        assert entry.decode is not None and entry.prefill is not None
        assert f"{entry.decode.tokens_per_s:,.0f} " in row, row
        if entry.cost_per_million_output is not None:  # a GPU with no price shows "—"
            assert money_text(entry.cost_per_million_output).removeprefix("$") in row, row
        if "prefill" in header:
            assert f"{entry.prefill.tokens_per_s:,.0f}" in row, row
    left_out = [line for line in text.splitlines() if "left out at" in line and "columns" in line]
    if "seqs" not in header:  # a column that goes is named
        assert left_out and "seqs" in left_out[0]
    if width >= 100:  # the money and the speeds always fit at 100 columns
        assert "prefill" in header and "in" in header.split()


@pytest.mark.parametrize("width", WIDTHS)
def test_plan_table_never_cuts_a_number(width: int) -> None:
    result = _plan(32)
    text = render(result, Format.TERMINAL, RenderOptions(width=width, tool_version=TOOL_VERSION))
    _check(text, width, result, len(result.entries))


@pytest.mark.parametrize("width", WIDTHS)
def test_assess_plan_section_never_cuts_a_number(width: int) -> None:
    result = _plan(32)
    text = plan_terminal_section(result, RenderOptions(width=width, tool_version=TOOL_VERSION))
    _check(text, width, result, TERMINAL_ROWS_IN_ASSESS)
    assert "see Why" not in text  # the project report has no Why section to point at


@pytest.mark.parametrize("width", WIDTHS)
def test_sweep_table_never_cuts_a_number(width: int) -> None:
    result = _plan((1, 8, 32))
    text = render(result, Format.TERMINAL, RenderOptions(width=width, tool_version=TOOL_VERSION))
    assert max(len(line) for line in text.splitlines()) <= width
    tables = _tables(text)
    assert len(tables) == 2  # the ranking and the sweep
    sweep = tables[1]
    assert "context" in sweep[1] and "batch" in sweep[1]
    for line in sweep:
        assert "…" not in line, f"a cell is cut at {width} columns:\n{line}"
    assert sum(1 for line in sweep if "8,192" in line) == len(result.sweep_entries)


def test_a_wide_terminal_shows_every_column() -> None:
    result = _plan(32)
    text = render(result, Format.TERMINAL, RenderOptions(width=140, tool_version=TOOL_VERSION))
    header = " ".join(_tables(text)[0][:2])
    for column in ("weights", "KV", "seqs", "decode", "prefill", "out", "in"):
        assert column in header.split()
    assert "left out at" not in text
