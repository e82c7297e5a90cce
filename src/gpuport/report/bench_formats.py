"""``gpuport bench`` in its formats: a run, the list of runs, runs compared side by side.

Terminal tables are printed with rich into memory (markup off: a label or a device name from
another machine is printed as the text it is); Markdown and HTML escape every such text. The
comparison's HTML is one self-contained page whose charts matplotlib draws as inline SVG (no
script, no CDN, nothing fetched); without matplotlib the page has its tables and says so.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Sequence
from typing import Any

from rich.table import Table

from gpuport.bench.results import BenchComparison, ComparisonRow, RunList, RunReport, headline
from gpuport.bench.store import RunSummary, StoredRun
from gpuport.report import Format, RenderOptions, renderer
from gpuport.report.common import (
    console_text,
    display_text,
    dumps,
    html_text,
    md_text,
    memory_console,
    with_content_security_policy,
)

# --- numbers ---------------------------------------------------------------------------------


def number(value: float | None) -> str:
    """Three or four significant figures, thousands separated; an em dash for none."""
    if value is None:
        return "\u2014"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    if abs(value) >= 1:
        return f"{value:.2f}"
    return f"{value:.3g}"


def percent(value: float | None) -> str:
    return "\u2014" if value is None else f"{value * 100:.0f}%"


def ratio(value: float | None) -> str:
    if value is None:
        return "\u2014"
    return f"{value:.2f}x" if value >= 0.1 else f"{value:.2g}x"  # 0.0047x, not 0.00x


def _letter(index: int) -> str:
    return chr(ord("A") + index) if index < 26 else f"R{index + 1}"


def _when(summary: RunSummary) -> str:
    return summary.started.replace("T", " ").split("+")[0]


def _state(summary: RunSummary) -> str:
    state = "complete" if summary.complete else "incomplete"
    return f"{state}, imported" if summary.imported else state


def _run_notes(run: StoredRun) -> list[str]:
    notes = run.settings.get("notes")
    return [n for n in notes if isinstance(n, str)] if isinstance(notes, list) else []


def _machine_lines(run: StoredRun) -> list[tuple[str, str]]:
    m = run.machine
    builds = ", ".join(
        f"{name} {value}"
        for name, value in (("torch", m.torch), ("CUDA", m.cuda), ("HIP", m.hip))
        if value
    )
    memory = f"{m.device_memory_bytes / 2**30:.0f} GiB" if m.device_memory_bytes else ""
    url, model = run.settings.get("url"), run.settings.get("model")
    served: list[tuple[str, str]] = []
    if run.summary.kind == "serve" and isinstance(url, str):
        # A serving run measured the server; the machine below is the client that drove it.
        served = [("server", f"{model} at {url}" if isinstance(model, str) else url)]
    return [
        *served,
        ("device" if not served else "client", m.label + (f", {memory}" if memory else "")),
        ("accelerator", f"{m.accelerator} ({m.device_count} device(s))"),
        ("driver", m.driver or "\u2014"),
        ("builds", builds or "\u2014"),
        ("host", f"{m.hostname}, {m.os}, {m.cpu} x{m.cpu_count}"),
        ("gpuport", m.gpuport + (f" ({m.gpuport_revision})" if m.gpuport_revision else "")),
    ]


# --- one run ---------------------------------------------------------------------------------


def _result_cells(run: StoredRun) -> list[tuple[str, str, str, str, str, str]]:
    """(workload, measurement, result, % of peak, spread, status and note) per result."""
    cells = []
    for record in run.results:
        if record.workload == "telemetry":
            readings = ", ".join(
                f"{k} {number(v)}" for k, v in record.metrics.items() if v is not None
            )
            cells.append((record.workload, record.name, readings or "\u2014", "", "", record.note))
            continue
        _, unit, value = headline(record)
        result = f"{number(value)} {unit}".strip() if value is not None else "\u2014"
        spread = record.metrics.get("spread")
        status = record.status if record.status != "ok" else ""
        note = f"{status}: {record.note}" if status and record.note else status or record.note
        cells.append(
            (
                record.workload,
                record.name,
                result,
                percent(record.metrics.get("fraction_of_peak")),
                "" if spread is None else f"\u00b1{spread * 100:.0f}%",
                note,
            )
        )
    return cells


@renderer(RunReport, Format.TERMINAL)
def render_run_terminal(report: RunReport, options: RenderOptions) -> str:
    run = report.run
    s = run.summary
    console = memory_console(options)
    label = f" \u201c{display_text(s.label)}\u201d" if s.label else ""
    console.print(f"run {s.id}{label}: {s.kind}, {_when(s)} UTC, {_state(s)}")
    for key, value in _machine_lines(run):
        console.print(f"  {key:<12} {display_text(value)}")
    for note in _run_notes(run):
        console.print(f"  note: {display_text(note)}")
    table = Table(box=None, title_justify="left", pad_edge=False)
    for column in ("workload", "measurement", "result", "of peak", "spread", "note"):
        table.add_column(column, overflow="fold")
    for cells in _result_cells(run):
        table.add_row(*(display_text(c) for c in cells))
    console.print()
    console.print(table)
    return console_text(console)


def _summary_dict(summary: RunSummary) -> dict[str, Any]:
    return {
        "id": summary.id,
        "kind": summary.kind,
        "label": summary.label,
        "started": summary.started,
        "finished": summary.finished,
        "complete": summary.complete,
        "imported": summary.imported,
        "device": summary.device_name,
        "accelerator": summary.accelerator,
        "host": summary.hostname,
        "results": summary.results,
    }


def _run_dict(run: StoredRun) -> dict[str, Any]:
    return {
        "run": _summary_dict(run.summary),
        "machine": run.machine.to_dict(),
        "settings": dict(run.settings),
        "results": [r.to_dict() for r in run.results],
    }


@renderer(RunReport, Format.JSON)
def render_run_json(report: RunReport, options: RenderOptions) -> str:
    return dumps({"tool": "gpuport", "version": options.tool_version, **_run_dict(report.run)})


def _md_row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(md_text(c) for c in cells) + " |\n"


@renderer(RunReport, Format.MARKDOWN)
def render_run_markdown(report: RunReport, options: RenderOptions) -> str:
    run = report.run
    s = run.summary
    label = f" ({md_text(s.label)})" if s.label else ""
    lines = [f"# gpuport bench run {s.id}{label}\n\n"]
    lines.append(f"{md_text(s.kind)} run, {md_text(_when(s))} UTC, {md_text(_state(s))}.\n\n")
    lines.extend(f"- **{key}**: {md_text(value)}\n" for key, value in _machine_lines(run))
    lines.extend(f"- note: {md_text(note)}\n" for note in _run_notes(run))
    lines.append("\n")
    lines.append(_md_row(("workload", "measurement", "result", "of peak", "spread", "note")))
    lines.append("|---|---|---:|---:|---:|---|\n")
    lines.extend(_md_row(cells) for cells in _result_cells(run))
    return "".join(lines)


# --- the list of runs ------------------------------------------------------------------------


@renderer(RunList, Format.TERMINAL)
def render_run_list_terminal(listing: RunList, options: RenderOptions) -> str:
    if not listing.runs:
        return "no runs stored yet: run `gpuport bench` (or `gpuport bench import FILE`)\n"
    table = Table(box=None, pad_edge=False)
    for column in ("id", "started (UTC)", "kind", "device", "host", "results", "state", "label"):
        table.add_column(column, overflow="fold")
    for s in listing.runs:
        table.add_row(
            s.id,
            _when(s),
            s.kind,
            display_text(s.device_name),
            display_text(s.hostname),
            str(s.results),
            _state(s),
            display_text(s.label or ""),
        )
    console = memory_console(options)
    console.print(table)
    return console_text(console)


@renderer(RunList, Format.JSON)
def render_run_list_json(listing: RunList, options: RenderOptions) -> str:
    return dumps(
        {
            "tool": "gpuport",
            "version": options.tool_version,
            "runs": [_summary_dict(s) for s in listing.runs],
        }
    )


# --- comparison ------------------------------------------------------------------------------


def _cell(row: ComparisonRow, index: int) -> str:
    value, share = row.values[index], row.fractions[index]
    if value is None:
        return "\u2014"
    return number(value) + (f" ({percent(share)})" if share is not None else "")


def _comparison_header(comparison: BenchComparison) -> list[str]:
    lines = []
    for i, run in enumerate(comparison.runs):
        s = run.summary
        label = f" \u201c{s.label}\u201d" if s.label else ""
        lines.append(
            f"{_letter(i)}  {s.id}{label}  {_where(run)}, {s.kind}, {_when(s)} UTC, {_state(s)}"
        )
    return lines


def _where(run: StoredRun) -> str:
    """What was measured: the device, or for a serving run the server (and the client)."""
    url, model = run.settings.get("url"), run.settings.get("model")
    if run.summary.kind == "serve" and isinstance(url, str):
        served = f"{model} at {url}" if isinstance(model, str) else url
        return f"{served} (client: {run.machine.label})"
    return run.machine.label


def _has_peak(comparison: BenchComparison) -> bool:
    return any(f is not None for row in comparison.rows for f in row.fractions)


def _comparison_columns(comparison: BenchComparison) -> list[str]:
    n = len(comparison.runs)
    return (
        ["measurement", "unit"]
        + [f"{_letter(i)} (of peak)" if _has_peak(comparison) else _letter(i) for i in range(n)]
        + [f"{_letter(i)}/A" for i in range(1, n)]
    )


def _comparison_cells(comparison: BenchComparison, row: ComparisonRow) -> list[str]:
    n = len(comparison.runs)
    return (
        [row.name, row.unit or row.metric]
        + [_cell(row, i) for i in range(n)]
        + [ratio(row.ratios[i]) for i in range(1, n)]
    )


@renderer(BenchComparison, Format.TERMINAL)
def render_comparison_terminal(comparison: BenchComparison, options: RenderOptions) -> str:
    console = memory_console(options)
    console.print(f"gpuport bench compare: {len(comparison.runs)} runs, A is the baseline")
    for line in _comparison_header(comparison):
        console.print("  " + display_text(line))
    console.print()
    if not comparison.rows:
        console.print("no measurement in common to compare")
    else:
        table = Table(box=None, pad_edge=False)
        for i, column in enumerate(_comparison_columns(comparison)):
            table.add_column(column, justify="left" if i < 2 else "right", overflow="fold")
        for row in comparison.rows:
            table.add_row(*(display_text(c) for c in _comparison_cells(comparison, row)))
        console.print(table)
        if _has_peak(comparison):
            console.print(
                "(of peak): the share of that device's datasheet peak in gpuport's catalog"
            )
    for note in comparison.notes:
        console.print("note: " + display_text(note))
    return console_text(console)


def _comparison_dict(comparison: BenchComparison) -> dict[str, Any]:
    return {
        "runs": [
            {**_summary_dict(run.summary), "machine": run.machine.to_dict()}
            for run in comparison.runs
        ],
        "baseline": comparison.runs[0].id if comparison.runs else None,
        "rows": [
            {
                "workload": row.workload,
                "name": row.name,
                "metric": row.metric,
                "unit": row.unit,
                "values": list(row.values),
                "fractions_of_peak": list(row.fractions),
                "ratios": list(row.ratios),
            }
            for row in comparison.rows
        ],
        "notes": list(comparison.notes),
    }


@renderer(BenchComparison, Format.JSON)
def render_comparison_json(comparison: BenchComparison, options: RenderOptions) -> str:
    return dumps(
        {"tool": "gpuport", "version": options.tool_version, **_comparison_dict(comparison)}
    )


@renderer(BenchComparison, Format.MARKDOWN)
def render_comparison_markdown(comparison: BenchComparison, options: RenderOptions) -> str:
    lines = ["# gpuport bench compare\n\n"]
    lines.extend(f"- {md_text(line)}\n" for line in _comparison_header(comparison))
    lines.append("\n")
    columns = _comparison_columns(comparison)
    lines.append(_md_row(columns))
    lines.append("|---|---|" + "---:|" * (len(columns) - 2) + "\n")
    lines.extend(_md_row(_comparison_cells(comparison, row)) for row in comparison.rows)
    if comparison.notes:
        lines.append("\n")
        lines.extend(f"- note: {md_text(note)}\n" for note in comparison.notes)
    return "".join(lines)


# Matplotlib's SVG carries its own <style> (refused by the page's policy, which admits only the
# page's style by hash) and an XML prolog; both go, the drawing keeps its presentation attributes.
_SVG_STYLE = re.compile(r"<style[^>]*>.*?</style>", re.DOTALL)
_SVG_START = re.compile(r"<svg\b")
_PALETTE = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860")


def _chart_label(text: str) -> str:
    """Text for matplotlib, its control characters shown as escapes."""
    return display_text(text)


def _ratio_tick(x: float, base: int = 2) -> str:
    """A log-scale tick: 4x, 1x, and below one a fraction (1/4x), not 0.015625x; on a base-10
    axis (ratios past 64x) 1000x and 0.001x."""
    if x <= 0:
        return ""
    return f"{x:g}x" if x >= 1 or base == 10 else f"1/{1 / x:g}x"


def _short(text: str, width: int) -> str:
    """A chart label: at most ``width`` characters, an ellipsis where cut (the table has all)."""
    text = _chart_label(text)
    return text if len(text) <= width else text[: width - 1] + "\u2026"


def _bar_chart(
    comparison: BenchComparison, title: str, pick: str, rows: list[ComparisonRow]
) -> str | None:
    """Grouped horizontal bars, one colour per run, as an inline SVG element (or None)."""
    try:
        from matplotlib import rc_context
        from matplotlib.figure import Figure
        from matplotlib.ticker import FuncFormatter
    except ImportError:
        return None
    n = len(comparison.runs)
    with rc_context(
        {
            "svg.fonttype": "none",  # text as <text>, not glyph outlines
            "svg.hashsalt": "gpuport-bench",  # the same ids on every render
            "text.parse_math": False,  # a "$" in a label is a dollar, not mathtext
            "font.size": 9,
        }
    ):
        # The ratio chart draws each run from 1x (A itself is the line), on a log scale so
        # that 0.5x and 2x are as far from it; the peak chart draws every run from 0%.
        # A run without any share of peak (a device the catalog does not know) has no bars there.
        shown = (
            list(range(1, n))
            if pick == "ratio"
            else [i for i in range(n) if any(row.fractions[i] is not None for row in rows)]
        )
        height = 0.8 / max(len(shown), 1)
        figure = Figure(
            figsize=(8, 1.4 + 0.4 * len(rows) * max(1.0, len(shown) / 2)), layout="constrained"
        )
        axes = figure.add_subplot()
        for slot, i in enumerate(shown):
            positions = [r + slot * height for r in range(len(rows))]
            run = comparison.runs[i]
            url = run.settings.get("url")
            what = url if run.summary.kind == "serve" and isinstance(url, str) else None
            what = what or run.machine.device_name
            named = f"{run.summary.label} ({what})" if run.summary.label else what
            label = f"{_letter(i)}: {_short(named, 60)}"
            colour = _PALETTE[i % len(_PALETTE)]
            if pick == "ratio":
                ratios = [row.ratios[i] or 1.0 for row in rows]
                bars = axes.barh(
                    positions,
                    [r - 1.0 for r in ratios],
                    left=1.0,
                    height=height,
                    color=colour,
                    label=label,
                )
                # Each bar says its ratio: a run equal to A draws no bar at all.
                axes.bar_label(
                    bars,
                    labels=[ratio(row.ratios[i]) for row in rows],
                    padding=3,
                    fontsize=7,
                )
            else:
                shares = [(row.fractions[i] or 0.0) * 100 for row in rows]
                axes.barh(positions, shares, height=height, color=colour, label=label)
        if pick == "ratio":
            # Symmetric about 1x, and at least 0.5x to 2x, so a 15% lead looks like one.
            ratios = [r for row in rows for r in row.ratios[1:] if r]
            # A quarter further again on the log scale, plus one step, leaves room for the ratio
            # printed at each bar's end.
            furthest = max([2.0] + [max(r, 1.0 / r) for r in ratios])
            reach = 2.0 ** (math.log2(furthest) * 1.25 + 1.0)
            # Powers of two up to 64x; past that, powers of ten (a CPU against a GPU is 1e-06x).
            base = 2 if furthest <= 64 else 10
            axes.set_xscale("log", base=base)
            axes.set_xlim(1.0 / reach, reach)
            # At most four ticks either side of 1x, and 1x always among them.
            reach_exp = math.log(reach, base)
            step = max(1, math.ceil(reach_exp / 4))
            count = int(reach_exp // step)
            axes.set_xticks([float(base) ** (j * step) for j in range(-count, count + 1)])
            axes.xaxis.set_major_formatter(FuncFormatter(lambda x, _: _ratio_tick(x, base)))
            axes.axvline(1.0, color="#333333", linewidth=1.0)
            axes.set_xlabel("each value over run A's (log scale; right of 1x: higher than A)")
        else:
            axes.axvline(100.0, color="#888888", linewidth=0.8)
            axes.set_xlabel("% of the device's datasheet peak")
        axes.set_yticks([r + height * (len(shown) - 1) / 2 for r in range(len(rows))])
        axes.set_yticklabels([_short(row.name, 40) for row in rows])
        axes.invert_yaxis()
        axes.set_title(_chart_label(title))
        figure.legend(loc="outside lower center", ncols=min(len(shown), 3), fontsize=8)
        buffer = io.StringIO()
        figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    svg = _SVG_STYLE.sub("", buffer.getvalue())
    svg = _STYLE_ATTRIBUTE.sub(_presentation_attributes, svg)
    start = _SVG_START.search(svg)
    return svg[start.start() :] if start else None


# The page's policy refuses style="..." attributes too (no 'unsafe-inline'); SVG reads the same
# properties as presentation attributes (https://www.w3.org/TR/SVG2/styling.html#PresentationAttributes).
_STYLE_ATTRIBUTE = re.compile(r' style="([^"]*)"')
_FONT = re.compile(r"(?P<size>[\d.]+px)\s+(?P<family>.+)")


def _presentation_attributes(match: re.Match[str]) -> str:
    attributes = []
    for declaration in match.group(1).split(";"):
        name, _, value = declaration.partition(":")
        name, value = name.strip(), value.strip()
        if not name or not value:
            continue
        if name == "font":
            font = _FONT.fullmatch(value)
            if font:
                attributes.append(f'font-size="{font["size"]}"')
                family = font["family"].replace('"', "'")
                attributes.append(f'font-family="{family}"')
            continue
        attributes.append(f'{name}="{value}"')
    return (" " + " ".join(attributes)) if attributes else ""


def _charts(comparison: BenchComparison) -> str:
    if not comparison.charts or not comparison.rows:
        return ""
    parts = []
    if len(comparison.runs) > 1:
        shared = [r for r in comparison.rows if any(x is not None for x in r.ratios[1:])]
        base = comparison.runs[0]
        name = base.summary.label or base.machine.device_name
        name = name if len(name) <= 48 else name[:47] + "\u2026"
        title = f"Each run against A ({name})"
        chart = _bar_chart(comparison, title, "ratio", shared) if shared else ""
        if chart is None:
            return "<p>Charts need matplotlib (pip install 'gpuport[bench]').</p>"
        if chart:
            parts.append(f'<figure class="chart">{chart}</figure>')
    with_peak = [r for r in comparison.rows if any(f is not None for f in r.fractions)]
    if with_peak:
        chart = _bar_chart(
            comparison, "Share of each device's datasheet peak", "fraction", with_peak
        )
        if chart is not None:
            parts.append(f'<figure class="chart">{chart}</figure>')
    return "".join(parts)


@renderer(BenchComparison, Format.HTML)
def render_comparison_html(comparison: BenchComparison, options: RenderOptions) -> str:
    style = (
        "body{font-family:system-ui,sans-serif;margin:2rem;max-width:1200px}"
        "table{border-collapse:collapse;font-size:13px}"
        "th,td{border:1px solid #ccc;padding:4px 6px;vertical-align:top}"
        "td.n{text-align:right;font-variant-numeric:tabular-nums}"
        "figure.chart svg{max-width:100%;height:auto}"
    )
    runs = "".join(f"<li>{html_text(line)}</li>" for line in _comparison_header(comparison))
    head = "".join(f"<th>{html_text(c)}</th>" for c in _comparison_columns(comparison))
    body = "".join(
        "<tr>"
        + "".join(
            (f'<td class="n">{html_text(c)}</td>' if i >= 2 else f"<td>{html_text(c)}</td>")
            for i, c in enumerate(_comparison_cells(comparison, row))
        )
        + "</tr>"
        for row in comparison.rows
    )
    notes = "".join(f"<li>{html_text(n)}</li>" for n in comparison.notes)
    return with_content_security_policy(
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>gpuport bench compare</title><style>{style}</style></head>"
        f"<body><h1>gpuport bench compare</h1><ul>{runs}</ul>"
        f"{_charts(comparison)}"
        f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
        + (
            "<p>(of peak): the share of that device's datasheet peak in gpuport's GPU catalog; "
            "none for a device the catalog does not know.</p>"
            if _has_peak(comparison)
            else ""
        )
        + (f"<h2>Notes</h2><ul>{notes}</ul>" if notes else "")
        + f"<footer><p>gpuport {html_text(options.tool_version)}</p></footer></body></html>\n"
    )
