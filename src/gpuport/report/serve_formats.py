"""``bench serve`` and ``verify serve`` in the terminal, JSON and Markdown.

Everything a server sent (failure details) and everything the user typed (URLs, the model's
name) is shown as text: control characters as escapes in the terminal, inert in Markdown.
"""

from __future__ import annotations

import html
import math
from typing import Any

from rich.table import Table
from rich.text import Text

from gpuport.report import Format, RenderOptions, renderer
from gpuport.report.common import (
    TOOL_NAME,
    console_text,
    display_text,
    dumps,
    md_text,
    memory_console,
    plural,
    tool_version,
)
from gpuport.serving.results import (
    LATENCY_METRICS,
    LATENCY_NAMES,
    LoadStep,
    PairSummary,
    Percentiles,
    ServeBenchResult,
    ServeVerifyResult,
)

_SHORT = {"ttft": "TTFT", "tpot": "TPOT", "itl": "ITL", "e2e": "E2E"}


def _ms(value: float) -> str:
    if value < 10:
        return f"{value:.2f}"
    return f"{value:,.1f}" if value < 1000 else f"{value:,.0f}"


def _rate(value: float) -> str:
    return f"{value:,.2f}"


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100.0 * part / whole:.0f}%)" if whole else "0/0"


def _maybe(value: float | None, digits: int = 4) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _slo_text(result: ServeBenchResult) -> str:
    return ", ".join(f"{_SHORT[name]} ≤ {_ms(limit)} ms" for name, limit in result.slo_ms)


def _failure_line(step: LoadStep) -> str:
    return "; ".join(
        f"{f.reason}: {plural(f.count, 'request')}" + (f" — {f.example}" if f.example else "")
        for f in step.failures
    )


def _settings_line(result: ServeBenchResult) -> str:
    return (
        f"{result.url} · model {result.model} · /v1/{_endpoint_path(result.endpoint)} · "
        f"{result.prompts} prompts: {result.prompt_source}"
    )


def _endpoint_path(endpoint: str) -> str:
    return "chat/completions" if endpoint == "chat" else "completions"


def _failure_verdict(result: ServeBenchResult) -> str:
    answered = sum(step.completed + step.failed for step in result.steps)
    rate = f"failure rate {100.0 * result.failure_rate:.2f}% ({result.failed} of {answered})"
    limit = f"{100.0 * result.max_failure_rate:g}%"
    if result.too_many_failures:
        return f"{rate}, above the {limit} allowed (--max-failure-rate)"
    return f"{rate}, within the {limit} allowed"


# --- JSON ------------------------------------------------------------------------------------


def _round(value: float, digits: int = 3) -> float:
    return round(value, digits)


def _spread_json(spread: Percentiles | None) -> dict[str, Any] | None:
    if spread is None:
        return None
    return {
        "count": spread.count,
        "mean": _round(spread.mean),
        "p50": _round(spread.p50),
        "p90": _round(spread.p90),
        "p99": _round(spread.p99),
    }


def _step_json(step: LoadStep) -> dict[str, Any]:
    rate: float | str | None = step.rate
    if step.rate is not None and math.isinf(step.rate):
        rate = "inf"
    goodput = step.goodput
    return {
        "label": step.label,
        "rate": rate,
        "concurrency": step.concurrency,
        "requests": step.requests,
        "completed": step.completed,
        "failed": step.failed,
        "failure_rate": _round(step.failure_rate, 4),
        "failures": [
            {"reason": f.reason, "count": f.count, "example": f.example} for f in step.failures
        ],
        "duration_s": _round(step.duration_s),
        "request_throughput": _round(step.request_throughput),
        "output_tokens": step.output_tokens,
        "output_tokens_per_s": _round(step.output_tokens_per_s),
        "input_words": step.input_words,
        "token_source": step.token_source,
        "good": step.good,
        "goodput": None if goodput is None else _round(goodput),
        "latency_ms": {metric: _spread_json(step.latency(metric)) for metric in LATENCY_METRICS},
        "complete": step.complete,
    }


def bench_json(result: ServeBenchResult) -> dict[str, Any]:
    """The result as JSON-ready data (also what a stored serving run's records hold)."""
    return {
        "url": result.url,
        "model": result.model,
        "endpoint": result.endpoint,
        "prompt_source": result.prompt_source,
        "prompts": result.prompts,
        "slo_ms": dict(result.slo_ms),
        "max_failure_rate": result.max_failure_rate,
        "failure_rate": _round(result.failure_rate, 4),
        "too_many_failures": result.too_many_failures,
        "complete": result.complete,
        "steps": [_step_json(step) for step in result.steps],
        "notes": list(result.notes),
    }


@renderer(ServeBenchResult, Format.JSON)
def render_serve_bench_json(result: ServeBenchResult, options: RenderOptions) -> str:
    document: dict[str, Any] = {
        "tool": TOOL_NAME,
        "version": options.tool_version,
        "kind": "serve-bench",
    }
    document.update(bench_json(result))
    return dumps(document)


def _pair_json(pair: PairSummary | None) -> dict[str, Any] | None:
    if pair is None:
        return None
    return {
        "prompts": pair.prompts,
        "identical": pair.identical,
        "identical_share": _round(pair.identical_share, 4),
        "topk_agreement": None if pair.topk_agreement is None else _round(pair.topk_agreement, 4),
        "mean_kl": None if pair.mean_kl is None else _round(pair.mean_kl, 6),
        "max_kl": None if pair.max_kl is None else _round(pair.max_kl, 6),
    }


@renderer(ServeVerifyResult, Format.JSON)
def render_serve_verify_json(result: ServeVerifyResult, options: RenderOptions) -> str:
    document: dict[str, Any] = {
        "tool": TOOL_NAME,
        "version": options.tool_version,
        "kind": "serve-verify",
        "url_a": result.url_a,
        "url_b": result.url_b,
        "model": result.model,
        "endpoint": result.endpoint,
        "top_k": result.top_k,
        "with_logprobs": result.with_logprobs,
        "beyond_noise": result.beyond_noise,
        "kl_margin": result.kl_margin,
        "cross": _pair_json(result.cross),
        "noise_a": _pair_json(result.noise_a),
        "noise_b": _pair_json(result.noise_b),
        "prompts": [
            {
                "index": p.index,
                "tokens_a": p.tokens_a,
                "tokens_b": p.tokens_b,
                "first_difference": p.first_difference,
                "topk_agreement": None if p.topk_agreement is None else _round(p.topk_agreement, 4),
                "mean_kl": None if p.mean_kl is None else _round(p.mean_kl, 6),
            }
            for p in result.prompts
        ],
        "failures": [
            {"request": request, "prompt": index, "reason": reason}
            for request, index, reason in result.failures
        ],
        "complete": result.complete,
        "notes": list(result.notes),
    }
    return dumps(document)


# --- terminal --------------------------------------------------------------------------------


def _latency_table(step: LoadStep) -> Table:
    table = Table(box=None, pad_edge=False, show_edge=False)
    table.add_column("  latency (ms)", no_wrap=True)
    for column in ("mean", "p50", "p90", "p99", "n"):
        table.add_column(column, justify="right", no_wrap=True)
    for metric in LATENCY_METRICS:
        spread = step.latency(metric)
        name = f"  {_SHORT[metric]} ({LATENCY_NAMES[metric]})"
        if spread is None:
            table.add_row(name, "—", "—", "—", "—", "0")
        else:
            values = (spread.mean, spread.p50, spread.p90, spread.p99)
            table.add_row(name, *(_ms(v) for v in values), str(spread.count))
    return table


def _step_lines(step: LoadStep, result: ServeBenchResult) -> list[Text]:
    head = Text(step.label, style="bold")
    head.append(
        f" — {step.completed} of {step.requests} answered, {step.failed} failed, "
        f"{step.duration_s:,.2f} s" + ("" if step.complete else " (interrupted)"),
        style="",
    )
    rates = (
        f"  {_rate(step.request_throughput)} req/s · "
        f"{_rate(step.output_tokens_per_s)} output tok/s (tokens from {step.token_source})"
    )
    if step.goodput is not None:
        rates += f" · goodput {_rate(step.goodput)} req/s ({step.good} within the limits)"
    lines = [head, Text(rates)]
    if step.failures:
        lines.append(Text("  failures: " + display_text(_failure_line(step)), style="red"))
    return lines


@renderer(ServeBenchResult, Format.TERMINAL)
def render_serve_bench_terminal(result: ServeBenchResult, options: RenderOptions) -> str:
    console = memory_console(options)
    console.print(Text("Serving benchmark", style="bold"))
    console.print(Text(display_text(_settings_line(result))))
    if result.slo_ms:
        console.print(Text(f"latency limits (goodput): {_slo_text(result)}"))
    for step in result.steps:
        console.print()
        for line in _step_lines(step, result):
            console.print(line)
        console.print(_latency_table(step))
    if not result.steps:
        console.print()
        console.print(Text("no step finished: nothing was measured"))
    console.print()
    style = "red" if result.too_many_failures else ""
    console.print(Text(_failure_verdict(result), style=style))
    for note in result.notes:
        console.print(Text("note: " + display_text(note)))
    return console_text(console)


def _pair_row(name: str, pair: PairSummary | None) -> tuple[str, ...]:
    if pair is None:
        return (name, "—", "—", "—", "—")
    return (
        name,
        _share(pair.identical, pair.prompts),
        _maybe(pair.topk_agreement, 3),
        _maybe(pair.mean_kl, 5),
        _maybe(pair.max_kl, 5),
    )


def _from_one(position: int | None) -> str:
    """A 0-based position as a reader counts it (from 1); "-" for none."""
    return "-" if position is None else str(position + 1)


def verify_verdict(result: ServeVerifyResult) -> str:
    """One sentence: whether A and B differ more than each differs from itself, and why."""
    if not result.cross.prompts:
        return "no prompt was answered by both servers: nothing to compare"
    floor = result.noise_identical_share
    if result.beyond_noise:
        if result.cross.identical_share < (1.0 if floor is None else floor) - 1e-12:
            floor_text = "no noise floor" if floor is None else f"{100 * floor:.0f}% on a rerun"
            return (
                f"A and B differ beyond the noise floor: {100 * result.cross.identical_share:.0f}%"
                f" of prompts identical against {floor_text}"
            )
        return (
            f"A and B differ beyond the noise floor: mean KL {_maybe(result.cross.mean_kl, 5)} "
            f"against {_maybe(result.noise_kl or 0.0, 5)} on a rerun "
            f"(+ {result.kl_margin:g} allowed)"
        )
    return "A and B agree within the noise floor (what each server shows against itself)"


@renderer(ServeVerifyResult, Format.TERMINAL)
def render_serve_verify_terminal(result: ServeVerifyResult, options: RenderOptions) -> str:
    console = memory_console(options)
    console.print(Text("Served models compared", style="bold"))
    console.print(Text(display_text(f"A: {result.url_a}")))
    console.print(Text(display_text(f"B: {result.url_b}")))
    logprobs = f"top-{result.top_k} logprobs" if result.with_logprobs else "tokens only"
    console.print(
        Text(
            display_text(
                f"model {result.model} · /v1/{_endpoint_path(result.endpoint)} · "
                f"temperature 0 · {logprobs}"
            )
        )
    )
    console.print()
    summary = Table(box=None, pad_edge=False, show_edge=False)
    summary.add_column("", no_wrap=True)
    for column in ("identical", "top-k agreement", "mean KL (nats/token)", "max KL"):
        summary.add_column(column, justify="right", no_wrap=True)
    summary.add_row(*_pair_row("A vs B", result.cross))
    summary.add_row(*_pair_row("A vs A (rerun)", result.noise_a))
    summary.add_row(*_pair_row("B vs B (rerun)", result.noise_b))
    console.print(summary)
    console.print()
    style = "red" if result.beyond_noise else "green"
    console.print(Text(verify_verdict(result), style=style))
    differing = [p for p in result.prompts if p.first_difference is not None]
    if result.prompts:
        console.print()
        table = Table(box=None, pad_edge=False, show_edge=False, title_justify="left")
        table.title = (
            f"prompts that differ: {len(differing)} of {len(result.prompts)} (counted from 1)"
        )
        for column in ("prompt", "tokens A", "tokens B", "first difference", "top-k", "mean KL"):
            table.add_column(column, justify="right", no_wrap=True)
        for p in differing:
            table.add_row(
                f"#{p.index + 1}",
                str(p.tokens_a),
                str(p.tokens_b),
                f"token {_from_one(p.first_difference)}",
                _maybe(p.topk_agreement, 3),
                _maybe(p.mean_kl, 5),
            )
        if differing:
            console.print(table)
        else:
            console.print(Text(table.title))
    if result.failures:
        console.print()
        console.print(Text(f"failed requests ({len(result.failures)}):", style="red"))
        for request, index, reason in result.failures:
            console.print(Text(display_text(f"  {request} prompt #{index + 1}: {reason}")))
    for note in result.notes:
        console.print(Text("note: " + display_text(note)))
    return console_text(console)


# --- Markdown --------------------------------------------------------------------------------


def _md_footer(options: RenderOptions) -> list[str]:
    return ["", f"<sub>gpuport {html.escape(tool_version(options))}</sub>"]


@renderer(ServeBenchResult, Format.MARKDOWN)
def render_serve_bench_markdown(result: ServeBenchResult, options: RenderOptions) -> str:
    lines = [
        "# gpuport bench serve",
        "",
        f"- server: {md_text(result.url)}",
        f"- model: {md_text(result.model)} · endpoint /v1/{_endpoint_path(result.endpoint)}",
        f"- prompts: {result.prompts}, {md_text(result.prompt_source)}",
    ]
    if result.slo_ms:
        lines.append(f"- latency limits \\(goodput\\): {md_text(_slo_text(result))}")
    lines.append(f"- {md_text(_failure_verdict(result))}")
    lines += [
        "",
        "## Throughput",
        "",
        "| step | answered | failed | seconds | req/s | output tok/s | goodput req/s | tokens from |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for step in result.steps:
        goodput = "—" if step.goodput is None else _rate(step.goodput)
        label = md_text(step.label) + ("" if step.complete else " \\(interrupted\\)")
        lines.append(
            f"| {label} | {step.completed}/{step.requests} | {step.failed} | "
            f"{step.duration_s:,.2f} | {_rate(step.request_throughput)} | "
            f"{_rate(step.output_tokens_per_s)} | {goodput} | {step.token_source} |"
        )
    lines += [
        "",
        "## Latency \\(ms\\)",
        "",
        "| step | metric | mean | p50 | p90 | p99 | n |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for step in result.steps:
        for metric in LATENCY_METRICS:
            spread = step.latency(metric)
            cells = (
                ["—"] * 4 + ["0"]
                if spread is None
                else [
                    *(_ms(v) for v in (spread.mean, spread.p50, spread.p90, spread.p99)),
                    str(spread.count),
                ]
            )
            lines.append(
                f"| {md_text(step.label)} | {_SHORT[metric]} | " + " | ".join(cells) + " |"
            )
    failing = [step for step in result.steps if step.failures]
    if failing:
        lines += ["", "## Failures", ""]
        for step in failing:
            for f in step.failures:
                example = f" — {md_text(f.example)}" if f.example else ""
                lines.append(
                    f"- {md_text(step.label)}: {md_text(f.reason)}, "
                    f"{plural(f.count, 'request')}{example}"
                )
    if result.notes:
        lines += ["", "## Notes", ""] + [f"- {md_text(note)}" for note in result.notes]
    return "\n".join(lines + _md_footer(options)) + "\n"


@renderer(ServeVerifyResult, Format.MARKDOWN)
def render_serve_verify_markdown(result: ServeVerifyResult, options: RenderOptions) -> str:
    logprobs = f"top-{result.top_k} logprobs" if result.with_logprobs else "tokens only"
    lines = [
        "# gpuport verify serve",
        "",
        f"- A: {md_text(result.url_a)}",
        f"- B: {md_text(result.url_b)}",
        f"- model: {md_text(result.model)} · endpoint /v1/{_endpoint_path(result.endpoint)} · "
        f"temperature 0 · {logprobs}",
        "",
        f"**{md_text(verify_verdict(result))}**",
        "",
        "| pair | identical | top-k agreement | mean KL \\(nats/token\\) | max KL |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, pair in (
        ("A vs B", result.cross),
        ("A vs A \\(rerun\\)", result.noise_a),
        ("B vs B \\(rerun\\)", result.noise_b),
    ):
        lines.append("| " + " | ".join(_pair_row(name, pair)) + " |")
    differing = [p for p in result.prompts if p.first_difference is not None]
    lines += [
        "",
        f"## Prompts that differ: {len(differing)} of {len(result.prompts)}",
        "",
        "Prompts and tokens are counted from 1 (the JSON counts from 0).",
    ]
    if differing:
        lines += [
            "",
            "| prompt | tokens A | tokens B | first difference | top-k agreement | mean KL |",
            "|---:|---:|---:|---:|---:|---:|",
        ]
        for p in differing:
            lines.append(
                f"| {p.index + 1} | {p.tokens_a} | {p.tokens_b} | {_from_one(p.first_difference)} | "
                f"{_maybe(p.topk_agreement, 3)} | {_maybe(p.mean_kl, 5)} |"
            )
    if result.failures:
        lines += ["", "## Failed requests", ""]
        for request, index, reason in result.failures:
            lines.append(f"- {request} prompt #{index + 1}: {md_text(reason)}")
    if result.notes:
        lines += ["", "## Notes", ""] + [f"- {md_text(note)}" for note in result.notes]
    return "\n".join(lines + _md_footer(options)) + "\n"
