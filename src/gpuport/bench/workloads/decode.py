"""Decode and prefill of a Llama-shaped model: tokens/s and the share of the bandwidth roofline.

Each decode step reads every weight once and each sequence's KV cache, so a step cannot be
faster than (weight bytes + KV bytes) / peak memory bandwidth: that is the roofline, and the
measured rate over it is the share ``gpuport plan`` calls the bandwidth efficiency. The
prefill rate is prompt tokens per second at batch 1, with its matmul TFLOPS.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

from gpuport.bench.device import Device
from gpuport.bench.store import ResultRecord
from gpuport.bench.timing import TimingPlan, measure
from gpuport.bench.workloads import SuiteOptions, attempt, fraction, skipped
from gpuport.bench.workloads.model import Shape, UnknownModel, build, new_caches, shape_for


def settings(device: Device, quick: bool) -> tuple[list[int], int, int, int]:
    """(batch sizes, prompt tokens, decode steps, prefill tokens)."""
    if device.is_gpu:
        return ([1, 16, 64], 128, 32, 2048) if quick else ([1, 8, 32, 128], 512, 64, 4096)
    return ([1, 4], 32, 8, 128) if quick else ([1, 4, 16], 64, 16, 256)


class DecodeWorkload:
    name = "decode"
    summary = "decode loop of a Llama-shaped model per batch size (tokens/s, roofline share)"

    def run(self, device: Device, options: SuiteOptions) -> Iterator[ResultRecord]:
        torch = device.torch
        try:
            shape = shape_for(options.model, device.is_gpu, options.quick)
        except UnknownModel as exc:
            yield skipped(self.name, "decode", {"model": options.model or ""}, str(exc))
            return
        dtype, dtype_name = (torch.bfloat16, "bf16") if device.is_gpu else (torch.float32, "fp32")
        batches, prompt, steps, prefill_tokens = settings(device, options.quick)
        state: dict[str, Any] = {}

        def model() -> Any:
            if "model" not in state:
                state["model"] = build(torch, shape, device.name, dtype)
            return state["model"]

        plan = TimingPlan(warmup=1, repeats=2 if options.quick else 3)
        base = {"model": shape.name, "dtype": dtype_name, "params": shape.params()}
        with torch.inference_mode():
            for batch in batches:
                params = {**base, "batch": batch, "prompt": prompt, "steps": steps}
                yield attempt(
                    device,
                    self.name,
                    f"decode batch {batch}",
                    params,
                    functools.partial(
                        self._decode, device, model, shape, batch, prompt, steps, dtype, plan
                    ),
                )
            params = {**base, "batch": 1, "tokens": prefill_tokens}
            yield attempt(
                device,
                self.name,
                "prefill",
                params,
                functools.partial(self._prefill, device, model, shape, prefill_tokens, plan),
            )
        state.clear()
        device.empty_cache()

    def _decode(
        self,
        device: Device,
        model_factory: Any,
        shape: Shape,
        batch: int,
        prompt: int,
        steps: int,
        dtype: Any,
        plan: TimingPlan,
    ) -> tuple[dict[str, float | None], str]:
        torch = device.torch
        model = model_factory()
        caches = new_caches(torch, shape, batch, prompt + steps, device.name, dtype)
        tokens = torch.randint(0, shape.vocab, (batch, prompt), device=device.name)
        model(tokens, caches, 0)

        def loop() -> None:
            nxt = tokens[:, -1:]
            for step in range(steps):
                logits = model(nxt, caches, prompt + step)
                nxt = logits[:, -1:].argmax(dim=-1)

        samples = measure(device, loop, plan)
        tokens_per_s = batch * steps / samples.median
        element = torch.finfo(dtype).bits // 8
        kv_per_token = shape.layers * 2 * shape.kv_heads * shape.head_dim * element
        average_context = prompt + steps / 2
        step_bytes = shape.matmul_params() * element + batch * average_context * kv_per_token
        peak = device.peaks.mem_bw_gbs
        roofline = batch / (step_bytes / (peak * 1e9)) if peak else None
        return {
            "tokens_per_s": tokens_per_s,
            "step_ms": samples.median / steps * 1000,
            "spread": samples.spread,
            "bytes_per_step": float(step_bytes),
            "achieved_gbs": step_bytes * steps / samples.median / 1e9,
            "roofline_tokens_per_s": roofline,
            "fraction_of_peak": fraction(tokens_per_s, roofline),
        }, ""

    def _prefill(
        self, device: Device, model_factory: Any, shape: Shape, length: int, plan: TimingPlan
    ) -> tuple[dict[str, float | None], str]:
        torch = device.torch
        model = model_factory()
        tokens = torch.randint(0, shape.vocab, (1, length), device=device.name)
        samples = measure(device, lambda: model(tokens), plan)
        flops = 2.0 * shape.matmul_params() * length + (
            2.0 * shape.layers * shape.heads * shape.head_dim * length * length
        )
        tflops = flops / samples.median / 1e12
        peak = device.peaks.tflops.get("bf16") if device.is_gpu else None
        return {
            "tokens_per_s": length / samples.median,
            "tflops": tflops,
            "spread": samples.spread,
            "peak_tflops": peak,
            "fraction_of_peak": fraction(tflops, peak),
        }, ""
