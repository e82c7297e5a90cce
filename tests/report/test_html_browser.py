"""The HTML report opened in headless Chromium: hostile content shows as text and does nothing.

Needs Debian's /usr/bin/chromium and the playwright package (never a downloaded browser);
skipped with a reason where either is missing. CI installs both.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from report_samples import (
    HOSTILE_STRINGS,
    TOOL_VERSION,
    decided_assessment,
    hostile_assessment,
    hostile_decided_assessment,
    sample_scan,
)
from result_samples import hostile_port, sample_plan, sample_plan_sweep

from gpuport.assess import Assessment, assess
from gpuport.report import Format, RenderOptions, render
from gpuport.scan.engine import ScanOptions, scan_path

pytestmark = pytest.mark.browser

OPTIONS = RenderOptions(tool_version=TOOL_VERSION)


class Visit:
    """A page opened from a file, with every dialog, request, error and console error recorded.

    A Content-Security-Policy violation (a style whose hash is not admitted, a blocked load)
    is a console error in Chromium, so ``errors`` holds those too.
    """

    def __init__(self, browser: Any, path: Path) -> None:
        self.dialogs: list[str] = []
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.page = browser.new_page(java_script_enabled=True)
        self.page.on("dialog", self._dialog)
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.on("console", self._console)
        self.page.goto(path.as_uri(), wait_until="load")
        self.page.wait_for_timeout(300)  # let any (unwanted) onerror/onload handler fire

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def _console(self, message: Any) -> None:
        if message.type == "error":
            self.errors.append(message.text)

    def assert_inert(self) -> None:
        """Nothing ran, nothing was refused, nothing loaded but the file itself."""
        assert self.dialogs == []
        assert self.errors == []
        assert self.page.locator("script, img, iframe, object, embed").count() == 0
        assert self.page.locator("[onerror], [onload], [onclick]").count() == 0
        assert all(url.startswith(("file:", "data:")) for url in self.requests), self.requests


@contextmanager
def visit(browser: Any, tmp_path: Path, result: object) -> Iterator[Visit]:
    """``result``'s HTML report, written to a file and opened; the page closed afterwards."""
    report = tmp_path / "report.html"
    report.write_text(render(result, Format.HTML, OPTIONS), encoding="utf-8")
    opened = Visit(browser, report)
    try:
        yield opened
    finally:
        opened.page.close()


def colour_of(page: Any, selector: str, prop: str = "backgroundColor") -> str:
    return str(page.eval_on_selector(selector, f"el => getComputedStyle(el).{prop}"))


def test_hostile_report_is_inert(browser: Any, tmp_path: Path) -> None:
    with visit(browser, tmp_path, hostile_assessment()) as opened:
        opened.assert_inert()
        page = opened.page
        verdict = page.locator("#verdict")
        assert verdict.is_visible()
        assert verdict.inner_text() == "Ready with work"
        findings = page.locator("article.finding")
        assert findings.count() == 2
        for index in range(findings.count()):
            assert findings.nth(index).is_visible()
        body = page.locator("body").inner_text()
        for hostile in HOSTILE_STRINGS:
            assert hostile in body, hostile
        # "</style>" in content did not end the stylesheet, and the policy admits the
        # stylesheet by its hash: the styles still apply.
        assert colour_of(page, "header.banner") == "rgb(180, 83, 9)"


def test_hostile_recommendation_is_inert_and_its_charts_draw(browser: Any, tmp_path: Path) -> None:
    with visit(browser, tmp_path, hostile_decided_assessment()) as opened:
        opened.assert_inert()
        page = opened.page
        assert page.locator("#verdict").inner_text() == "Move to ROCm"
        section = page.locator("#recommendation").inner_text()
        for hostile in HOSTILE_STRINGS[:4]:
            assert hostile in section, hostile
        assert page.locator("#recommendation svg").count() == 2  # cost per month, payback
        assert page.locator("#readiness h2").inner_text().endswith("Ready with work")
        assert colour_of(page, "header.banner") == "rgb(21, 128, 61)"  # .outcome-move


def test_the_recommendation_reads_on_a_phone_first(browser: Any, tmp_path: Path) -> None:
    report = tmp_path / "report.html"
    report.write_text(render(decided_assessment(), Format.HTML, OPTIONS), encoding="utf-8")
    page = browser.new_page(viewport=PHONE, java_script_enabled=True)
    try:
        page.goto(report.as_uri(), wait_until="load")
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        assert page.evaluate("document.body.scrollWidth") <= PHONE["width"]
        for selector in ("#verdict", "#recommendation h2", "#recommendation ul.decisive li"):
            box = page.locator(selector).first.bounding_box()
            assert box is not None and box["y"] + box["height"] <= PHONE["height"], selector
        order = page.evaluate(
            "['#recommendation', '#economics', '#readiness', '#next-steps', '#findings']"
            ".map(s => document.querySelector(s).getBoundingClientRect().top)"
        )
        assert order == sorted(order)
        for chart in range(2):  # cost per month and payback, scaled to the screen
            box = page.locator("#recommendation svg").nth(chart).bounding_box()
            assert box is not None and 300 < box["width"] <= PHONE["width"]
    finally:
        page.close()


def test_severity_filter_works_without_script(browser: Any, tmp_path: Path) -> None:
    with visit(browser, tmp_path, sample_scan()) as opened:
        opened.assert_inert()
        page = opened.page
        low = page.locator("section.group-low article.finding")
        assert low.count() == 2 and low.first.is_visible()
        page.uncheck("#show-low")
        assert not low.first.is_visible()
        assert page.locator("section.group-blocker article.finding").first.is_visible()
        page.check("#show-low")
        assert low.first.is_visible()
        assert opened.requests == [opened.page.url]


def test_hostile_port_report_is_inert_and_styled(browser: Any, tmp_path: Path) -> None:
    with visit(browser, tmp_path, hostile_port()) as opened:
        opened.assert_inert()
        page = opened.page
        body = page.locator("body").inner_text()
        for hostile in HOSTILE_STRINGS[:4]:
            assert hostile in body, hostile
        assert "\\x1b]0;title" in body and "\\u202eevil" in body
        assert page.locator("a").count() == 0  # nothing from the project became a link
        assert colour_of(page, "td.needs-review", "color") == "rgb(138, 90, 0)"


def test_plan_report_is_styled_under_its_policy(browser: Any, tmp_path: Path) -> None:
    with visit(browser, tmp_path, sample_plan()) as opened:
        opened.assert_inert()
        assert colour_of(opened.page, "td", "borderTopColor") == "rgb(204, 204, 204)"


def test_plan_sweep_charts_draw_under_the_policy(browser: Any, tmp_path: Path) -> None:
    with visit(browser, tmp_path, sample_plan_sweep()) as opened:
        opened.assert_inert()
        page = opened.page
        charts = page.locator("h3:text('Sweep') ~ figure svg")
        assert charts.count() == 2  # tokens/s and $/1M output tokens against the batch
        for index in range(2):
            box = charts.nth(index).bounding_box()
            assert box is not None and box["width"] > 300 and box["height"] > 150
        # a line per GPU that fits somewhere; the one that never fits draws none
        assert page.locator("h3:text('Sweep') ~ figure polyline").count() == 4
        assert page.locator("table.sweep tbody tr").count() == 9
        assert colour_of(page, "table.sweep td", "borderTopColor") == "rgb(204, 204, 204)"


# --- a phone: the report reads top-down at 390 px -------------------------------------------

PHONE = {"width": 390, "height": 844}  # an iPhone 12-15's CSS viewport
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "llm-service"


def realistic_assessment() -> Assessment:
    """The bundled example, really scanned, with a GPU plan: long reasons, steps and tables."""
    scan = scan_path(EXAMPLE, ScanOptions(jobs=1))
    return assess(scan, plan=sample_plan())


def test_the_report_reads_on_a_phone_verdict_and_next_steps_first(
    browser: Any, tmp_path: Path
) -> None:
    assessment = realistic_assessment()
    report = tmp_path / "report.html"
    report.write_text(render(assessment, Format.HTML, OPTIONS), encoding="utf-8")
    page = browser.new_page(viewport=PHONE, java_script_enabled=True)
    try:
        page.goto(report.as_uri(), wait_until="load")
        # no sideways scroll: nothing is wider than the screen
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        assert page.evaluate("document.body.scrollWidth") <= PHONE["width"]
        # the verdict and the first next step are on the first screen, before any scrolling;
        # once assess decides should we move, that answer and its first factor come first
        first = ("#verdict", "#next-steps h2", "#next-steps li")
        if assessment.recommendation is not None:
            first = ("#verdict", "#recommendation h2", "#recommendation li")
        for selector in first:
            box = page.locator(selector).first.bounding_box()
            assert box is not None and box["y"] + box["height"] <= PHONE["height"], selector
        # then the contents, and the plan's summary before the long lists
        order = page.evaluate(
            "['#next-steps', '#contents', '#plan-summary', '#most-serious', '#effort', '#findings']"
            ".map(s => document.querySelector(s).getBoundingClientRect().top)"
        )
        assert order == sorted(order)
        # the readiness part starts at the top of the page, or under the recommendation
        start = 0.0
        if assessment.recommendation is not None:
            start = page.evaluate(
                "['#recommendation', '#readiness']"
                ".map(s => document.querySelector(s).getBoundingClientRect().top)"
            )[1]
            assert start <= order[0], "the readiness part comes before its next steps"
        assert order[2] - start < 3 * PHONE["height"], "the plan's summary is near the top"
        page.screenshot(path=str(tmp_path / "phone.png"))
    finally:
        page.close()
