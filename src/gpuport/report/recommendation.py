"""The recommendation of `assess` (should we move?) in words, JSON, terminal and Markdown.

Every format shows it first, above the readiness verdict (what breaks on ROCm): the outcome and
its headline, the decisive factors, every factor with its direction and evidence (an unknown one
with what to tell gpuport), the economics, and what is missing. The text helpers here are shared
with the HTML report (report/recommendation_html.py); text from a project or its settings goes
through each medium's escape like every other text of a report.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from rich import box
from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from gpuport.assess.decision_model import (
    CostOption,
    DecisionSettings,
    Direction,
    Economics,
    FactorResult,
    FactorState,
    Outcome,
    Recommendation,
)
from gpuport.assess.economics import payback_span
from gpuport.report.common import display_text, md_code_cell, md_text

OUTCOME_TITLE = {
    Outcome.MOVE: "Move to ROCm",
    Outcome.PILOT: "Pilot first",
    Outcome.PARTIAL: "Move part of the fleet",
    Outcome.STAY: "Stay on CUDA",
    Outcome.UNKNOWN: "Not enough evidence",
}
OUTCOME_STYLE = {
    Outcome.MOVE: "bold green",
    Outcome.PILOT: "bold yellow",
    Outcome.PARTIAL: "bold yellow",
    Outcome.STAY: "bold red",
    Outcome.UNKNOWN: "bold blue",
}
DIRECTION_TEXT = {
    Direction.ROCM: "towards ROCm",
    Direction.CUDA: "towards CUDA",
    Direction.NEUTRAL: "neutral",
}
READINESS_TITLE = "Readiness (what breaks on ROCm)"
# Below this many columns the factors table's evidence column would be a few words wide.
NARROW_FACTORS = 90


# --- words shared by every format ----------------------------------------------------------


def usd_text(value: float | None) -> str:
    """Dollars for people: ``$12,345``; "unknown" when there is no number."""
    if value is None:
        return "unknown"
    sign = "-" if value < 0 else ""
    return f"{sign}${abs(value):,.0f}"


def span_text(
    span: tuple[float, float], unit: str = "", money: bool = False, whole_from: float = 100
) -> str:
    """A low-high range: ``$3,000-$6,000`` or ``2.5-5.0 months`` (an en dash between); one number
    when they match. Numbers from ``whole_from`` up have no decimal."""
    low, high = span
    if money:
        shown = [usd_text(low), usd_text(high)]
    else:  # hours and months: whole numbers once they are big enough not to need a decimal
        shown = [f"{v:,.0f}" if v >= whole_from else f"{v:,.1f}" for v in (low, high)]
    text = shown[0] if shown[0] == shown[1] else f"{shown[0]}\u2013{shown[1]}"
    return f"{text} {unit}".rstrip()


def state_text(factor: FactorResult) -> str:
    """``yes``, ``no``, or ``unknown``."""
    return factor.state.value


def direction_text(factor: FactorResult) -> str:
    return DIRECTION_TEXT[factor.direction]


def evidence_lines(factor: FactorResult, recommendation: Recommendation | None = None) -> list[str]:
    """What decided the factor, a line each; for an unknown one, what to tell gpuport, or where
    ``recommendation`` lists that (one item for the factors that ask for the same setting)."""
    if factor.state is FactorState.UNKNOWN:
        if recommendation is not None and any(
            factor.factor_id in a.factors for a in recommendation.asks
        ):
            return [f"unknown: see “{UNKNOWN_TITLE}” below"]
        return [f"unknown: {factor.ask}" if factor.ask else "unknown: no evidence"]
    return list(factor.evidence) or ["(no evidence recorded)"]


def evidence_text(factor: FactorResult, recommendation: Recommendation | None = None) -> str:
    """:func:`evidence_lines` on one line (a Markdown table cell, a JSON-less summary)."""
    return "; ".join(evidence_lines(factor, recommendation))


def decided_it(recommendation: Recommendation, factor: FactorResult) -> bool:
    """Whether ``factor`` is one of those that decided the outcome (marked in the tables)."""
    return any(f.factor_id == factor.factor_id for f in recommendation.decisive)


def ordered_factors(recommendation: Recommendation) -> list[FactorResult]:
    """The decisive factors first (strongest first), then the rest in the data file's order."""
    decisive_ids = {f.factor_id for f in recommendation.decisive}
    rest = [f for f in recommendation.factors if f.factor_id not in decisive_ids]
    return [*recommendation.decisive, *rest]


UNKNOWN_TITLE = "To decide the unknown factors"


def code_spans(text: str) -> list[tuple[str, bool]]:
    """``text`` in pieces, each with whether it was a `code` span (balanced backticks only)."""
    parts = text.split("`")
    if len(parts) % 2 == 0:  # an odd number of backticks: no spans
        return [(text, False)]
    return [(part, index % 2 == 1) for index, part in enumerate(parts) if part]


def md_kb_text(text: str) -> str:
    """A question or ask of the KB in Markdown: its `settings` as code spans, the rest escaped."""
    return "".join(md_code_cell(p) if code else md_text(p) for p, code in code_spans(text))


def names_text(names: tuple[str, ...]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def ask_items(recommendation: Recommendation) -> list[tuple[str, str]]:
    """What to tell gpuport, one item per setting: (the factors it decides, the ask).

    Factors asking for the same setting share an item (:attr:`Recommendation.asks`); a
    recommendation made without them lists its ``missing`` asks unnamed.
    """
    if recommendation.asks:
        return [(names_text(a.factors), a.ask) for a in recommendation.asks]
    return [("", m) for m in recommendation.missing]


def option_label(option: CostOption) -> str:
    return f"{option.gpus} x {option.gpu_name}"


def payback_text(economics: Economics) -> str:
    """The payback in words: months, or why it never pays back."""
    if economics.payback_months is not None:
        shown = payback_span(economics.payback_months)
        return f"under a month: {shown}" if shown.endswith("days") else shown
    saving = economics.monthly_saving_usd
    if saving is None:
        return "unknown: no monthly cost to compare"
    if saving <= 0:
        return f"never: the cheapest AMD option costs {usd_text(-saving)} more a month"
    return "unknown: no engineer rate to price the move"


def economics_lines(economics: Economics) -> list[str]:
    """The one-off cost of moving, the monthly saving and the payback, one line each."""
    # whole hours from 10 up, as the assumptions' "moving: 15-60 h of porting" has them
    move = f"{span_text(economics.move_hours, 'hours', whole_from=10)}"
    if economics.move_usd is not None:
        move += f" ({span_text(economics.move_usd, money=True)})"
    lines = [f"cost of moving: {move}"]
    if economics.best is not None:
        saving = economics.monthly_saving_usd
        against = (
            f"saving {usd_text(saving)} a month against today"
            if saving is None or saving >= 0
            else f"costing {usd_text(-saving)} a month more than today"
        )
        lines.append(f"cheapest AMD option: {option_label(economics.best)}, {against}")
    lines.append(f"payback: {payback_text(economics)}")
    return lines


def declared_source(settings: DecisionSettings) -> str:
    return settings.source or "declared"


def settings_items(settings: DecisionSettings) -> list[tuple[str, str]]:
    """The declared settings that are set, as (key, value) pairs in the dataclass's order."""
    items: list[tuple[str, str]] = []
    for name in (f.name for f in dataclasses.fields(settings)):
        if name == "source":
            continue
        value = getattr(settings, name)
        if value is None or value == ():
            continue
        if isinstance(value, tuple):
            value = ", ".join(value)
        elif isinstance(value, bool):  # as the TOML has it, and the factors' evidence says
            value = "true" if value else "false"
        elif isinstance(value, float):
            value = f"{value:,.0f}" if value.is_integer() else f"{value:,.2f}"
        items.append((name, str(value)))
    return items


# --- JSON ----------------------------------------------------------------------------------


def settings_json(settings: DecisionSettings) -> dict[str, Any]:
    """Every setting, null when not declared, and where they were read from."""
    document: dict[str, Any] = {}
    for f in dataclasses.fields(settings):
        value = getattr(settings, f.name)
        if isinstance(value, tuple):
            value = list(value)
        elif isinstance(value, str):
            value = value or None
        document[f.name] = value
    return document


def _factor_json(factor: FactorResult) -> dict[str, Any]:
    return {
        "id": factor.factor_id,
        "question": factor.question,
        "state": factor.state.value,
        "direction": factor.direction.value,
        "decisive": factor.decisive,
        "weight": factor.weight,
        "evidence": list(factor.evidence),
        "ask": factor.ask or None,
        "sources": list(factor.sources),
    }


def _option_json(option: CostOption | None) -> dict[str, Any] | None:
    if option is None:
        return None
    return {
        "gpu_id": option.gpu_id,
        "gpu_name": option.gpu_name,
        "vendor": option.vendor,
        "gpus": option.gpus,
        "tokens_per_s_per_gpu": round(option.tokens_per_s_per_gpu, 2),
        "usd_per_gpu_hour": option.usd_per_gpu_hour,
        "usd_per_month": None if option.usd_per_month is None else round(option.usd_per_month, 2),
        "note": option.note or None,
    }


def _span_json(span: tuple[float, float] | None) -> dict[str, float] | None:
    return None if span is None else {"low": round(span[0], 2), "high": round(span[1], 2)}


def economics_json(economics: Economics | None) -> dict[str, Any] | None:
    if economics is None:
        return None
    saving = economics.monthly_saving_usd
    return {
        "today": _option_json(economics.today),
        "options": [_option_json(o) for o in economics.options],
        "best": None if economics.best is None else economics.best.gpu_id,
        "move_hours": _span_json(economics.move_hours),
        "move_usd": _span_json(economics.move_usd),
        "monthly_saving_usd": None if saving is None else round(saving, 2),
        "payback_months": _span_json(economics.payback_months),
        "sensitivity": list(economics.sensitivity),
        "assumptions": list(economics.assumptions),
    }


def recommendation_json(recommendation: Recommendation) -> dict[str, Any]:
    """The recommendation's JSON object: the shape README's assess section documents."""
    settings = recommendation.settings
    return {
        "outcome": recommendation.outcome.value,
        "title": OUTCOME_TITLE[recommendation.outcome],
        "headline": recommendation.headline,
        "decisive": [f.factor_id for f in recommendation.decisive],
        "factors": [_factor_json(f) for f in ordered_factors(recommendation)],
        "economics": economics_json(recommendation.economics),
        "missing": list(recommendation.missing),
        # ``missing`` with the factors asking for the same setting merged, and named
        "asks": [{"factors": list(a.factors), "ask": a.ask} for a in recommendation.asks],
        "settings": settings_json(settings),
    }


# --- terminal ------------------------------------------------------------------------------


def _hanging(marks: list[str], lines: list[Text], style: str = "") -> Table:
    grid = Table.grid()
    grid.add_column(width=max((len(m) for m in marks), default=1) + 3, no_wrap=True)
    grid.add_column(overflow="fold")  # a long URL breaks across lines, never cut short
    for mark, line in zip(marks, lines, strict=True):
        grid.add_row(Text(f"  {mark} ", style), line)
    return grid


def _factor_line(factor: FactorResult) -> Text:
    """A decisive factor: its question and its first line of evidence (the table has them all)."""
    line = Text(display_text(factor.question), style="bold")
    line.append(f" {state_text(factor)}, {direction_text(factor)}: ")
    line.append(display_text(evidence_lines(factor)[0]))
    return line


def _evidence_cell(lines: list[str]) -> RenderableType:
    """One line of evidence as it is; several as "·" items, so each one's start shows."""
    if len(lines) == 1:
        return Text(display_text(lines[0]))
    grid = Table.grid()
    grid.add_column(width=2, no_wrap=True)
    grid.add_column(overflow="fold")
    for line in lines:
        grid.add_row("·", Text(display_text(line)))
    return grid


def _factors(recommendation: Recommendation, width: int) -> list[RenderableType]:
    """Every factor: a table of factor · holds · direction · evidence, or below
    ``NARROW_FACTORS`` columns (where the evidence column would be a few words wide) each
    factor on a line of its own with its evidence listed under it."""
    factors = ordered_factors(recommendation)
    if width < NARROW_FACTORS:
        out: list[RenderableType] = []
        for factor in factors:
            # the factors that decided it in bold (the title says they come first)
            line = Text(" ")
            style = "bold" if decided_it(recommendation, factor) else ""
            line.append(display_text(factor.factor_id), style=style)
            line.append(f": {state_text(factor)}, {direction_text(factor)}")
            evidence = [Text(display_text(e)) for e in evidence_lines(factor, recommendation)]
            out.extend([line, _hanging(["·"] * len(evidence), evidence)])
        return out
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("factor", overflow="fold", max_width=28)
    table.add_column("holds", no_wrap=True)
    table.add_column("direction", no_wrap=True)
    table.add_column("evidence", overflow="fold")
    for factor in factors:
        # the factors that decided it in bold (the table's title says they come first)
        decided = decided_it(recommendation, factor)
        name = Text(display_text(factor.factor_id), style="bold" if decided else "")
        table.add_row(
            name,
            state_text(factor),
            direction_text(factor),
            _evidence_cell(evidence_lines(factor, recommendation)),
        )
    return [table]


def terminal_renderables(
    recommendation: Recommendation, root: str, width: int = 100
) -> list[RenderableType]:
    """The recommendation as rich renderables, printed above the readiness verdict."""
    outcome = recommendation.outcome
    style = OUTCOME_STYLE[outcome]
    headline = Text("Recommendation: ", style="bold")
    headline.append(OUTCOME_TITLE[outcome].upper(), style=style)
    parts: list[RenderableType] = [headline, Text(display_text(recommendation.headline))]
    if recommendation.decisive:
        lines = [_factor_line(f) for f in recommendation.decisive]
        parts.append(_hanging(["•"] * len(lines), lines))
    title = Text("gpuport assess ")
    title.append(display_text(root))
    out: list[RenderableType] = [
        Panel(Group(*parts), title=title, title_align="left", border_style=style, box=box.ROUNDED)
    ]
    out.extend(["", Text("Decision factors (decisive first)", style="bold")])
    out.extend(_factors(recommendation, width))
    economics = recommendation.economics
    if economics is not None:
        out.extend(["", Text("Economics (per month, at the declared volume)", style="bold")])
        costs = Table(box=box.SIMPLE_HEAD, pad_edge=False)
        for heading in ("option", "GPUs", "tok/s per GPU", "$/GPU-hour", "$/month"):
            costs.add_column(heading, justify="left" if heading == "option" else "right")
        rows = [("today", economics.today)] if economics.today is not None else []
        rows.extend(("AMD", option) for option in economics.options)
        for kind, option in rows:
            if option is None:
                continue
            label = Text("today: " if kind == "today" else "", style="dim")
            label.append(display_text(option.gpu_name))
            costs.add_row(
                label,
                str(option.gpus),
                f"{option.tokens_per_s_per_gpu:,.0f}",
                "unknown" if option.usd_per_gpu_hour is None else f"{option.usd_per_gpu_hour:.2f}",
                usd_text(option.usd_per_month),
            )
        out.append(costs)
        lines = [Text(display_text(line)) for line in economics_lines(economics)]
        lines.extend(Text(display_text(s)) for s in economics.sensitivity)
        out.append(_hanging(["•"] * len(lines), lines))
        if economics.assumptions:
            out.append(Text("Assumptions:", style="dim"))
            notes = [Text(display_text(a), style="dim") for a in economics.assumptions]
            out.append(_hanging(["-"] * len(notes), notes, style="dim"))
    if items := ask_items(recommendation):
        out.extend(["", Text(f"{UNKNOWN_TITLE}:", style="bold")])
        lines = []
        for names, ask in items:
            line = Text(f"{display_text(names)}: " if names else "", style="bold")
            line.append(display_text(ask), style="")
            lines.append(line)
        out.append(_hanging(["•"] * len(lines), lines))
    if declared := settings_items(recommendation.settings):  # as the HTML report lists them
        source = display_text(declared_source(recommendation.settings))
        out.extend(["", Text(f"Declared ({source}):", style="dim")])
        line = Text()
        for index, (key, value) in enumerate(declared):
            line.append(" · " if index else "")
            line.append(display_text(key), style="bold")
            line.append(f" {display_text(value)}")
        line.stylize("dim")
        out.append(Padding(line, (0, 0, 0, 2)))
    out.extend(["", Text(READINESS_TITLE, style="bold")])
    return out


# --- Markdown ------------------------------------------------------------------------------


def markdown_lines(recommendation: Recommendation) -> list[str]:
    """The recommendation as Markdown, with an ``## Readiness`` heading for what follows."""
    outcome = recommendation.outcome
    out = [
        f"## gpuport assess: **{OUTCOME_TITLE[outcome]}** (`{outcome.value}`)",
        "",
        md_text(recommendation.headline),
        "",
    ]
    if recommendation.decisive:
        out.extend(["### Decisive factors", ""])
        out.extend(
            f"- **{md_kb_text(f.question)}** {state_text(f)}, {direction_text(f)}: "
            f"{md_text(evidence_lines(f)[0])}"
            for f in recommendation.decisive
        )
        out.append("")
    out.extend(
        [
            "### Decision factors",
            "",
            "| factor | holds | direction | evidence |",
            "|---|---|---|---|",
            *(
                f"| {md_code_cell(f.factor_id)}"
                f"{' (decisive)' if decided_it(recommendation, f) else ''}"
                f" | {state_text(f)} | {direction_text(f)} | {md_text(evidence_text(f, recommendation))} |"
                for f in ordered_factors(recommendation)
            ),
            "",
        ]
    )
    economics = recommendation.economics
    if economics is not None:
        out.extend(
            [
                "### Economics",
                "",
                "| option | GPUs | tok/s per GPU | $/GPU-hour | $/month |",
                "|---|---:|---:|---:|---:|",
            ]
        )
        rows = [("today", economics.today)] if economics.today is not None else []
        rows.extend(("AMD", option) for option in economics.options)
        for kind, option in rows:
            if option is None:
                continue
            rate = (
                "unknown" if option.usd_per_gpu_hour is None else f"{option.usd_per_gpu_hour:.2f}"
            )
            out.append(
                f"| {'today: ' if kind == 'today' else ''}{md_text(option.gpu_name)} | {option.gpus}"
                f" | {option.tokens_per_s_per_gpu:,.0f} | {rate} | {usd_text(option.usd_per_month)} |"
            )
        out.append("")
        out.extend(f"- {md_text(line)}" for line in economics_lines(economics))
        out.extend(f"- {md_text(s)}" for s in economics.sensitivity)
        out.append("")
        if economics.assumptions:
            out.extend(
                [
                    "<details><summary>Assumptions behind the economics</summary>",
                    "",
                    *(f"- {md_text(a)}" for a in economics.assumptions),
                    "",
                    "</details>",
                    "",
                ]
            )
    if items := ask_items(recommendation):
        out.extend([f"### {UNKNOWN_TITLE}", ""])
        out.extend(
            f"- {f'**{md_text(names)}**: ' if names else ''}{md_kb_text(ask)}"
            for names, ask in items
        )
        out.append("")
    if declared := settings_items(recommendation.settings):  # as the HTML report lists them
        listed = " · ".join(f"{md_code_cell(key)} {md_text(value)}" for key, value in declared)
        out.extend(
            [f"{md_text(f'Declared ({declared_source(recommendation.settings)}):')} {listed}", ""]
        )
    return out
