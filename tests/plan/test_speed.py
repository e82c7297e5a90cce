"""The roofline with fitted efficiencies: per-step overhead, average-context KV reads,
engines, uncertainty ranges and fallbacks; decode bound by memory, prefill by compute, TP
communication, costs. Efficiency tables are built here, so no test depends on the fit."""

from __future__ import annotations

import datetime
import statistics
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from gpuport.plan.catalog import MeasuredRates, find_gpu
from gpuport.plan.engines import ANY, EfficiencyTables, tables_from_document
from gpuport.plan.errors import PlanInputError
from gpuport.plan.memory import kv_bytes_per_device, weight_bytes
from gpuport.plan.model_spec import load_model
from gpuport.plan.precision import parse_kv_dtype, parse_precision
from gpuport.plan.speed import (
    DecodeCase,
    achieved_rates,
    cost_per_million_tokens,
    decode_step,
    estimate_decode,
    estimate_prefill,
)

BF16 = parse_precision("bf16")
KV = parse_kv_dtype("bf16")
MEMORY_EFFICIENCY = 0.80
COMPUTE_EFFICIENCY = 0.70
DAY = datetime.date(2026, 11, 25)
OVERHEAD_MS = 1.0


def _profile(engine: str, vendor: str, segment: str, family: str, **values: Any) -> dict[str, Any]:
    shares = {
        "token_overhead_ms": OVERHEAD_MS,
        "sequence_overhead_us": 0.0,
        "bandwidth": 0.8,
        "matrix": 0.7,
        **values,
    }
    return {
        "engine": engine,
        "vendor": vendor,
        "segment": segment,
        "family": family,
        "rows": 3,
        "source": "measurements.csv: 3 rows",
        "checked": DAY,
        "gpus": ["h100-sxm"],
        **shares,
    }


def _spread(engine: str, segment: str, phase: str, low: float, high: float) -> dict[str, Any]:
    return {
        "engine": engine,
        "segment": segment,
        "phase": phase,
        "low_factor": low,
        "high_factor": high,
        "typical_error": 0.1,
        "rows": 12,
        "source": "measurements.csv: 12 rows",
        "checked": DAY,
        "gpus": 4,
    }


def _tables() -> EfficiencyTables:
    return tables_from_document(
        {
            "fit": {"source": "measurements.csv", "measurements": 40, "checked": DAY},
            "profile": [
                _profile("*", "*", "*", "*"),
                # MI300X: about half the matrix peak, as AMD's max-achievable-FLOPs blog says.
                _profile("vllm", "amd", "datacenter", "cdna3", matrix=0.5),
                _profile("llama.cpp", "*", "*", "*", bandwidth=0.6, matrix=0.4),
                _profile(
                    "llama.cpp",
                    "nvidia",
                    "desktop",
                    "*",
                    token_overhead_ms=2.0,
                    bandwidth=0.65,
                    matrix=0.45,
                ),
            ],
            "quant": [
                {
                    "engine": "llama.cpp",
                    "kind": "gguf-k",
                    "bandwidth": 0.9,
                    "matrix": 0.5,
                    "rows": 5,
                    "source": "measurements.csv: 5 rows",
                    "checked": DAY,
                }
            ],
            "uncertainty": [
                _spread("*", "*", "decode", 0.6, 1.3),
                _spread("*", "*", "prefill", 0.5, 1.5),
                _spread("vllm", "datacenter", "decode", 0.8, 1.1),
            ],
        }
    )


TABLES = _tables()


def _gpu(name: str):  # type: ignore[no-untyped-def]
    gpu = find_gpu(name)
    assert gpu is not None
    return gpu


def _rates(name: str, tp: int = 1, precision=BF16, engine=None, measured=None):  # type: ignore[no-untyped-def]
    return achieved_rates(_gpu(name), precision, tp, measured, engine=engine, tables=TABLES)


def test_public_cost_arithmetic() -> None:
    # $2.90 per hour at 19,500 tokens/s is about $0.041 per million tokens.
    assert cost_per_million_tokens(2.90, 19_500) == pytest.approx(0.0413, abs=5e-4)
    assert cost_per_million_tokens(3600.0, 1e6) == pytest.approx(1.0)


def test_batch_one_decode_reads_the_weights_at_the_effective_bandwidth() -> None:
    spec = load_model("llama-3.1-8b")
    gpu = _gpu("h100")
    rates = _rates(gpu.id)
    assert rates.mem_bw_gbs == pytest.approx(3350 * MEMORY_EFFICIENCY)
    step = decode_step(DecodeCase(spec, BF16, KV, rates, batch=1, context=1, tp=1, pp=1))
    expected = (weight_bytes(spec, BF16) + 131_072) / (rates.mem_bw_gbs * 1e9)
    assert step.memory_s == pytest.approx(expected)
    assert step.bound == "memory"
    assert step.communication_s == 0


def test_decode_turns_compute_bound_only_with_short_contexts() -> None:
    spec = load_model("llama-3.1-70b")
    gpu = _gpu("h200")
    rates = _rates(gpu.id, 2)
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
    rates = _rates(gpu.id)
    one = decode_step(DecodeCase(spec, BF16, KV, rates, batch=1, context=1, tp=1, pp=1))
    dense_equivalent = weight_bytes(spec, BF16) / (rates.mem_bw_gbs * 1e9)
    assert one.memory_s < dense_equivalent / 5  # 8 of 128 experts per layer
    big = decode_step(DecodeCase(spec, BF16, KV, rates, batch=512, context=1, tp=1, pp=1))
    assert big.memory_s == pytest.approx(dense_equivalent, rel=0.02)  # all experts touched


def test_prefill_is_compute_bound() -> None:
    spec = load_model("llama-3.1-8b")
    gpu = _gpu("mi300x")
    rates = _rates(gpu.id)
    prefill = estimate_prefill(spec, BF16, rates, context=8192, tp=1, pp=1)
    assert prefill.bound == "compute"
    flops = spec.decode_flops_per_token(4096)
    # MI300X: AMD's own max-achievable FLOPs are about half the datasheet peak.
    assert rates.tflops == pytest.approx(1307.4 * 0.5)
    # A 2048-token chunk at half the peak, plus the engine's fixed cost of the step
    # (stated per 32 layers, as Llama-3.1-8B has).
    assert spec.num_layers == 32
    chunk_seconds = 2048 * flops / (1307.4e12 * 0.5) + OVERHEAD_MS / 1e3
    assert prefill.chunk_tokens == 2048
    assert prefill.tokens_per_s == pytest.approx(2048 / chunk_seconds, rel=1e-6)
    nvidia = _rates("h100")
    assert nvidia.tflops == pytest.approx(989.4 * COMPUTE_EFFICIENCY)


def test_tensor_parallel_adds_all_reduce_time_by_interconnect() -> None:
    spec = load_model("llama-3.1-70b")
    nvlink = _rates("h100", 4)
    pcie = _rates("h100-pcie", 4)
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
    rates = _rates("h100")
    one = decode_step(DecodeCase(spec, BF16, KV, rates, batch=8, context=1024, tp=1, pp=1))
    four = decode_step(DecodeCase(spec, BF16, KV, rates, batch=8, context=1024, tp=1, pp=4))
    assert four.seconds == pytest.approx(one.seconds)


def test_measured_rates_replace_datasheet_peaks() -> None:
    gpu = _gpu("mi300x")
    measured = MeasuredRates(mem_bw_gbs=4000.0, tflops_bf16=600.0, source="bench.json")
    rates = _rates(gpu.id, precision=parse_precision("fp8"), measured=measured)
    assert rates.measured and rates.label == "measured"
    assert rates.mem_bw_gbs == 4000.0
    assert rates.tflops == pytest.approx(600.0 * 2614.9 / 1307.4)


def test_gpus_without_fp8_units_compute_fp8_at_the_16_bit_rate() -> None:
    rates = _rates("a100", precision=parse_precision("fp8"))
    assert rates.tflops == pytest.approx(312 * COMPUTE_EFFICIENCY)
    assert "no FP8" in rates.note


# --- the engine-aware terms ----------------------------------------------------------------


def test_every_decode_step_pays_the_engines_fixed_overhead() -> None:
    spec = load_model("llama-3.2-1b")  # 16 layers
    rates = replace(_rates("h200"), token_overhead_s=2e-3, sequence_overhead_s=20e-6)
    step = decode_step(DecodeCase(spec, BF16, KV, rates, batch=1, context=256, tp=1, pp=1))
    # 2 ms per step of 32 layers -> 1 ms for 16 layers, plus 20 us for the one sequence.
    assert step.overhead_s == pytest.approx(1e-3 + 20e-6)
    assert step.seconds == pytest.approx(step.memory_s + 1.02e-3)
    # A 1B model on an H200 reads its weights in well under a millisecond: the overhead,
    # not the bandwidth, sets the pace (the "2.6-2.9x too fast" rows).
    assert step.memory_s < 1e-3
    assert step.bound == "overhead"
    estimate = estimate_decode(DecodeCase(spec, BF16, KV, rates, batch=1, context=256, tp=1, pp=1))
    assert estimate.tokens_per_s < 1 / 1.02e-3
    # A 32-layer model pays the full 2 ms.
    eight = decode_step(
        DecodeCase(load_model("llama-3.1-8b"), BF16, KV, rates, batch=1, context=256, tp=1, pp=1)
    )
    assert eight.overhead_s == pytest.approx(2e-3 + 20e-6)
    # At a large batch the step's overhead is shared by every sequence; each still pays its own.
    wide = decode_step(DecodeCase(spec, BF16, KV, rates, batch=256, context=256, tp=1, pp=1))
    assert wide.overhead_s == pytest.approx(1e-3 + 256 * 20e-6)
    assert 256 / wide.seconds > 30 / step.seconds  # 256x the sequences, ~4x the time


def test_decode_reads_the_kv_cache_at_the_average_context_of_a_generation() -> None:
    spec = load_model("llama-3.1-8b")
    rates = _rates("h100")
    weights = weight_bytes(spec, BF16)

    def kv_read(step_memory_s: float) -> float:
        return step_memory_s * rates.mem_bw_gbs * 1e9 - weights

    generation = decode_step(DecodeCase(spec, BF16, KV, rates, batch=16, context=8192, tp=1, pp=1))
    half = kv_bytes_per_device(spec, KV, 4096, 16, 1, 1)
    full = kv_bytes_per_device(spec, KV, 8192, 16, 1, 1)
    assert kv_read(generation.memory_s) == pytest.approx(half, rel=1e-6)
    assert kv_read(generation.memory_s) < full
    # With a 6144-token prompt the generation runs from 6144 to 8192: on average 7168.
    prompted = DecodeCase(spec, BF16, KV, rates, batch=16, context=8192, tp=1, pp=1, prompt=6144)
    assert prompted.average_context == 7168
    expected = kv_bytes_per_device(spec, KV, 7168, 16, 1, 1)
    assert kv_read(decode_step(prompted).memory_s) == pytest.approx(expected, rel=1e-6)


def test_engines_differ_on_the_same_gpu() -> None:
    spec = load_model("llama-3.1-8b")
    vllm = _rates("rtx-4090", engine="vllm")
    llama_cpp = _rates("rtx-4090", engine="llama.cpp")
    assert (vllm.engine, llama_cpp.engine) == ("vllm", "llama.cpp")
    # vllm has no profile of its own here: the global one (80% of 1008 GB/s).
    assert vllm.mem_bw_gbs == pytest.approx(1008 * 0.8)
    # llama.cpp on NVIDIA desktop cards: 65% of bandwidth, 45% of the matrix peak, 2 ms per step.
    assert llama_cpp.mem_bw_gbs == pytest.approx(1008 * 0.65)
    assert llama_cpp.token_overhead_s == pytest.approx(2e-3)
    assert llama_cpp.tflops == pytest.approx(vllm.tflops * 0.45 / 0.7)
    # llama.cpp prefills in 512-token physical batches, vLLM in 2048-token chunks.
    small = estimate_prefill(spec, BF16, llama_cpp, context=4096, tp=1, pp=1)
    large = estimate_prefill(spec, BF16, vllm, context=4096, tp=1, pp=1)
    assert (small.chunk_tokens, large.chunk_tokens) == (512, 2048)
    assert small.tokens_per_s < large.tokens_per_s
    assert "llama.cpp on nvidia desktop GPUs" in llama_cpp.efficiency_note


def test_the_default_engine_follows_the_gpu_segment() -> None:
    assert _rates("mi300x").engine == "vllm"
    assert _rates("rx-7900-xtx").engine == "llama.cpp"


def test_an_unknown_engine_is_a_clear_input_error() -> None:
    with pytest.raises(PlanInputError, match=r"unknown engine 'ollama'; choose from vllm"):
        _rates("h100", engine="ollama")


def test_gguf_weights_pay_the_engines_dequantization_factor() -> None:
    q4 = _rates("rtx-4090", precision=parse_precision("Q4_K_M"))
    plain = _rates("rtx-4090")
    assert q4.mem_bw_gbs == pytest.approx(plain.mem_bw_gbs * 0.9)
    assert q4.tflops == pytest.approx(plain.tflops * 0.5)
    # The factor is the engine's own: vLLM's GGUF path has none in these tables.
    vllm_q4 = _rates("rtx-4090", precision=parse_precision("Q4_K_M"), engine="vllm")
    assert vllm_q4.mem_bw_gbs == pytest.approx(1008 * 0.8)


def test_profiles_fall_back_from_the_family_to_wider_groups() -> None:
    # MI300X has its own (vllm, amd, datacenter, cdna3) profile; MI250X (CDNA2) does not and
    # falls back to the global one; llama.cpp on an AMD card to llama.cpp's engine-wide one.
    assert _rates("mi300x").tflops == pytest.approx(1307.4 * 0.5)
    mi250x = _gpu("mi250x")
    assert _rates("mi250x").tflops == pytest.approx(mi250x.fp16_tflops * COMPUTE_EFFICIENCY)
    amd_desktop = _rates("rx-7900-xtx")
    assert amd_desktop.mem_bw_gbs == pytest.approx(_gpu("rx-7900-xtx").mem_bw_gbs * 0.6)


def test_estimates_carry_the_validated_range_of_their_engine_and_class() -> None:
    spec = load_model("llama-3.1-8b")
    rates = _rates("h100")
    decode = estimate_decode(DecodeCase(spec, BF16, KV, rates, batch=8, context=2048, tp=1, pp=1))
    assert decode.uncertainty is not None
    assert (decode.uncertainty.low_factor, decode.uncertainty.high_factor) == (0.8, 1.1)
    assert "vLLM on datacenter GPUs, decode: 12 measurements on 4 GPUs" in decode.uncertainty.basis
    assert decode.range_tokens_per_s == pytest.approx(
        (decode.tokens_per_s * 0.8, decode.tokens_per_s * 1.1)
    )
    # No prefill range for vLLM on datacenter GPUs: the all-engine one applies.
    prefill = estimate_prefill(spec, BF16, rates, context=2048, tp=1, pp=1)
    assert prefill.uncertainty is not None
    assert prefill.range_tokens_per_s == pytest.approx(
        (prefill.tokens_per_s * 0.5, prefill.tokens_per_s * 1.5)
    )
    assert prefill.uncertainty.basis.startswith("every engine on all GPUs, prefill")


def test_measured_rates_keep_the_overhead_but_claim_no_validated_range() -> None:
    measured = MeasuredRates(mem_bw_gbs=3000.0, tflops_bf16=700.0, source="bench.json")
    rates = _rates("h100", measured=measured)
    assert rates.token_overhead_s == pytest.approx(1e-3)
    assert rates.decode_uncertainty is None and rates.prefill_uncertainty is None
    assert "measured rates replace the fitted shares" in rates.efficiency_note


# --- the fit (benchmarks/plan_accuracy.py) agrees with the model and recovers it ------------

COLUMNS = (
    "id,gpu,gpus,tp,engine,engine_version,model,weights,kv_dtype,phase,batch,"
    "prompt_tokens,output_tokens,measured_tokens_per_s,source,published,checked,note"
)
# (gpu, engine, model, weights, phase, batch, prompt, output)
SYNTHETIC = [
    (gpu, "llama.cpp", model, "Q4_K_M", phase, 1, prompt, output)
    for gpu in ("rtx-3090", "rtx-4090", "rtx-5090", "rx-7900-xtx", "radeon-pro-w7900")
    for model in ("llama-3.2-1b", "llama-3.1-8b", "qwen3-32b")
    for phase, prompt, output in (("decode", 0, 128), ("decode", 0, 2048), ("prefill", 512, 0))
] + [
    (gpu, "llama.cpp", "llama-3.1-8b", "Q4_K_M", "decode", 64, 512, 512)
    for gpu in ("rtx-3090", "rtx-4090", "rtx-5090", "rx-7900-xtx", "radeon-pro-w7900")
]


def _accuracy_module():  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import plan_accuracy

    return plan_accuracy


def _estimate(row: tuple[Any, ...], tables: EfficiencyTables) -> float:
    gpu, engine, model, weights, phase, batch, prompt, output = row
    spec, precision = load_model(model), parse_precision(weights)
    rates = achieved_rates(_gpu(gpu), precision, 1, None, engine=engine, tables=tables)
    if phase == "prefill":
        return estimate_prefill(spec, precision, rates, context=prompt, tp=1, pp=1).tokens_per_s
    case = DecodeCase(spec, precision, KV, rates, batch, prompt + output, 1, 1, prompt=prompt)
    return estimate_decode(case).tokens_per_s


def _write_rows(path: Path, rows: list[tuple[Any, ...]], rate: Callable[..., float]) -> None:
    lines = [COLUMNS]
    for number, row in enumerate(rows):
        gpu, engine, model, weights, phase, batch, prompt, output = row
        lines.append(
            f"r{number},{gpu},1,1,{engine},,{model},{weights},fp16,{phase},{batch},{prompt},"
            f"{output},{rate(row):.4f},https://example.org/{number},2026-01-01,2026-11-25,"
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_the_fit_recovers_known_efficiencies_and_predicts_as_the_model_does(
    tmp_path: Path,
) -> None:
    accuracy = _accuracy_module()
    truth = tables_from_document(
        {
            "fit": {"source": "x.csv", "measurements": 1, "checked": DAY},
            "profile": [
                _profile(
                    "*",
                    "*",
                    "*",
                    "*",
                    token_overhead_ms=1.3,
                    sequence_overhead_us=30,
                    bandwidth=0.6,
                )
            ],
        }
    )
    data = tmp_path / "measurements.csv"
    _write_rows(data, SYNTHETIC, lambda row: _estimate(row, truth))
    rows, skipped = accuracy.load_rows(data)
    assert not skipped and len(rows) == len(SYNTHETIC)
    fit = accuracy.fit_rows(rows)
    overhead, per_sequence, bandwidth, matrix = fit.profiles[(ANY, ANY, ANY, ANY)][0]
    assert overhead == pytest.approx(1.3e-3, rel=0.15)
    assert per_sequence == pytest.approx(30e-6, rel=0.25)
    assert bandwidth == pytest.approx(0.6, rel=0.1)
    assert matrix == pytest.approx(0.7, rel=0.1)
    # Leaving each GPU out, the others still pin the same model down.
    outcomes = accuracy.leave_one_gpu_out(rows)
    assert statistics.median(o.error for o in outcomes) < 0.05
    # The tables the fit writes give, through plan/speed.py, the fit's own predictions.
    written = accuracy.tables_from_fit(fit, outcomes, rows)
    for row, original in zip(rows, SYNTHETIC, strict=True):
        assert _estimate(original, written) == pytest.approx(fit.predict(row), rel=1e-9)
    assert accuracy.main(["--data", str(data), "--check"]) == 0


def test_the_check_fails_when_estimates_are_far_off(tmp_path: Path) -> None:
    accuracy = _accuracy_module()
    data = tmp_path / "measurements.csv"
    # One GPU twice as fast as the model allows, another half as fast, and so on: no single
    # set of efficiencies fits, so leaving a GPU out predicts it badly.
    factors = {"rtx-3090": 3.0, "rtx-4090": 0.3, "rtx-5090": 3.0, "rx-7900-xtx": 0.3}
    _write_rows(
        data,
        SYNTHETIC,
        lambda row: _estimate(row, TABLES) * factors.get(row[0], 1.0),
    )
    assert accuracy.main(["--data", str(data), "--check"]) == 1
    assert accuracy.main(["--data", str(tmp_path / "missing.csv")]) == 2
