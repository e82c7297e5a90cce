"""``scaled_dot_product_attention`` at prefill and decode shapes, per backend available.

Each backend PyTorch offers (flash, memory-efficient, cuDNN, math) is forced in turn with
``torch.nn.attention.sdpa_kernel``; one the device or shape does not support is skipped with
PyTorch's reason. FLOPs: 4·B·H·Sq·Skv·D (QKᵀ and PV), halved for a causal prefill.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Iterator
from typing import Any

from gpuport.bench.device import Device
from gpuport.bench.store import ResultRecord
from gpuport.bench.timing import measure
from gpuport.bench.workloads import (
    SuiteOptions,
    Unsupported,
    attempt,
    fraction,
    skipped,
)

BACKENDS = ("FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION", "MATH")
_LABEL = {
    "FLASH_ATTENTION": "flash",
    "EFFICIENT_ATTENTION": "mem-efficient",
    "CUDNN_ATTENTION": "cudnn",
    "MATH": "math",
}


def shapes(device: Device, quick: bool) -> list[tuple[str, int, int, int, int, int]]:
    """(phase, batch, heads, query length, key length, head dim)."""
    if device.is_gpu:
        if quick:
            return [("prefill", 2, 32, 2048, 2048, 128), ("decode", 32, 32, 1, 4096, 128)]
        return [("prefill", 4, 32, 4096, 4096, 128), ("decode", 64, 32, 1, 8192, 128)]
    if quick:
        return [("prefill", 1, 8, 256, 256, 64), ("decode", 8, 8, 1, 1024, 64)]
    return [("prefill", 1, 8, 1024, 1024, 64), ("decode", 16, 8, 1, 2048, 64)]


class AttentionWorkload:
    name = "attention"
    summary = "scaled_dot_product_attention, prefill and decode, per backend (TFLOPS)"

    def run(self, device: Device, options: SuiteOptions) -> Iterator[ResultRecord]:
        torch = device.torch
        try:
            from torch.nn.attention import SDPBackend, sdpa_kernel
        except ImportError:
            yield skipped(self.name, "attention", {}, "this torch has no torch.nn.attention")
            return
        dtype_name = "bf16" if device.is_gpu else "fp32"
        dtype = torch.bfloat16 if device.is_gpu else torch.float32
        for phase, b, h, sq, skv, d in shapes(device, options.quick):
            for backend in BACKENDS:
                if not hasattr(SDPBackend, backend):
                    continue
                label = _LABEL[backend]
                params = {
                    "phase": phase,
                    "backend": label,
                    "batch": b,
                    "heads": h,
                    "q_len": sq,
                    "kv_len": skv,
                    "head_dim": d,
                    "dtype": dtype_name,
                }
                name = f"attention {phase} {label}"
                if backend == "CUDNN_ATTENTION" and not device.is_gpu:
                    continue
                yield attempt(
                    device,
                    self.name,
                    name,
                    params,
                    functools.partial(
                        self._one,
                        device,
                        sdpa_kernel,
                        getattr(SDPBackend, backend),
                        phase,
                        (b, h, sq, skv, d),
                        dtype,
                        dtype_name,
                        options,
                    ),
                )

    def _one(
        self,
        device: Device,
        sdpa_kernel: Any,
        backend: Any,
        phase: str,
        shape: tuple[int, int, int, int, int],
        dtype: Any,
        dtype_name: str,
        options: SuiteOptions,
    ) -> tuple[dict[str, float | None], str]:
        torch = device.torch
        b, h, sq, skv, d = shape
        q = torch.randn(b, h, sq, d, device=device.name, dtype=dtype)
        k = torch.randn(b, h, skv, d, device=device.name, dtype=dtype)
        v = torch.randn(b, h, skv, d, device=device.name, dtype=dtype)
        causal = phase == "prefill"
        sdpa = torch.nn.functional.scaled_dot_product_attention
        with sdpa_kernel(backend), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch warns, then raises, for a missing kernel
            try:
                sdpa(q, k, v, is_causal=causal)
            except RuntimeError as exc:
                if device.is_oom(exc):
                    raise
                reason = (str(exc).strip().splitlines() or ["no kernel"])[0].split(". ")[0]
                if "No viable backend" in reason:  # torch's words, too long for a table cell
                    reason = "PyTorch has no kernel of it for this device, dtype and shape"
                raise Unsupported(f"this backend cannot run here: {reason}") from None
            samples = measure(device, lambda: sdpa(q, k, v, is_causal=causal), options.timing)
        flops = 4.0 * b * h * sq * skv * d / (2 if causal else 1)
        tflops = flops / samples.median / 1e12
        peak = device.peaks.tflops.get(dtype_name)
        moved = (q.numel() * 2 + k.numel() + v.numel()) * q.element_size()
        return {
            "tflops": tflops,
            "gbs": moved / samples.median / 1e9,
            "seconds": samples.median,
            "spread": samples.spread,
            "peak_tflops": peak,
            "fraction_of_peak": fraction(tflops, peak),
        }, ""
