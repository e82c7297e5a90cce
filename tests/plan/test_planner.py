"""The plan: fewest GPUs that hold model and batch, ranking by cost, and the reasons."""

from __future__ import annotations

import pytest

from gpuport.plan.catalog import MeasuredRates, resolve_gpus
from gpuport.plan.errors import PlanInputError
from gpuport.plan.model_spec import load_model, spec_from_params
from gpuport.plan.planner import PlanRequest, plan, request_for
from gpuport.plan.precision import parse_kv_dtype, parse_precision
from gpuport.plan.prices import Price, default_prices


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
