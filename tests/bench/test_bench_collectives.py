"""Collectives: bus bandwidth per rank, a rank that dies, one GPU (no torchrun started here)."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from bench_samples import machine

torch = pytest.importorskip("torch")

from gpuport.bench.device import Device, Peaks, open_device  # noqa: E402
from gpuport.bench.workloads import SuiteOptions, collectives  # noqa: E402
from gpuport.plan.catalog import find_gpu  # noqa: E402


def test_bus_bandwidth_follows_nccl_tests() -> None:
    assert collectives.bus_factor("all_reduce", 8) == pytest.approx(1.75)
    assert collectives.bus_factor("all_gather", 8) == pytest.approx(0.875)
    assert collectives.bus_factor("all_reduce", 1) == 1.0


def test_one_rank_measures_every_operation_and_size(tmp_path: Path) -> None:
    dist = torch.distributed
    dist.init_process_group(
        "gloo", init_method=f"file://{tmp_path / 'rendezvous'}", rank=0, world_size=1
    )
    try:
        out = tmp_path / "out.json"
        results = collectives.measure_rank(torch, [4096, 65536], 1, 2, out)
    finally:
        dist.destroy_process_group()
    assert [(r["operation"], r["bytes"]) for r in results] == [
        ("all_reduce", 4096),
        ("all_reduce", 65536),
        ("all_gather", 4096),
        ("all_gather", 65536),
    ]
    assert all(r["busbw_gbs"] > 0 and r["backend"] == "gloo" for r in results)
    assert json.loads(out.read_text()) == results  # rank 0 kept each size as it came


def test_a_rank_that_dies_keeps_the_sizes_measured_before(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first = {"operation": "all_reduce", "bytes": 65536, "ranks": 2, "busbw_gbs": 1.5}

    def dying(ranks: int, out: Path, *args: object) -> list[str]:
        script = (
            f"import json, sys; open({str(out)!r}, 'w').write(json.dumps([{first!r}]));"
            "sys.stderr.write('torch.distributed.elastic: rank 1 exited with signal 9\\n');"
            "sys.exit(1)"
        )
        return [sys.executable, "-c", script]

    monkeypatch.setattr(collectives, "launch_command", dying)
    records = list(
        collectives.CollectivesWorkload().run(open_device(torch, cpu=True), SuiteOptions())
    )
    assert [r.status for r in records] == ["ok", "failed"]
    assert records[0].name == "all-reduce 64 KiB" and records[0].metrics["busbw_gbs"] == 1.5
    assert "rank 1 exited with signal 9" in records[1].note
    assert "1 sizes measured before are kept" in records[1].note


def test_one_gpu_is_skipped_with_how_to_run_across_nodes() -> None:
    cpu = open_device(torch, cpu=True)
    h100 = find_gpu("h100-sxm")
    one_gpu = Device(torch, "cuda", replace(machine(), device_count=1), Peaks.of(h100))
    [record] = list(collectives.CollectivesWorkload().run(one_gpu, SuiteOptions()))
    assert record.status == "skipped" and "torchrun --nnodes" in record.note
    assert cpu.name == "cpu"
