"""The plan: fewest GPUs that hold model and batch, ranking by cost, and the reasons."""

from __future__ import annotations

import dataclasses
import re

import pytest

from gpuport.plan import planner as planner_module
from gpuport.plan.catalog import MeasuredRates, resolve_gpus
from gpuport.plan.errors import PlanInputError
from gpuport.plan.model_spec import load_model, spec_from_params
from gpuport.plan.planner import (
    DASH,
    PlanRequest,
    parse_values,
    plan,
    range_sentence,
    request_for,
)
from gpuport.plan.precision import parse_kv_dtype, parse_precision
from gpuport.plan.prices import Price, default_prices
from gpuport.plan.speed import (
    DecodeEstimate,
    StepTime,
    Uncertainty,
    estimate_decode,
    estimate_prefill,
)


def _plan(model: str, gpus: str, **limits):  # type: ignore[no-untyped-def]
    spec = load_model(model)
    return plan(spec, request_for(spec, **limits), resolve_gpus(gpus), default_prices())


def test_seventy_b_fits_one_mi300x_but_needs_two_h100s_at_batch_1() -> None:
    result = _plan("llama-3.1-70b", "h100,mi300x", context=4096, batch=1)
    by_gpu = {e.gpu.id: e for e in result.entries}
    assert by_gpu["mi300x"].devices == 1
    assert by_gpu["h100-sxm"].devices == 2 and by_gpu["h100-sxm"].tp == 2
    sentence = next(s for s in result.summary if s.startswith("Fits on one"))
    assert "Fits on one MI300X, needs two H100 SXMs" in sentence
    assert "cheaper per token" in sentence


def test_the_batch_decides_the_count() -> None:
    small = _plan("llama-3.1-70b", "h100", context=8192, batch=1).entries[0]
    large = _plan("llama-3.1-70b", "h100", context=8192, batch=32).entries[0]
    assert small.devices == 2 and large.devices == 4
    assert any("on 2 GPUs each would hold" in r for r in large.reasons)
    assert large.max_sequences >= 32


def test_entries_are_ranked_by_cost_then_unpriced_then_misfits() -> None:
    result = _plan("llama-3.1-8b", "h100,mi300x,mi355x,h200", context=4096, batch=16)
    costs = [e.cost_per_million_output for e in result.entries]
    priced = [c for c in costs if c is not None]
    assert priced == sorted(priced)
    assert costs[-1] is None  # MI355X has no price on file
    assert [e.rank for e in result.entries] == [1, 2, 3, 4]
    assert any("--price mi355x=" in r for r in result.entries[-1].reasons)


def test_a_model_too_big_for_the_limits_does_not_fit() -> None:
    result = _plan("llama-3.1-405b", "rtx-4090,h200", context=4096, batch=8, pp_max=1)
    misfit = next(e for e in result.entries if e.gpu.id == "rtx-4090")
    assert not misfit.fits and misfit.decode is None
    assert "does not fit 8 GPUs" in misfit.reasons[0]
    assert result.entries[-1] is misfit
    assert any(s.startswith("Does not fit in up to 8 devices: RTX 4090") for s in result.summary)


def test_pipeline_stages_go_on_top_of_the_widest_tensor_parallel_group() -> None:
    result = _plan("llama-3.1-405b", "h100", context=4096, batch=8)
    entry = result.entries[0]
    assert entry.fits and entry.tp == 8 and entry.pp == 2


def test_deepseek_r1_in_its_fp8_checkpoint_format() -> None:
    result = _plan("deepseek-r1", "h200,mi300x", context=8192, batch=32)
    assert result.request.precision.name == "fp8" and result.request.precision_from_checkpoint
    mi300x = next(e for e in result.entries if e.gpu.id == "mi300x")
    assert mi300x.fits and mi300x.devices == 8
    assert "(the checkpoint's format)" in result.summary[0]
    assert "MLA" in result.summary[1]


def test_mi250x_counts_gcds() -> None:
    result = _plan("llama-3.1-70b", "mi250x", context=2048, batch=1)
    entry = result.entries[0]
    assert entry.devices == 4 and entry.packages == 2
    assert any("4 GCDs = 2 package(s)" in r for r in entry.reasons)


def test_user_price_changes_the_ranking() -> None:
    spec = load_model("llama-3.1-8b")
    request = request_for(spec, context=2048, batch=8)
    prices = dict(default_prices())
    prices["h100-sxm"] = Price(0.10, "user", "--price", "command line", None)
    result = plan(spec, request, resolve_gpus("h100,mi300x"), prices)
    assert result.entries[0].gpu.id == "h100-sxm"


def test_measured_rates_are_used_and_said() -> None:
    spec = load_model("llama-3.1-8b")
    request = request_for(spec, context=2048, batch=1)
    measured = {"mi300x": MeasuredRates(2000.0, 400.0, "bench.json")}
    result = plan(spec, request, resolve_gpus("mi300x"), default_prices(), measured)
    entry = result.entries[0]
    assert entry.rates.measured
    assert any("measured rates (bench.json)" in r for r in entry.reasons)
    datasheet = plan(spec, request, resolve_gpus("mi300x"), default_prices()).entries[0]
    assert entry.decode is not None and datasheet.decode is not None
    assert entry.decode.tokens_per_s < datasheet.decode.tokens_per_s  # 2000 < 5300 x 0.8


def test_quantization_shrinks_the_count() -> None:
    bf16 = _plan("llama-3.1-70b", "rtx-4090", context=2048, batch=1).entries[0]
    q4 = _plan("llama-3.1-70b", "rtx-4090", context=2048, batch=1, precision="Q4_K_M").entries[0]
    assert q4.devices < bf16.devices


def test_bare_parameter_count_plan() -> None:
    spec = spec_from_params(70e9)
    result = plan(spec, request_for(spec, precision="bf16"), resolve_gpus("h100,mi300x"), {})
    assert "140.0 GB" in result.summary[0]
    assert any("only a parameter count" in w for w in result.warnings)


def test_context_beyond_the_model_is_flagged() -> None:
    result = _plan("llama-2-70b", "mi300x", context=8192, batch=1)
    assert any("max_position_embeddings (4,096)" in w for w in result.warnings)


@pytest.mark.parametrize(
    ("limits", "message"),
    [
        ({"context": 0}, "--context must be at least 1"),
        ({"batch": -3}, "--batch must be at least 1"),
        ({"utilization": 1.5}, "--utilization"),
        ({"tp_max": 0}, "--tp and --pp"),
    ],
)
def test_bad_requests_are_refused(limits: dict[str, float], message: str) -> None:
    with pytest.raises(PlanInputError, match=message):
        PlanRequest(precision=parse_precision("bf16"), kv_dtype=parse_kv_dtype("bf16"), **limits)  # type: ignore[arg-type]


def test_unknown_gpu_suggests_the_closest() -> None:
    with pytest.raises(PlanInputError, match=r"unknown GPU 'mi3000x'.*did you mean mi300x"):
        resolve_gpus("h100,mi3000x")
    with pytest.raises(PlanInputError, match="did you mean h100"):
        resolve_gpus("h10")


# --- engines, sweeps and ranges (issue 12) ---------------------------------------------------

_RANGE = Uncertainty(0.8, 1.1, 0.14, "vllm on datacenter GPUs, decode: 30 measurements")


def test_a_sweep_plans_every_batch_and_context_on_every_gpu() -> None:
    result = _plan("llama-3.1-8b", "h100,mi300x", batch=(8, 1, 64), context=(8192, 2048))
    assert result.request.is_sweep
    assert [(e.batch, e.context) for e in result.entries] == [(8, 8192), (8, 8192)]
    points = result.sweep
    assert len(points) == 2 * 3 * 2
    for entry in result.entries:
        own = [p for p in points if p.gpu.id == entry.gpu.id]
        assert {(p.batch, p.context) for p in own} == {
            (b, c) for b in (1, 8, 64) for c in (2048, 8192)
        }
        assert all(p.rank == entry.rank for p in own)
        # in rank order of the GPUs, then by context and batch
        assert [(p.context, p.batch) for p in own] == sorted((p.context, p.batch) for p in own)
        same = next(p for p in own if (p.batch, p.context) == (8, 8192))
        assert same.decode is not None and entry.decode is not None
        assert same.decode.tokens_per_s == entry.decode.tokens_per_s
        speeds = [p.decode.tokens_per_s for p in own if p.context == 2048 and p.decode]
        assert speeds == sorted(speeds) and len(speeds) == 3  # a bigger batch decodes more
    assert [p.gpu.id for p in points[:6]] == [result.entries[0].gpu.id] * 6
    assert any(s.startswith("Sweep: batch 1, 8, 64 x context 2,048, 8,192") for s in result.summary)
    cheapest = next(s for s in result.summary if s.startswith("Cheapest in the sweep"))
    assert "at batch 64 and 2,048 tokens" in cheapest


def test_one_batch_and_context_is_no_sweep() -> None:
    result = _plan("llama-3.1-8b", "h100,mi300x", batch=8, context=2048)
    assert not result.request.is_sweep and result.sweep == ()
    assert result.sweep_entries == result.entries
    assert not any(s.startswith(("Sweep", "Cheapest in the sweep")) for s in result.summary)


def test_the_engine_defaults_per_gpu_segment_and_can_be_chosen() -> None:
    result = _plan("llama-3.1-8b", "h100,rtx-4090", batch=1, context=2048)
    engines = {e.gpu.id: e.engine for e in result.entries}
    assert engines == {"h100-sxm": "vllm", "rtx-4090": "llama.cpp"}
    rtx = next(e for e in result.entries if e.gpu.id == "rtx-4090")
    assert any("the default on consumer GPUs" in r for r in rtx.reasons)
    chosen = _plan("llama-3.1-8b", "h100,rtx-4090", batch=(1, 8), engine="sglang")
    assert {e.engine for e in chosen.sweep_entries} == {"sglang"}
    assert all(
        any(r == "speed assumes sglang (--engine)" for r in e.reasons) for e in chosen.entries
    )
    assert any("on sglang" in s for s in chosen.summary if s.startswith("Best"))


def test_range_sentence_states_the_spread_and_its_basis() -> None:
    step = StepTime(0.01, 0.003, 0.0, 1)
    estimate = DecodeEstimate(100.0, 100.0, step, None, None, _RANGE)
    assert range_sentence(estimate) == (
        f"typically 80{DASH}110 tok/s (8 in 10 measurements within 0.80{DASH}1.10\u00d7 the "
        "estimate, median error 14%; vllm on datacenter GPUs, decode: 30 measurements)"
    )
    slow = range_sentence(DecodeEstimate(7.0, 7.0, step, None, None, _RANGE))
    assert slow is not None and slow.startswith(f"typically 5.6{DASH}7.7 tok/s")
    assert range_sentence(DecodeEstimate(100.0, 100.0, step, None, None)) is None


def _estimates_with(
    monkeypatch: pytest.MonkeyPatch,
    decode: Uncertainty | None,
    prefill: Uncertainty | None,
) -> None:
    """The speed model as it is, with the given validation ranges on its estimates."""
    monkeypatch.setattr(
        planner_module,
        "estimate_decode",
        lambda case: dataclasses.replace(estimate_decode(case), uncertainty=decode),
    )
    monkeypatch.setattr(
        planner_module,
        "estimate_prefill",
        lambda *a, **k: dataclasses.replace(estimate_prefill(*a, **k), uncertainty=prefill),
    )


def test_an_estimate_without_a_range_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    _estimates_with(monkeypatch, None, None)
    plain = _plan("llama-3.1-8b", "mi300x", batch=1, context=2048)
    reasons = plain.entries[0].reasons
    assert "decode and prefill: no validated range" in " ".join(reasons)
    assert not any("typically" in s for s in plain.summary)


def test_ranges_reach_the_reasons_and_the_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    _estimates_with(monkeypatch, _RANGE, None)
    ranged = _plan("llama-3.1-8b", "mi300x", batch=1, context=2048)
    entry = ranged.entries[0]
    assert entry.decode is not None and entry.decode.range_tokens_per_s is not None
    low, high = entry.decode.range_tokens_per_s
    line = next(r for r in entry.reasons if r.startswith("decode typically"))
    assert f"{low:,.0f}{DASH}{high:,.0f} tok/s" in line and "median error 14%" in line
    assert any(r.startswith("prefill: no validated range") for r in entry.reasons)
    best = next(s for s in ranged.summary if s.startswith("Best"))
    assert f"typically {low:,.0f}{DASH}{high:,.0f}" in best
    assert any("not a bound" in a for a in ranged.assumptions)


@pytest.mark.parametrize(
    ("limits", "message"),
    [
        ({"batch": (0, 8)}, "--batch must be at least 1 sequence, not 0"),
        ({"batch": (8, 1, 8)}, "--batch gives 8 twice"),
        ({"context": (2048, 2048)}, "--context gives 2,048 twice"),
        ({"batch": tuple(range(1, 18))}, "--batch gives 17 values; a sweep takes at most 16"),
        (
            {"batch": tuple(range(1, 10)), "context": tuple(range(1000, 9000, 1000))},
            "9 batch sizes x 8 contexts = 72 combinations per GPU; a sweep takes at most 64",
        ),
        ({"engine": "tgi"}, "--engine 'tgi': not an engine"),
    ],
)
def test_bad_sweeps_are_refused(limits: dict[str, object], message: str) -> None:
    spec = load_model("llama-3.1-8b")
    with pytest.raises(PlanInputError, match=re.escape(message)):
        request_for(spec, **limits)  # type: ignore[arg-type]


def test_parse_values_reads_comma_lists_and_names_the_option() -> None:
    assert parse_values("1, 8,64", "--batch") == (1, 8, 64)
    assert parse_values("4096", "--context") == (4096,)
    for text in ("a", "8,,64", "1.5", ""):
        with pytest.raises(PlanInputError, match=r"^--batch .* is not a whole number"):
            parse_values(text, "--batch")


def test_memory_counts_the_activations_of_the_engines_prefill_chunk() -> None:
    # A desktop card defaults to llama.cpp (512-token prompt steps), a datacenter GPU to vLLM
    # (2048): at batch 1 the RTX 4090's activations are about a quarter of the H100's.
    result = _plan("llama-3.1-8b", "h100,rtx-4090", context=4096, batch=1)
    by_gpu = {e.gpu.id: e for e in result.entries}
    desktop, datacenter = by_gpu["rtx-4090"], by_gpu["h100-sxm"]
    assert (desktop.engine, datacenter.engine) == ("llama.cpp", "vllm")
    assert desktop.memory.activations < 0.3 * datacenter.memory.activations
