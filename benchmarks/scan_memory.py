"""Scan memory: peak RSS of `gpuport scan` over a project with ~50,000 findings, per format.

Generates a project with scan_speed.py's generator (Python, CUDA, C++ headers, requirements,
Dockerfiles, Kubernetes and CMake files; about three findings per file), then runs
`gpuport scan --format F -o FILE` once per output format, and `gpuport assess -o FILE --html
PAGE` (its terminal report and its HTML page: what `assess` writes by default), each in a fresh
helper process, and writes benchmarks/results/scan_memory.md. Issue 10's goal: under 150 MB.

Two figures per run:
- peak RSS of the gpuport process itself: ``ru_maxrss`` of the helper's children, which is the
  largest single process the helper waited for (gpuport's main process; its workers are
  smaller), exact, from the kernel;
- peak of the whole tree (gpuport and its scan workers), summed every 10 ms from
  ``/proc/PID/smaps_rollup``: RSS (pages shared between the forked workers and their parent
  counted once per process, an upper bound) and PSS (shared pages split between them).

    .venv/bin/python benchmarks/scan_memory.py [--files 16000] [--formats json,sarif,assess]
        [--repeat 1]
        [--compare SRC]  # also run the gpuport package under SRC (e.g. another checkout's src/)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from scan_speed import generate  # the sibling benchmark's project generator

FORMATS = ("json", "sarif", "markdown", "html", "terminal")
ASSESS = "assess"  # `assess`'s terminal report and HTML page, measured beside the scan formats
GOAL_MB = 150

NOTES = (
    "Where the memory went (issue 10 measured 507 MB for 50k findings): the JSON and SARIF "
    "renderers built every finding's dict, then the whole text with `json.dumps(indent=2)` "
    "(whose pure-Python encoder keeps every piece in a list before joining them), then two "
    "more copies to escape lone surrogates, then its bytes: 11 to 15 KB per finding. Now "
    "`report/json_stream.py` writes a `Deferred` array one item at a time and "
    "`io.write_atomic` takes the pieces, so neither the dicts nor the text ever exist whole. "
    "The findings kept for sorting went from 860 to 390 bytes each (`scan/engine.py`'s "
    "`_Canonical`: one object per distinct message, fix, reference list and excerpt line in a "
    "batch). The HTML page built a view of every finding, then jinja's whole text, then a copy "
    "with its Content-Security-Policy; now `Template.generate` runs over views made as the page "
    "reaches them, and the policy goes into the head once the head is whole "
    "(`report/html.py`). The terminal report printed every finding into one in-memory rich "
    "console, then split and joined its text; now the console is emptied every 64 KB "
    "(`report/terminal.py`). `assess` writes both through `render_chunks`."
)

# Runs in a fresh interpreter per measurement, so that ru_maxrss of its children is this
# scan's alone (the kernel keeps the maximum over every child ever waited for).
_HELPER = r"""
import json, os, resource, subprocess, sys, time

def children(pid):
    out = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                out += [int(p) for p in f.read().split()]
    except OSError:
        pass
    return out

def tree(pid):
    todo, seen = [pid], []
    while todo:
        p = todo.pop()
        seen.append(p)
        todo += children(p)
    return seen

def rollup(pid):
    rss = pss = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Rss:"):
                    rss = int(line.split()[1])
                elif line.startswith("Pss:"):
                    pss = int(line.split()[1])
    except OSError:
        pass
    return rss, pss

cmd = json.loads(sys.argv[1])
started = time.perf_counter()
proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
peak_rss = peak_pss = peak_procs = 0
while proc.poll() is None:
    procs = tree(proc.pid)
    sums = [rollup(p) for p in procs]
    peak_rss = max(peak_rss, sum(r for r, _ in sums))
    peak_pss = max(peak_pss, sum(p for _, p in sums))
    peak_procs = max(peak_procs, len(procs))
    time.sleep(0.01)
err = proc.stderr.read().decode(errors="replace")
seconds = time.perf_counter() - started
kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"rc": proc.returncode, "seconds": seconds, "maxrss_kb": kids,
                  "tree_rss_kb": peak_rss, "tree_pss_kb": peak_pss, "procs": peak_procs,
                  "stderr": err[-2000:]}))
"""


def gpuport_command() -> list[str]:
    """`gpuport` of the interpreter running this script (PYTHONPATH picks the source tree)."""
    return [sys.executable, "-c", "from gpuport.cli import main; main()"]


def scan_command(root: Path, fmt: str, out: Path, jobs: int) -> list[str]:
    """`gpuport scan ROOT --format FMT -o OUT`, quiet, whatever it finds."""
    return [
        *gpuport_command(),
        *("scan", str(root), "--format", fmt, "-o", str(out), "--no-progress"),
        *("--fail-on", "never", "--jobs", str(jobs)),
    ]


def assess_command(root: Path, out: Path, page: Path, jobs: int) -> list[str]:
    """`gpuport assess ROOT -o OUT --html PAGE` (terminal text and the HTML page), quiet."""
    return [
        *gpuport_command(),
        *("assess", str(root), "--format", "terminal", "-o", str(out), "--html", str(page)),
        *("--no-progress", "--fail-on", "never", "--jobs", str(jobs)),
    ]


def measure(root: Path, fmt: str, out: Path, jobs: int, src: str | None) -> dict[str, float]:
    """Peak memory of one `gpuport scan --format FMT -o OUT` (``src``: the package's folder);
    FMT ``assess``: of `gpuport assess` writing OUT and OUT.html."""
    page = out.with_name(out.name + ".html")
    if fmt == ASSESS:
        cmd = assess_command(root, out, page, jobs)
    else:
        cmd = scan_command(root, fmt, out, jobs)
    env = dict(os.environ, PYTHONPATH=src) if src else None
    done = subprocess.run(
        [sys.executable, "-c", _HELPER, json.dumps(cmd)], capture_output=True, text=True, env=env
    )
    if done.returncode != 0:
        raise SystemExit(f"helper failed: {done.stderr}")
    m = dict(json.loads(done.stdout))
    if m["rc"] not in (0, 1, 2):
        raise SystemExit(f"gpuport scan --format {fmt} exited {m['rc']}: {m['stderr']}")
    m["output_mb"] = (out.stat().st_size + (page.stat().st_size if fmt == ASSESS else 0)) / 1e6
    return m


def run_name(fmt: str) -> str:
    """The command a row measured: ``scan json``, ``assess terminal + html``."""
    return "assess terminal + html" if fmt == ASSESS else f"scan {fmt}"


def count_findings(root: Path, jobs: int) -> int:
    """How many findings the project yields (from the JSON report's summary)."""
    with tempfile.TemporaryDirectory(prefix="gpuport-count-") as tmp:
        out = Path(tmp) / "scan.json"
        subprocess.run(scan_command(root, "json", out, jobs), capture_output=True, check=False)
        return int(json.loads(out.read_text())["summary"]["findings"])


def machine() -> str:
    model = "unknown CPU"
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        for line in lscpu.splitlines():
            if line.startswith("Model name:"):
                model = line.split(":", 1)[1].strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    ram_gb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return (
        f"{model}, {os.cpu_count()} cores, {ram_gb:.0f} GiB RAM, "
        f"Python {platform.python_version()}, {platform.platform()}"
    )


def write_results(out: Path, text: str) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    print(f"wrote {out}", file=sys.stderr)


def side_by_side(
    runs: list[str],
    trees: list[tuple[str, str | None]],
    measure_one: Callable[[str, str | None], dict[str, float]],
    repeat: int,
) -> Iterator[tuple[str, str, dict[str, float]]]:
    """Each run measured on each tree (label, src folder) side by side, in the same minute of
    a shared machine; of ``repeat`` measurements the one with the lowest peak RSS."""
    for run in runs:
        for label, src in trees:
            results = [measure_one(run, src) for _ in range(repeat)]
            yield run, label, min(results, key=lambda r: r["maxrss_kb"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=16000, help="files to generate")
    parser.add_argument("--formats", default=",".join((*FORMATS, ASSESS)))
    parser.add_argument("--jobs", type=int, default=0, help="0: one worker per core")
    parser.add_argument("--repeat", type=int, default=1, help="runs per format (best kept)")
    parser.add_argument("--compare", help="also measure the gpuport package in this src folder")
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).parent / "results" / "scan_memory.md"
    )
    args = parser.parse_args()
    formats = [f.strip() for f in args.formats.split(",") if f.strip()]

    trees: list[tuple[str, str | None]] = [("this tree", None)]
    if args.compare:
        trees.insert(0, (f"`{args.compare}`", args.compare))
    rows: list[tuple[str, str, dict[str, float]]] = []
    with tempfile.TemporaryDirectory(prefix="gpuport-mem-") as tmp:
        root = Path(tmp) / "project"
        made = generate(root, args.files)
        findings = count_findings(root, args.jobs)
        print(f"{made:,} files, {findings:,} findings", file=sys.stderr)
        for fmt, label, m in side_by_side(
            formats,
            trees,
            lambda fmt, src: measure(root, fmt, Path(tmp) / f"report.{fmt}", args.jobs, src),
            args.repeat,
        ):
            rows.append((fmt, label, m))
            print(
                f"{run_name(fmt):>23} {label}: gpuport {m['maxrss_kb'] / 1024:6.0f} MB  tree RSS "
                f"{m['tree_rss_kb'] / 1024:6.0f} MB  tree PSS {m['tree_pss_kb'] / 1024:6.0f} "
                f"MB  {m['seconds']:6.1f} s  output {m['output_mb']:.1f} MB",
                file=sys.stderr,
            )
    compared = f" --compare {args.compare}" if args.compare else ""
    lines = [
        "# Scan memory",
        "",
        f"Measured {time.strftime('%Y-%m-%d')} with `benchmarks/scan_memory.py --files "
        f"{args.files}{compared}` on: {machine()}.",
        "",
        f"The project: {made:,} generated files (scan_speed.py's mix), {findings:,} findings. "
        f"Goal (issue 10): under {GOAL_MB} MB.",
        "",
        "| run | gpuport | peak RSS gpuport (MB) | peak tree RSS (MB) | peak tree PSS (MB) | "
        "processes | seconds | report (MB) |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for fmt, label, m in rows:
        lines.append(
            f"| {run_name(fmt)} | {label} | {m['maxrss_kb'] / 1024:.0f} | {m['tree_rss_kb'] / 1024:.0f} | "
            f"{m['tree_pss_kb'] / 1024:.0f} | {m['procs']:.0f} | {m['seconds']:.1f} | "
            f"{m['output_mb']:.1f} |"
        )
    lines += [
        "",
        "Peak RSS gpuport is `ru_maxrss` of the `gpuport` process (exact). The tree "
        "figures are sampled every 10 ms over gpuport and its scan workers, so they may miss a "
        "short peak; RSS counts pages the forked workers share with their parent once per "
        "process, PSS splits them. Seconds are wall-clock on a shared machine: compare "
        "memory, not time, here (benchmarks/scan_speed.py is the speed benchmark).",
        "",
        NOTES,
        "",
    ]
    write_results(args.out, "\n".join(lines))


if __name__ == "__main__":
    main()
