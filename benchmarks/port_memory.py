"""Port memory: peak RSS of `gpuport port` over a generated project, per way of writing it.

Generates a project with scan_speed.py's generator (16,000 files, about 68 MB), then runs, each
in a fresh helper process (scan_memory.py's, whose ``ru_maxrss`` of its children is this run's
gpuport alone): the unified diff on stdout (into a file), `--format json -o FILE` (the diff
still on stdout), and `--out DIR` (the translated copy of the tree, with the JSON summary).
Writes benchmarks/results/port_memory.md. Issue 10 asks that `port` write as it goes rather
than hold every original and translation until the end.

    .venv/bin/python benchmarks/port_memory.py [--files 16000] [--repeat 1]
        [--compare SRC]  # also run the gpuport package under SRC (e.g. another checkout's src/)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from scan_memory import _HELPER, gpuport_command, machine, side_by_side, write_results
from scan_speed import generate  # the sibling benchmark's project generator

RUNS = {
    "diff": "`gpuport port P > diff` (the unified diff on stdout)",
    "json": "`gpuport port P --format json -o F > diff`",
    "out": "`gpuport port P --out DIR --format json -o F`",
}


def port_command(root: Path, run: str, work: Path) -> list[str]:
    """`gpuport port ROOT ...` for ``run``, with stdout and stderr into files of ``work`` (a
    shell that execs gpuport, so the helper's child is gpuport itself; the terminal summary
    on stderr would fill the helper's pipe, which it reads only at the end)."""
    args = [*gpuport_command(), "port", str(root), "--no-progress"]
    if run in ("json", "out"):
        args += ["--format", "json", "-o", str(work / "port.json")]
    if run == "out":
        args += ["--out", str(work / "tree")]
    return ["sh", "-c", 'exec "$@" > "$0/stdout" 2> "$0/stderr"', str(work), *args]


def measure(root: Path, run: str, work: Path, src: str | None) -> dict[str, float]:
    """Peak memory of one `gpuport port` run (``src``: the package's folder, else this tree's)."""
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    env = dict(os.environ, PYTHONPATH=src) if src else None
    done = subprocess.run(
        [sys.executable, "-c", _HELPER, json.dumps(port_command(root, run, work))],
        capture_output=True,
        text=True,
        env=env,
    )
    if done.returncode != 0:
        raise SystemExit(f"helper failed: {done.stderr}")
    m = dict(json.loads(done.stdout))
    if m["rc"] not in (0, 1):
        stderr = (work / "stderr").read_text(errors="replace")[-2000:]
        raise SystemExit(f"gpuport port ({run}) exited {m['rc']}: {stderr}")
    m["stdout_mb"] = (work / "stdout").stat().st_size / 1e6
    return m


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=16000, help="files to generate")
    parser.add_argument("--runs", default=",".join(RUNS))
    parser.add_argument("--repeat", type=int, default=1, help="runs of each (lowest kept)")
    parser.add_argument("--compare", help="also measure the gpuport package in this src folder")
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).parent / "results" / "port_memory.md"
    )
    args = parser.parse_args()
    runs = [r.strip() for r in args.runs.split(",") if r.strip()]
    trees: list[tuple[str, str | None]] = [("this tree", None)]
    if args.compare:
        trees.insert(0, (f"`{args.compare}`", args.compare))
    rows: list[tuple[str, str, dict[str, float]]] = []
    with tempfile.TemporaryDirectory(prefix="gpuport-port-mem-") as tmp:
        root = Path(tmp) / "project"
        made = generate(root, args.files)
        size_mb = sum(p.stat().st_size for p in root.rglob("*") if p.is_file()) / 1e6
        print(f"{made:,} files, {size_mb:.0f} MB", file=sys.stderr)
        work = Path(tmp) / "work"
        for run, label, m in side_by_side(
            runs, trees, lambda run, src: measure(root, run, work, src), args.repeat
        ):
            rows.append((run, label, m))
            print(
                f"{run:>5} {label}: {m['maxrss_kb'] / 1024:6.0f} MB  {m['seconds']:6.1f} s  "
                f"stdout {m['stdout_mb']:.1f} MB",
                file=sys.stderr,
            )
    compared = f" --compare {args.compare}" if args.compare else ""
    lines = [
        "# Port memory",
        "",
        f"Measured {time.strftime('%Y-%m-%d')} with `benchmarks/port_memory.py --files "
        f"{args.files}{compared}` on: {machine()}.",
        "",
        f"The project: {made:,} generated files (scan_speed.py's mix), {size_mb:.0f} MB.",
        "",
        "| run | gpuport | peak RSS (MB) | seconds | stdout (MB) |",
        "|---|---|---:|---:|---:|",
    ]
    for run, label, m in rows:
        lines.append(
            f"| {RUNS[run]} | {label} | {m['maxrss_kb'] / 1024:.0f} | {m['seconds']:.1f} | "
            f"{m['stdout_mb']:.1f} |"
        )
    lines += [
        "",
        "Peak RSS is `ru_maxrss` of the `gpuport` process (exact, from the kernel). Seconds are "
        "wall-clock on a shared machine: compare memory here (benchmarks/port_speed.py is the "
        "speed benchmark).",
        "",
        "`port_project` lists the files first (names and sizes), then ports them in path order "
        "and hands each file's result to the command as soon as it is final; the diff is "
        "written and the translation lands in the `--out` copy (copied before the port "
        "starts) at once, and the file's original and translation are dropped, keeping what "
        "the summary needs (path, kind, changes, whether it changed). `--in-place` and "
        "`--check` still hold every translation: the journal names every edit before the "
        "first one, and the compilers run after the port. The JSON summary is written one "
        "file at a time (a `Deferred` array through `render_chunks`). What the diff run still "
        "holds above the others is its terminal summary on stderr, which rich renders whole.",
        "",
    ]
    write_results(args.out, "\n".join(lines))


if __name__ == "__main__":
    main()
