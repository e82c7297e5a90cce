"""The roofline: decode bound by memory, prefill by compute, TP communication, costs."""

from __future__ import annotations

import pytest

from gpuport.plan.catalog import MeasuredRates, find_gpu
from gpuport.plan.memory import weight_bytes
from gpuport.plan.model_spec import load_model
from gpuport.plan.precision import parse_kv_dtype, parse_precision
from gpuport.plan.speed import (
    COMPUTE_EFFICIENCY,
    MEMORY_EFFICIENCY,
    DecodeCase,
    achieved_rates,
    cost_per_million_tokens,
    decode_step,
    estimate_decode,
    estimate_prefill,
)

BF16 = parse_precision("bf16")
KV = parse_kv_dtype("bf16")


def _gpu(name: str):  # type: ignore[no-untyped-def]
    gpu = find_gpu(name)
    assert gpu is not None
    return gpu


def test_public_cost_arithmetic() -> None:
    # $2.90 per hour at 19,500 tokens/s is about $0.041 per million tokens.
    assert cost_per_million_tokens(2.90, 19_500) == pytest.approx(0.0413, abs=5e-4)
    assert cost_per_million_tokens(3600.0, 1e6) == pytest.approx(1.0)


def test_batch_one_decode_reads_the_weights_at_the_effective_bandwidth() -> None:
    spec = load_model("llama-3.1-8b")
    gpu = _gpu("h100")
    rates = achieved_rates(gpu, BF16, 1, None)
    assert rates.mem_bw_gbs == pytest.approx(3350 * MEMORY_EFFICIENCY)
    step = decode_step(DecodeCase(spec, BF16, KV, rates, batch=1, context=1, tp=1, pp=1))
    expected = (weight_bytes(spec, BF16) + 131_072) / (rates.mem_bw_gbs * 1e9)
    assert step.memory_s == pytest.approx(expected)
    assert step.bound == "memory"
    assert step.communication_s == 0


def test_decode_turns_compute_bound_only_with_short_contexts() -> None:
    spec = load_model("llama-3.1-70b")
    gpu = _gpu("h200")
    rates = achieved_rates(gpu, BF16, 2, None)
    estimate = estimate_decode(
        DecodeCase(spec, BF16, KV, rates, batch=32, context=8192, tp=2, pp=1)
    )
    assert estimate.bound == "memory"
    # At 8K tokens each sequence's KV reads outgrow its FLOPs: never compute-bound.
    assert estimate.compute_bound_from_batch is None
    crossover = estimate.weights_compute_bound_from_batch
    assert crossover is not None
    # Roughly peak FLOPs over bandwidth: ~989e12*0.7 / (4.8e12*0.8) / 2 bytes ~ 90..200.
    assert 60 < crossover < 400
    below = decode_step(
        DecodeCase(spec, BF16, KV, rates, batch=crossover - 1, context=1, tp=2, pp=1)
    )
    at = decode_step(DecodeCase(spec, BF16, KV, rates, batch=crossover, context=1, tp=2, pp=1))
    assert below.bound == "memory" and at.bound == "compute"


def test_moe_decode_reads_only_the_experts_its_tokens_pick() -> None:
    spec = load_model("qwen3-30b-a3b")
    gpu = _gpu("mi300x")
    rates = achieved_rates(gpu, BF16, 1, None)
    one = decode_step(DecodeCase(spec, BF16, KV, rates, batch=1, context=1, tp=1, pp=1))
    dense_equivalent = weight_bytes(spec, BF16) / (rates.mem_bw_gbs * 1e9)
    assert one.memory_s < dense_equivalent / 5  # 8 of 128 experts per layer
    big = decode_step(DecodeCase(spec, BF16, KV, rates, batch=512, context=1, tp=1, pp=1))
    assert big.memory_s == pytest.approx(dense_equivalent, rel=0.02)  # all experts touched


def test_prefill_is_compute_bound() -> None:
    spec = load_model("llama-3.1-8b")
    gpu = _gpu("mi300x")
    rates = achieved_rates(gpu, BF16, 1, None)
    prefill = estimate_prefill(spec, BF16, rates, context=8192, tp=1, pp=1)
    assert prefill.bound == "compute"
    flops = spec.decode_flops_per_token(4096)
    # MI300X: AMD's own max-achievable FLOPs are about half the datasheet peak.
    assert rates.tflops == pytest.approx(1307.4 * 0.5)
    assert prefill.tokens_per_s == pytest.approx(1307.4e12 * 0.5 / flops, rel=1e-6)
    nvidia = achieved_rates(_gpu("h100"), BF16, 1, None)
    assert nvidia.tflops == pytest.approx(989.4 * COMPUTE_EFFICIENCY)


def test_tensor_parallel_adds_all_reduce_time_by_interconnect() -> None:
    spec = load_model("llama-3.1-70b")
    nvlink = achieved_rates(_gpu("h100"), BF16, 4, None)
    pcie = achieved_rates(_gpu("h100-pcie"), BF16, 4, None)
    fast = decode_step(DecodeCase(spec, BF16, KV, nvlink, batch=64, context=2048, tp=4, pp=1))
    slow = decode_step(DecodeCase(spec, BF16, KV, pcie, batch=64, context=2048, tp=4, pp=1))
    assert 0 < fast.communication_s < slow.communication_s
    # MI300X's mesh gives a TP group of n ranks n-1 links.
    mesh = _gpu("mi300x").interconnect
    assert mesh.bandwidth_gbs(2) == 64 and mesh.bandwidth_gbs(8) == 7 * 64
    gcd = _gpu("mi250x").interconnect
    assert gcd.bandwidth_gbs(2) == 200 and gcd.bandwidth_gbs(8) == 50


def test_pipeline_stages_do_not_speed_decode_up() -> None:
    spec = load_model("llama-3.1-70b")
    rates = achieved_rates(_gpu("h100"), BF16, 1, None)
    one = decode_step(DecodeCase(spec, BF16, KV, rates, batch=8, context=1024, tp=1, pp=1))
    four = decode_step(DecodeCase(spec, BF16, KV, rates, batch=8, context=1024, tp=1, pp=4))
    assert four.seconds == pytest.approx(one.seconds)


def test_measured_rates_replace_datasheet_peaks() -> None:
    gpu = _gpu("mi300x")
    measured = MeasuredRates(mem_bw_gbs=4000.0, tflops_bf16=600.0, source="bench.json")
    rates = achieved_rates(gpu, parse_precision("fp8"), 1, measured)
    assert rates.measured and rates.label == "measured"
    assert rates.mem_bw_gbs == 4000.0
    assert rates.tflops == pytest.approx(600.0 * 2614.9 / 1307.4)


def test_gpus_without_fp8_units_compute_fp8_at_the_16_bit_rate() -> None:
    rates = achieved_rates(_gpu("a100"), parse_precision("fp8"), 1, None)
    assert rates.tflops == pytest.approx(312 * COMPUTE_EFFICIENCY)
    assert "no FP8" in rates.note
