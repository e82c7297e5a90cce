"""Corpus scan speed per line: each corpus project's scan, CPU seconds and lines/s, two checkouts.

Scans each project of benchmarks/precision/corpus.toml found under ``--corpus`` with this
checkout's ``src`` and, given ``--base-src DIR``, with another checkout's (for example main
before a change: ``git worktree add /tmp/base COMMIT`` then ``--base-src /tmp/base/src``),
alternating the two, ``--repeats`` times each. Each scan runs in a fresh interpreter
(``scan_path(root, ScanOptions(jobs=...))``, start-up not counted: every module of the scan,
project and syntax packages is imported first, which a checkout that loads them when first
needed would otherwise count inside the scan) and reports its CPU seconds
(user + system, workers included). Lines are those of the files gpuport reads in the project.
Writes benchmarks/results/corpus_speed.md.

    .venv/bin/python benchmarks/corpus_speed.py --corpus /work/corpus --base-src /tmp/base/src
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import tomllib
from pathlib import Path

from bench_output import write_results  # benchmarks/ is the script's folder

HERE = Path(__file__).resolve().parent
THIS_SRC = HERE.parent / "src"

_SCAN = """
import json, resource, sys, time
from pathlib import Path
from gpuport.scan.engine import ScanOptions, scan_path
import importlib, pkgutil, gpuport.project, gpuport.scan, gpuport.syntax
for package in (gpuport.project, gpuport.scan, gpuport.syntax):  # start-up, loaded on first use
    for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        importlib.import_module(module.name)
root, jobs = Path(sys.argv[1]), int(sys.argv[2])
def cpu():
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
c, t = cpu(), time.perf_counter()
r = scan_path(root, ScanOptions(jobs=jobs))
print(json.dumps({"cpu": cpu() - c, "wall": time.perf_counter() - t,
                  "files": r.stats.files_scanned, "findings": len(r.findings)}))
"""

_LINES = """
import json, sys
from pathlib import Path
from gpuport.files import ProjectFile, walk
lines = 0
for item in walk(Path(sys.argv[1])):
    if isinstance(item, ProjectFile):
        with open(item.path, "rb") as f:
            lines += f.read().count(b"\\n")
print(json.dumps(lines))
"""


def run(src: Path, code: str, *args: str) -> object:
    env = dict(os.environ, PYTHONPATH=str(src))
    out = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=True, env=env
    )
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, required=True, help="folder holding the projects")
    parser.add_argument("--base-src", type=Path, help="the src folder of the checkout to compare")
    parser.add_argument("--project", action="append", default=[], help="only these projects")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=1, help="scan_path's jobs (1: one process)")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "corpus_speed.md")
    args = parser.parse_args()
    manifest = tomllib.loads((HERE / "precision" / "corpus.toml").read_text(encoding="utf-8"))
    names = [p["name"] for p in manifest["project"]]
    if args.project:
        names = [n for n in names if n in args.project]
    names = [n for n in names if (args.corpus / n).is_dir()]
    if not names:
        sys.exit(f"no corpus project under {args.corpus}")
    checkouts = {"this": THIS_SRC}
    if args.base_src:
        checkouts = {"base": args.base_src.resolve(), "this": THIS_SRC}
    loads = [os.getloadavg()]
    rows = []
    for name in names:
        root = str(args.corpus / name)
        lines = run(THIS_SRC, _LINES, root)
        assert isinstance(lines, int)
        cpu: dict[str, list[float]] = {label: [] for label in checkouts}
        for _ in range(args.repeats):
            for label, src in checkouts.items():  # alternating, so that load hits both alike
                measured = run(src, _SCAN, root, str(args.jobs))
                assert isinstance(measured, dict)
                cpu[label].append(float(measured["cpu"]))
        rows.append((name, lines, cpu))
        shown = ", ".join(f"{label} {min(v):.2f} s" for label, v in cpu.items())
        print(f"{name}: {lines:,} lines, CPU min {shown}", file=sys.stderr)
    loads.append(os.getloadavg())

    labels = list(checkouts)
    machine = (
        f"{platform.machine()}, {os.cpu_count()} cores (shared), Python "
        f"{platform.python_version()}, {platform.platform()}"
    )
    load_words = " and ".join(" ".join(f"{v:.2f}" for v in la) for la in loads)
    header = "| project | lines |" + "".join(
        f" {label} CPU s (min / median) | {label} lines/s |" for label in labels
    )
    if len(labels) == 2:
        header += " this / base (CPU per line, min) |"
    lines_out = [
        "# Corpus scan speed per line",
        "",
        f"Measured {time.strftime('%Y-%m-%d %H:%M')} with `benchmarks/corpus_speed.py` "
        f"(--repeats {args.repeats}, --jobs {args.jobs}) on: {machine}. Load average "
        f"(1, 5, 15 min) before and after: {load_words}.",
        "",
        "Checkouts: "
        + "; ".join(f"{label} = `{src}`" for label, src in checkouts.items())
        + ". Each scan ran in a fresh interpreter, the checkouts alternating; CPU seconds of "
        "`scan_path` (start-up not counted). lines/s from the minimum.",
        "",
        header,
        "|---|---:|" + "---:|---:|" * len(labels) + ("---:|" if len(labels) == 2 else ""),
    ]
    totals = {label: 0.0 for label in labels}
    total_lines = 0
    for name, lines, cpu in rows:
        total_lines += lines
        cells = ""
        for label in labels:
            best = min(cpu[label])
            totals[label] += best
            cells += f" {best:.2f} / {statistics.median(cpu[label]):.2f} | {lines / best:,.0f} |"
        if len(labels) == 2:
            cells += f" {min(cpu['this']) / min(cpu['base']):.2f} |"
        lines_out.append(f"| {name} | {lines:,} |{cells}")
    cells = "".join(
        f" {totals[label]:.2f} | {total_lines / totals[label]:,.0f} |" for label in labels
    )
    if len(labels) == 2:
        cells += f" {totals['this'] / totals['base']:.2f} |"
    lines_out += [f"| all | {total_lines:,} |{cells}", ""]
    write_results(args.out, lines_out)


if __name__ == "__main__":
    main()
