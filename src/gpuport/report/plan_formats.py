"""The plan in every format: a ranked table, JSON, Markdown, HTML with inline SVG, SARIF.

A sweep (several batch sizes or contexts) adds its table, and in HTML its line charts, from
:mod:`gpuport.report.plan_sweep`.

Also the sections the project report (``gpuport assess --model``) embeds:
:func:`plan_terminal_section`, :func:`plan_markdown_section`, :func:`plan_html_section`
and :func:`plan_json`. Model names and paths come from the user's files, so every string
is escaped for the format it lands in.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from gpuport.plan.planner import PlanEntry, PlanResult
from gpuport.report import Format, RenderOptions, renderer
from gpuport.report.common import (
    TOOL_NAME,
    console_text,
    display_text,
    dumps,
    html_text,
    md_text,
    memory_console,
    with_content_security_policy,
)
from gpuport.report.plan_sweep import (
    Column,
    any_range,
    fitted_table,
    range_text,
    sweep_html_charts,
    sweep_html_table,
    sweep_json,
    sweep_markdown,
    sweep_table,
    uncertainty_json,
)

GB = 1e9
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
TERMINAL_ROWS_IN_ASSESS = 10  # the project report shows the top of the ranking
BOUND_STYLE = {"memory": "cyan", "compute": "magenta", "communication": "yellow"}
_BOUND_SHORT = {"memory": "mem", "compute": "cmp", "communication": "comm", "overhead": "ovh"}
TERMINAL_REASONS = 5  # GPUs whose reasons the terminal table spells out


# --- shared wording --------------------------------------------------------------------------


def _money(value: float | None, digits: int = 3) -> str:
    if value is None:
        return "—"
    if value >= 10:  # three decimals only help below $10
        digits = min(digits, 2)
    return f"${value:,.{digits}f}"


def _tokens(value: float | None) -> str:
    return "—" if value is None else f"{value:,.0f}"


def _gb(value: float) -> str:
    return f"{value / GB:,.1f}"


def _layout(entry: PlanEntry) -> str:
    word = entry.gpu.device_word
    text = f"{entry.devices} {word}" + ("s" if entry.devices > 1 else "")
    if entry.devices > 1:
        text += f" (TP{entry.tp}" + (f"xPP{entry.pp}" if entry.pp > 1 else "") + ")"
    return text


def _title(plan: PlanResult) -> str:
    r = plan.request
    contexts = ", ".join(f"{c:,}" for c in sorted(r.context_values))
    batches = ", ".join(f"{b:,}" for b in sorted(r.batch_values))
    engine = r.engine or "engine per GPU"
    return (
        f"{plan.model.name} · {r.precision.name} weights · KV {r.kv_dtype.name} · "
        f"{contexts} tokens x {batches} sequences · {engine}"
    )


# --- JSON ------------------------------------------------------------------------------------


def _entry_json(entry: PlanEntry) -> dict[str, Any]:
    memory = entry.memory
    decode = entry.decode
    prefill = entry.prefill
    price = entry.price
    return {
        "rank": entry.rank,
        "gpu": entry.gpu.id,
        "name": entry.gpu.name,
        "vendor": entry.gpu.vendor,
        "engine": entry.engine,
        "fits": entry.fits,
        "gpus_needed": entry.devices if entry.fits else None,
        "devices_per_package": entry.gpu.devices_per_package,
        "packages_needed": entry.packages if entry.fits else None,
        "tensor_parallel": entry.tp,
        "pipeline_parallel": entry.pp,
        "memory_gb_per_gpu": {
            "capacity": round(memory.capacity / GB, 2),
            "usable": round(memory.budget / GB, 2),
            "weights": round(memory.weights / GB, 2),
            "kv_cache": round(memory.kv_cache / GB, 2),
            "activations": round(memory.activations / GB, 2),
            "runtime_overhead": round(memory.overhead / GB, 2),
            "free": round(memory.free / GB, 2),
        },
        "kv_cache": {
            "room_gb_per_gpu": round(max(memory.kv_room, 0.0) / GB, 2),
            "max_sequences_at_context": entry.max_sequences,
            "max_context_at_batch": entry.max_context,
        },
        "decode": None
        if decode is None
        else {
            "tokens_per_s": round(decode.tokens_per_s, 1),
            "tokens_per_s_per_sequence": round(decode.per_sequence_tokens_per_s, 2),
            "step_ms": round(decode.step.seconds * 1e3, 3),
            "bound": decode.bound,
            "memory_ms": round(decode.step.memory_s * 1e3, 3),
            "compute_ms": round(decode.step.compute_s * 1e3, 3),
            "communication_ms": round(decode.step.communication_s * 1e3, 3),
            "compute_bound_from_batch": decode.compute_bound_from_batch,
            "compute_bound_from_batch_short_context": decode.weights_compute_bound_from_batch,
            "uncertainty": uncertainty_json(decode),
        },
        "prefill": None
        if prefill is None
        else {
            "tokens_per_s": round(prefill.tokens_per_s, 1),
            "bound": prefill.bound,
            "chunk_tokens": prefill.chunk_tokens,
            "uncertainty": uncertainty_json(prefill),
        },
        "rates": {
            "source": entry.rates.label,
            "mem_bw_gbs": round(entry.rates.mem_bw_gbs, 1),
            "tflops": round(entry.rates.tflops, 1),
            "interconnect_gbs": round(entry.rates.interconnect_gbs, 1),
        },
        "price": None
        if price is None
        else {
            "usd_per_gpu_hour": round(price.usd_per_hour, 4),
            "kind": price.kind,
            "provider": price.provider,
            "source": price.source,
            "date": price.date.isoformat() if price.date else None,
        },
        "cost": {
            "usd_per_hour": None if entry.usd_per_hour is None else round(entry.usd_per_hour, 4),
            "usd_per_1m_output_tokens": None
            if entry.cost_per_million_output is None
            else round(entry.cost_per_million_output, 5),
            "usd_per_1m_input_tokens": None
            if entry.cost_per_million_input is None
            else round(entry.cost_per_million_input, 5),
        },
        "reasons": list(entry.reasons),
    }


def plan_json(plan: PlanResult) -> dict[str, Any]:
    """The plan as plain data: one entry per GPU, in rank order."""
    model = plan.model
    request = plan.request
    params = model.params
    return {
        "model": {
            "name": model.name,
            "source": model.source,
            "family": model.family,
            "attention": model.attention_kind,
            "layers": model.num_layers,
            "sliding_window_layers": model.sliding_layers,
            "experts": None
            if model.moe is None
            else {"total": model.moe.num_experts, "per_token": model.moe.experts_per_token},
            "parameters": params.total,
            "active_parameters": params.active,
            "published_parameters": model.published.total if model.published else None,
            "weights_gb": round(plan.weights_bytes / GB, 3),
            "kv_bytes_per_token": model.kv_bytes_per_token(request.kv_dtype.bytes_per_element),
            "kv_gb_per_sequence": round(plan.kv_bytes_per_sequence / GB, 4),
            "shape_estimated": model.estimated_shape,
        },
        "request": {
            "context": request.context,
            "batch": request.batch,
            "contexts": sorted(request.context_values),
            "batches": sorted(request.batch_values),
            "engine": request.engine,
            "precision": request.precision.name,
            "bits_per_weight": round(request.precision.bits_per_weight, 4),
            "precision_source": request.precision.source,
            "kv_dtype": request.kv_dtype.name,
            "tp_max": request.tp_max,
            "pp_max": request.pp_max,
            "utilization": request.utilization,
        },
        "entries": [_entry_json(e) for e in plan.entries],
        "sweep": sweep_json(plan),
        "summary": list(plan.summary),
        "warnings": list(plan.warnings),
        "assumptions": list(plan.assumptions),
    }


@renderer(PlanResult, Format.JSON)
def render_plan_json(plan: PlanResult, options: RenderOptions) -> str:
    document = {"tool": TOOL_NAME, "version": options.tool_version, "kind": "plan"}
    document.update(plan_json(plan))
    return dumps(document)


# --- SARIF -----------------------------------------------------------------------------------


@renderer(PlanResult, Format.SARIF)
def render_plan_sarif(plan: PlanResult, options: RenderOptions) -> str:
    """A valid SARIF log with no results: a plan makes no findings; it rides in a note."""
    run = {
        "tool": {
            "driver": {"name": TOOL_NAME, "version": options.tool_version or "0", "rules": []}
        },
        "invocations": [
            {
                "executionSuccessful": True,
                "toolExecutionNotifications": [
                    {
                        "level": "note",
                        "message": {
                            "text": "gpuport plan makes no findings. "
                            + " ".join(display_text(s) for s in plan.summary)
                        },
                    }
                ],
            }
        ],
        "results": [],
        "properties": {"plan": plan_json(plan)},
    }
    log = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}
    return dumps(log)


# --- terminal --------------------------------------------------------------------------------


def _bullet(text: str, *, indent: int, style: str = "") -> Table:
    """A "- text" item whose wrapped lines line up under its first word."""
    grid = Table.grid()
    grid.add_column(width=indent + 2, no_wrap=True)
    grid.add_column()
    grid.add_row(Text(" " * indent + "- ", style=style), Text(text, style=style))
    return grid


def _indented(text: str, *, indent: int = 2, hang: int = 0, style: str = "") -> Table:
    """``text`` after ``indent`` spaces, its wrapped lines ``hang`` further in."""
    grid = Table.grid()
    grid.add_column(width=indent + hang, no_wrap=True)
    grid.add_column()
    first, _, rest = text.partition(" ") if hang else ("", "", text)
    grid.add_row(Text(" " * indent + first, style=style), Text(rest, style=style))
    return grid


def _short_layout(entry: PlanEntry) -> str:
    """The count column: 1, "2 TP2", "16 TP8xPP2" ("GCDs" for an MI250X)."""
    unit = " GCDs" if entry.gpu.devices_per_package > 1 else ""
    if entry.devices == 1:
        return "1" + unit[:-1]
    return f"{entry.devices}{unit} TP{entry.tp}" + (f"xPP{entry.pp}" if entry.pp > 1 else "")


_COLUMNS = (
    Column("rank", "#"),
    Column("gpu", "GPU", right=False, wraps=True),
    Column("engine", "engine", right=False),
    Column("count", "count", right=False),
    Column("weights", "weights\nGB"),
    Column("kv", "KV\nGB"),
    Column("seqs", "seqs"),
    Column("decode", "decode\ntok/s"),
    Column("prefill", "prefill\ntok/s"),
    Column("out", "$/1M\nout"),
    Column("in", "$/1M\nin"),
)
# What a narrow terminal leaves out, first to last; the table never cuts a number short.
_DROP_ORDER = (("seqs",), ("weights", "kv"), ("prefill", "in"))
_DROPPED_NAMES = {
    "seqs": "seqs",
    "weights": "weights",
    "kv": "KV",
    "prefill": "prefill",
    "in": "$/1M in",
}


def _row_cells(e: PlanEntry) -> dict[str, str | Text]:
    m = e.memory
    cells: dict[str, str | Text] = {
        "rank": str(e.rank),
        "gpu": Text(display_text(e.gpu.short)),
        "engine": e.engine,
        "weights": _gb(m.weights),
        "kv": _gb(m.kv_cache),
    }
    if not e.fits:
        return cells | {
            "count": Text(f">{e.devices}", style="red"),
            "seqs": Text("none", style="red"),
            "decode": "—",
            "prefill": "—",
            "out": "—",
            "in": "—",
        }
    assert e.decode is not None and e.prefill is not None
    decode = Text(_tokens(e.decode.tokens_per_s) + " ")
    decode.append(_BOUND_SHORT[e.decode.bound], style=BOUND_STYLE.get(e.decode.bound, ""))
    if e.decode.range_tokens_per_s is not None:  # under the estimate: keeps the table narrow
        decode.append("\n" + range_text(e.decode), style="dim")
    return cells | {
        "count": _short_layout(e),
        "seqs": f"{e.max_sequences:,}",
        "decode": decode,
        "prefill": _tokens(e.prefill.tokens_per_s),
        "out": _money(e.cost_per_million_output).removeprefix("$"),  # "$" is in the header
        "in": _money(e.cost_per_million_input).removeprefix("$"),
    }


def _table(entries: tuple[PlanEntry, ...] | list[PlanEntry], width: int) -> tuple[Table, list[str]]:
    """The ranked table that fits ``width`` columns, and the columns it had to leave out."""
    rows = [_row_cells(e) for e in entries]
    table, dropped = fitted_table(_COLUMNS, rows, width, _DROP_ORDER)
    return table, [_DROPPED_NAMES[key] for key in dropped]


def _print_body(console: Console, plan: PlanResult, rows: int | None, details: bool) -> None:
    for line in plan.summary:
        console.print(Text(display_text(line)))
    console.print()
    shown = plan.entries if rows is None else plan.entries[:rows]
    table, dropped = _table(shown, console.width)
    console.print(table)
    legend = ["count: GPUs per replica (TP tensor-, PP pipeline-parallel; >N: does not fit in N)"]
    if "weights" not in dropped:
        legend.append("weights and KV per GPU")
    if "seqs" not in dropped:
        legend.append("seqs: sequences of --context that fit")
    legend.append("decode bound: mem = memory, cmp = compute, comm = communication, ovh = overhead")
    if any_range(shown):
        legend.append("under decode, the typical range" + (" (see Why)" if details else ""))
    console.print(_indented("; ".join(legend), style="dim"))
    if dropped:
        console.print(
            _indented(
                f"left out at {console.width} columns: {', '.join(dropped)} "
                "(--format markdown or html shows every column)",
                style="dim",
            )
        )
    if plan.request.is_sweep:
        console.print()
        console.print(Text("Sweep", style="bold"))
        sweep, left_out = sweep_table(plan, console.width)
        console.print(sweep)
        if left_out:
            console.print(
                _indented(
                    f"left out at {console.width} columns: {', '.join(left_out)} "
                    "(--format markdown or html shows every column)",
                    style="dim",
                )
            )
    if rows is not None and len(plan.entries) > rows:
        console.print(
            _indented(
                f"… {len(plan.entries) - rows} more GPUs: `gpuport plan` shows them all",
                style="dim",
            )
        )
    for warning in plan.warnings:
        console.print(_indented(f"note: {display_text(warning)}", indent=0, hang=6, style="yellow"))
    if not details:
        return
    console.print()
    console.print(Text("Why", style="bold"))
    explained = [e for e in shown if e.fits][:TERMINAL_REASONS] + [e for e in shown if not e.fits]
    for e in explained:
        console.print(Text(f"{e.rank}. {e.gpu.name}", style="bold"))
        for reason in e.reasons:
            console.print(_bullet(display_text(reason), indent=3))
        if e.price is not None:
            console.print(
                _bullet(
                    f"price ${e.price.usd_per_hour:,.2f}/GPU-h: {e.price.label} ({e.price.source})",
                    indent=3,
                    style="dim",
                )
            )
    if len(explained) < len(shown):
        console.print(
            Text("   (every GPU's reasons: --format markdown, html or json)", style="dim")
        )
    console.print()
    console.print(Text("Assumptions", style="bold"))
    for assumption in plan.assumptions:
        console.print(_bullet(assumption, indent=1, style="dim"))


@renderer(PlanResult, Format.TERMINAL)
def render_plan_terminal(plan: PlanResult, options: RenderOptions) -> str:
    console = memory_console(options)
    console.print(Text(f"gpuport plan: {display_text(_title(plan))}", style="bold"))
    console.print()
    _print_body(console, plan, rows=None, details=True)
    return console_text(console)


def plan_terminal_section(plan: PlanResult, options: RenderOptions) -> str:
    """The plan inside the project report: summary and the top of the ranking."""
    console = memory_console(options)
    console.print(Text(f"GPU plan: {display_text(_title(plan))}", style="bold"))
    _print_body(console, plan, rows=TERMINAL_ROWS_IN_ASSESS, details=False)
    return console_text(console)


# --- Markdown --------------------------------------------------------------------------------


def plan_markdown_section(plan: PlanResult) -> str:
    lines = [f"## GPU plan: {md_text(_title(plan))}", ""]
    lines += [f"- {md_text(s)}" for s in plan.summary]
    lines += [
        "",
        "| # | GPU | engine | needs | weights GB/GPU | KV GB/GPU | usable GB/GPU | max seqs | "
        "max context | decode tok/s | typically tok/s | bound | prefill tok/s | typically tok/s "
        "| $/GPU-h | $/1M out | $/1M in |",
        "|---:|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|",
    ]
    for e in plan.entries:
        m = e.memory
        decode = e.decode
        prefill = e.prefill
        cells = [
            str(e.rank),
            md_text(e.gpu.name),
            md_text(e.engine),
            md_text(_layout(e)) if e.fits else f"does not fit in {md_text(_layout(e))}",
            _gb(m.weights),
            _gb(m.kv_cache),
            _gb(m.budget),
            f"{e.max_sequences:,}" if e.fits else "—",
            f"{e.max_context:,}" if e.fits else "—",
            _tokens(decode.tokens_per_s if decode else None),
            range_text(decode),
            decode.bound if decode else "—",
            _tokens(prefill.tokens_per_s if prefill else None),
            range_text(prefill),
            _money(e.price.usd_per_hour, 2) if e.price else "—",
            _money(e.cost_per_million_output),
            _money(e.cost_per_million_input),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    if plan.request.is_sweep:
        lines += sweep_markdown(plan)
    lines += ["", "### Why", ""]
    for e in plan.entries:
        lines.append(f"- **{md_text(e.gpu.name)}**: " + "; ".join(md_text(r) for r in e.reasons))
    priced = [e for e in plan.entries if e.price is not None]
    if priced:
        lines += ["", "### Prices", ""]
        for e in priced:
            assert e.price is not None
            lines.append(
                f"- {md_text(e.gpu.short)}: ${e.price.usd_per_hour:,.2f} per GPU-hour "
                f"({md_text(e.price.label)}) — <{_markdown_url(e.price.source)}>"
            )
    if plan.warnings:
        lines += ["", "### Notes", ""] + [f"- {md_text(w)}" for w in plan.warnings]
    lines += ["", "### Assumptions", ""] + [f"- {md_text(a)}" for a in plan.assumptions]
    return "\n".join(lines) + "\n"


def _markdown_url(url: str) -> str:
    return display_text(url).replace(">", "%3E").replace("<", "%3C").replace(" ", "%20")


@renderer(PlanResult, Format.MARKDOWN)
def render_plan_markdown(plan: PlanResult, options: RenderOptions) -> str:
    return f"# gpuport plan\n\n{plan_markdown_section(plan)}"


# --- HTML ------------------------------------------------------------------------------------

_SEGMENTS = (
    ("weights", "#4e79a7"),
    ("KV cache", "#f28e2b"),
    ("activations + runtime", "#9c755f"),
    ("free", "#e0e0e0"),
)
_VENDOR_COLORS = {"amd": "#d62728", "nvidia": "#2ca02c"}


def _memory_svg(entries: list[PlanEntry]) -> str:
    """Stacked bars of one device's memory per GPU type: weights, KV, the rest, free."""
    label_w, bar_w, row_h = 190, 420, 22
    height = 30 + row_h * len(entries) + 24
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{label_w + bar_w + 90}" '
        f'height="{height}" viewBox="0 0 {label_w + bar_w + 90} {height}" '
        'aria-label="Memory per GPU">',
        "<title>Memory per GPU: weights, KV cache, activations and runtime, free</title>",
    ]
    x = label_w
    for name, color in _SEGMENTS:
        parts.append(f'<rect x="{x}" y="4" width="10" height="10" fill="{color}"/>')
        parts.append(f'<text x="{x + 14}" y="13" font-size="11">{html_text(name)}</text>')
        x += 14 + 7 * len(name) + 16
    for i, e in enumerate(entries):
        y = 26 + i * row_h
        m = e.memory
        cap = max(m.capacity, 1.0)
        values = (m.weights, m.kv_cache, m.activations + m.overhead, max(m.capacity - m.used, 0.0))
        parts.append(
            f'<text x="{label_w - 6}" y="{y + 14}" font-size="12" text-anchor="end">'
            f"{html_text(e.gpu.short)} x{e.devices}</text>"
        )
        left = float(label_w)
        for (name, color), value in zip(_SEGMENTS, values, strict=True):
            width = bar_w * min(value, cap) / cap
            if width <= 0:
                continue
            parts.append(
                f'<rect x="{left:.1f}" y="{y}" width="{width:.1f}" height="{row_h - 6}" '
                f'fill="{color}"><title>{html_text(name)}: {_gb(value)} GB</title></rect>'
            )
            left += width
        parts.append(
            f'<text x="{label_w + bar_w + 6}" y="{y + 14}" font-size="11">'
            f"{_gb(m.capacity)} GB</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _cost_svg(entries: list[PlanEntry]) -> str:
    """Bars of dollars per 1M output tokens, cheapest first."""
    priced = [e for e in entries if e.cost_per_million_output is not None]
    if not priced:
        return "<p>No GPU here has a price on file; pass --price GPU=USD.</p>"
    label_w, bar_w, row_h = 190, 420, 22
    height = 30 + row_h * len(priced)
    top = max(e.cost_per_million_output or 0.0 for e in priced) or 1.0
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{label_w + bar_w + 90}" '
        f'height="{height}" viewBox="0 0 {label_w + bar_w + 90} {height}" '
        'aria-label="Cost per 1M output tokens">',
        "<title>Cost per 1M output tokens</title>",
    ]
    x = label_w
    for vendor, color in _VENDOR_COLORS.items():
        parts.append(f'<rect x="{x}" y="4" width="10" height="10" fill="{color}"/>')
        parts.append(f'<text x="{x + 14}" y="13" font-size="11">{html_text(vendor.upper())}</text>')
        x += 90
    for i, e in enumerate(priced):
        cost = e.cost_per_million_output or 0.0
        y = 24 + i * row_h
        width = max(bar_w * cost / top, 1.0)
        color = _VENDOR_COLORS.get(e.gpu.vendor, "#888888")
        parts.append(
            f'<text x="{label_w - 6}" y="{y + 14}" font-size="12" text-anchor="end">'
            f"{html_text(e.gpu.short)} x{e.devices}</text>"
            f'<rect x="{label_w}" y="{y}" width="{width:.1f}" height="{row_h - 6}" '
            f'fill="{color}"><title>{html_text(_money(cost))}</title></rect>'
            f'<text x="{label_w + width + 6:.1f}" y="{y + 14}" font-size="11">'
            f"{html_text(_money(cost))}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def plan_html_summary(plan: PlanResult) -> str:
    """An escaped HTML fragment: the plan's heading and summary lines, for the top of a report."""
    summary = "".join(f"<li>{html_text(s)}</li>" for s in plan.summary)
    return f"<h2>GPU plan: {html_text(_title(plan))}</h2><ul>{summary}</ul>"


def plan_html_section(plan: PlanResult) -> str:
    """An escaped HTML fragment: summary, charts (inline SVG, no scripts) and the table."""
    fitting = [e for e in plan.entries if e.fits]
    rows = []
    for e in plan.entries:
        decode = e.decode
        prefill = e.prefill
        rows.append(
            "<tr>"
            f"<td>{e.rank}</td><td>{html_text(e.gpu.name)}</td><td>{html_text(e.engine)}</td>"
            f"<td>{html_text(_layout(e)) if e.fits else 'does not fit in ' + html_text(_layout(e))}</td>"
            f"<td>{_gb(e.memory.weights)}</td><td>{_gb(e.memory.kv_cache)}</td>"
            f"<td>{_gb(e.memory.budget)}</td>"
            f"<td>{e.max_sequences if e.fits else '—'}</td>"
            f"<td>{_tokens(decode.tokens_per_s if decode else None)}</td>"
            f"<td>{html_text(range_text(decode))}</td>"
            f"<td>{html_text(decode.bound) if decode else '—'}</td>"
            f"<td>{_tokens(prefill.tokens_per_s if prefill else None)}</td>"
            f"<td>{html_text(range_text(prefill))}</td>"
            f"<td>{html_text(_money(e.cost_per_million_output))}</td>"
            f"<td>{html_text(_money(e.cost_per_million_input))}</td>"
            f"<td><ul>{''.join(f'<li>{html_text(r)}</li>' for r in e.reasons)}</ul></td>"
            "</tr>"
        )
    summary = "".join(f"<li>{html_text(s)}</li>" for s in plan.summary)
    warnings = "".join(f"<li>{html_text(w)}</li>" for w in plan.warnings)
    assumptions = "".join(f"<li>{html_text(a)}</li>" for a in plan.assumptions)
    prices = "".join(
        f"<li>{html_text(e.gpu.short)}: {html_text(_money(e.price.usd_per_hour, 2))} per GPU-hour, "
        f'{html_text(e.price.label)} (<a href="{html_text(e.price.source)}">source</a>)</li>'
        for e in plan.entries
        if e.price is not None
    )
    return (
        '<section class="gpuport-plan">'
        f"<h2>GPU plan: {html_text(_title(plan))}</h2>"
        f"<ul>{summary}</ul>"
        "<h3>Memory per GPU</h3>"
        f"<figure>{_memory_svg(fitting)}</figure>"
        "<h3>Cost per 1M output tokens</h3>"
        f"<figure>{_cost_svg(fitting)}</figure>"
        "<h3>Ranking</h3>"
        "<table><thead><tr><th>#</th><th>GPU</th><th>engine</th><th>needs</th>"
        "<th>weights GB/GPU</th><th>KV GB/GPU</th><th>usable GB/GPU</th><th>max seqs</th>"
        "<th>decode tok/s</th><th>typically</th><th>bound</th><th>prefill tok/s</th>"
        "<th>typically</th><th>$/1M out</th><th>$/1M in</th><th>why</th>"
        f"</tr></thead><tbody>{''.join(rows)}</tbody></table>"
        + (
            f"<h3>Sweep</h3>{sweep_html_charts(plan)}{sweep_html_table(plan)}"
            if plan.request.is_sweep
            else ""
        )
        + (f"<h3>Prices</h3><ul>{prices}</ul>" if prices else "")
        + (f"<h3>Notes</h3><ul>{warnings}</ul>" if warnings else "")
        + f"<h3>Assumptions</h3><ul>{assumptions}</ul>"
        "</section>"
    )


@renderer(PlanResult, Format.HTML)
def render_plan_html(plan: PlanResult, options: RenderOptions) -> str:
    style = (
        "body{font-family:system-ui,sans-serif;margin:2rem;max-width:1200px}"
        "table{border-collapse:collapse;font-size:13px}"
        "th,td{border:1px solid #ccc;padding:4px 6px;vertical-align:top}"
        "td ul{margin:0;padding-left:1rem}"
    )
    return with_content_security_policy(
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>gpuport plan: {html_text(plan.model.name)}</title><style>{style}</style></head>"
        f"<body><h1>gpuport plan</h1>{plan_html_section(plan)}"
        f"<footer><p>gpuport {html_text(options.tool_version)}</p></footer></body></html>\n"
    )
