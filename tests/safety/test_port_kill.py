"""SIGKILL ``port --in-place`` at random points: no file is ever lost, a re-run finishes the job.

After each of 50 kills, every file must hold its original, or hold its complete translation
with the complete original in its backup; a plain re-run (no ``--force``) must then finish
with every file translated, every backup the original, and no journal or temporary file left.

Each port runs in a child forked from a small server process that has imported gpuport once
(so a run costs its work, not Python's start-up); every tenth re-run is a fresh
``python -m gpuport.cli`` to show the same of the real command. Most kills come just after
an event (the n-th backup made, the n-th file replaced), so that every phase is hit however
fast the disk is; the rest at a random time from the start.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import gpuport
from gpuport.files import PORT_JOURNAL_NAME

KILLS = 50
SEED = 20261125
SOURCES = 8  # .cu files, besides a Dockerfile and a requirements.txt
RUN_TIMEOUT_S = 60.0

# A single-threaded process that forks one child per port: it reads the arguments as a JSON
# line and answers the child's pid; on the next line it reaps the child and answers its exit
# status (-9 when killed). Until then an ended child stays a zombie, so its pid is not reused
# and a late SIGKILL hits nothing else.
SERVER = """
import json, os, sys
from gpuport.cli import main
while line := sys.stdin.readline():
    args = json.loads(line)
    pid = os.fork()
    if pid == 0:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        try:
            main(args, prog_name="gpuport")
        except SystemExit as exc:
            os._exit(exc.code if isinstance(exc.code, int) else 1)
        except BaseException:
            os._exit(99)
        os._exit(0)
    print(pid, flush=True)
    sys.stdin.readline()
    print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), flush=True)
"""


def source_text(index: int) -> str:
    kernels = "".join(
        f"__global__ void k{j}(float* x) {{ x[threadIdx.x] += {j}; }}\n"
        f"void run{j}(float* x, cudaStream_t s) {{ k{j}<<<1, 32, 0, s>>>(x); "
        "cudaStreamSynchronize(s); }\n"
        for j in range(10 + index)
    )
    return f"// file {index}\n#include <cuda_runtime.h>\n{kernels}"


ORIGINALS: dict[str, bytes] = {
    **{f"src/k{i}.cu": source_text(i).encode() for i in range(SOURCES)},
    "Dockerfile": b"FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\nRUN pip install torch\n",
    "requirements.txt": b"torch==2.3.1+cu121\nnumpy\n",
}


def make_project(root: Path) -> Path:
    shutil.rmtree(root, ignore_errors=True)
    for rel, data in ORIGINALS.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return root


def environment() -> dict[str, str]:
    src = str(Path(gpuport.__file__).resolve().parents[1])
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": src + (os.pathsep + path if path else "")}


class PortServer:
    """The forking server: ``start`` a port, then ``wait`` for (or ``kill``) it."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", SERVER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=environment(),
        )

    def _line(self) -> str:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line, "the port server died"
        return line.strip()

    def start(self, root: Path) -> int:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(port_args(root)) + "\n")
        self.process.stdin.flush()
        return int(self._line())

    def wait(self) -> int:
        assert self.process.stdin is not None
        self.process.stdin.write("reap\n")
        self.process.stdin.flush()
        return int(self._line())

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=RUN_TIMEOUT_S)


def port_args(root: Path) -> list[str]:
    return ["port", "--no-progress", "--in-place", "--format", "json", str(root)]


@pytest.fixture
def server() -> Iterator[PortServer]:
    started = PortServer()
    yield started
    started.close()


def files_under(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def translations(server: PortServer, root: Path) -> tuple[dict[str, bytes], int, float]:
    """A full run: each file's translation, the exit code and the run's length in seconds."""
    make_project(root)
    started = time.monotonic()
    server.start(root)
    code = server.wait()
    length = time.monotonic() - started
    translated = {rel: (root / rel).read_bytes() for rel in ORIGINALS}
    assert all(translated[rel] != ORIGINALS[rel] for rel in ORIGINALS), "a file not ported"
    return translated, code, length


def running(pid: int) -> bool:
    """Is the child still at work (not a zombie)? True where /proc cannot say."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rpartition(b")")[2].split()[0] != b"Z"
    except OSError:
        return True


def wait_until(ready: Callable[[], bool], deadline: float, pid: int | None) -> float | None:
    """When ``ready()`` came true; None at ``deadline`` or when the child ``pid`` ended."""
    while not ready():
        if time.monotonic() > deadline or (pid is not None and not running(pid)):
            return None
        time.sleep(0.0002)
    return time.monotonic()


def inode(path: Path) -> int | None:
    try:
        return path.lstat().st_ino
    except FileNotFoundError:
        return None


def kill_point(
    rng: random.Random, root: Path, remaining: list[str], length: float
) -> tuple[str, Callable[[], bool]]:
    """Where to kill the next run: the n-th backup made, the n-th file replaced, or anywhere.

    Events, not times, so that every phase is hit however fast the disk is today.
    """
    n = rng.randrange(len(remaining)) + 1 if remaining else 1
    kind = rng.choice(["anywhere", "backup", "backup", "replaced", "replaced"])
    if kind == "anywhere":
        until = time.monotonic() + rng.uniform(0, length)
        return kind, lambda: time.monotonic() >= until
    if kind == "backup":
        journal = root / PORT_JOURNAL_NAME  # after it, the backups are this run's

        def backups() -> bool:
            made = sum(os.path.lexists(root / (rel + ".orig")) for rel in remaining)
            return os.path.lexists(journal) and made >= n

        return kind, backups
    before = {rel: inode(root / rel) for rel in remaining}  # a replaced file is a new inode
    return kind, lambda: sum(inode(root / rel) != before[rel] for rel in remaining) >= n


def check_every_file_is_whole(root: Path, translated: dict[str, bytes]) -> set[str]:
    """The kill invariant; the files that hold their translation."""
    done = set()
    for rel, original in ORIGINALS.items():
        now = (root / rel).read_bytes()
        backup = root / (rel + ".orig")
        if now == translated[rel]:
            assert backup.read_bytes() == original, f"{rel}: translated without its backup"
            done.add(rel)
        else:
            assert now == original, f"{rel}: neither the original nor its translation"
    return done


def check_finished(root: Path, translated: dict[str, bytes]) -> None:
    expected = set(ORIGINALS) | {rel + ".orig" for rel in ORIGINALS} | {"src"}
    assert files_under(root) == expected, "a journal or temporary file was left"
    for rel, original in ORIGINALS.items():
        assert (root / rel).read_bytes() == translated[rel], rel
        assert (root / (rel + ".orig")).read_bytes() == original, rel


def rerun(server: PortServer, root: Path, fresh_process: bool) -> int:
    if fresh_process:
        done = subprocess.run(
            [sys.executable, "-m", "gpuport.cli", *port_args(root)],
            capture_output=True,
            text=True,
            env=environment(),
            timeout=RUN_TIMEOUT_S,
            check=False,
        )
        assert "Traceback" not in done.stderr, done.stderr
        return done.returncode
    server.start(root)
    return server.wait()


def test_sigkill_during_in_place_never_loses_a_file(server: PortServer, tmp_path: Path) -> None:
    rng = random.Random(SEED)
    root = tmp_path / "proj"
    translated, clean_code, length = translations(server, root)
    make_project(root)
    mid_transaction = 0  # kills that left the journal: the run was writing
    partly_done = 0  # kills that left some files translated and some not
    reruns = 0
    done: set[str] = set()
    for kill in range(KILLS):
        remaining = sorted(set(ORIGINALS) - done)
        kind, ready = kill_point(rng, root, remaining, length)
        started = time.monotonic()
        pid = server.start(root)
        wait_until(ready, started + length * 5 + 1, pid)
        if kind != "anywhere":
            time.sleep(rng.uniform(0, 0.002))
        os.kill(pid, signal.SIGKILL)
        code = server.wait()
        assert code in (-signal.SIGKILL, clean_code), f"kill {kill}: exit {code}"
        done = check_every_file_is_whole(root, translated)
        mid_transaction += (root / PORT_JOURNAL_NAME).exists()
        partly_done += 0 < len(done) < len(ORIGINALS)
        # now and then a plain re-run finishes the job; otherwise the next run starts on
        # what this kill left, journal and all
        if rng.random() < 0.35 or len(done) == len(ORIGINALS):
            reruns += 1
            code = rerun(server, root, fresh_process=reruns % 10 == 1)
            assert code == clean_code, f"kill {kill}: the re-run exited {code}"
            check_finished(root, translated)
            make_project(root)
            done = set()
    assert mid_transaction >= 15, f"only {mid_transaction} kills hit a run while it wrote"
    assert partly_done >= 8, f"only {partly_done} kills left a run half done"
