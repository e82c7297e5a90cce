"""All-reduce and all-gather bus bandwidth across the node's devices, launched by torchrun.

The suite starts ``torchrun --standalone`` (PyTorch's own launcher and rendezvous; a multi-node
run is ``torchrun --nnodes ... -m gpuport.bench.workloads.collectives --out FILE`` on each node)
with one rank per GPU (NCCL on NVIDIA, RCCL on AMD, both ``nccl`` to torch.distributed) or two
ranks on the CPU (gloo). Rank 0 writes each size's result to a JSON file as soon as it has it,
so a rank that dies leaves the sizes measured before it. Bus bandwidth is nccl-tests' figure
(https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md): algorithm bandwidth
times 2(n-1)/n for all-reduce and (n-1)/n for all-gather, comparable with the link's speed.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from gpuport.bench.device import Device
from gpuport.bench.store import ResultRecord
from gpuport.bench.workloads import SuiteOptions, fraction, skipped
from gpuport.plan.catalog import find_gpu

OPERATIONS = ("all_reduce", "all_gather")
SIZES_GPU: tuple[int, ...] = (1 << 20, 16 << 20, 256 << 20, 1 << 30)
SIZES_GPU_QUICK: tuple[int, ...] = (1 << 20, 64 << 20)
SIZES_CPU: tuple[int, ...] = (64 << 10, 1 << 20, 16 << 20)
SIZES_CPU_QUICK: tuple[int, ...] = (64 << 10, 1 << 20)
CPU_RANKS = 2
TIMEOUT_S = 900.0


def bus_factor(operation: str, ranks: int) -> float:
    if ranks < 2:
        return 1.0
    return 2.0 * (ranks - 1) / ranks if operation == "all_reduce" else (ranks - 1) / ranks


def measure_rank(
    torch: Any, sizes: Sequence[int], warmup: int, iterations: int, out: Path | None
) -> list[dict[str, Any]]:
    """This rank's part of the sweep (the process group is set up); rank 0 records."""
    dist = torch.distributed
    rank, ranks = dist.get_rank(), dist.get_world_size()
    on_gpu = dist.get_backend() == "nccl"
    device = f"cuda:{torch.cuda.current_device()}" if on_gpu else "cpu"
    results: list[dict[str, Any]] = []
    for operation in OPERATIONS:
        for size in sizes:
            count = max(1, size // 4)
            tensor = torch.ones(count, dtype=torch.float32, device=device)
            if operation == "all_gather":
                part = max(1, count // ranks)
                tensor = torch.ones(part, dtype=torch.float32, device=device)
                gathered = torch.empty(part * ranks, dtype=torch.float32, device=device)
                # all_gather_single from torch 2.13 on; all_gather_into_tensor before it.
                gather = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor
                work = functools.partial(gather, gathered, tensor)
                moved = part * ranks * 4
            else:
                work = functools.partial(dist.all_reduce, tensor)
                moved = count * 4
            for _ in range(warmup):
                work()
            if on_gpu:
                torch.cuda.synchronize()
            dist.barrier()
            start = time.perf_counter()
            for _ in range(iterations):
                work()
            if on_gpu:
                torch.cuda.synchronize()
            seconds = (time.perf_counter() - start) / iterations
            algbw = moved / seconds / 1e9
            results.append(
                {
                    "operation": operation,
                    "bytes": moved,
                    "ranks": ranks,
                    "backend": dist.get_backend(),
                    "seconds": seconds,
                    "algbw_gbs": algbw,
                    "busbw_gbs": algbw * bus_factor(operation, ranks),
                }
            )
            if rank == 0 and out is not None:
                out.write_text(json.dumps(results), encoding="utf-8")
    return results


def main(argv: Sequence[str] | None = None) -> int:
    """One rank, as torchrun starts it (its environment names the rank and the rendezvous)."""
    parser = argparse.ArgumentParser(description="gpuport bench: collectives, one rank")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--sizes", default=",".join(str(s) for s in SIZES_GPU))
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--cpu", action="store_true")
    args = parser.parse_args(argv)
    import torch

    on_gpu = torch.cuda.is_available() and not args.cpu
    if on_gpu:
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    torch.distributed.init_process_group("nccl" if on_gpu else "gloo")
    try:
        sizes = [int(s) for s in args.sizes.split(",") if s]
        measure_rank(torch, sizes, args.warmup, args.iterations, args.out)
    finally:
        torch.distributed.destroy_process_group()
    return 0


def launch_command(
    ranks: int, out: Path, sizes: Sequence[int], quick: bool, cpu: bool
) -> list[str]:
    """torchrun, through the interpreter running gpuport (so the same environment)."""
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        f"--nproc-per-node={ranks}",
        "-m",
        "gpuport.bench.workloads.collectives",
        "--out",
        str(out),
        "--sizes",
        ",".join(str(s) for s in sizes),
        "--warmup",
        "2" if quick else "5",
        "--iterations",
        "5" if quick else "20",
    ]
    return [*command, "--cpu"] if cpu else command


class CollectivesWorkload:
    name = "collectives"
    summary = "all-reduce and all-gather bus bandwidth across the node's devices (torchrun)"

    def run(self, device: Device, options: SuiteOptions) -> Iterator[ResultRecord]:
        if device.is_gpu:
            ranks = device.machine.device_count
            sizes = SIZES_GPU_QUICK if options.quick else SIZES_GPU
            if ranks < 2:
                yield skipped(
                    self.name,
                    "collectives",
                    {"ranks": ranks},
                    "one GPU: collectives need two or more (run torchrun across nodes yourself: "
                    "torchrun --nnodes N ... -m gpuport.bench.workloads.collectives --out FILE)",
                )
                return
        else:
            ranks = CPU_RANKS
            sizes = SIZES_CPU_QUICK if options.quick else SIZES_CPU
        with tempfile.TemporaryDirectory(prefix="gpuport-bench-") as folder:
            out = Path(folder) / "collectives.json"
            command = launch_command(ranks, out, sizes, options.quick, not device.is_gpu)
            note, status = "", "ok"
            try:
                done = subprocess.run(
                    command, capture_output=True, text=True, timeout=TIMEOUT_S, check=False
                )
                if done.returncode != 0:
                    last = [line for line in done.stderr.splitlines() if line.strip()][-1:] or [""]
                    status = "failed"
                    note = f"a rank failed (torchrun exited {done.returncode}): {last[0].strip()[:300]}"
            except subprocess.TimeoutExpired:
                status, note = "failed", f"torchrun did not finish in {TIMEOUT_S:.0f} s"
            except OSError as exc:
                status, note = "failed", f"torchrun could not start: {exc}"
            try:
                measured = json.loads(out.read_text(encoding="utf-8")) if out.exists() else []
            except (OSError, ValueError):
                measured = []
        link = self._link_gbs(device, ranks)
        for item in measured if isinstance(measured, list) else []:
            yield self._record(item, link)
        if status != "ok":
            yield ResultRecord(
                self.name,
                "collectives",
                {"ranks": ranks},
                {},
                "failed",
                note
                + (f"; the {len(measured)} sizes measured before are kept" if measured else ""),
            )

    @staticmethod
    def _link_gbs(device: Device, ranks: int) -> float | None:
        gpu = find_gpu(device.peaks.gpu_id) if device.peaks.gpu_id else None
        return gpu.interconnect.bandwidth_gbs(ranks) if gpu else None

    def _record(self, item: dict[str, Any], link: float | None) -> ResultRecord:
        operation = str(item.get("operation", "?"))
        size = int(item.get("bytes", 0))
        busbw = float(item.get("busbw_gbs", 0.0))
        return ResultRecord(
            self.name,
            f"{operation.replace('_', '-')} {_size(size)}",
            {
                "operation": operation,
                "bytes": size,
                "ranks": int(item.get("ranks", 0)),
                "backend": str(item.get("backend", "")),
            },
            {
                "busbw_gbs": busbw,
                "algbw_gbs": float(item.get("algbw_gbs", 0.0)),
                "seconds": float(item.get("seconds", 0.0)),
                "peak_gbs": link,
                "fraction_of_peak": fraction(busbw, link),
            },
        )


def _size(size: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift:
            return f"{size / (1 << shift):g} {unit}"
    return f"{size} B"


if __name__ == "__main__":
    raise SystemExit(main())
