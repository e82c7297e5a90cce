"""``bench compare``'s HTML page in headless Chromium: charts drawn, hostile labels inert.

Needs Debian's /usr/bin/chromium and playwright (never a downloaded browser), and matplotlib
for the charts; skipped with a reason where one is missing.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from bench_samples import machine

from gpuport.bench.results import compare
from gpuport.bench.store import ResultRecord, RunSummary, StoredRun
from gpuport.report import Format, RenderOptions, render

pytestmark = pytest.mark.browser
pytest.importorskip("matplotlib")

HOSTILE = '<script>alert("label")</script> </style> $x$ & \x1b]0;title'


def stored(run_id: str, device: str, accelerator: str, label: str, scale: float) -> StoredRun:
    results = (
        ResultRecord(
            "matmul",
            "matmul bf16 8192x8192x8192",
            {"dtype": "bf16"},
            {"tflops": 700 * scale, "fraction_of_peak": 0.7 * scale},
        ),
        ResultRecord(
            "bandwidth",
            f"bandwidth copy {HOSTILE}",
            {},
            {"gbs": 3000 * scale, "fraction_of_peak": 0.9 * scale},
        ),
        ResultRecord("decode", "decode batch 8", {}, {"tokens_per_s": 1500 * scale}),
    )
    summary = RunSummary(
        run_id,
        "micro",
        label,
        "2026-11-25T10:00:00+00:00",
        None,
        True,
        False,
        device,
        accelerator,
        "host",
        len(results),
    )
    described = replace(machine(device, accelerator), device_name=device)
    return StoredRun(summary, described, {}, results)


def test_the_comparison_page_draws_its_charts_and_stays_inert(browser: Any, tmp_path: Path) -> None:
    comparison = compare(
        [
            stored("3f2a9c0d1e4b", "NVIDIA H100 80GB HBM3", "cuda", "cuda box", 1.0),
            stored("a07b5e6f8c91", f"AMD Instinct MI300X {HOSTILE}", "rocm", HOSTILE, 1.15),
        ]
    )
    page_file = tmp_path / "compare.html"
    page_file.write_text(render(comparison, Format.HTML, RenderOptions(tool_version="9.9.9")))
    dialogs: list[str] = []
    errors: list[str] = []
    requests: list[str] = []
    page = browser.new_page(viewport={"width": 1100, "height": 1400})
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: requests.append(r.url))
    try:
        page.goto(page_file.as_uri(), wait_until="load")
        page.wait_for_timeout(200)
        assert dialogs == [] and errors == []  # nothing ran, the policy refused nothing
        assert requests == [page_file.as_uri()]
        assert page.locator("script").count() == 0
        assert page.locator("figure.chart svg").count() == 2  # ratios, shares of peak
        for chart in range(2):
            box = page.locator("figure.chart svg").nth(chart).bounding_box()
            assert box is not None and box["width"] > 400 and box["height"] > 100
        # The bars keep their colours under the policy (presentation attributes, no style=).
        fills = page.eval_on_selector_all(
            "figure.chart svg path", "els => els.map(e => getComputedStyle(e).fill)"
        )
        assert "rgb(76, 114, 176)" in fills and "rgb(221, 132, 82)" in fills
        # The ratio chart names A and labels each bar with its ratio; 1x is always a tick.
        ratio_text = page.locator("figure.chart svg").nth(0).text_content() or ""
        assert "Each run against A (cuda box)" in ratio_text
        assert "1.15x" in ratio_text and "1x" in ratio_text.split()
        body = page.locator("body").inner_text()
        assert '<script>alert("label")</script>' in body
        assert "\\x1b]0;title" in body
        page.screenshot(path=str(tmp_path / "compare.png"), full_page=True)
    finally:
        page.close()


def test_a_run_imported_from_another_machine_compares_in_the_browser(
    browser: Any, tmp_path: Path
) -> None:
    """The issue's "done when", as a user runs it: export on one box, import here, compare."""
    from bench_samples import matmul_result
    from click.testing import CliRunner

    from gpuport.bench.store import ResultsStore
    from gpuport.cli import main

    def bench(*args: str) -> str:
        result = CliRunner().invoke(main, ["bench", *args])
        assert result.exit_code == 0, result.stderr
        return result.stdout

    here, there = tmp_path / "here.sqlite", tmp_path / "there.sqlite"
    for db, device, accelerator, tflops in (
        (here, "NVIDIA H100 80GB HBM3", "cuda", 700.0),
        (there, "AMD Instinct MI300X", "rocm", 840.0),
    ):
        with ResultsStore.open(db) as store:
            run_id = store.begin("micro", machine(device, accelerator), label=accelerator)
            store.add(run_id, matmul_result("bf16", tflops))
            store.finish(run_id)
    export = tmp_path / "mi300x.json"
    bench("export", "latest", "--db", str(there), "-o", str(export))
    bench("import", str(export), "--db", str(here))
    listed = json.loads(bench("list", "--db", str(here), "--format", "json"))["runs"]
    assert [run["imported"] for run in listed] == [False, True]
    runs = [run["id"] for run in listed]
    page_file = tmp_path / "compare.html"
    table = bench("compare", *runs, "--db", str(here), "--html", str(page_file))
    assert "1.20x" in table
    page = browser.new_page(viewport={"width": 1100, "height": 1400})
    try:
        page.goto(page_file.as_uri(), wait_until="load")
        assert page.locator("figure.chart svg").count() == 1  # ratios (no share of peak given)
        cells = page.locator("tbody td").all_inner_texts()
        assert cells[:2] == ["matmul bf16 best shape", "TFLOPS"] and "1.20x" in cells
        assert "imported" in page.locator("body > ul").inner_text()
    finally:
        page.close()
