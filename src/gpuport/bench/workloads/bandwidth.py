"""Memory bandwidth: copy, scale, add, triad and dot (the STREAM kernels) on large arrays.

STREAM's rule (https://www.cs.virginia.edu/stream/ref.html) is arrays at least four times the
last-level cache; the largest cache among the catalog's GPUs is MI300X's 256 MiB Infinity
Cache, so on a GPU each array is 1 GiB (4x that), or an eighth of the device's memory when
that is less. Bytes counted: what each kernel reads plus what it writes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any

from gpuport.bench.device import Device
from gpuport.bench.store import ResultRecord
from gpuport.bench.timing import measure
from gpuport.bench.workloads import SuiteOptions, attempt, fraction

KERNELS = ("copy", "scale", "add", "triad", "dot")
ARRAY_BYTES_GPU = 1 << 30
ARRAY_BYTES_GPU_QUICK = 1 << 30
ARRAY_BYTES_CPU = 256 << 20
ARRAY_BYTES_CPU_QUICK = 64 << 20


def array_bytes(device: Device, quick: bool) -> int:
    if device.is_gpu:
        size = ARRAY_BYTES_GPU_QUICK if quick else ARRAY_BYTES_GPU
        memory = device.machine.device_memory_bytes
        return min(size, memory // 8) if memory else size
    return ARRAY_BYTES_CPU_QUICK if quick else ARRAY_BYTES_CPU


class BandwidthWorkload:
    name = "bandwidth"
    summary = "memory bandwidth: copy, scale, add, triad, dot (GB/s)"

    def run(self, device: Device, options: SuiteOptions) -> Iterator[ResultRecord]:
        size = array_bytes(device, options.quick)
        state: dict[str, Any] = {}

        def arrays() -> tuple[Any, Any, Any]:
            if not state:
                torch = device.torch
                n = size // 4
                state["a"] = torch.rand(n, device=device.name, dtype=torch.float32)
                state["b"] = torch.rand(n, device=device.name, dtype=torch.float32)
                state["c"] = torch.empty(n, device=device.name, dtype=torch.float32)
            return state["a"], state["b"], state["c"]

        for kernel in KERNELS:
            params = {"kernel": kernel, "array_mib": size >> 20, "dtype": "fp32"}
            yield attempt(
                device,
                self.name,
                f"bandwidth {kernel}",
                params,
                functools.partial(self._one, device, kernel, size, arrays, options),
            )
        state.clear()
        device.empty_cache()

    def _one(
        self,
        device: Device,
        kernel: str,
        size: int,
        arrays: Callable[[], tuple[Any, Any, Any]],
        options: SuiteOptions,
    ) -> tuple[dict[str, float | None], str]:
        torch = device.torch
        a, b, c = arrays()
        work: Callable[[], object]
        if kernel == "copy":
            work, moved = (lambda: c.copy_(a)), 2
        elif kernel == "scale":
            work, moved = (lambda: torch.mul(a, 3.0, out=c)), 2
        elif kernel == "add":
            work, moved = (lambda: torch.add(a, b, out=c)), 3
        elif kernel == "triad":
            work, moved = (lambda: torch.add(a, b, alpha=3.0, out=c)), 3
        else:
            work, moved = (lambda: torch.dot(a, b)), 2
        samples = measure(device, work, options.timing)
        gbs = moved * size / samples.median / 1e9
        peak = device.peaks.mem_bw_gbs
        return {
            "gbs": gbs,
            "gbs_best": moved * size / samples.best / 1e9,
            "seconds": samples.median,
            "spread": samples.spread,
            "peak_gbs": peak,
            "fraction_of_peak": fraction(gbs, peak),
        }, ""
