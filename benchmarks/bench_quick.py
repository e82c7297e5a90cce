"""`gpuport bench --quick` on this machine's CPU: wall time of the whole command (goal: < 60 s).

Runs the real command (`python -m gpuport.cli bench --quick --db TMP`) a few times in a fresh
process each, as a user would, and checks that each stored a complete run. Wall time, not CPU
time: the goal is what the user waits, including PyTorch's import. Writes
benchmarks/results/bench_quick.md.

    .venv/bin/python benchmarks/bench_quick.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_output import write_results  # benchmarks/ is the script's folder

ROOT = Path(__file__).resolve().parent.parent
GOAL_S = 60.0


def one_run(db: Path) -> tuple[float, dict[str, object]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    command = [sys.executable, "-m", "gpuport.cli", "bench", "--quick", "--db", str(db)]
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"gpuport bench --quick exited {done.returncode}:\n{done.stderr}")
    listing = subprocess.run(
        [sys.executable, "-m", "gpuport.cli", "bench", "list", "--db", str(db), "--format", "json"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return seconds, json.loads(listing.stdout)["runs"][-1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/bench_quick.md")
    args = parser.parse_args()
    times = []
    with tempfile.TemporaryDirectory() as folder:
        for i in range(args.repeats):
            seconds, run = one_run(Path(folder) / "results.sqlite")
            assert run["complete"], run
            times.append(seconds)
            print(f"run {i + 1}: {seconds:.1f} s, {run['results']} results", file=sys.stderr)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [
        "# `gpuport bench --quick` on the CPU",
        "",
        f"Goal: under {GOAL_S:.0f} s wall time for the whole command (PyTorch's import included).",
        "",
        f"- machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"load average {load:.1f} when it finished (the machine is shared)",
        f"- runs: {len(times)}; median {statistics.median(times):.1f} s, "
        f"slowest {max(times):.1f} s, fastest {min(times):.1f} s",
        f"- verdict: {'within' if max(times) < GOAL_S else 'OVER'} the goal",
        "",
        "Each run stored a complete run of matmul, bandwidth, attention and decode (what --quick runs).",
        "",
    ]
    write_results(args.out, lines)
    print("\n".join(lines))
    return 0 if max(times) < GOAL_S else 1


if __name__ == "__main__":
    raise SystemExit(main())
