"""Hand-made bench runs for the report goldens: fixed ids and times, no torch, no clock."""

from __future__ import annotations

from gpuport.bench.results import Comparison, RunList, RunReport, compare
from gpuport.bench.store import ResultRecord, RunSummary, StoredRun
from gpuport.machine import MachineDescription


def _machine(device: str, accelerator: str, arch: str | None, host: str) -> MachineDescription:
    gpu = accelerator != "cpu"
    return MachineDescription(
        hostname=host,
        os="Linux-6.1-x86_64",
        python="3.11.7",
        cpu="AMD EPYC 9454",
        cpu_count=96,
        memory_bytes=1 << 40,
        accelerator=accelerator,
        device_name=device,
        device_arch=arch,
        device_memory_bytes=(192 if accelerator == "rocm" else 80) * (1 << 30) if gpu else None,
        device_count=8 if gpu else 0,
        driver="nvidia 550.54.15" if accelerator == "cuda" else None,
        torch="2.13.0",
        cuda="12.4" if accelerator == "cuda" else None,
        hip="6.2.41133" if accelerator == "rocm" else None,
        gpuport="0.1.0",
        gpuport_revision=None,
    )


def _results(scale: float, peak_tflops: float, peak_gbs: float) -> tuple[ResultRecord, ...]:
    def matmul(dtype: str, size: int, tflops: float) -> ResultRecord:
        return ResultRecord(
            "matmul",
            f"matmul {dtype} {size}x{size}x{size}",
            {"dtype": dtype, "m": size, "n": size, "k": size},
            {"tflops": tflops, "spread": 0.012, "fraction_of_peak": tflops / peak_tflops},
        )

    return (
        matmul("bf16", 4096, 610.0 * scale),
        matmul("bf16", 8192, 702.5 * scale),
        ResultRecord(
            "matmul", "matmul fp8", {"dtype": "fp8"}, {}, "skipped", "out of memory at this shape"
        ),
        ResultRecord(
            "bandwidth",
            "bandwidth copy",
            {"kernel": "copy", "array_mib": 1024},
            {"gbs": 2950.0 * scale, "spread": 0.004, "fraction_of_peak": 2950.0 * scale / peak_gbs},
        ),
        ResultRecord(
            "decode",
            "decode batch 8",
            {"batch": 8, "model": "llama-3.2-1b"},
            {"tokens_per_s": 1530.0 * scale, "spread": 0.03, "fraction_of_peak": 0.41 * scale},
        ),
        ResultRecord(
            "telemetry",
            "clocks, power, temperature",
            {},
            {},
            "skipped",
            "NVML (pip install nvidia-ml-py) not installed: clocks, power, temperature skipped",
        ),
    )


def _run(
    run_id: str,
    machine: MachineDescription,
    label: str,
    scale: float,
    peaks: tuple[float, float],
    *,
    imported: bool,
) -> StoredRun:
    results = _results(scale, *peaks)
    summary = RunSummary(
        id=run_id,
        kind="micro",
        label=label,
        started="2026-11-25T10:00:00+00:00",
        finished="2026-11-25T10:04:10+00:00",
        complete=True,
        imported=imported,
        device_name=machine.device_name,
        accelerator=machine.accelerator,
        hostname=machine.hostname,
        results=len(results),
    )
    return StoredRun(summary, machine, {"quick": False, "notes": []}, results)


def h100_run() -> StoredRun:
    machine = _machine("NVIDIA H100 80GB HBM3", "cuda", "sm_90", "cuda-box")
    return _run("3f2a9c0d1e4b", machine, "H100 | baseline", 1.0, (989.4, 3350.0), imported=False)


def mi300x_run() -> StoredRun:
    machine = _machine("AMD Instinct MI300X", "rocm", "gfx942", "rocm-box")
    return _run("a07b5e6f8c91", machine, "MI300X *imported*", 1.12, (1307.4, 5300.0), imported=True)


def sample_bench_run() -> RunReport:
    return RunReport(h100_run())


def sample_bench_list() -> RunList:
    return RunList((h100_run().summary, mi300x_run().summary))


def sample_bench_comparison() -> Comparison:
    comparison = compare([h100_run(), mi300x_run()])
    return Comparison(comparison.runs, comparison.rows, comparison.notes, charts=False)
