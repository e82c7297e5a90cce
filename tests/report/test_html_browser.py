"""The HTML report opened in headless Chromium: hostile content shows as text and does nothing.

Needs Debian's /usr/bin/chromium and the playwright package (never a downloaded browser);
skipped with a reason where either is missing. CI installs both.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from report_samples import HOSTILE_STRINGS, TOOL_VERSION, hostile_assessment, sample_scan

from gpuport.report import Format, RenderOptions, render

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
OPTIONS = RenderOptions(tool_version=TOOL_VERSION)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists() and not shutil.which("chromium"):
        pytest.skip("no Chromium at /usr/bin/chromium (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed (pip install playwright; no browser download)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        try:
            yield launched
        finally:
            launched.close()


class Visit:
    """A page opened from a file, with every dialog, request and console error recorded."""

    def __init__(self, browser: Any, path: Path) -> None:
        self.dialogs: list[str] = []
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.page = browser.new_page(java_script_enabled=True)
        self.page.on("dialog", self._dialog)
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.goto(path.as_uri(), wait_until="load")
        self.page.wait_for_timeout(300)  # let any (unwanted) onerror/onload handler fire

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()


def test_hostile_report_is_inert(browser: Any, tmp_path: Path) -> None:
    report = tmp_path / "gpuport-report.html"
    report.write_text(render(hostile_assessment(), Format.HTML, OPTIONS), encoding="utf-8")
    visit = Visit(browser, report)
    page = visit.page
    try:
        assert visit.dialogs == []
        assert visit.errors == []
        assert page.locator("script").count() == 0
        assert page.locator("img").count() == 0
        assert page.locator("[onerror], [onload], [onclick]").count() == 0
        assert all(url.startswith(("file:", "data:")) for url in visit.requests), visit.requests
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
        # "</style>" in content did not end the stylesheet: the styles still apply.
        banner_colour = page.eval_on_selector(
            "header.banner", "el => getComputedStyle(el).backgroundColor"
        )
        assert banner_colour == "rgb(180, 83, 9)"
    finally:
        page.close()


def test_severity_filter_works_without_script(browser: Any, tmp_path: Path) -> None:
    report = tmp_path / "scan.html"
    report.write_text(render(sample_scan(), Format.HTML, OPTIONS), encoding="utf-8")
    visit = Visit(browser, report)
    page = visit.page
    try:
        low = page.locator("section.group-low article.finding")
        assert low.count() == 2 and low.first.is_visible()
        page.uncheck("#show-low")
        assert not low.first.is_visible()
        assert page.locator("section.group-blocker article.finding").first.is_visible()
        page.check("#show-low")
        assert low.first.is_visible()
        assert all(url.startswith(("file:", "data:")) for url in visit.requests), visit.requests
    finally:
        page.close()
