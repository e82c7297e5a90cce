"""The suite's workloads: each yields result records, one per shape, dtype or backend.

A workload never stops the suite: a shape that runs out of memory is skipped with a note and
the next one runs; an error is a failed record with its message. Only Ctrl-C goes through.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from gpuport.bench.device import Device
from gpuport.bench.store import ResultRecord
from gpuport.bench.timing import TimingPlan


@dataclass(frozen=True, slots=True)
class SuiteOptions:
    """What the user asked of the suite."""

    quick: bool = False
    search: bool = False
    model: str | None = None  # a plan preset for the decode and training workloads
    timing: TimingPlan = field(default_factory=TimingPlan)


class Workload(Protocol):
    name: str
    summary: str

    def run(self, device: Device, options: SuiteOptions) -> Iterator[ResultRecord]: ...


class Unsupported(Exception):
    """This device or torch cannot run the measurement: a skipped record with the reason."""


def fraction(value: float, peak: float | None) -> float | None:
    return value / peak if peak else None


def attempt(
    device: Device,
    workload: str,
    name: str,
    params: Mapping[str, object],
    measure: Callable[[], tuple[dict[str, float | None], str]],
) -> ResultRecord:
    """Run one measurement; out of memory is a skipped record, an error a failed one."""
    try:
        metrics, note = measure()
    except KeyboardInterrupt:
        raise
    except Unsupported as exc:
        return ResultRecord(workload, name, dict(params), {}, "skipped", str(exc)[:500])
    except Exception as exc:
        device.empty_cache()
        if device.is_oom(exc):
            return ResultRecord(
                workload, name, dict(params), {}, "skipped", "out of memory at this shape: skipped"
            )
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return ResultRecord(workload, name, dict(params), {}, "failed", first[:500])
    return ResultRecord(workload, name, dict(params), metrics, "ok", note)


def skipped(workload: str, name: str, params: Mapping[str, object], why: str) -> ResultRecord:
    return ResultRecord(workload, name, dict(params), {}, "skipped", why)


def all_workloads() -> dict[str, Workload]:
    """Every workload by name, in the order the suite runs them."""
    from gpuport.bench.workloads.attention import AttentionWorkload
    from gpuport.bench.workloads.bandwidth import BandwidthWorkload
    from gpuport.bench.workloads.decode import DecodeWorkload
    from gpuport.bench.workloads.matmul import MatmulWorkload
    from gpuport.bench.workloads.training import TrainingWorkload

    workloads: list[Workload] = [
        MatmulWorkload(),
        BandwidthWorkload(),
        AttentionWorkload(),
        DecodeWorkload(),
        TrainingWorkload(),
    ]
    return {w.name: w for w in workloads}


WORKLOAD_NAMES = ("matmul", "bandwidth", "attention", "decode", "training")
