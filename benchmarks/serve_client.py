"""Serving client overhead: how much CPU ``bench serve`` spends per streamed chunk (goal: < 100 µs).

A benchmark client must not be what limits the measurement: if reading one SSE chunk costs the
client C seconds of CPU, one client core follows at most 1/C tokens per second across all its
streams, and beyond that its TTFT and inter-token figures measure itself. This starts the tests'
fake OpenAI-compatible server in a separate process (it answers at once, one token per chunk),
runs ``bench serve``'s load at rate ``inf`` against it, and reports the client's CPU time
(``time.process_time``) per chunk and per request, median and fastest of several runs. Writes
benchmarks/results/serve_client.md.

    .venv/bin/python benchmarks/serve_client.py [--prompts 200] [--tokens 64] [--repeats 5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench_output import write_results  # benchmarks/ is the script's folder

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from gpuport.serving.client import Endpoint, Target  # noqa: E402  (after the path above)
from gpuport.serving.load import (  # noqa: E402
    BenchRecorder,
    BenchSettings,
    run_bench,
    step_plans,
)
from gpuport.serving.prompts import LengthDistribution, synthetic_prompts  # noqa: E402

GOAL_US = 100.0
HISTORY = (
    "Before: the first run (2026-11-25, same machine, 100 requests) took 92 µs per chunk, almost "
    "half of it in failed `import sniffio` attempts: httpcore tries that import several times "
    "per request, and without sniffio installed each try searches sys.path again. "
    "gpuport.serving.client now marks the module absent once (50 µs per chunk). Most of the "
    "rest is httpcore/h11 reading the response and json.loads of each chunk."
)
SERVER = (
    "import sys, time; sys.path.insert(0, sys.argv[1]); from fake_server import FakeServer\n"
    "with FakeServer() as s:\n"
    "    print(s.port, flush=True)\n"
    "    sys.stdin.read()\n"
)


def _one_run(url: str, prompts: int, tokens: int, concurrency: int) -> tuple[float, float, int]:
    made = synthetic_prompts(
        prompts, LengthDistribution("fixed", 16), LengthDistribution("fixed", tokens), seed=0
    )
    settings = BenchSettings(
        target=Target(url, "bench", Endpoint.COMPLETIONS, timeout_s=60),
        prompts=tuple(made),
        plans=tuple(step_plans((float("inf"),), concurrency)),
        prompt_source="benchmark",
    )
    cpu, wall = time.process_time(), time.perf_counter()
    result = asyncio.run(run_bench(settings, BenchRecorder(settings)))
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    (step,) = result.steps
    if step.failed:
        raise SystemExit(f"{step.failed} requests failed: {step.failures[0].reason}")
    return cpu, wall, step.output_tokens


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=200)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/serve_client.md")
    args = parser.parse_args()
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(ROOT / "tests" / "serving")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        url = f"http://127.0.0.1:{port}/normal"
        _one_run(url, 10, 4, 4)  # warm-up: imports, first connections
        runs = [
            _one_run(url, args.prompts, args.tokens, args.concurrency) for _ in range(args.repeats)
        ]
    finally:
        server.terminate()
        server.wait(timeout=10)
    chunks = runs[0][2]
    per_chunk = [cpu / tokens * 1e6 for cpu, _, tokens in runs]
    per_request = [cpu / args.prompts * 1e3 for cpu, _, _ in runs]
    rates = [tokens / wall for _, wall, tokens in runs]
    median = statistics.median(per_chunk)
    verdict = "meets it" if median < GOAL_US else "misses it"
    lines = [
        "# Serving client overhead",
        "",
        f"Measured {time.strftime('%Y-%m-%d')} with `benchmarks/serve_client.py --prompts "
        f"{args.prompts} --tokens {args.tokens} --concurrency {args.concurrency} --repeats "
        f"{args.repeats}` on: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, {platform.platform()}. No GPU: the server is the tests' "
        "fake one, in its own process, answering at once.",
        "",
        f"One run: {args.prompts} requests of {args.tokens} output tokens ({chunks:,} chunks), "
        f"all sent at once, at most {args.concurrency} in flight, streamed from "
        "`/v1/completions` with usage. CPU seconds of the client process "
        "(`time.process_time`): median and fastest of the runs.",
        "",
        "| figure | median | fastest |",
        "|---|---:|---:|",
        f"| client CPU per chunk (µs) | {median:.1f} | {min(per_chunk):.1f} |",
        f"| client CPU per request (ms) | {statistics.median(per_request):.2f} | "
        f"{min(per_request):.2f} |",
        f"| chunks per second, wall (server and client on one machine) | "
        f"{statistics.median(rates):,.0f} | {max(rates):,.0f} |",
        "",
        f"Goal: under {GOAL_US:.0f} µs of client CPU per chunk — it {verdict}; one client core "
        f"then follows about {1e6 / median:,.0f} tokens/s across its streams. Beyond that, run "
        "several clients or read TTFT and inter-token figures as the client's too.",
        "",
        HISTORY,
        "",
    ]
    write_results(args.out, lines)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
