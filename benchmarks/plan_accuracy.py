"""How far `gpuport plan`'s estimates are from published measured throughputs.

Recomputes the table in benchmarks/plan_accuracy.md from the planner's own functions and
the measured figures below (each with its source). Prints Markdown; with --check it exits
1 when an estimate has drifted more than MAX_ERROR from its measurement.

    .venv/bin/python benchmarks/plan_accuracy.py [--check]
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

from gpuport.plan.catalog import GPUS_PER_NODE, find_gpu
from gpuport.plan.memory import breakdown, max_sequences
from gpuport.plan.model_spec import load_model
from gpuport.plan.precision import parse_kv_dtype, parse_precision
from gpuport.plan.speed import DecodeCase, achieved_rates, decode_step, estimate_prefill

# MLPerf Inference Llama-2-70B (OpenOrca): MLPerf checks ~294 generated tokens per sample
# (TOKENS_PER_SAMPLE 294.45 +-10%); the prompt length is our assumption of the same order.
MLPERF_OUTPUT_TOKENS = 294
MLPERF_PROMPT_TOKENS = 300
# Offline runs batch as wide as memory allows; serving engines cap the running batch.
MAX_BATCH = 1024
# An estimate further off than this (either way) fails --check; the worst today is 73%
# (llama.cpp prefill on RDNA3), see plan_accuracy.md.
MAX_ERROR = 0.8

MLPERF_V41 = "https://github.com/mlcommons/inference_results_v4.1/blob/main/closed"


@dataclass(frozen=True)
class Measurement:
    label: str
    model: str
    gpu: str
    gpus: int  # devices in the measured system
    precision: str
    kv_dtype: str
    kind: str  # "offline" (MLPerf-style serving throughput) or "decode-b1" or "prefill"
    measured_tokens_per_s: float
    source: str
    prompt: int = MLPERF_PROMPT_TOKENS
    output: int = MLPERF_OUTPUT_TOKENS


MEASUREMENTS = (
    Measurement(
        "MLPerf v4.1 Llama-2-70B offline, 8x H100 SXM (TensorRT-LLM, FP8)",
        "llama-2-70b",
        "h100-sxm",
        8,
        "fp8",
        "fp8",
        "offline",
        24524.9,
        f"{MLPERF_V41}/NVIDIA/results/DGX-H100_H100-SXM-80GBx8_TRT/llama2-70b-99.9/Offline/"
        "performance/run_1/mlperf_log_summary.txt",
    ),
    Measurement(
        "MLPerf v4.1 Llama-2-70B offline, 8x H200 (TensorRT-LLM, FP8)",
        "llama-2-70b",
        "h200-sxm",
        8,
        "fp8",
        "fp8",
        "offline",
        31302.7,
        f"{MLPERF_V41}/NVIDIA/results/H200-SXM-141GBx8_TRT/llama2-70b-99/Offline/"
        "performance/run_1/mlperf_log_summary.txt",
    ),
    Measurement(
        "MLPerf v4.1 Llama-2-70B offline, 8x MI300X (vLLM, FP8)",
        "llama-2-70b",
        "mi300x",
        8,
        "fp8",
        "fp8",
        "offline",
        23514.8,
        f"{MLPERF_V41}/AMD/results/8xMI300X_2xEPYC-9374F/llama2-70b-99/Offline/"
        "performance/run_1/mlperf_log_summary.txt",
    ),
    Measurement(
        "MLPerf v4.1 Llama-2-70B offline, 1x MI300X (vLLM, FP8)",
        "llama-2-70b",
        "mi300x",
        1,
        "fp8",
        "fp8",
        "offline",
        3062.72,
        f"{MLPERF_V41}/AMD/results/1xMI300X_2xEPYC-9374F/llama2-70b-99.9/Offline/"
        "performance/run_1/mlperf_log_summary.txt",
    ),
    Measurement(
        "MLPerf v4.1 Mixtral-8x7B offline, 8x H100 SXM (TensorRT-LLM, FP8)",
        "mixtral-8x7b",
        "h100-sxm",
        8,
        "fp8",
        "fp8",
        "offline",
        52415.9,
        f"{MLPERF_V41}/NVIDIA/results/DGX-H100_H100-SXM-80GBx8_TRT/mixtral-8x7b/Offline/"
        "performance/run_1/mlperf_log_summary.txt",
        prompt=MLPERF_PROMPT_TOKENS,
        output=146,  # 52415.9 tokens/s / 359.173 samples/s
    ),
    Measurement(
        "llama.cpp Llama-3.1-8B Q4_K_M, batch 1 (tg64), RX 7900 XTX (ROCm)",
        "llama-3.1-8b",
        "rx-7900-xtx",
        1,
        "Q4_K_M",
        "fp16",
        "decode-b1",
        105.75,
        "https://github.com/ggml-org/llama.cpp/pull/26284",
        prompt=0,
        output=64,
    ),
    Measurement(
        "llama.cpp Llama-3-8B Q6_K, batch 1, RTX 4090 (CUDA)",
        "llama-3.1-8b",
        "rtx-4090",
        1,
        "Q6_K",
        "fp16",
        "decode-b1",
        93.0,
        "https://github.com/dmatora/LLM-inference-speed-benchmarks/issues/10",
        prompt=0,
        output=128,
    ),
    Measurement(
        "llama.cpp Llama-3.1-8B Q4_K_M, prompt 2048 (pp2048), RX 7900 XTX (ROCm)",
        "llama-3.1-8b",
        "rx-7900-xtx",
        1,
        "Q4_K_M",
        "fp16",
        "prefill",
        3189.36,
        "https://github.com/ggml-org/llama.cpp/pull/26284",
        prompt=2048,
        output=0,
    ),
)


@dataclass(frozen=True)
class Estimate:
    tokens_per_s: float
    layout: str
    bound: str


def _offline(m: Measurement) -> Estimate:
    """Best tokens/s of the system over TP layouts: continuous batching at the widest
    batch that fits, each sequence prefilling its prompt and decoding its output."""
    spec = load_model(m.model)
    gpu = find_gpu(m.gpu)
    assert gpu is not None
    precision = parse_precision(m.precision)
    kv = parse_kv_dtype(m.kv_dtype)
    context = m.prompt + m.output
    average_context = m.prompt + m.output // 2
    best: Estimate | None = None
    for tp in (1, 2, 4, 8):
        if tp > min(m.gpus, GPUS_PER_NODE) or spec.num_heads % tp:
            continue
        memory = breakdown(
            spec, gpu, precision, kv, context=context, batch=1, tp=tp, pp=1, utilization=0.9
        )
        batch = min(max_sequences(spec, kv, memory, context, tp, 1), MAX_BATCH)
        if batch < 1:
            continue
        rates = achieved_rates(gpu, precision, tp, None)
        step = decode_step(
            DecodeCase(
                spec, precision, kv, rates, batch=batch, context=average_context, tp=tp, pp=1
            )
        )
        prefill = estimate_prefill(spec, precision, rates, context=m.prompt, tp=tp, pp=1)
        # Per decode step, batch/output sequences finish and as many prompts are prefilled.
        seconds = step.seconds + batch * m.prompt / m.output / prefill.tokens_per_s
        replica = batch / seconds
        total = replica * (m.gpus // tp)
        if best is None or total > best.tokens_per_s:
            best = Estimate(total, f"{m.gpus // tp}x TP{tp}, batch {batch}", step.bound)
    assert best is not None
    return best


def _single(m: Measurement) -> Estimate:
    spec = load_model(m.model)
    gpu = find_gpu(m.gpu)
    assert gpu is not None
    precision = parse_precision(m.precision)
    kv = parse_kv_dtype(m.kv_dtype)
    rates = achieved_rates(gpu, precision, 1, None)
    if m.kind == "prefill":
        prefill = estimate_prefill(spec, precision, rates, context=m.prompt, tp=1, pp=1)
        return Estimate(prefill.tokens_per_s, "1 GPU", prefill.bound)
    step = decode_step(
        DecodeCase(
            spec, precision, kv, rates, batch=1, context=m.prompt + m.output // 2, tp=1, pp=1
        )
    )
    return Estimate(1.0 / step.seconds, "1 GPU, batch 1", step.bound)


def estimate(m: Measurement) -> Estimate:
    return _offline(m) if m.kind == "offline" else _single(m)


def table() -> tuple[str, float]:
    lines = [
        "| measurement | measured tok/s | estimated tok/s | error | layout | bound |",
        "|---|---:|---:|---:|---|---|",
    ]
    worst = 0.0
    for m in MEASUREMENTS:
        e = estimate(m)
        error = e.tokens_per_s / m.measured_tokens_per_s - 1
        worst = max(worst, abs(error))
        lines.append(
            f"| [{m.label}]({m.source}) | {m.measured_tokens_per_s:,.0f} | "
            f"{e.tokens_per_s:,.0f} | {error:+.0%} | {e.layout} | {e.bound} |"
        )
    return "\n".join(lines), worst


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--check", action="store_true", help=f"fail beyond {MAX_ERROR:.0%}")
    args = parser.parse_args()
    text, worst = table()
    print(text)
    print(f"\nlargest error: {worst:.0%}")
    if args.check and worst > MAX_ERROR:
        print(f"an estimate is more than {MAX_ERROR:.0%} off", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
