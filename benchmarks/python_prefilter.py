"""Python pre-filter: how fast the GP2xx rules' needles tell which files are worth parsing.

Compares :class:`gpuport.rules.NeedleSet` (recent hits first, then one pass of a trie-shaped
regular expression) with one substring search per needle, over the Python files of this
interpreter's installed packages (real code, most of it mentioning no needle) and the scan
benchmark's generated module (which always does). Writes
benchmarks/results/python_prefilter.md.

    .venv/bin/python benchmarks/python_prefilter.py [--files 2000]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import sysconfig
import time
from collections.abc import Callable
from pathlib import Path

from gpuport.rules import NeedleSet
from gpuport.scan.catalog import all_rules
from gpuport.scan.python.checks import dispatch_for

sys.path.insert(0, str(Path(__file__).parent))
from scan_speed import PYTHON  # the generated module of the scan benchmark


def corpus(limit: int) -> list[str]:
    site = Path(sysconfig.get_paths()["purelib"])
    texts = [PYTHON.format(i=i) for i in range(limit // 5)]
    for path in sorted(site.rglob("*.py")):
        if len(texts) >= limit:
            break
        try:
            texts.append(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, OSError):
            continue
    return texts


def best_of(runs: int, work: Callable[[], int]) -> tuple[float, int]:
    times, found = [], 0
    for _ in range(runs):
        start = time.process_time()
        found = work()
        times.append(time.process_time() - start)
    return min(times), found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).parent / "results" / "python_prefilter.md"
    )
    args = parser.parse_args()
    needles = dispatch_for(frozenset(r.id for r in all_rules())).needles
    assert needles is not None
    texts = corpus(args.files)
    megabytes = sum(len(t) for t in texts) / 1e6
    needle_set = NeedleSet(needles)
    rows = [
        (
            "NeedleSet (recent first, then one trie pass)",
            lambda: sum(map(needle_set.found_in, texts)),
        ),
        (
            "one substring search per needle",
            lambda: sum(any(n in t for n in needles) for t in texts),
        ),
    ]
    lines = []
    for label, work in rows:
        seconds, found = best_of(args.runs, work)
        lines.append(f"| {label} | {seconds:.2f} | {found:,} |")
        print(f"{label:50} {seconds:6.2f} s  ({found:,} of {len(texts):,} files hold a needle)")
    machine = (
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{platform.platform()}"
    )
    report = (
        "# Python pre-filter\n\n"
        f"Measured {time.strftime('%Y-%m-%d')} with `benchmarks/python_prefilter.py "
        f"--files {args.files}` on: {machine}; CPU seconds, best of {args.runs}.\n\n"
        f"{len(texts):,} Python files, {megabytes:.1f} MB: the scan benchmark's generated module "
        f"and the installed packages' sources; {len(needles)} needles (every GP2xx rule "
        "enabled).\n\n"
        "| test | seconds | files holding a needle |\n|---|---:|---:|\n" + "\n".join(lines) + "\n"
    )
    args.out.write_text(report, encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
