"""Timing done the same way for every workload: warm-up, repeated samples, median and spread.

On a GPU each sample is timed with device events (CUDA events; HIP events on ROCm through the
same ``torch.cuda.Event``), which time the kernels and not the host's launch
(https://pytorch.org/docs/stable/generated/torch.cuda.Event.html); on the CPU with
:func:`time.perf_counter`. Work done before each sample (a cache flush) is not timed.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

from gpuport.bench.device import Device


@dataclass(frozen=True, slots=True)
class Samples:
    """Seconds per sample."""

    seconds: tuple[float, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def best(self) -> float:
        return min(self.seconds)

    @property
    def spread(self) -> float:
        """(slowest - fastest) / median: 0.02 means the samples lie within 2% of each other."""
        median = self.median
        return (max(self.seconds) - min(self.seconds)) / median if median > 0 else 0.0


@dataclass(frozen=True, slots=True)
class TimingPlan:
    """How long to measure: warm-up runs and samples, and a floor on warm-up time."""

    warmup: int = 3
    repeats: int = 10
    warmup_seconds: float = 0.0  # keep warming up until this long has passed (clocks settle)


def measure(
    device: Device,
    work: Callable[[], object],
    plan: TimingPlan,
    *,
    before: Callable[[], object] | None = None,
) -> Samples:
    """Time ``work`` ``plan.repeats`` times after warming up; ``before`` runs untimed."""
    started = time.perf_counter()
    done = 0
    while done < plan.warmup or time.perf_counter() - started < plan.warmup_seconds:
        if before is not None:
            before()
        work()
        done += 1
        if done > 10_000:
            break
    device.synchronize()
    seconds: list[float] = []
    if device.is_gpu:
        torch = device.torch
        for _ in range(plan.repeats):
            if before is not None:
                before()
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            work()
            end.record()
            end.synchronize()
            seconds.append(start.elapsed_time(end) / 1000.0)
    else:
        for _ in range(plan.repeats):
            if before is not None:
                before()
            t0 = time.perf_counter()
            work()
            seconds.append(time.perf_counter() - t0)
    return Samples(tuple(s for s in seconds if s > 0) or (1e-9,))
