"""Port speed end to end: `gpuport port TREE` as a user runs it, start-up included.

benchmarks/port_speed.py measures the translator alone; this runs the whole command on a
tree of about --lines lines of CUDA (the .cu programs of tests/corpus, copied until the tree
holds that many lines, and any real trees named with --tree, read-only) and reports CPU
seconds of the child process (user + system: the work of the cores it used), wall seconds
and lines/s, plus the start-up cost of the command alone (`gpuport --version`). Writes
benchmarks/results/port_end_to_end.md.

    .venv/bin/python benchmarks/port_end_to_end.py [--lines 40000] [--tree DIR ...] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_output import write_results  # benchmarks/ is the script's folder

ROOT = Path(__file__).resolve().parent.parent
GPUPORT = Path(sys.executable).with_name("gpuport")
SOURCE_SUFFIXES = (".cu", ".cuh", ".h", ".hpp", ".cpp", ".cc")


def corpus_tree(target: Path, lines: int) -> int:
    """Copy tests/corpus/*.cu into ``target`` until it holds ``lines`` lines; the count."""
    programs = sorted((ROOT / "tests" / "corpus").glob("*.cu"))
    held = copies = 0
    while held < lines:
        for program in programs:
            copies += 1
            shutil.copyfile(program, target / f"c{copies:05d}_{program.name}")
            held += program.read_text(encoding="utf-8", errors="replace").count("\n")
            if held >= lines:
                break
    return held


def source_lines(tree: Path) -> int:
    total = 0
    for path in tree.rglob("*"):
        if path.suffix in SOURCE_SUFFIXES and path.is_file() and not path.is_symlink():
            total += path.read_bytes().count(b"\n")
    return total


def timed(args: list[str]) -> tuple[float, float]:
    """CPU seconds (user + system) and wall seconds of one child run; output discarded."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


def best_of(args: list[str], repeat: int) -> tuple[float, float]:
    runs = [timed(args) for _ in range(repeat)]
    return min(c for c, _ in runs), min(w for _, w in runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=40_000)
    parser.add_argument("--tree", type=Path, action="append", default=[])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/port_end_to_end.md")
    args = parser.parse_args()

    startup_cpu, startup_wall = best_of([str(GPUPORT), "--version"], args.repeat)
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        tree = Path(scratch) / "corpus-tree"
        tree.mkdir()
        lines = corpus_tree(tree, args.lines)
        inputs = [(f"tests/corpus programs x copies ({lines:,} lines)", tree, lines)]
        inputs += [
            (f"{t.name} ({source_lines(t):,} C/C++/CUDA lines)", t, source_lines(t))
            for t in args.tree
        ]
        for label, path, count in inputs:
            cpu, wall = best_of([str(GPUPORT), "port", str(path)], args.repeat)
            rows.append(
                f"| {label} | {cpu:.2f} | {wall:.2f} | {count / cpu:,.0f} | "
                f"{count / max(cpu - startup_cpu, 1e-9):,.0f} |"
            )
    out = [
        "# Port speed, end to end",
        "",
        f"Measured {time.strftime('%Y-%m-%d')} with `benchmarks/port_end_to_end.py "
        f"--lines {args.lines}` on: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, {platform.platform()}; best of {args.repeat} runs each.",
        "",
        "`gpuport port TREE` writes the diff to stdout (discarded here) and the summary to "
        "stderr, with the kernel scanner's diagnostics on (the default). CPU seconds are the "
        "child's user + system time, the work of the one core it uses; lines/s counts the "
        "tree's C/C++/CUDA lines.",
        "",
        f"Start-up alone (`gpuport --version`): {startup_cpu:.2f} CPU s, {startup_wall:.2f} s wall.",
        "",
        "| input | CPU seconds | wall seconds | lines/s (one core) | lines/s after start-up |",
        "|---|---:|---:|---:|---:|",
        *rows,
        "",
    ]
    write_results(args.out, out)


if __name__ == "__main__":
    main()
