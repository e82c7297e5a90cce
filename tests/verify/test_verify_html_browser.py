"""``verify compare --format html`` opened in headless Chromium, as a user would open it.

The pages are made by the real commands (a tiny recording, then a compare with a perturbed op
or layer), not by hand. Needs Debian's /usr/bin/chromium and playwright (never a downloaded
browser); skipped with a reason where either is missing.
"""

from __future__ import annotations

import dataclasses
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from verify_helpers import rewrite_metadata, run_cli  # noqa: E402

from gpuport.verify import cases  # noqa: E402

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
HOSTILE_HOST = '<script>alert("host")</script></style><img src=x onerror=alert(1)>'


def _through_bf16(x: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    return {"out": (x["a"].bfloat16() @ x["b"].bfloat16()).float()}


def _open(browser: Any, page_file: Path, viewport: Mapping[str, int]) -> tuple[Any, list[str]]:
    """The page, and what it did that it should not: console errors (CSP), dialogs, loads."""
    page = browser.new_page(viewport=dict(viewport), java_script_enabled=True)
    trouble: list[str] = []
    page.on("console", lambda m: trouble.append(m.text) if m.type == "error" else None)
    page.on("dialog", lambda d: (trouble.append(f"dialog {d.message}"), d.dismiss()))
    page.on(
        "request",
        lambda r: None if r.url == page_file.as_uri() else trouble.append(f"load {r.url}"),
    )
    page.goto(page_file.as_uri(), wait_until="load")
    page.wait_for_timeout(200)  # let any (unwanted) onerror handler fire
    return page, trouble


def test_a_failing_compare_page_says_fail_first_and_fits_a_phone(
    browser: Any, tiny_reference: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hostile = tmp_path / "hostile.gpv"
    hostile.write_bytes(
        rewrite_metadata(
            tiny_reference.read_bytes(),
            lambda doc: doc["machine"].update(hostname=HOSTILE_HOST),
        )
    )
    monkeypatch.setitem(
        cases.SUITE,
        "matmul[fp32]",
        dataclasses.replace(cases.SUITE["matmul[fp32]"], run=_through_bf16),
    )
    page_file = tmp_path / "verify.html"
    code, _, err = run_cli(
        "verify", "compare", str(hostile), "--format", "html", "-o", str(page_file)
    )
    assert code == 1, err
    for viewport in ({"width": 1280, "height": 900}, PHONE):
        page, trouble = _open(browser, page_file, viewport)
        try:
            assert trouble == []
            assert page.locator("script, img, iframe").count() == 0
            verdict = page.locator("#verdict")
            assert verdict.inner_text().startswith("Fail: 1 of ")
            assert "out of tolerance" in verdict.inner_text()
            # the styles apply under the page's Content-Security-Policy: the verdict is red
            colour = page.eval_on_selector("#verdict", "e => getComputedStyle(e).color")
            assert colour == "rgb(176, 0, 32)"
            box = verdict.bounding_box()
            assert box is not None and box["y"] + box["height"] <= viewport["height"]
            row = page.locator("tr", has_text="matmul[fp32]").first
            assert row.locator("td").nth(1).inner_text() == "fail"
            assert HOSTILE_HOST in page.locator("body").inner_text()
            # nothing wider than the screen: the wide table scrolls inside its own box
            assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
            numbers = page.locator("td.num", has_text="e-")
            assert numbers.count() > 0
            height = numbers.first.bounding_box()
            assert height is not None and height["height"] < 30, "a number broke over lines"
        finally:
            page.close()


MODULE = "gpuport_verify_browser_model"
SOURCE = textwrap.dedent(
    """
    import torch
    from torch import nn


    class Mid(nn.Linear):
        pass


    def make():
        return nn.Sequential(nn.Linear(8, 16), nn.GELU(), Mid(16, 16), nn.Linear(16, 4)), (
            torch.randn(2, 8),
        )
    """
)


def test_a_drifting_layer_is_marked_on_the_page(
    browser: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / f"{MODULE}.py").write_text(SOURCE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, MODULE, raising=False)
    ref, page_file = tmp_path / "model.gpv", tmp_path / "model.html"
    code, _, err = run_cli("verify", "record", "-o", str(ref), "--model", f"{MODULE}:make")
    assert code == 0, err

    def through_bf16(self: torch.nn.Linear, x: torch.Tensor) -> torch.Tensor:
        out = torch.nn.functional.linear(x.bfloat16(), self.weight.bfloat16(), self.bias.bfloat16())
        return out.float()

    monkeypatch.setattr(sys.modules[MODULE].Mid, "forward", through_bf16)
    code, _, err = run_cli(
        "verify", "compare", str(ref), "--model", f"{MODULE}:make",
        "--format", "html", "-o", str(page_file),
    )  # fmt: skip
    monkeypatch.delitem(sys.modules, MODULE, raising=False)
    assert code == 1, err
    page, trouble = _open(browser, page_file, PHONE)
    try:
        assert trouble == []
        assert page.locator("h2", has_text="where it drifts").count() == 1
        first = page.locator("tr.first-drift")
        assert first.count() == 1
        assert first.locator("td").first.inner_text() == "2 (first to drift)"  # Sequential's "2"
        assert first.locator("td").nth(1).inner_text() == "fail"
        background = page.eval_on_selector(
            "tr.first-drift td", "e => getComputedStyle(e).backgroundColor"
        )
        assert background == "rgb(253, 236, 238)"
    finally:
        page.close()
