"""A plan's sweep (every GPU at every batch x context) as JSON, tables and inline SVG charts.

The charts are drawn here as SVG text (no script, no library, nothing loaded), so that the
HTML report's Content-Security-Policy holds; every label is escaped with :func:`html_text`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rich import box
from rich.cells import cell_len
from rich.table import Table
from rich.text import Text

from gpuport.plan.planner import DASH, PlanEntry, PlanResult
from gpuport.plan.speed import DecodeEstimate, PrefillEstimate, cost_per_million_tokens
from gpuport.report.common import display_text, html_text, md_text

CHARTED_CONTEXTS = 4  # a pair of charts per context; the table has the rest
# Tableau 10: tells ten lines apart, also for the common colour-vision deficiencies.
LINE_COLORS = (
    "#4e79a7",
    "#f28e2b",
    "#e15759",
    "#76b7b2",
    "#59a14f",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
)
LINE_DASHES = ("", "6 3", "2 3", "8 3 2 3")  # past ten GPUs the colours repeat, dashed


# --- wording shared by every format ----------------------------------------------------------


def rate_text(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:,.0f}" if value >= 10 else f"{value:,.1f}"


def range_text(estimate: DecodeEstimate | PrefillEstimate | None) -> str:
    """The typical range, "1,200-1,700" (an en dash), or "—" where no validation covers it."""
    span = estimate.range_tokens_per_s if estimate is not None else None
    if span is None:
        return "—"
    return f"{rate_text(span[0])}{DASH}{rate_text(span[1])}"


def money_text(value: float | None) -> str:
    if value is None:
        return "—"
    return f"${value:,.2f}" if value >= 10 else f"${value:,.3f}"


def count_text(entry: PlanEntry) -> str:
    """1, "2 TP2", "16 TP8xPP2"; ">8" when it does not fit."""
    if not entry.fits:
        return f">{entry.devices}"
    if entry.devices == 1:
        return "1"
    return f"{entry.devices} TP{entry.tp}" + (f"xPP{entry.pp}" if entry.pp > 1 else "")


def any_range(entries: Sequence[PlanEntry]) -> bool:
    return any(e.decode is not None and e.decode.range_tokens_per_s for e in entries)


# --- JSON ------------------------------------------------------------------------------------


def _span_json(estimate: DecodeEstimate | PrefillEstimate | None) -> list[float] | None:
    span = estimate.range_tokens_per_s if estimate is not None else None
    return None if span is None else [round(span[0], 1), round(span[1], 1)]


def uncertainty_json(estimate: DecodeEstimate | PrefillEstimate) -> dict[str, Any] | None:
    """The range and what it rests on, or None where no validation covers the estimate."""
    u = estimate.uncertainty
    if u is None:
        return None
    return {
        "range_tokens_per_s": _span_json(estimate),
        "low_factor": round(u.low_factor, 4),
        "high_factor": round(u.high_factor, 4),
        "typical_error": round(u.typical_error, 4),
        "basis": u.basis,
    }


def _point_json(entry: PlanEntry) -> dict[str, Any]:
    decode, prefill = entry.decode, entry.prefill
    out, into = entry.cost_per_million_output, entry.cost_per_million_input
    return {
        "gpu": entry.gpu.id,
        "engine": entry.engine,
        "batch": entry.batch,
        "context": entry.context,
        "fits": entry.fits,
        "gpus_needed": entry.devices if entry.fits else None,
        "tensor_parallel": entry.tp,
        "pipeline_parallel": entry.pp,
        "max_sequences_at_context": entry.max_sequences,
        "decode_tokens_per_s": None if decode is None else round(decode.tokens_per_s, 1),
        "decode_range_tokens_per_s": _span_json(decode),
        "decode_tokens_per_s_per_sequence": None
        if decode is None
        else round(decode.per_sequence_tokens_per_s, 2),
        "decode_bound": None if decode is None else decode.bound,
        "prefill_tokens_per_s": None if prefill is None else round(prefill.tokens_per_s, 1),
        "prefill_range_tokens_per_s": _span_json(prefill),
        "usd_per_1m_output_tokens": None if out is None else round(out, 5),
        "usd_per_1m_input_tokens": None if into is None else round(into, 5),
    }


def sweep_json(plan: PlanResult) -> dict[str, Any]:
    """The same shape with or without a sweep: one point per GPU per batch x context."""
    request = plan.request
    return {
        "batches": sorted(request.batch_values),
        "contexts": sorted(request.context_values),
        "ranked_at": {"batch": request.batch, "context": request.context},
        "points": [_point_json(e) for e in plan.sweep_entries],
    }


# --- a terminal table that fits its width -----------------------------------------------------

WRAP_MIN_WIDTH = 9  # a GPU name wraps onto lines this wide at the least ("A100 80GB")
_COLUMN_GAP = 3  # a space of padding either side of SIMPLE_HEAD's blank divider


@dataclass(frozen=True)
class Column:
    """One terminal column: its key in a row, its header, its side and whether it may wrap."""

    key: str
    header: str
    right: bool = True
    wraps: bool = False  # only a name wraps; a number never does


def _plain(cell: str | Text) -> str:
    return cell.plain if isinstance(cell, Text) else cell


def _cell_width(cell: str | Text) -> int:
    return max(cell_len(line) for line in _plain(cell).split("\n"))


def fitted_table(
    columns: Sequence[Column],
    rows: Sequence[dict[str, str | Text]],
    width: int,
    drop_order: Sequence[Sequence[str]],
    sections: Sequence[bool] = (),
) -> tuple[Table, list[str]]:
    """A SIMPLE_HEAD table no wider than ``width``, and the keys of the columns it left out.

    Rich squeezes a number that does not fit into "17,…"; here, where the columns do not fit
    at their full width (a name may wrap down to ``WRAP_MIN_WIDTH`` or its longest word),
    whole columns go instead, in ``drop_order``. ``sections[i]`` puts a rule above row i.
    """
    least: dict[str, int] = {}
    for column in columns:
        full = max([_cell_width(column.header)] + [_cell_width(row[column.key]) for row in rows])
        if column.wraps:
            names = [_plain(row[column.key]) for row in rows]
            words = [cell_len(word) for name in names for word in name.split()]
            full = min(full, max([WRAP_MIN_WIDTH, *words]))
        least[column.key] = full
    dropped: list[str] = []
    kept = list(columns)
    for step in ((), *drop_order):
        dropped += step
        kept = [column for column in columns if column.key not in dropped]
        if sum(least[c.key] for c in kept) + _COLUMN_GAP * (len(kept) - 1) <= width:
            break
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    for column in kept:
        table.add_column(
            column.header,
            justify="right" if column.right else "left",
            no_wrap=not column.wraps,
            min_width=least[column.key] if column.wraps else None,
        )
    for index, row in enumerate(rows):
        if index < len(sections) and sections[index]:
            table.add_section()
        table.add_row(*(row[column.key] for column in kept))
    return table, dropped


# --- terminal and Markdown -------------------------------------------------------------------


_SWEEP_COLUMNS = (
    Column("gpu", "GPU", right=False, wraps=True),
    Column("engine", "engine", right=False),
    Column("context", "context"),
    Column("batch", "batch"),
    Column("count", "count", right=False),
    Column("decode", "decode\ntok/s"),
    Column("typically", "typically\ntok/s"),
    Column("per_seq", "per seq\ntok/s"),
    Column("prefill", "prefill\ntok/s"),
    Column("out", "$/1M\nout"),
)
SWEEP_DROPPED = {"per_seq": "per seq", "prefill": "prefill", "typically": "typically"}


def sweep_table(plan: PlanResult, width: int) -> tuple[Table, list[str]]:
    """One row per GPU x context x batch, a rule between GPUs; and the columns left out."""
    entries = plan.sweep_entries
    ranged = any_range(entries)
    rows: list[dict[str, str | Text]] = []
    sections: list[bool] = []
    previous = None
    for e in entries:
        first = e.gpu.id != previous
        sections.append(first and previous is not None)
        previous = e.gpu.id
        decode = e.decode
        rows.append(
            {
                "gpu": Text(display_text(e.gpu.short)) if first else "",
                "engine": e.engine if first else "",
                "context": f"{e.context:,}",
                "batch": f"{e.batch:,}",
                "count": Text(count_text(e), style="" if e.fits else "red"),
                "decode": rate_text(decode.tokens_per_s) if decode else "—",
                "typically": range_text(decode),
                "per_seq": rate_text(decode.per_sequence_tokens_per_s) if decode else "—",
                "prefill": rate_text(e.prefill.tokens_per_s) if e.prefill else "—",
                "out": money_text(e.cost_per_million_output).removeprefix("$"),  # $ in the header
            }
        )
    columns = [c for c in _SWEEP_COLUMNS if ranged or c.key != "typically"]
    table, dropped = fitted_table(
        columns, rows, width, (("per_seq",), ("prefill",), ("typically",)), sections
    )
    return table, [SWEEP_DROPPED[key] for key in dropped]


def sweep_markdown(plan: PlanResult) -> list[str]:
    """The sweep's Markdown table (with its heading)."""
    lines = [
        "",
        "### Sweep",
        "",
        "| GPU | engine | context | batch | needs | decode tok/s | typically tok/s | "
        "per sequence tok/s | bound | prefill tok/s | typically tok/s | $/1M out | $/1M in |",
        "|---|---|---:|---:|---|---:|---:|---:|---|---:|---:|---:|---:|",
    ]
    for e in plan.sweep_entries:
        cells = [md_text(e.gpu.short), md_text(e.engine), *_point_cells(e, with_bound=True)]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _point_cells(e: PlanEntry, *, with_bound: bool) -> list[str]:
    """One sweep point's cells after its GPU and engine, as Markdown and HTML show them."""
    decode, prefill = e.decode, e.prefill
    bound = [decode.bound if decode else "—"] if with_bound else []
    return [
        f"{e.context:,}",
        f"{e.batch:,}",
        count_text(e) if e.fits else f"does not fit in {e.devices}",
        rate_text(decode.tokens_per_s if decode else None),
        range_text(decode),
        rate_text(decode.per_sequence_tokens_per_s if decode else None),
        *bound,
        rate_text(prefill.tokens_per_s if prefill else None),
        range_text(prefill),
        money_text(e.cost_per_million_output),
        money_text(e.cost_per_million_input),
    ]


# --- HTML: table and charts ------------------------------------------------------------------


def sweep_html_table(plan: PlanResult) -> str:
    rows = []
    for e in plan.sweep_entries:
        cells = (e.gpu.name, e.engine, *_point_cells(e, with_bound=False))
        rows.append("<tr>" + "".join(f"<td>{html_text(c)}</td>" for c in cells) + "</tr>")
    head = (
        "GPU",
        "engine",
        "context",
        "batch",
        "needs",
        "decode tok/s",
        "typically",
        "per sequence",
        "prefill tok/s",
        "typically",
        "$/1M out",
        "$/1M in",
    )
    return (
        '<table class="sweep"><thead><tr>'
        + "".join(f"<th>{html_text(h)}</th>" for h in head)
        + f"</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


@dataclass(frozen=True, slots=True)
class _Series:
    """One GPU's line: (batch, value, low, high) per batch, value None where it does not fit,
    and the GPU count at each batch (the layout can grow with the batch)."""

    label: str
    color: str
    dash: str
    points: tuple[tuple[int, float | None, float | None, float | None], ...]
    devices: dict[int, int]


def _log_ticks(low: float, high: float) -> list[float]:
    """1, 2, 5 x 10^k between ``low`` and ``high`` (both positive), at most ~8."""
    ticks: list[float] = []
    for exponent in range(math.floor(math.log10(low)) - 1, math.ceil(math.log10(high)) + 1):
        for step in (1.0, 2.0, 5.0):
            value = step * 10.0**exponent
            if low <= value <= high:
                ticks.append(value)
    while len(ticks) > 8:
        ticks = ticks[::2]
    return ticks


def _tick_label(value: float, money: bool) -> str:
    if money:
        return f"${value:g}" if value < 1000 else f"${value:,.0f}"
    return f"{value:,.0f}" if value >= 1 else f"{value:g}"


def _line_chart(title: str, series: Sequence[_Series], batches: Sequence[int], money: bool) -> str:
    """A log-log line chart of ``series`` against the batch sizes; a band for each range."""
    values = [
        v
        for s in series
        for _, value, low, high in s.points
        for v in (value, low, high)
        if v is not None and v > 0
    ]
    if not values or len(batches) < 2:
        return ""
    # The legend sits right of the plot: as wide as its longest label (11px text, ~6.5px a
    # character) plus the line sample.
    longest = max((len(s.label) for s in series), default=0)
    left, right, top, bottom = 70, max(160, round(6.5 * longest) + 48), 28, 40
    plot_w, plot_h = 420, 220
    width, height = left + plot_w + right, top + plot_h + bottom
    y_low, y_high = min(values), max(values)
    if y_high <= y_low * 1.0001:
        y_low, y_high = y_low / 2, y_high * 2
    y_low, y_high = y_low / 1.15, y_high * 1.15
    x_low, x_high = math.log(min(batches)), math.log(max(batches))

    def x_at(batch: int) -> float:
        return left + plot_w * (math.log(batch) - x_low) / (x_high - x_low)

    def y_at(value: float) -> float:
        share = (math.log(value) - math.log(y_low)) / (math.log(y_high) - math.log(y_low))
        return top + plot_h * (1.0 - share)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" aria-label="{html_text(title)}">',
        f"<title>{html_text(title)}</title>",
        f'<text x="{left}" y="16" font-size="13" font-weight="bold">{html_text(title)}</text>',
        f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" '
        'stroke="#999999"/>',
    ]
    for tick in _log_ticks(y_low, y_high):
        y = y_at(tick)
        parts.append(
            f'<line x1="{left}" y1="{y:.1f}" x2="{left + plot_w}" y2="{y:.1f}" stroke="#e5e5e5"/>'
            f'<text x="{left - 6}" y="{y + 4:.1f}" font-size="11" text-anchor="end">'
            f"{html_text(_tick_label(tick, money))}</text>"
        )
    for batch in batches:
        x = x_at(batch)
        parts.append(
            f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + plot_h}" stroke="#e5e5e5"/>'
            f'<text x="{x:.1f}" y="{top + plot_h + 15}" font-size="11" text-anchor="middle">'
            f"{batch:,}</text>"
        )
    parts.append(
        f'<text x="{left + plot_w / 2:.1f}" y="{height - 6}" font-size="12" '
        'text-anchor="middle">batch (sequences at once, log scale)</text>'
    )
    for s in series:
        dash = f' stroke-dasharray="{s.dash}"' if s.dash else ""
        for run in _runs(s.points):
            bands = [(b, lo, hi) for b, _, lo, hi in run if lo is not None and hi is not None]
            if len(bands) >= 2:
                outline = [f"{x_at(b):.1f},{y_at(hi):.1f}" for b, _, hi in bands] + [
                    f"{x_at(b):.1f},{y_at(lo):.1f}" for b, lo, _ in reversed(bands)
                ]
                parts.append(
                    f'<polygon points="{" ".join(outline)}" fill="{s.color}" fill-opacity="0.15" '
                    'stroke="none"/>'
                )
            line = " ".join(f"{x_at(b):.1f},{y_at(v):.1f}" for b, v, _, _ in run if v is not None)
            parts.append(
                f'<polyline points="{line}" fill="none" stroke="{s.color}" stroke-width="2"{dash}/>'
            )
            for b, v, _, _ in run:
                assert v is not None
                shown = money_text(v) if money else rate_text(v) + " tok/s"
                count = s.devices.get(b, 1)
                tip = f"{s.label}, batch {b:,}: {shown} on {count} GPU" + ("s" if count > 1 else "")
                parts.append(
                    f'<circle cx="{x_at(b):.1f}" cy="{y_at(v):.1f}" r="3" fill="{s.color}">'
                    f"<title>{html_text(tip)}</title></circle>"
                )
    for i, s in enumerate(series):
        y = top + 8 + i * 18
        x = left + plot_w + 12
        dash = f' stroke-dasharray="{s.dash}"' if s.dash else ""
        parts.append(
            f'<line x1="{x}" y1="{y}" x2="{x + 22}" y2="{y}" stroke="{s.color}" '
            f'stroke-width="2"{dash}/>'
            f'<text x="{x + 28}" y="{y + 4}" font-size="11">{html_text(s.label)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _runs(
    points: Sequence[tuple[int, float | None, float | None, float | None]],
) -> list[list[tuple[int, float | None, float | None, float | None]]]:
    """The stretches of a line between batches where the GPU does not fit (no value)."""
    runs: list[list[tuple[int, float | None, float | None, float | None]]] = [[]]
    for point in points:
        if point[1] is None or point[1] <= 0:
            if runs[-1]:
                runs.append([])
            continue
        runs[-1].append(point)
    return [run for run in runs if run]


def _series(
    plan: PlanResult, context: int, value: Callable[[PlanEntry], tuple[float | None, ...]]
) -> list[_Series]:
    by_gpu: dict[str, list[PlanEntry]] = {}
    for e in plan.sweep_entries:
        if e.context == context:
            by_gpu.setdefault(e.gpu.id, []).append(e)
    series = []
    for i, entries in enumerate(by_gpu.values()):
        first = entries[0]
        points = []
        for e in sorted(entries, key=lambda e: e.batch):
            v, lo, hi = value(e)
            points.append((e.batch, v, lo, hi))
        label = f"{first.gpu.short} ({first.engine})"
        if not any(e.fits for e in entries):
            label += ": does not fit"
        elif all(v is None for _, v, _, _ in points):
            label += ": no price on file"
        series.append(
            _Series(
                label,
                LINE_COLORS[i % len(LINE_COLORS)],
                LINE_DASHES[(i // len(LINE_COLORS)) % len(LINE_DASHES)],
                tuple(points),
                {e.batch: e.devices for e in entries},
            )
        )
    return series


def _decode_point(e: PlanEntry) -> tuple[float | None, float | None, float | None]:
    if e.decode is None:
        return None, None, None
    span = e.decode.range_tokens_per_s
    return e.decode.tokens_per_s, *(span or (None, None))


def _cost_point(e: PlanEntry) -> tuple[float | None, float | None, float | None]:
    hourly = e.usd_per_hour
    if e.decode is None or hourly is None:
        return None, None, None
    span = e.decode.range_tokens_per_s
    if span is None:
        return e.cost_per_million_output, None, None
    # A faster measured rate is a lower cost: the band's ends swap.
    return (
        e.cost_per_million_output,
        cost_per_million_tokens(hourly, span[1]),
        cost_per_million_tokens(hourly, span[0]),
    )


def sweep_html_charts(plan: PlanResult) -> str:
    """Tokens/s and $/1M output tokens against the batch, one line per GPU, per context."""
    batches = sorted(plan.request.batch_values)
    if len(batches) < 2:
        return ""
    contexts = sorted(plan.request.context_values)
    figures = []
    for context in contexts[:CHARTED_CONTEXTS]:
        speed = _line_chart(
            f"Decode tokens/s at {context:,} tokens (all sequences)",
            _series(plan, context, _decode_point),
            batches,
            money=False,
        )
        cost = _line_chart(
            f"$ per 1M output tokens at {context:,} tokens",
            _series(plan, context, _cost_point),
            batches,
            money=True,
        )
        figures += [f"<figure>{chart}</figure>" for chart in (speed, cost) if chart]
    note = (
        f"<p>Charts for the first {CHARTED_CONTEXTS} contexts; the table has every one.</p>"
        if len(contexts) > CHARTED_CONTEXTS
        else ""
    )
    band = (
        "<p>Shaded: the typical range of a measurement around the estimate.</p>"
        if any_range(plan.sweep_entries)
        else ""
    )
    return "".join(figures) + band + note
