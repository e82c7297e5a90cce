"""Matrix multiply per dtype over a shape sweep, and ``--search`` for the best shape.

TFLOPS = 2·M·N·K / time. The output is rewritten in place each iteration (``out=``) so that no
allocation is timed. ``--search`` follows AMD's max-achievable-FLOPs method
(https://rocm.blogs.amd.com/software-tools-optimization/measuring-max-achievable-flops-part2/README.html):
random inputs, many shapes, the last-level cache flushed between timed iterations and a warm-up
long enough for clocks to settle; the best shape it finds is the figure a sweep is judged by.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Iterator
from typing import Any

from gpuport.bench.device import Device
from gpuport.bench.store import ResultRecord
from gpuport.bench.timing import TimingPlan, measure
from gpuport.bench.workloads import SuiteOptions, attempt, fraction, skipped

DTYPES = ("fp32", "tf32", "bf16", "fp16", "fp8")
_TORCH_DTYPE = {"fp32": "float32", "tf32": "float32", "bf16": "bfloat16", "fp16": "float16"}
# Bytes zeroed between --search iterations to evict the last-level cache: twice the largest
# cache in the catalog's GPUs (MI300X's 256 MiB Infinity Cache) on a GPU.
FLUSH_BYTES_GPU = 512 << 20
FLUSH_BYTES_CPU = 64 << 20
# --search on the CPU: (step, smallest, largest) size of M, N and K.
SEARCH_CPU = (128, 128, 768)


def shapes(device: Device, quick: bool) -> list[tuple[int, int, int]]:
    if device.is_gpu:
        sizes = [2048, 4096] if quick else [1024, 2048, 4096, 8192]
        extra = [] if quick else [(8192, 8192, 1024), (16384, 8192, 1024)]
    else:
        sizes = [128, 256] if quick else [256, 512, 1024]
        extra = []
    return [(s, s, s) for s in sizes] + extra


def unavailable(device: Device, dtype: str) -> str | None:
    """Why ``dtype`` cannot be measured on this device, or None."""
    torch = device.torch
    if dtype == "tf32":
        if not device.is_gpu:
            return "TF32 is a GPU matrix-unit mode: not measured on the CPU"
        if device.is_rocm:
            return "TF32 is measured on NVIDIA GPUs only (ROCm builds do not route fp32 to it)"
        if torch.cuda.get_device_capability(0)[0] < 8:
            return "this GPU has no TF32 (NVIDIA Ampere, sm_80, and later)"
    if dtype == "fp8":
        if not device.is_gpu:
            return "no FP8 matrix units on the CPU"
        if not hasattr(torch, "_scaled_mm"):
            return "this torch has no FP8 matrix multiply (torch._scaled_mm)"
        arch = device.machine.device_arch or ""
        if device.is_rocm:
            if not arch.startswith(("gfx94", "gfx95", "gfx12")):
                return f"{arch or 'this GPU'} has no FP8 matrix units"
        elif torch.cuda.get_device_capability(0) < (8, 9):
            return f"{arch or 'this GPU'} has no FP8 matrix units (NVIDIA Ada and Hopper on)"
    return None


def _operands(device: Device, dtype: str, m: int, n: int, k: int) -> Callable[[], object]:
    torch = device.torch
    if dtype == "fp8":
        fp8 = torch.float8_e4m3fnuz if device.is_rocm else torch.float8_e4m3fn
        a = torch.randn(m, k, device=device.name).to(fp8)
        b = torch.randn(n, k, device=device.name).to(fp8).t()  # column-major, as _scaled_mm wants
        one = torch.tensor(1.0, device=device.name)
        return lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    kind = getattr(torch, _TORCH_DTYPE[dtype])
    a = torch.randn(m, k, device=device.name, dtype=kind)
    b = torch.randn(k, n, device=device.name, dtype=kind)
    c = torch.empty(m, n, device=device.name, dtype=kind)
    return lambda: torch.matmul(a, b, out=c)


class _Tf32:
    """TF32 on for fp32 matmuls inside the block, as it was afterwards."""

    def __init__(self, torch: Any, on: bool) -> None:
        self.torch, self.on = torch, on

    def __enter__(self) -> None:
        self.before = self.torch.backends.cuda.matmul.allow_tf32
        self.torch.backends.cuda.matmul.allow_tf32 = self.on

    def __exit__(self, *exc: object) -> None:
        self.torch.backends.cuda.matmul.allow_tf32 = self.before


def _one(
    device: Device,
    dtype: str,
    shape: tuple[int, int, int],
    plan: TimingPlan,
    flush: Callable[[], object] | None = None,
) -> tuple[dict[str, float | None], str]:
    m, n, k = shape
    with _Tf32(device.torch, dtype == "tf32"):
        work = _operands(device, dtype, m, n, k)
        samples = measure(device, work, plan, before=flush)
    flops = 2.0 * m * n * k
    tflops = flops / samples.median / 1e12
    peak = device.peaks.tflops.get(dtype)
    metrics: dict[str, float | None] = {
        "tflops": tflops,
        "tflops_best": flops / samples.best / 1e12,
        "seconds": samples.median,
        "spread": samples.spread,
        "peak_tflops": peak,
        "fraction_of_peak": fraction(tflops, peak),
    }
    note = "" if peak or not device.peaks.gpu_id else device.peaks.notes.get(dtype, "")
    return metrics, note


class MatmulWorkload:
    name = "matmul"
    summary = "matrix multiply per dtype over a shape sweep (TFLOPS)"

    def run(self, device: Device, options: SuiteOptions) -> Iterator[ResultRecord]:
        for dtype in DTYPES:
            why = unavailable(device, dtype)
            if why is not None:
                yield skipped(self.name, f"matmul {dtype}", {"dtype": dtype}, why)
                continue
            for m, n, k in shapes(device, options.quick):
                params = {"dtype": dtype, "m": m, "n": n, "k": k}
                yield attempt(
                    device,
                    self.name,
                    f"matmul {dtype} {m}x{n}x{k}",
                    params,
                    functools.partial(_one, device, dtype, (m, n, k), options.timing),
                )
        if options.search:
            yield from self.search(device, options)

    def search(self, device: Device, options: SuiteOptions) -> Iterator[ResultRecord]:
        """Hunt the best bf16 shape: random multiples of the tile size, the cache flushed."""
        torch = device.torch
        rng = random.Random(0)  # the same shapes on every machine, so runs compare
        if device.is_gpu:
            step, low, high, trials = 256, 2048, 16384, 8 if options.quick else 40
            flush_bytes = FLUSH_BYTES_GPU
            plan = TimingPlan(
                warmup=5, repeats=10, warmup_seconds=2.0 if not options.quick else 0.5
            )
        else:
            step, low, high = SEARCH_CPU
            trials = 4 if options.quick else 12
            flush_bytes = FLUSH_BYTES_CPU
            plan = TimingPlan(warmup=1, repeats=3)
        flush_buffer = torch.empty(flush_bytes // 4, device=device.name, dtype=torch.float32)
        candidates = [(s, s, s) for s in range(low, high + 1, max(step, (high - low) // 4))]
        while len(candidates) < trials:
            m, n, k = (rng.randrange(low, high + 1, step) for _ in range(3))
            candidates.append((m, n, k))
        best: tuple[float, tuple[int, int, int], dict[str, float | None]] | None = None
        failures = 0
        for shape in candidates[:trials]:
            try:
                metrics, _ = _one(device, "bf16", shape, plan, flush=flush_buffer.zero_)
            except KeyboardInterrupt:
                raise
            except Exception:
                device.empty_cache()
                failures += 1
                continue
            tflops = metrics["tflops"] or 0.0
            if best is None or tflops > best[0]:
                best = (tflops, shape, metrics)
        del flush_buffer
        if best is None:
            yield skipped(self.name, "matmul bf16 search", {"dtype": "bf16"}, "no shape ran")
            return
        m, n, k = best[1]
        note = f"best of {trials - failures} shapes tried, last-level cache flushed between runs"
        yield ResultRecord(
            self.name,
            "matmul bf16 search",
            {"dtype": "bf16", "m": m, "n": n, "k": k, "search": True},
            best[2],
            "ok",
            note,
        )
