"""Python scan speed against bandit: both tools, whole process, on the same Python files.

The scan-speed goal (issue 9) is that ``gpuport scan`` reads Python at least 8x faster than
bandit does. This script copies the ``.py`` files of each ``--source`` folder (and, with
``--generated N``, N modules like the scan benchmark's) into one temporary folder per set, then
runs, one after the other and ``--repeats`` times, ``gpuport scan SET --format json`` and
``bandit -r SET -f json`` as separate processes, and reports each one's wall and CPU time
(user + system of the process and its workers), min and median. CPU time is the figure to
compare on a shared machine; the load average before and after is recorded with it.

bandit is not a dependency of gpuport: install it into a throwaway virtual environment first,
``python3 -m venv /tmp/banditenv && /tmp/banditenv/bin/pip install bandit``, and pass
``--bandit /tmp/banditenv`` (a venv or the ``bandit`` executable), or have ``bandit`` on PATH.
This script never installs anything.

    .venv/bin/python benchmarks/python_vs_bandit.py --bandit /tmp/banditenv \\
        --source /work/corpus/DeepSpeed --source /work/corpus/unsloth --generated 1000
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench_output import write_results  # benchmarks/ is the script's folder
from scan_speed import PYTHON  # the scan benchmark's generated module


@dataclass(frozen=True)
class FileSet:
    name: str
    root: Path
    files: int
    lines: int
    bytes: int


@dataclass(frozen=True)
class Run:
    wall: float
    cpu: float


def find_bandit(given: str | None) -> Path:
    """The bandit executable: ``given`` (an executable or a venv), else the one on PATH."""
    if given:
        path = Path(given)
        if path.is_dir():
            path = path / "bin" / "bandit"
        if path.is_file() and os.access(path, os.X_OK):
            return path
        sys.exit(f"no bandit executable at {path}")
    found = shutil.which("bandit")
    if found is None:
        sys.exit(
            "bandit not found: python3 -m venv /tmp/banditenv && "
            "/tmp/banditenv/bin/pip install bandit, then --bandit /tmp/banditenv"
        )
    return Path(found)


def copy_python(source: Path, dest: Path) -> None:
    """The regular ``.py`` files under ``source`` (no symlinks, no hidden folders) to ``dest``."""
    for dirpath, dirnames, filenames in os.walk(source):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in filenames:
            path = Path(dirpath) / name
            if name.endswith(".py") and not path.is_symlink() and path.is_file():
                target = dest / path.relative_to(source)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, target)


def describe(name: str, root: Path) -> FileSet:
    files = lines = size = 0
    for path in root.rglob("*.py"):
        data = path.read_bytes()
        files += 1
        lines += data.count(b"\n")
        size += len(data)
    return FileSet(name, root, files, lines, size)


def timed(command: list[str], env: dict[str, str] | None = None) -> Run:
    """Wall and CPU seconds of ``command`` run to completion (its exit status is not judged:
    both tools exit 1 when they find something)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, env=env
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Run(wall, cpu)


def load() -> str:
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def git_head() -> str:
    out = subprocess.run(
        ["git", "-C", str(Path(__file__).parent), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    )
    return out.stdout.strip() or "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bandit", help="bandit executable or the venv holding it")
    parser.add_argument("--source", type=Path, action="append", default=[])
    parser.add_argument("--generated", type=int, default=0, help="generated modules to add")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=None, help="gpuport --jobs (default: its own)")
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).parent / "results" / "python_vs_bandit.md"
    )
    args = parser.parse_args()
    bandit = find_bandit(args.bandit)
    version = subprocess.run(
        [str(bandit), "--version"], capture_output=True, text=True, check=False
    ).stdout.split("\n")[0]
    gpuport = [
        sys.executable,
        "-c",
        "import sys; from gpuport.cli import main; sys.exit(main())",
    ]
    jobs = [] if args.jobs is None else ["--jobs", str(args.jobs)]

    rows: list[tuple[FileSet, dict[str, list[Run]]]] = []
    loads = [load()]
    with tempfile.TemporaryDirectory(prefix="gpuport-vs-bandit-") as tmp:
        sets: list[FileSet] = []
        for source in args.source:
            root = Path(tmp) / source.name
            copy_python(source, root)
            sets.append(describe(source.name, root))
        if args.generated:
            root = Path(tmp) / "generated"
            for i in range(args.generated):
                path = root / f"pkg{i % 50}" / f"mod{i}.py"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(PYTHON.format(i=i), encoding="utf-8")
            sets.append(describe(f"generated ({args.generated} modules)", root))
        report = Path(tmp) / "report.json"
        # Both tools start from compiled bytecode, as installed tools do (pip compiles bandit's;
        # a source checkout run with PYTHONDONTWRITEBYTECODE would compile gpuport's every time).
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        for fileset in sets:
            runs: dict[str, list[Run]] = {"gpuport": [], "bandit": []}
            root, out = str(fileset.root), str(report)
            commands = {
                "gpuport": [*gpuport, "scan", root, "--format", "json", "-o", out, *jobs],
                "bandit": [str(bandit), "-r", root, "-f", "json", "-q", "-o", out],
            }
            for command in commands.values():  # warm-up: bytecode, file cache
                timed(command, env)
            for _ in range(args.repeats):
                for tool, command in commands.items():  # one after the other, alternating
                    runs[tool].append(timed(command, env))
            rows.append((fileset, runs))
            g, b = (statistics.median(r.cpu for r in runs[t]) for t in ("gpuport", "bandit"))
            print(f"{fileset.name}: gpuport {g:.2f} s CPU, bandit {b:.2f} s CPU", file=sys.stderr)
        loads.append(load())
        startup = [timed([*gpuport, "--version"], env) for _ in range(args.repeats)]

    machine = (
        f"{platform.machine()}, {os.cpu_count()} cores (shared), Python "
        f"{platform.python_version()}, {platform.platform()}"
    )
    sources = " ".join(f"--source {s}" for s in args.source)
    lines = [
        "# Python scan speed: gpuport vs bandit",
        "",
        f"Measured {time.strftime('%Y-%m-%d %H:%M')} at gpuport commit {git_head()} with "
        f"`benchmarks/python_vs_bandit.py {sources} --generated {args.generated} "
        f"--repeats {args.repeats}` on: {machine}; {version}. Load average (1, 5, 15 min) "
        f"{loads[0]} before, {loads[1]} after. gpuport ran with "
        f"{'its default workers' if args.jobs is None else f'--jobs {args.jobs}'}.",
        "",
        "Each tool ran as its own process over the same copied `.py` files, one after the other, "
        f"{args.repeats} times after one warm-up run each, from compiled bytecode; seconds are "
        "min / median. CPU is user + system time of the "
        "process and its workers (the fair figure on a shared machine); the goal is "
        "bandit CPU / gpuport CPU >= 8.",
        "",
        "| file set | files | lines | MB | gpuport wall | gpuport CPU | bandit wall | bandit CPU "
        "| bandit/gpuport (CPU, median) | (wall, median) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]

    def pair(values: list[float]) -> str:
        return f"{min(values):.2f} / {statistics.median(values):.2f}"

    for fileset, runs in rows:
        gw, gc = [r.wall for r in runs["gpuport"]], [r.cpu for r in runs["gpuport"]]
        bw, bc = [r.wall for r in runs["bandit"]], [r.cpu for r in runs["bandit"]]
        lines.append(
            f"| {fileset.name} | {fileset.files:,} | {fileset.lines:,} | "
            f"{fileset.bytes / 1e6:.1f} | {pair(gw)} | {pair(gc)} | {pair(bw)} | {pair(bc)} | "
            f"{statistics.median(bc) / statistics.median(gc):.1f}x | "
            f"{statistics.median(bw) / statistics.median(gw):.1f}x |"
        )
    lines += [
        "",
        f"gpuport's start-up alone (`gpuport --version`): {pair([r.wall for r in startup])} s "
        f"wall, {pair([r.cpu for r in startup])} s CPU.",
        "",
    ]
    write_results(args.out, lines)


if __name__ == "__main__":
    main()
