"""The compare report escapes the reference file's text; the metrics follow assert_close."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "report"))

from report_samples import IMG, SCRIPT
from verify_samples import sample_verify

from gpuport.report import Format, RenderOptions, render
from gpuport.verify.tolerances import ToleranceError, parse_tolerances, tolerance_for


def test_html_keeps_hostile_text_inert_under_a_policy() -> None:
    page = render(sample_verify(), Format.HTML, RenderOptions())
    assert SCRIPT not in page and "<img" not in page
    assert "&lt;script&gt;" in page
    assert "Content-Security-Policy" in page
    assert "blocks.0.mlp" in page and "where it drifts" in page


def test_json_is_valid_with_infinities_as_null() -> None:
    document = json.loads(render(sample_verify(), Format.JSON, RenderOptions()))
    block = next(c for c in document["cases"] if c["name"] == "transformer_block[fp32]")
    assert block["first_failure"] == "blocks.0.mlp"
    final = block["outputs"][-1]
    assert final["max_abs_error"] is None and final["finite"] is False
    assert document["counts"] == {"pass": 3, "fail": 2, "skipped": 2, "error": 1}
    assert document["passed"] is False


def test_markdown_escapes_the_files_text() -> None:
    text = render(sample_verify(), Format.MARKDOWN, RenderOptions())
    assert IMG not in text and "](javascript" not in text


def test_tolerances_parse_and_default() -> None:
    assert parse_tolerances(["bf16=1e-2,1.6e-2", "fp16=0,1e-3"]) == {
        "bfloat16": (1e-2, 1.6e-2),
        "float16": (0.0, 1e-3),
    }
    assert tolerance_for("float32", {}).rtol == 1.3e-6
    assert tolerance_for("int64", {}).atol == 0.0
    for bad in ("bf16", "bf16=1", "bf16=-1,0", "int8=1,1", "bf16=nan,1"):
        with pytest.raises(ToleranceError):
            parse_tolerances([bad])


def test_tolerance_order_is_rtol_then_atol_and_names_make_it_explicit() -> None:
    assert parse_tolerances(["bf16=2e-2,1e-3"]) == {"bfloat16": (2e-2, 1e-3)}  # rtol, atol
    assert parse_tolerances(["bf16=atol=1e-3,rtol=2e-2"]) == {"bfloat16": (2e-2, 1e-3)}
    assert parse_tolerances(["FP32=atol=1e-4"]) == {"float32": (1.3e-6, 1e-4)}  # rtol default
    assert parse_tolerances(["fp16=0,1e-3; bf16=1,2"]) == {
        "float16": (0.0, 1e-3),
        "bfloat16": (1.0, 2.0),
    }
    for bad, says in (
        ("bf16=2e-2,1e-3,1", "two numbers, relative first"),
        ("bf16=tol=1", "named: bf16=atol=1e-3,rtol=2e-2"),
        ("bf16=atol=1,atol=2", "two numbers"),
        ("bf16=atol=-1", ">= 0"),
        ("bf16=inf,0", "finite"),
    ):
        with pytest.raises(ToleranceError, match=says):
            parse_tolerances([bad])
    with pytest.raises(ToleranceError, match="bfloat16 is given more than once"):
        parse_tolerances(["bf16=1,1", "bfloat16=2,2"])


torch = pytest.importorskip("torch")


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
@pytest.mark.parametrize("noise", [0.0, 1e-7, 1e-5, 1e-3, 1e-1])
def test_pass_fail_and_the_needed_tolerances_agree_with_assert_close(
    dtype: torch.dtype, noise: float
) -> None:
    from gpuport.verify.metrics import compare_output

    gen = torch.Generator().manual_seed(7)
    recorded = torch.randn(32, 8, generator=gen).to(dtype)
    here = (recorded.double() * (1 + noise * torch.randn(32, 8, generator=gen))).to(dtype)
    reference = recorded.double()
    tolerance = tolerance_for(str(dtype).removeprefix("torch."), {})
    result = compare_output("out", here, recorded, reference, tolerance)
    try:
        torch.testing.assert_close(here, recorded)
        agreed = True
    except AssertionError:
        agreed = False
    assert result.passed is agreed
    # the smallest atol / rtol it reports do pass (with a hair of float slack)
    torch.testing.assert_close(
        here.double(), recorded.double(), rtol=tolerance.rtol, atol=result.atol_needed * 1.000001
    )
    torch.testing.assert_close(
        here.double(),
        recorded.double(),
        rtol=result.rtol_needed * 1.000001 + 1e-300,
        atol=tolerance.atol,
    )
    assert result.closer.value in ("tie", "recorded")


def test_nan_never_passes_and_closer_picks_the_exact_side() -> None:
    from gpuport.verify.metrics import compare_output

    recorded = torch.tensor([1.0, 2.0, float("nan")])
    reference = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    result = compare_output(
        "out", recorded.clone(), recorded, reference, tolerance_for("float32", {})
    )
    assert not result.passed and result.max_abs == float("inf")
    here = torch.tensor([1.0, 2.5, 3.0])
    result = compare_output(
        "out",
        here,
        torch.tensor([1.0, 2.0, 3.0]),
        torch.tensor([1.0, 2.4, 3.0]).double(),
        tolerance_for("float32", {}),
    )
    assert result.closer.value == "here" and result.out_of_tolerance == pytest.approx(1 / 3)
