"""The recommendation's part of the HTML report: its section and two inline SVG charts.

The charts (cost per month of each GPU option; the cumulative saving against the one-off cost of
moving, which crosses zero at the payback) are drawn here as SVG with presentation attributes
only, no ``style`` attribute and no script, so the page's Content-Security-Policy (its own
<style> by hash, nothing else: report/common.py) holds. Every text from the project or its
settings goes through :func:`html_text`.
"""

from __future__ import annotations

import math

from markupsafe import Markup

from gpuport.assess.decision_model import CostOption, Economics, FactorResult, Recommendation
from gpuport.assess.economics import DAYS_PER_MONTH
from gpuport.report.common import html_text
from gpuport.report.recommendation import (
    OUTCOME_TITLE,
    READINESS_TITLE,
    UNKNOWN_TITLE,
    ask_items,
    code_spans,
    decided_it,
    declared_source,
    direction_text,
    economics_lines,
    evidence_lines,
    ordered_factors,
    payback_text,
    settings_items,
    state_text,
    usd_text,
)

TODAY_COLOR = "#6b7280"
AMD_COLOR = "#dc2626"
BEST_COLOR = "#15803d"
MAX_PAYBACK_MONTHS = 60  # the payback chart's axis stops at five years


def html_kb_text(text: str) -> str:
    """A question or ask of the KB in HTML: its `settings` in <code>, every piece escaped."""
    return "".join(
        f"<code>{html_text(p)}</code>" if code else html_text(p) for p, code in code_spans(text)
    )


def cost_chart_svg(economics: Economics) -> str:
    """Horizontal bars: the cost per month of today's fleet and of each AMD option."""
    rows: list[tuple[str, CostOption]] = []
    if economics.today is not None:
        rows.append(("today", economics.today))
    rows.extend(("amd", option) for option in economics.options)
    priced = [(kind, o) for kind, o in rows if o.usd_per_month is not None]
    if not priced:
        return ""
    labels = [
        f"{'today: ' if kind == 'today' else ''}{option.gpus} x {option.gpu_name}"
        for kind, option in priced
    ]
    # about 7 px a character at the chart's 12 px font: the longest label fits beside its bar
    label_w = max(120, 12 + 7 * max(len(label) for label in labels))
    bar_w, value_w, row_h, bar_h, top = 320, 90, 30, 20, 8
    width = label_w + bar_w + value_w
    height = top + row_h * len(priced) + 4
    biggest = max(o.usd_per_month or 0.0 for _, o in priced) or 1.0
    best = economics.best.gpu_id if economics.best is not None else None
    if economics.monthly_saving_usd is not None and economics.monthly_saving_usd <= 0:
        best = None  # green says "saves money": not for an option that costs more than today
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        'aria-labelledby="cost-chart-title">',
        '<title id="cost-chart-title">Cost per month of each GPU option at the same volume</title>',
    ]
    for index, ((kind, option), label) in enumerate(zip(priced, labels, strict=True)):
        y = top + index * row_h
        cost = option.usd_per_month or 0.0
        w = max(1.0, bar_w * cost / biggest)
        color = TODAY_COLOR if kind == "today" else AMD_COLOR
        if kind == "amd" and option.gpu_id == best:
            color = BEST_COLOR
        parts.append(
            f'<text x="{label_w - 8}" y="{y + bar_h - 5}" text-anchor="end" class="axis">'
            f"{html_text(label)}</text>"
            f'<rect x="{label_w}" y="{y}" width="{w:.1f}" height="{bar_h}" fill="{color}">'
            f"<title>{html_text(label)}: {html_text(usd_text(cost))} a month</title></rect>"
            f'<text x="{label_w + w + 6:.1f}" y="{y + bar_h - 5}" class="count">'
            f"{html_text(usd_text(cost))}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def payback_chart_svg(economics: Economics) -> str:
    """The saving so far minus the cost of moving, over time: it crosses zero at payback.

    Two lines, for the low and the high end of the cost of moving; the axis runs in days when the
    move pays back within a month. "" when it never pays back or there is nothing to draw.
    """
    monthly = economics.monthly_saving_usd
    if economics.move_usd is None or economics.payback_months is None or not monthly:
        return ""
    low_cost, high_cost = economics.move_usd
    latest = economics.payback_months[1]
    unit, per_month = ("days", DAYS_PER_MONTH) if latest < 1 else ("months", 1.0)
    saving = monthly / per_month  # per unit of the axis
    span = min(MAX_PAYBACK_MONTHS * per_month, max(6, math.ceil(latest * per_month * 1.5)))
    left, plot_w, plot_h, top, bottom = 80, 440, 160, 12, 36
    width, height = left + plot_w + 150, top + plot_h + bottom
    y_low = -high_cost
    y_high = max(saving * span - low_cost, 1.0)

    def x_at(t: float) -> float:
        return left + plot_w * t / span

    def y_at(usd: float) -> float:
        return top + plot_h * (y_high - usd) / (y_high - y_low)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        'aria-labelledby="payback-chart-title">',
        f'<title id="payback-chart-title">Saving so far minus the cost of moving, by {unit[:-1]}'
        "</title>",
        f'<line x1="{left}" y1="{y_at(0):.1f}" x2="{left + plot_w}" y2="{y_at(0):.1f}" '
        'stroke="#111827" stroke-width="1"/>',
    ]
    shown: list[float] = []  # y of the axis labels drawn, so that none overlaps another
    for usd in (0.0, y_low, y_high):
        y = y_at(usd)
        if all(abs(y - other) >= 14 for other in shown):
            shown.append(y)
            parts.append(
                f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" class="axis">'
                f"{html_text(usd_text(usd))}</text>"
            )
    step = max(1, math.ceil(span / 6))
    for t in range(0, int(span) + 1, step):
        parts.append(
            f'<text x="{x_at(t):.1f}" y="{top + plot_h + 16}" text-anchor="middle" '
            f'class="axis">{t}</text>'
        )
    parts.append(
        f'<text x="{left + plot_w / 2:.0f}" y="{top + plot_h + 32}" text-anchor="middle" '
        f'class="axis">{unit} after the move</text>'
    )
    ends: list[float] = []
    for cost, color, name in ((low_cost, BEST_COLOR, "low"), (high_cost, AMD_COLOR, "high")):
        end = saving * span - cost
        payback = cost / saving
        parts.append(
            f'<line x1="{x_at(0):.1f}" y1="{y_at(-cost):.1f}" x2="{x_at(span):.1f}" '
            f'y2="{y_at(end):.1f}" stroke="{color}" stroke-width="2.5">'
            f"<title>{name} cost of moving {html_text(usd_text(cost))}: pays back in "
            f"{payback:.1f} {unit}</title></line>"
        )
        if payback <= span:
            parts.append(
                f'<circle cx="{x_at(payback):.1f}" cy="{y_at(0):.1f}" r="4" fill="{color}"/>'
            )
        y = y_at(end) + 4
        if ends and abs(y - ends[-1]) < 14:  # the two lines end together: one label apart
            y = ends[-1] + 14
        ends.append(y)
        parts.append(
            f'<text x="{x_at(span) + 6:.1f}" y="{y:.1f}" class="legend" fill="{color}">'
            f"{name} cost of moving</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _factor_row(factor: FactorResult, decided: bool, recommendation: Recommendation) -> str:
    decisive = ' <span class="muted">(decisive)</span>' if decided else ""
    return (
        f"<tr><td><code>{html_text(factor.factor_id)}</code>{decisive}<br>"
        f'<span class="muted">{html_kb_text(factor.question)}</span></td>'
        f'<td class="holds">{html_text(state_text(factor))} · <span class="dir '
        f'dir-{factor.direction.value}">{html_text(direction_text(factor))}</span></td>'
        f"<td>{'<br>'.join(html_text(line) for line in evidence_lines(factor, recommendation))}</td></tr>"
    )


def _economics_html(economics: Economics) -> list[str]:
    out = ['<h3 id="economics">Economics</h3>']
    chart = cost_chart_svg(economics)
    if chart:
        out.append(chart)
    out.append(
        '<table class="grid"><thead><tr><th>option</th><th class="num">GPUs</th>'
        '<th class="num">tok/s per GPU</th><th class="num">$/GPU-hour</th>'
        '<th class="num">$/month</th></tr></thead><tbody>'
    )
    rows = [("today: ", economics.today)] if economics.today is not None else []
    rows.extend(("", option) for option in economics.options)
    for prefix, option in rows:
        if option is None:
            continue
        rate = "unknown" if option.usd_per_gpu_hour is None else f"{option.usd_per_gpu_hour:.2f}"
        out.append(
            f"<tr><td>{html_text(prefix + option.gpu_name)}</td>"
            f'<td class="num">{option.gpus}</td>'
            f'<td class="num">{option.tokens_per_s_per_gpu:,.0f}</td>'
            f'<td class="num">{html_text(rate)}</td>'
            f'<td class="num">{html_text(usd_text(option.usd_per_month))}</td></tr>'
        )
    out.append("</tbody></table>")
    out.append("<ul>")
    out.extend(f"<li>{html_text(line)}</li>" for line in economics_lines(economics))
    out.extend(f"<li>{html_text(line)}</li>" for line in economics.sensitivity)
    out.append("</ul>")
    payback = payback_chart_svg(economics)
    if payback:
        out.extend(["<h3>Payback</h3>", payback])
    if economics.assumptions:
        out.append('<p class="muted">Assumptions behind the economics:</p>')
        out.append('<ul class="muted">')
        out.extend(f"<li>{html_text(a)}</li>" for a in economics.assumptions)
        out.append("</ul>")
    return out


def recommendation_section(
    recommendation: Recommendation, readiness: str, reasons: tuple[str, ...]
) -> Markup:
    """The recommendation's section, then the heading of the readiness part that follows it."""
    out = [
        '<section id="recommendation">',
        # the banner above carries the headline; this section starts with the reasons for it
        f"<h2>Should we move? {html_text(OUTCOME_TITLE[recommendation.outcome])}</h2>",
    ]
    if recommendation.decisive:
        out.append("<h3>Decisive factors</h3>")
        out.append('<ul class="decisive">')
        out.extend(
            f"<li><strong>{html_kb_text(f.question)}</strong> {html_text(state_text(f))}, "
            f'<span class="dir dir-{f.direction.value}">{html_text(direction_text(f))}</span>: '
            f"{html_text(evidence_lines(f)[0])}</li>"
            for f in recommendation.decisive
        )
        out.append("</ul>")
    out.append("<h3>Decision factors</h3>")
    out.append(
        '<table class="grid factors"><thead><tr><th>factor</th><th>holds · direction</th>'
        "<th>evidence</th></tr></thead><tbody>"
    )
    out.extend(
        _factor_row(f, decided_it(recommendation, f), recommendation)
        for f in ordered_factors(recommendation)
    )
    out.append("</tbody></table>")
    if recommendation.economics is not None:
        out.extend(_economics_html(recommendation.economics))
    if items := ask_items(recommendation):
        out.append(f"<h3>{html_text(UNKNOWN_TITLE)}</h3>")
        out.append('<ul class="missing">')
        out.extend(
            f"<li>{f'<strong>{html_text(names)}</strong>: ' if names else ''}{html_kb_text(ask)}</li>"
            for names, ask in items
        )
        out.append("</ul>")
    settings = settings_items(recommendation.settings)
    if settings:
        source = declared_source(recommendation.settings)
        declared = " · ".join(f"<code>{html_text(k)}</code> {html_text(v)}" for k, v in settings)
        out.append(f'<p class="muted">Declared ({html_text(source)}): {declared}</p>')
    out.append("</section>")
    out.append('<section id="readiness">')
    out.append(f"<h2>{html_text(READINESS_TITLE)}: {html_text(readiness)}</h2>")
    if reasons:
        out.append("<ul>")
        out.extend(f"<li>{html_text(r)}</li>" for r in reasons)
        out.append("</ul>")
    out.append("</section>")
    return Markup("\n".join(out))


def payback_kpi(recommendation: Recommendation) -> tuple[str, str] | None:
    """The payback as a banner figure, when there is one."""
    economics = recommendation.economics
    if economics is None or economics.payback_months is None:
        return None
    return ("payback", payback_text(economics))
