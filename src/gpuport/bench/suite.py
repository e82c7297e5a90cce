"""Run the workload suite on this machine and store every result as it is measured.

The run is begun in the store before the first workload and each result is committed as it
comes, so Ctrl-C (or a crash) keeps everything measured so far, with the run marked
incomplete. Workloads never stop the suite: a shape out of memory is skipped, an error recorded.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gpuport.bench.device import Device, telemetry, unknown_device_note
from gpuport.bench.store import ResultRecord, ResultsStore
from gpuport.bench.workloads import WORKLOAD_NAMES, SuiteOptions, all_workloads


@dataclass(frozen=True, slots=True)
class SuiteOutcome:
    run_id: str
    complete: bool


def suite_settings(
    device: Device, options: SuiteOptions, names: Sequence[str]
) -> dict[str, object]:
    notes = []
    if device.peaks.gpu_id is None:
        notes.append(unknown_device_note(device.machine))
    return {
        "quick": options.quick,
        "search": options.search,
        "model": options.model,
        "workloads": list(names),
        "device": device.name,
        "catalog_gpu": device.peaks.gpu_id,
        "timing": {"warmup": options.timing.warmup, "repeats": options.timing.repeats},
        "notes": notes,
    }


def run_suite(
    store: ResultsStore,
    device: Device,
    options: SuiteOptions,
    *,
    names: Sequence[str] = WORKLOAD_NAMES,
    label: str | None = None,
    progress: Callable[[ResultRecord], None] | None = None,
    on_begin: Callable[[str], object] | None = None,
    on_workload: Callable[[str], object] | None = None,
) -> SuiteOutcome:
    """Run ``names`` (in suite order) and store the run; returns its id.

    ``on_workload`` is told each workload's name as it starts (a progress display), and
    ``progress`` each result as it is stored. KeyboardInterrupt is re-raised after the run is
    marked incomplete.
    """
    workloads = all_workloads()
    chosen = [name for name in WORKLOAD_NAMES if name in names]
    run_id = store.begin(
        "micro", device.machine, label=label, settings=suite_settings(device, options, chosen)
    )
    if on_begin is not None:
        on_begin(run_id)
    try:
        before, _ = telemetry(device)
        for name in chosen:
            if on_workload is not None:
                on_workload(name)
            for record in workloads[name].run(device, options):
                store.add(run_id, record)
                if progress is not None:
                    progress(record)
        after, note = telemetry(device)
        metrics: dict[str, float | None] = {f"{k}_start": v for k, v in before.items()}
        metrics.update({f"{k}_end": v for k, v in after.items()})
        store.add(
            run_id,
            ResultRecord(
                "telemetry",
                "clocks, power, temperature",
                {},
                metrics,
                "ok" if metrics else "skipped",
                note,
            ),
        )
    except BaseException:
        store.finish(run_id, complete=False)
        raise
    store.finish(run_id, complete=True)
    return SuiteOutcome(run_id, True)
