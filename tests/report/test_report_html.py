"""HTML output checked with a plain HTML parser: self-contained, escaped, complete.

The browser test (test_html_browser.py) opens the page for real; these checks need no
browser, so the escaping is covered on every machine.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import re
from html.parser import HTMLParser

import pytest
from report_samples import (
    HOSTILE_STRINGS,
    decided_assessment,
    hostile_assessment,
    hostile_decided_assessment,
    hostile_scan,
    render_sample,
    sample_assessment,
    sample_scan,
)
from result_samples import sample_plan, sample_port

from gpuport.assess.verdict import Assessment
from gpuport.report import Format
from gpuport.report.recommendation import md_kb_text
from gpuport.report.recommendation_html import BEST_COLOR, cost_chart_svg, html_kb_text
from gpuport.scan.engine import ScanResult

# Elements the template writes; nothing from scanned content may add others.
ALLOWED_TAGS = {
    "html", "head", "meta", "title", "style", "body", "header", "div", "p", "h1", "h2",
    "h3", "ul", "ol", "nav", "li", "dl", "dt", "dd", "main", "section", "table", "thead", "tbody",
    "tfoot", "tr", "th", "td", "span", "code", "strong", "br", "a", "article", "mark",
    "label", "input", "svg", "text", "rect", "desc", "footer",
    "line", "circle",  # the recommendation's payback chart
}  # fmt: skip


class Page(HTMLParser):
    """Collects the elements, attributes and text of a page."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.styles: list[str] = []
        self._in: list[str] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag not in ("meta", "input", "br", "rect"):
            self._in.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        if self._in and self._in[-1] == tag:
            self._in.pop()

    def handle_data(self, data: str) -> None:
        if self._in and self._in[-1] == "style":
            self.styles.append(data)
        else:
            self.text.append(data)

    def all_text(self) -> str:
        return "".join(self.text)

    def with_class(self, tag: str, css: str) -> list[dict[str, str | None]]:
        return [a for t, a in self.tags if t == tag and css in (a.get("class") or "").split()]


def page_of(result: ScanResult | Assessment) -> Page:
    return Page(render_sample(result, Format.HTML))


@pytest.mark.parametrize("build", [hostile_scan, hostile_assessment, hostile_decided_assessment])
def test_hostile_content_stays_text(build: object) -> None:
    text = render_sample(build(), Format.HTML)  # type: ignore[operator]
    page = Page(text)
    tags = {tag for tag, _ in page.tags}
    assert tags <= ALLOWED_TAGS, tags - ALLOWED_TAGS
    assert [t for t, _ in page.tags].count("style") == 1
    for tag, attrs in page.tags:
        for name, value in attrs.items():
            assert not name.startswith("on"), (tag, name)
            if name == "href":
                assert value and (value.startswith("#") or value.startswith("https://")), value
            assert name != "src", tag
    visible = page.all_text()
    for hostile in HOSTILE_STRINGS:
        assert hostile in visible, hostile
    # Raw source: the hostile markup only ever appears escaped.
    for raw in ("<script", "<img", "</style><b>", 'javascript:alert(3)"'):
        assert raw not in text, raw
    assert "{{ 7*7 }}" in visible and ">49<" not in text


def _policy_of(text: str) -> str:
    policies = [
        a.get("content")
        for t, a in Page(text).tags
        if t == "meta" and (a.get("http-equiv") or "").lower() == "content-security-policy"
    ]
    assert len(policies) == 1, policies
    assert policies[0] is not None
    return policies[0]


@pytest.mark.parametrize("build", [sample_assessment, sample_scan, sample_port, sample_plan])
def test_content_security_policy(build: object) -> None:
    text = render_sample(build(), Format.HTML)  # type: ignore[operator]
    policy = _policy_of(text)
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
    assert directives["default-src"] == "'none'"  # no script, image, font, frame or fetch
    assert directives["base-uri"] == "'none'" and directives["form-action"] == "'none'"
    assert "script-src" not in directives and "unsafe" not in policy
    # The one stylesheet is admitted by its hash, and by nothing else.
    (css,) = re.findall(r"<style>(.*?)</style>", text, re.DOTALL)
    digest = base64.b64encode(hashlib.sha256(css.encode()).digest()).decode()
    assert directives["style-src"] == f"'sha256-{digest}'"
    # The policy comes before anything it governs.
    assert text.index("Content-Security-Policy") < text.index("<style>")


def test_self_contained() -> None:
    text = render_sample(sample_assessment(), Format.HTML)
    page = Page(text)
    assert not [t for t, _ in page.tags if t in ("script", "link", "img", "iframe", "object")]
    css = "".join(page.styles)
    assert "url(" not in css and "@import" not in css and "@font-face" not in css
    assert not re.search(r"\b(src|srcset|action|formaction|xlink:href)=", text)


def test_every_finding_with_excerpt_and_fix() -> None:
    scan = sample_scan()
    page = page_of(scan)
    articles = page.with_class("article", "finding")
    assert len(articles) == len(scan.findings)
    visible = page.all_text()
    for finding in scan.findings:
        assert str(finding.location) in visible
        assert finding.message in visible
        assert finding.fix is not None and finding.fix.text in visible
    findings_part = visible[visible.index("Findings\n") : visible.index("Input problems")]
    assert findings_part.count("gpuport port can fix this") == 3
    hits = page.with_class("tr", "hit")
    assert len(hits) == sum(1 for f in scan.findings if f.excerpt is not None)


def test_the_finding_columns_are_marked() -> None:
    text = render_sample(sample_scan(), Format.HTML)
    assert '<td class="ln">12</td><td>    <mark>cudaMalloc</mark>(&amp;x' in text


def test_verdict_banner_and_effort() -> None:
    page = page_of(sample_assessment())
    banner = page.with_class("header", "banner")
    assert banner and "verdict-blocked" in (banner[0].get("class") or "")
    visible = page.all_text()
    assert visible.index("Blocked") < visible.index("Estimated effort")
    assert "GP101 at requirements.txt:3:1: cupy-cuda12x has no ROCm build on PyPI" in visible
    assert "an engineer who knows the code but not ROCm" in visible
    assert "25.6 h (2.1–8.5 days)" in visible  # noqa: RUF001


def test_chart_is_inline_svg_stacked_by_severity() -> None:
    text = render_sample(sample_assessment(), Format.HTML)
    svg = text[text.index("<svg") : text.index("</svg>")]
    # One segment per non-zero (category, severity) cell, plus five legend swatches.
    segments = re.findall(r"<title>([a-z]+), ([a-z]+): (\d+)</title>", svg)
    assert sorted(segments) == sorted(
        [
            ("dependencies", "blocker", "1"),
            ("dependencies", "medium", "1"),
            ("python", "high", "1"),
            ("python", "info", "1"),
            ("kernels", "high", "2"),
            ("kernels", "low", "1"),
            ("containers", "medium", "1"),
            ("build", "low", "1"),
        ]
    )
    assert svg.count("<rect") == len(segments) + 5
    widths = dict(
        re.findall(r'width="([\d.]+)" height="20" fill="[^"]+"><title>(kernels, high)', svg)
    )
    assert widths  # the biggest bar (kernels: 3) spans the full 440 px in thirds
    assert float(next(iter(widths))) == pytest.approx(440 * 2 / 3, abs=0.1)


def test_skipped_list() -> None:
    page = page_of(sample_scan())
    visible = page.all_text()
    assert "Input problems (4)" in visible
    for where in ("assets/model.bin", "csrc/legacy.cu:7", "configs/env.yaml:4", "src/train.py"):
        assert where in visible
    assert page.with_class("td", "status-crash")


def test_severity_filter_is_css_only() -> None:
    text = render_sample(sample_scan(), Format.HTML)
    page = Page(text)
    boxes = [a for t, a in page.tags if t == "input"]
    assert [b.get("id") for b in boxes] == [
        "show-blocker",
        "show-high",
        "show-medium",
        "show-low",
        "show-info",
    ]
    assert all("checked" in b for b in boxes)  # everything shows until a box is cleared
    assert "body:has(#show-low:not(:checked)) .group-low { display: none; }" in text


def test_the_cost_chart_paints_the_cheapest_amd_option_green_only_when_it_saves() -> None:
    recommendation = decided_assessment().recommendation
    assert recommendation is not None and recommendation.economics is not None
    saves = recommendation.economics
    assert f'fill="{BEST_COLOR}"' in cost_chart_svg(saves)
    dearer = dataclasses.replace(saves, monthly_saving_usd=-117.0, payback_months=None)
    assert f'fill="{BEST_COLOR}"' not in cost_chart_svg(dearer)


def test_a_kb_ask_shows_its_settings_as_code_and_stays_inert() -> None:
    assert html_kb_text("tell `batch` <b>") == "tell <code>batch</code> &lt;b&gt;"
    assert html_kb_text("`<script>`") == "<code>&lt;script&gt;</code>"
    assert html_kb_text("one ` tick") == "one ` tick"  # unbalanced: no span
    assert md_kb_text("tell `batch` *now*") == "tell `batch` \\*now\\*"
    assert md_kb_text("one ` tick") == "one \\` tick"
