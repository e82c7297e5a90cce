"""The scan engine: dispatch, suppression, baselines, crash reporting, serial == parallel."""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import gpuport
from gpuport import rules as rules_module
from gpuport.files import FileKind, ProjectFile, SourceText
from gpuport.findings import Category, Confidence, Finding, Severity, SkipKind, Skipped, Tier
from gpuport.rules import Rule
from gpuport.scan import base, engine
from gpuport.scan.engine import ScanOptions, scan_path

TEST_RULE = Rule(
    id="GP599",
    slug="test-marker",
    category=Category.BUILD,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="The word MARKER appears",
    what="Finds MARKER.",
    why="Tests need a rule.",
    example="MARKER",
    instead="marker",
    fix="Remove MARKER.",
    mechanical=False,
)


def _marker_scanner(source: SourceText, enabled: frozenset[str]) -> Iterator[Finding | Skipped]:
    for number, line in enumerate(source.text.splitlines(), start=1):
        col = line.find("MARKER")
        if col >= 0:
            yield TEST_RULE.finding(source.file.rel, number, col + 1)
        if "CRASH" in line:
            raise RuntimeError("boom")


@pytest.fixture
def marker_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the test scanner runs (on .sh files), and GP599 is a known rule."""
    monkeypatch.setattr(
        base,
        "_SCANNERS",
        [base.FileScanner("marker", frozenset({FileKind.SHELL}), _marker_scanner)],
    )
    monkeypatch.setattr(base, "SCANNER_MODULES", {})  # no real scanner loads meanwhile
    monkeypatch.setitem(rules_module._REGISTRY, TEST_RULE.id, TEST_RULE)


def write(root: Path, rel: str, text: str) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


@pytest.mark.usefixtures("marker_rule")
def test_findings_are_sorted_with_excerpts(tmp_path: Path) -> None:
    write(tmp_path, "b.sh", "x\nMARKER\n")
    write(tmp_path, "a.sh", "one\ntwo\nthree MARKER\nfour\nfive\nsix\n")
    result = scan_path(tmp_path, ScanOptions(jobs=1))
    assert [(f.location.path, f.location.line, f.location.column) for f in result.findings] == [
        ("a.sh", 3, 7),
        ("b.sh", 2, 1),
    ]
    excerpt = result.findings[0].excerpt
    assert excerpt is not None
    assert excerpt.start_line == 1 and excerpt.lines == (
        "one",
        "two",
        "three MARKER",
        "four",
        "five",
    )
    assert result.stats.files_scanned == 2


@pytest.mark.usefixtures("marker_rule")
def test_inline_suppression_same_line_next_line_and_other_rule(tmp_path: Path) -> None:
    write(
        tmp_path,
        "s.sh",
        "MARKER  # gpuport: ignore[GP599]\n"
        "# gpuport: ignore\n"
        "MARKER\n"
        "MARKER  # gpuport: ignore[GP101]\n"
        "MARKER\n",
    )
    result = scan_path(tmp_path, ScanOptions(jobs=1))
    assert [f.location.line for f in result.findings] == [4, 5]
    assert result.suppressed == 2


@pytest.mark.usefixtures("marker_rule")
def test_select_and_ignore(tmp_path: Path) -> None:
    write(tmp_path, "s.sh", "MARKER\n")
    assert scan_path(tmp_path, ScanOptions(jobs=1, ignore=frozenset({"GP5"}))).findings == []
    assert scan_path(tmp_path, ScanOptions(jobs=1, select=frozenset({"GP1"}))).findings == []
    assert len(scan_path(tmp_path, ScanOptions(jobs=1, select=frozenset({"gp599"}))).findings) == 1


@pytest.mark.usefixtures("marker_rule")
def test_baseline_survives_lines_moving(tmp_path: Path) -> None:
    write(tmp_path, "s.sh", "MARKER one\n")
    first = scan_path(tmp_path, ScanOptions(jobs=1))
    prints = frozenset(f.fingerprint("MARKER one") for f in first.findings)
    write(tmp_path, "s.sh", "new line\nMARKER one\nMARKER two\n")
    again = scan_path(tmp_path, ScanOptions(jobs=1, baseline=prints))
    assert [f.location.line for f in again.findings] == [3]
    assert again.baselined == 1


@pytest.mark.usefixtures("marker_rule")
def test_a_crashing_scanner_is_reported_not_swallowed(tmp_path: Path) -> None:
    write(tmp_path, "a.sh", "MARKER\nCRASH\n")
    write(tmp_path, "b.sh", "MARKER\n")
    result = scan_path(tmp_path, ScanOptions(jobs=1))
    assert [s.path for s in result.crashed] == ["a.sh"]
    assert "RuntimeError: boom" in result.crashed[0].reason
    assert "may be incomplete" in result.crashed[0].reason
    # what it found before crashing is kept, and the rest of the project goes on
    assert [f.location.path for f in result.findings] == ["a.sh", "b.sh"]


@pytest.mark.usefixtures("marker_rule")
def test_bad_inputs_are_listed_and_the_rest_is_scanned(tmp_path: Path) -> None:
    write(tmp_path, "ok.sh", "MARKER\n")
    (tmp_path / "bin.sh").write_bytes(b"\0\0MARKER")
    (tmp_path / "latin.sh").write_bytes(b"echo \xff\nMARKER\n")
    result = scan_path(tmp_path, ScanOptions(jobs=1))
    kinds = {s.path: s.kind for s in result.skipped}
    assert kinds == {"bin.sh": SkipKind.BINARY, "latin.sh": SkipKind.NOT_UTF8}
    assert [f.location.path for f in result.findings] == ["latin.sh", "ok.sh"]


def test_parallel_scan_equals_serial_scan(tmp_path: Path) -> None:
    # Real scanners, in worker processes: same findings, same order.
    for i in range(260):
        write(
            tmp_path,
            f"pkg{i % 7}/k{i}.cu",
            "__global__ void k(float* x) {\n"
            "  int lane = threadIdx.x & 31;\n"
            "  x[lane] = __shfl_sync(0xffffffff, x[lane], 0);\n}\n",
        )
        write(tmp_path, f"pkg{i % 7}/m{i}.py", "import torch\nprint(torch.version.cuda)\n")
    handlers = [signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)]
    serial = scan_path(tmp_path, ScanOptions(jobs=1))
    parallel = scan_path(tmp_path, ScanOptions(jobs=2))
    # the pool's own signal handling ends with it
    assert [signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)] == handlers
    assert serial.stats.files_scanned == parallel.stats.files_scanned == 520
    assert len(serial.findings) >= 520  # every file has something to find
    assert [(f.rule_id, f.location) for f in serial.findings] == [
        (f.rule_id, f.location) for f in parallel.findings
    ]


_SCANNED_HERE: list[int] = []  # batch sizes; a worker appends to its own copy
_SCAN_BATCH = engine._scan_batch


def _recorded_scan_batch(batch: list[ProjectFile], *args: Any) -> list[Any]:
    _SCANNED_HERE.append(len(batch))
    return _SCAN_BATCH(batch, *args)


def test_the_main_process_scans_beside_its_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``jobs`` processes, ``jobs - 1`` are workers: this one takes batches too, while
    they are busy, and every file is scanned once, in the files' order."""
    for i in range(300):
        write(tmp_path, f"m{i:03}.py", "import pynvml\n" + "x = 1\n" * 400)
    _SCANNED_HERE.clear()
    monkeypatch.setattr(engine, "_scan_batch", _recorded_scan_batch)
    monkeypatch.setattr(engine, "_PARALLEL_THRESHOLD", 10)
    monkeypatch.setattr(engine, "_BATCH", 5)
    result = scan_path(tmp_path, ScanOptions(jobs=2))
    assert 0 < sum(_SCANNED_HERE) < 300
    assert [f.location.path for f in result.findings] == [f"m{i:03}.py" for i in range(300)]


# ---------------------------------------------------------------------------------------------
# Findings located in another file than the one scanned (a file reached only through `-r`)


def _pointing_scanner(source: SourceText, enabled: frozenset[str]) -> Iterator[Finding | Skipped]:
    """`POINT rel line` reports GP599 at that line of that other file."""
    for line in source.text.splitlines():
        if line.startswith("POINT "):
            _, rel, number = line.split()
            yield TEST_RULE.finding(rel, int(number), 1, message=f"in {rel}")


@pytest.fixture
def pointing_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        base,
        "_SCANNERS",
        [base.FileScanner("pointing", frozenset({FileKind.SHELL}), _pointing_scanner)],
    )
    monkeypatch.setattr(base, "SCANNER_MODULES", {})  # no real scanner loads meanwhile
    monkeypatch.setitem(rules_module._REGISTRY, TEST_RULE.id, TEST_RULE)


OTHER = "l1\nl2\nl3\nMARKER four\nl5\n# gpuport: ignore[GP599]\nMARKER seven\nl8\n"


@pytest.mark.usefixtures("pointing_rule")
def test_a_finding_in_another_file_takes_excerpt_and_markers_from_that_file(
    tmp_path: Path,
) -> None:
    # a.sh's own marker covers its lines 3 and 4: it must not suppress line 4 of the other file.
    write(tmp_path, "a.sh", "x\nx\n# gpuport: ignore\nPOINT notes/other.txt 4\n")
    write(tmp_path, "b.sh", "POINT notes/other.txt 7\nPOINT missing.txt 2\nPOINT ../up.txt 1\n")
    write(tmp_path, "notes/other.txt", OTHER)
    write(tmp_path.parent, "up.txt", "outside the root\n")
    result = scan_path(tmp_path, ScanOptions(jobs=1))
    assert [(f.location.path, f.location.line) for f in result.findings] == [
        ("../up.txt", 1),
        ("missing.txt", 2),
        ("notes/other.txt", 4),
    ]
    up, missing, other = result.findings
    assert other.excerpt is not None
    assert (other.excerpt.start_line, other.excerpt.lines) == (
        2,
        ("l2", "l3", "MARKER four", "l5", "# gpuport: ignore[GP599]"),
    )
    # Files that cannot be read, or lie outside the scan root, give no excerpt.
    assert up.excerpt is None and missing.excerpt is None
    assert result.suppressed == 1  # line 7, by the marker in notes/other.txt


@pytest.mark.usefixtures("pointing_rule")
def test_a_finding_in_another_file_is_kept_once_when_two_files_report_it(
    tmp_path: Path,
) -> None:
    write(tmp_path, "a.sh", "POINT notes/other.txt 4\nPOINT notes/other.txt 7\n")
    write(tmp_path, "b.sh", "POINT notes/other.txt 4\nPOINT notes/other.txt 7\n")
    write(tmp_path, "notes/other.txt", OTHER)
    result = scan_path(tmp_path, ScanOptions(jobs=1))
    assert [(f.location.path, f.location.line) for f in result.findings] == [("notes/other.txt", 4)]
    assert result.suppressed == 1


@pytest.mark.usefixtures("pointing_rule")
def test_baseline_fingerprint_of_a_finding_in_another_file_uses_that_files_line(
    tmp_path: Path,
) -> None:
    write(tmp_path, "a.sh", "POINT notes/other.txt 4\n")
    write(tmp_path, "notes/other.txt", OTHER)
    (finding,) = scan_path(tmp_path, ScanOptions(jobs=1)).findings
    prints = frozenset({finding.fingerprint("MARKER four")})
    # Lines move in the other file (and in the scanned one): the baseline still holds.
    write(tmp_path, "a.sh", "echo\nPOINT notes/other.txt 5\n")
    write(tmp_path, "notes/other.txt", "l0\n" + OTHER)
    again = scan_path(tmp_path, ScanOptions(jobs=1, baseline=prints))
    assert again.findings == [] and again.baselined == 1
    # A different line there is a new finding.
    write(tmp_path, "notes/other.txt", "l0\nl1\nl2\nl3\nMARKER changed\n")
    changed = scan_path(tmp_path, ScanOptions(jobs=1, baseline=prints))
    assert [f.location.line for f in changed.findings] == [5] and changed.baselined == 0


# ---------------------------------------------------------------------------------------------
# Signals: the worker pool never outlives gpuport


def _children(pid: int) -> set[int]:
    """The live children of ``pid`` (Linux: /proc/PID/task/TID/children)."""
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        with contextlib.suppress(OSError):  # the task ended meanwhile
            found.update(int(p) for p in task.read_text().split())
    return found


def _gone(pid: int) -> bool:
    """Has ``pid`` ended and been reaped (or is it at most a zombie nobody waits for)?"""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def _scan_in_worker_phase(tmp_path: Path) -> tuple[subprocess.Popen[bytes], set[int]]:
    """``gpuport scan`` (JSON on a pipe) of a project big enough for the pool, once it runs."""
    for i in range(3000):
        write(
            tmp_path / "p",
            f"pkg{i % 13}/k{i}.cu",
            "#include <cuda_runtime.h>\n__global__ void k(float* x) {\n"
            "  x[threadIdx.x] = __shfl_sync(0xffffffff, x[threadIdx.x], 0);\n}\n"
            + "// padding\n"
            * 200,
        )
    env = dict(os.environ, PYTHONPATH=str(Path(gpuport.__file__).parents[1]))
    # A terminal's job gets Ctrl-C as KeyboardInterrupt; a test run started in the background
    # (`cmd &` in a script) inherits SIGINT ignored, and Python keeps an ignored SIGINT.
    program = (
        "import signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
        "from gpuport.cli import main; main()"
    )
    command = [sys.executable, "-c", program, "scan"]
    proc = subprocess.Popen(
        # three scanning processes: this one and two workers
        [*command, str(tmp_path / "p"), "--jobs", "3", "--no-progress", "--format", "json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        start_new_session=True,  # its own process group, as a shell's job is
    )
    deadline = time.monotonic() + 60
    workers: set[int] = set()
    while len(workers) < 2 and proc.poll() is None and time.monotonic() < deadline:
        workers = _children(proc.pid)
        time.sleep(0.01)
    assert len(workers) == 2, "the scan never reached its worker phase"
    return proc, workers


def _read_to_eof(proc: subprocess.Popen[bytes], seconds: float) -> tuple[bytes, bytes]:
    """stdout and stderr to their ends; fails when either stays open for ``seconds``."""
    assert proc.stdout is not None and proc.stderr is not None
    outputs: dict[str, bytes] = {}
    readers = [
        threading.Thread(target=lambda n=name, s=stream: outputs.update({n: s.read()}))
        for name, stream in (("out", proc.stdout), ("err", proc.stderr))
    ]
    for reader in readers:
        reader.start()
    for reader in readers:
        reader.join(seconds)
    if any(reader.is_alive() for reader in readers):
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail(f"a pipe of gpuport stayed open {seconds} s after it was stopped")
    return outputs["out"], outputs["err"]


def _assert_all_gone(pids: set[int]) -> None:
    deadline = time.monotonic() + 5
    while not all(_gone(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [p for p in pids if not _gone(p)] == []


def test_sigterm_ends_the_scan_and_its_workers_and_closes_the_pipe(tmp_path: Path) -> None:
    proc, workers = _scan_in_worker_phase(tmp_path)
    os.kill(proc.pid, signal.SIGTERM)
    stdout, stderr = _read_to_eof(proc, 15)
    # gpuport ends as SIGTERM ends a process (a shell reports 143), with no report and no
    # traceback, and no worker is left running behind it.
    assert proc.wait(15) == -signal.SIGTERM
    assert stdout == b""
    assert b"Traceback" not in stderr, stderr.decode()
    _assert_all_gone(workers)


def test_ctrl_c_exits_130_and_leaves_no_worker(tmp_path: Path) -> None:
    proc, workers = _scan_in_worker_phase(tmp_path)
    os.killpg(proc.pid, signal.SIGINT)  # a terminal's Ctrl-C reaches the whole process group
    stdout, stderr = _read_to_eof(proc, 15)
    assert proc.wait(15) == 130
    assert stdout == b""
    assert b"interrupted" in stderr and b"Traceback" not in stderr, stderr.decode()
    _assert_all_gone(workers)


# ---------------------------------------------------------------------------------------------
# The project model: facts for every scanner, tiers on every finding, folds kept aside


def _facts_scanner(source: SourceText, enabled: frozenset[str]) -> Iterator[Finding | Skipped]:
    """One GP599 per file whose message lists what the scanner was told about the project."""
    facts = source.facts
    aliases = {name for header in facts.headers for name in header.rocm_aliases}
    told = ",".join(sorted(facts.first_party | facts.rocm_macros | aliases))
    yield TEST_RULE.finding(source.file.rel, 1, 1, message=f"knows {told}")


@pytest.fixture
def facts_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        base,
        "_SCANNERS",
        [base.FileScanner("facts", frozenset({FileKind.SHELL}), _facts_scanner)],
    )
    monkeypatch.setattr(base, "SCANNER_MODULES", {})  # no real scanner loads meanwhile
    monkeypatch.setitem(rules_module._REGISTRY, TEST_RULE.id, TEST_RULE)


ROCM_PROJECT = {
    "setup.py": (
        "import torch\n"
        "from torch.utils.cpp_extension import CUDAExtension\n"
        "if torch.version.hip:\n"
        "    flags = ['-DUSE_ROCM']\n"
        "ext = CUDAExtension('myext_cuda', ['csrc/a.cu'])\n"
        "setup(name='my-pkg')\n"
    ),
    "csrc/compat.cuh": "#ifdef USE_ROCM\n#define __shfl_xor_sync(m, v, l) __shfl_xor(v, l)\n#endif\n",
}
KNOWS = "knows USE_ROCM,__HIP_PLATFORM_AMD__,__shfl_xor_sync,my_pkg,myext_cuda"


@pytest.mark.usefixtures("facts_rule")
@pytest.mark.parametrize("jobs", [1, 2])
def test_project_facts_reach_every_scanner_serial_and_parallel(tmp_path: Path, jobs: int) -> None:
    for rel, text in ROCM_PROJECT.items():
        write(tmp_path, rel, text)
    for i in range(210):  # past the threshold where a pool is started
        write(tmp_path, f"tools/s{i}.sh" if i % 2 else f"pkg/s{i}.sh", "echo\n")
    result = scan_path(tmp_path, ScanOptions(jobs=jobs))
    assert result.project is not None and result.project.name == "my-pkg"
    assert len(result.findings) == 210
    assert {f.message for f in result.findings} == {KNOWS}
    assert {f.tier for f in result.findings if f.location.path.startswith("tools/")} == {Tier.DEV}
    assert {f.tier for f in result.findings if f.location.path.startswith("pkg/")} == {Tier.PRODUCT}


@pytest.mark.usefixtures("facts_rule")
def test_without_the_project_model_scanners_know_nothing_and_all_is_product(
    tmp_path: Path,
) -> None:
    for rel, text in ROCM_PROJECT.items():
        write(tmp_path, rel, text)
    write(tmp_path, "tests/t.sh", "echo\n")
    result = scan_path(tmp_path, ScanOptions(jobs=1, project_model=False))
    assert result.project is None
    ((message, tier),) = {(f.message, f.tier) for f in result.findings}
    assert (message, tier) == ("knows ", Tier.PRODUCT)


def test_an_nvidia_only_component_is_folded_and_its_findings_kept_aside(tmp_path: Path) -> None:
    write(
        tmp_path,
        "setup.py",
        "import torch\n"
        "if torch.version.hip:\n"
        "    sources = ['csrc/ck/api.cpp']\n"
        "else:\n"
        "    sources = ['csrc/cutlass_fwd/api.cu']\n",
    )
    write(tmp_path, "csrc/ck/api.cpp", "void f() {}\n")
    kernel = "__global__ void k(float* x) {\n  int lane = threadIdx.x & 31;\n  x[lane] = warp_sum(x[0]);\n}\n"
    write(tmp_path, "csrc/cutlass_fwd/api.cu", kernel)
    write(tmp_path, "csrc/cutlass_fwd/more.cu", kernel)
    write(tmp_path, "pkg/k.cu", kernel)
    result = scan_path(tmp_path, ScanOptions(jobs=1))
    aside = {f.location.path for f in result.set_aside}
    assert aside == {"csrc/cutlass_fwd/api.cu", "csrc/cutlass_fwd/more.cu"}
    listed = {(f.rule_id, f.location.path) for f in result.findings}
    assert ("GP601", "setup.py") in listed
    assert any(path == "pkg/k.cu" for _, path in listed)
    assert not any(path.startswith("csrc/cutlass_fwd/") for _, path in listed)
    without = scan_path(tmp_path, ScanOptions(jobs=1, ignore=frozenset({"GP601"})))
    assert without.set_aside == []
    assert {f.location.path for f in without.findings} >= aside


def test_the_garbage_collector_is_back_as_it_was_after_a_scan(tmp_path: Path) -> None:
    """The engine pauses cyclic collection while it scans a file, and only then."""
    (tmp_path / "m.py").write_text("import torch\ntorch.cuda.synchronize()\n", encoding="utf-8")
    assert gc.isenabled()
    frozen = gc.get_freeze_count()  # the CLI, run in this process before, freezes its modules
    scan_path(tmp_path, ScanOptions(jobs=1))
    # nothing newly frozen; a frozen object may be freed meanwhile (a scan's LRU cache evicting
    # an entry an earlier CLI run in this process froze), which lowers the count
    assert gc.isenabled() and gc.get_freeze_count() <= frozen
    gc.disable()
    try:
        scan_path(tmp_path, ScanOptions(jobs=1))
        assert not gc.isenabled()  # a caller's choice is left alone
    finally:
        gc.enable()


def test_a_pool_leaves_the_frozen_generation_as_it_found_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pool freezes what the process holds before it forks its workers; after the scan,
    a process that had frozen nothing has nothing frozen, and one that had (the CLI, which
    freezes its modules once loaded) keeps it frozen."""
    monkeypatch.setattr(engine, "_PARALLEL_THRESHOLD", 1)
    for i in range(3):
        (tmp_path / f"m{i}.py").write_text("import pynvml\n", encoding="utf-8")
    gc.unfreeze()
    scan_path(tmp_path, ScanOptions(jobs=2))
    assert gc.get_freeze_count() == 0
    gc.freeze()
    try:
        assert len(scan_path(tmp_path, ScanOptions(jobs=2)).findings) == 3
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
