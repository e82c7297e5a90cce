"""The scan engine: walk, read, dispatch to scanners, suppress, baseline — on every core.

Files stream through a bounded pool of worker processes in batches, so memory stays flat
however many files a project has; results come back in a deterministic order. The pool never
outlives the scan: on Ctrl-C, SIGTERM or SIGHUP its workers are terminated and joined first.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import re
import signal
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from itertools import islice
from pathlib import Path, PurePosixPath
from types import FrameType
from typing import TypeVar

from gpuport.files import (
    NO_PROJECT_FACTS,
    FileKind,
    ProjectFacts,
    ProjectFile,
    SourceText,
    WalkOptions,
    read_text,
    walk,
)
from gpuport.findings import (
    CallFacts,
    Excerpt,
    Finding,
    Fix,
    ScanStats,
    Severity,
    SkipKind,
    Skipped,
    Tier,
)
from gpuport.project.build import build_model
from gpuport.project.model import ProjectModel
from gpuport.project.triage import triage
from gpuport.read_policy import ReadRefused, read_within
from gpuport.scan.base import scanners_for
from gpuport.scan.catalog import RuleTable, rule_ids
from gpuport.vcs import ChangedLines

EXCERPT_CONTEXT = 2  # lines shown before and after a finding
_BATCH = 64
_PARALLEL_THRESHOLD = 200  # below this many files a pool costs more than it saves
_WORKER_EXIT_SECONDS = 5.0  # how long a terminated worker may take to go before it is killed
# Signals that end the scan, with its pool, when they would end the process (default action).
_STOP_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)
)
_WORKER_SIGNALS = {signal.SIGINT, *_STOP_SIGNALS}
_PYTHON_KINDS = frozenset({FileKind.PYTHON, FileKind.SETUP_PY, FileKind.NOTEBOOK})

# `# gpuport: ignore`, `// gpuport: ignore[GP301]`, `gpuport: ignore[GP301, GP302]`
_SUPPRESS_RE = re.compile(r"gpuport:\s*ignore(?:\[\s*([A-Za-z0-9_,\s-]*)\])?")
_COMMENT_ONLY_RE = re.compile(r"^\s*(?:#|//|/\*|\*|--|<!--)")

ProgressCallback = Callable[[int, int], None]  # (files done, bytes done)
_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class ScanOptions:
    walk: WalkOptions = field(default_factory=WalkOptions)
    select: frozenset[str] = frozenset()  # empty: every rule
    ignore: frozenset[str] = frozenset()
    baseline: frozenset[str] = frozenset()  # fingerprints to leave out
    # `scan --diff`: only findings on these lines are kept (None: every finding)
    changed: ChangedLines | None = None
    jobs: int = 0  # processes that scan, this one included (0: one per core)
    # Build the project model first (first-party names, ROCm macros and aliases for the
    # scanners; tiers and NVIDIA-only components for the triage). False: every file is product
    # code and scanners know nothing of the project (port's own scans, some tests).
    project_model: bool = True


@dataclass(slots=True)
class ScanResult:
    """Everything one scan found, in a stable order."""

    root: str
    findings: list[Finding] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    stats: ScanStats = field(default_factory=ScanStats)
    suppressed: int = 0
    baselined: int = 0
    # `scan --diff`: the change the findings were limited to, and how many were outside it
    change: ChangedLines | None = None
    outside_change: int = 0
    rules: RuleTable = field(default_factory=RuleTable)  # the enabled rules, by id
    # What the project is (first-party names, components, tiers, ROCm path); None: not built.
    project: ProjectModel | None = None
    # Findings folded into one finding about their component (an NVIDIA-only component the
    # ROCm build leaves out): kept, so that nothing is lost, but not listed one by one.
    set_aside: list[Finding] = field(default_factory=list)
    # Each CUDA file's names called where ROCm compiles them and not (scan/kernels/callers.py)
    calls: list[CallFacts] = field(default_factory=list)

    @property
    def crashed(self) -> list[Skipped]:
        return [s for s in self.skipped if s.kind is SkipKind.RULE_CRASH]

    def worst(self) -> Severity | None:
        return max((f.severity for f in self.findings), default=None)

    def at_or_above(self, severity: Severity, *, all_tiers: bool = True) -> list[Finding]:
        """Findings at or above ``severity``; product code only unless ``all_tiers``."""
        return [
            f
            for f in self.findings
            if f.severity >= severity and (all_tiers or f.tier is Tier.PRODUCT)
        ]


@dataclass(slots=True)
class _FileOutcome:
    findings: list[tuple[Finding, str]]  # with each one's baseline fingerprint ("": no baseline)
    skipped: list[Skipped]
    suppressed: int
    scanned: bool
    size: int
    kind: str
    path: str  # the scanned file's rel
    # sort keys of suppressed findings located in other files, counted once per scan
    elsewhere_suppressed: list[tuple[str, int, int, str, str]] = field(default_factory=list)
    calls: list[CallFacts] = field(default_factory=list)  # the file's part of the call index


def _header_warp_judge(files: dict[str, str]) -> frozenset[str]:
    """GP305's judge of a project's header warp-size constants, for the project model (loaded
    only when some header names a warp size and holds a 32)."""
    from gpuport.scan.kernels.header_warp_sizes import size_only_header_constants

    return size_only_header_constants(files)


def scan_path(
    target: Path,
    options: ScanOptions = ScanOptions(),
    progress: ProgressCallback | None = None,
    display_root: str | None = None,
) -> ScanResult:
    """Scan a project folder (or one file) and return its findings and skipped inputs."""
    started = time.perf_counter()
    ids = [i for i in rule_ids() if _enabled(i, options)]
    result = ScanResult(
        root=display_root or str(target), rules=RuleTable(ids=ids), change=options.changed
    )
    enabled = frozenset(ids)
    # The model reads a handful of build files and bounded header bytes: 50-130 ms on
    # flash-attention, DeepSpeed and unsloth, against scans of seconds.
    if options.project_model and target.is_dir():
        result.project = build_model(target, _header_warp_judge)
    facts = result.project.facts if result.project is not None else NO_PROJECT_FACTS

    def files_only(items: Iterable[ProjectFile | Skipped]) -> Iterator[ProjectFile]:
        for item in items:
            if isinstance(item, Skipped):
                result.skipped.append(item)
            else:
                result.stats.files_seen += 1
                yield item

    stream = files_only(walk(target, options.walk))
    jobs = options.jobs or os.cpu_count() or 1
    # Look ahead to decide whether a pool is worth starting.
    head = list(islice(stream, _PARALLEL_THRESHOLD))
    files = _chain(head, stream)
    max_bytes = options.walk.max_file_bytes
    # Fingerprints are worked out only when a baseline needs them.
    need_prints = bool(options.baseline)
    elsewhere: set[object] = set()

    def merge_all(outcomes: Iterable[_FileOutcome]) -> None:
        for done, outcome in enumerate(outcomes, start=1):
            _merge(result, outcome, options, elsewhere)
            if progress is not None:
                progress(done, result.stats.bytes_scanned)

    if jobs > 1 and len(head) >= _PARALLEL_THRESHOLD:
        # The scanners of the kinds seen so far, and their tables, are loaded once here and
        # shared by the forked workers, which would otherwise each load their own.
        for kind in sorted({f.kind for f in head}):
            scanners_for(kind)
        if any(f.kind in _PYTHON_KINDS for f in head):
            from gpuport.scan.python.scanner import prime as prime_python

            prime_python(enabled, facts.first_party)
        workers = jobs - 1  # this process scans too
        with _worker_pool(workers) as pool:
            merge_all(_parallel(files, pool, max_bytes, enabled, need_prints, workers, facts))
    else:
        canonical = _Canonical()
        merge_all(_scan_file(f, max_bytes, enabled, need_prints, canonical, facts) for f in files)
    if result.project is not None:
        result.findings, result.set_aside = triage(
            result.findings, result.project, enabled, result.calls
        )
        if options.changed is not None:  # the findings triage made stand where it put them
            kept = [f for f in result.findings if options.changed.covers(f)]
            result.outside_change += len(result.findings) - len(kept)
            result.findings = kept
        result.set_aside.sort(key=lambda f: f.sort_key)
    result.findings.sort(key=lambda f: f.sort_key)
    result.skipped.sort()
    result.stats.seconds = time.perf_counter() - started
    return result


def _chain(head: list[ProjectFile], rest: Iterator[ProjectFile]) -> Iterator[ProjectFile]:
    yield from head
    yield from rest


def _enabled(rule_id: str, options: ScanOptions) -> bool:
    def matches(patterns: frozenset[str]) -> bool:
        return any(rule_id.startswith(p.upper()) for p in patterns)

    if options.select and not matches(options.select):
        return False
    return not matches(options.ignore)


def _merge(
    result: ScanResult,
    outcome: _FileOutcome,
    options: ScanOptions,
    elsewhere: set[object],
) -> None:
    """Add one file's outcome; ``elsewhere`` remembers findings located in other files.

    Two requirements files that both include ``common/base.txt`` both report its findings
    and input problems: each is kept (or counted as suppressed) once.
    """
    stats = result.stats
    if outcome.scanned:
        stats.files_scanned += 1
        stats.bytes_scanned += outcome.size
        stats.by_kind[outcome.kind] = stats.by_kind.get(outcome.kind, 0) + 1
    for problem in outcome.skipped:
        if problem.path != outcome.path:
            if problem in elsewhere:
                continue
            elsewhere.add(problem)
        result.skipped.append(problem)
    result.suppressed += outcome.suppressed
    result.calls.extend(outcome.calls)
    for key in outcome.elsewhere_suppressed:
        if key in elsewhere:
            result.suppressed -= 1
        elsewhere.add(key)
    for finding, fp in outcome.findings:
        if finding.location.path != outcome.path:
            if finding.sort_key in elsewhere:
                continue
            elsewhere.add(finding.sort_key)
        if fp in options.baseline:
            result.baselined += 1
        elif options.changed is not None and not options.changed.covers(finding):
            result.outside_change += 1
        else:
            result.findings.append(finding)


class _Stopped(BaseException):
    """A stop signal arrived while the pool ran; raised to unwind the scan and its workers."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise_stopped(signum: int, frame: FrameType | None) -> None:
    raise _Stopped(signum)


@contextmanager
def _worker_pool(jobs: int) -> Iterator[ProcessPoolExecutor]:
    """A pool of ``jobs`` scan workers that never outlives the scan.

    Whatever ends the scan early (Ctrl-C's KeyboardInterrupt, an error, a stop signal), the
    workers are terminated and joined before it goes on: an orphaned worker would keep
    running, and keep the caller's stdout pipe open, after gpuport is gone. Ctrl-C then goes
    on as KeyboardInterrupt (the CLI exits 130). SIGTERM and SIGHUP, whose default action
    ends the process, are caught only while the pool runs and only where that default is in
    force (``nohup`` ignores SIGHUP: still ignored); after the cleanup the signal is sent
    again with its default action, so gpuport ends as that signal would have ended it
    (the shell's status 128 + N, 143 for SIGTERM): the engine adds the cleanup, not a new
    outcome. Workers ignore SIGINT (a terminal's Ctrl-C reaches the whole process group):
    the main process alone decides, and no worker prints a traceback.
    """
    before = set(multiprocessing.active_children())
    # What the process holds so far (its modules, the KB, the rule tables) is kept out of the
    # cyclic garbage collector, in this process and in the workers it forks: their collections
    # would otherwise walk all of it and, touching every object, copy the shared memory pages
    # (about 0.14 s of CPU on DeepSpeed's Python with two workers). What was frozen before
    # (the CLI freezes what its modules made) stays frozen after.
    frozen_before = gc.get_freeze_count() > 0
    gc.freeze()
    pool = ProcessPoolExecutor(max_workers=jobs, initializer=_worker_init)
    try:
        _catch_stop_signals()
        yield pool
    except _Stopped as stop:
        with _signals_blocked():  # a second signal waits until the workers are gone
            _terminate(pool, before)
            _release_stop_signals()
        signal.raise_signal(stop.signum)  # the default action: the process ends here
        raise SystemExit(128 + stop.signum) from None  # only if something else handled it
    except BaseException:
        with _signals_blocked():
            _terminate(pool, before)
        raise
    else:
        pool.shutdown(wait=True)
    finally:
        _release_stop_signals()
        if not frozen_before:
            gc.unfreeze()


def _catch_stop_signals() -> None:
    """Turn each stop signal whose action is the default into :class:`_Stopped`."""
    if threading.current_thread() is threading.main_thread():  # where handlers may be set
        for signum in _STOP_SIGNALS:
            if signal.getsignal(signum) == signal.SIG_DFL:
                signal.signal(signum, _raise_stopped)


def _release_stop_signals() -> None:
    """Give the stop signals :func:`_catch_stop_signals` caught their default action back."""
    if threading.current_thread() is threading.main_thread():
        for signum in _STOP_SIGNALS:
            if signal.getsignal(signum) == _raise_stopped:
                signal.signal(signum, signal.SIG_DFL)


@contextmanager
def _signals_blocked() -> Iterator[None]:
    """Hold Ctrl-C and the stop signals back (they arrive when this ends); children inherit it."""
    if not hasattr(signal, "pthread_sigmask"):  # not POSIX
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _WORKER_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _worker_init() -> None:
    """In each worker: Ctrl-C is the main process's to handle; stop signals end it plainly."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for signum in _STOP_SIGNALS:  # a fork inherits the main process's _raise_stopped
        signal.signal(signum, signal.SIG_DFL)
    if hasattr(signal, "pthread_sigmask"):  # blocked by _signals_blocked
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _WORKER_SIGNALS)


def _terminate(pool: ProcessPoolExecutor, before: set[multiprocessing.process.BaseProcess]) -> None:
    """Stop ``pool``'s queued work, terminate its workers and wait until they are gone.

    The workers are the children started since ``before`` (``active_children``: public,
    unlike the pool's own table of processes).
    """
    pool.shutdown(wait=False, cancel_futures=True)
    workers = [p for p in multiprocessing.active_children() if p not in before]
    for worker in workers:
        worker.terminate()
    deadline = time.monotonic() + _WORKER_EXIT_SECONDS
    for worker in workers:
        worker.join(max(0.0, deadline - time.monotonic()))
        if worker.is_alive():
            worker.kill()
            worker.join()


def _parallel(
    files: Iterator[ProjectFile],
    pool: ProcessPoolExecutor,
    max_bytes: int,
    enabled: frozenset[str],
    need_prints: bool,
    workers: int,
    facts: ProjectFacts,
) -> Iterator[_FileOutcome]:
    """Scan batches of files in ``workers`` worker processes and in this one, the outcomes in
    the files' order.

    Each worker has up to two batches queued; while they are all busy this process scans the
    next batch itself instead of waiting: with two cores, one worker and this process scan as
    fast as two workers did, and the second worker's start and its results' round trip are
    saved (DeepSpeed's Python: benchmarks/results/python_vs_bandit.md).
    """
    pending: deque[Future[list[_FileOutcome]] | list[_FileOutcome]] = deque()
    exhausted = False

    def busy() -> int:
        return sum(1 for p in pending if isinstance(p, Future) and not p.done())

    while True:
        while not exhausted and busy() < 2 * workers:
            batch = list(islice(files, _BATCH))
            if not batch:
                exhausted = True
                break
            # The pool starts its workers inside submit(): with the signals blocked, a worker
            # cannot take one before _worker_init has set its own handlers.
            with _signals_blocked():
                # The facts travel with each batch (a few hundred names): a worker needs no
                # state of its own, whichever start method the pool uses.
                pending.append(
                    pool.submit(_scan_batch, batch, max_bytes, enabled, need_prints, facts)
                )
        while pending and (isinstance(pending[0], list) or pending[0].done()):
            yield from _outcomes(pending.popleft())
        if not exhausted:
            batch = list(islice(files, _BATCH))
            if batch:
                pending.append(_scan_batch(batch, max_bytes, enabled, need_prints, facts))
            else:
                exhausted = True
        elif pending:
            yield from _outcomes(pending.popleft())  # waits for a worker
        else:
            return


def _outcomes(done: Future[list[_FileOutcome]] | list[_FileOutcome]) -> list[_FileOutcome]:
    return done if isinstance(done, list) else done.result()


def _scan_batch(
    batch: list[ProjectFile],
    max_bytes: int,
    enabled: frozenset[str],
    need_prints: bool,
    facts: ProjectFacts = NO_PROJECT_FACTS,
) -> list[_FileOutcome]:
    # One table per batch: equal messages and fixes become one object, which the batch's
    # pickle then sends once and the main process keeps once.
    canonical = _Canonical()
    return [_scan_file(f, max_bytes, enabled, need_prints, canonical, facts) for f in batch]


class _Canonical:
    """One shared object per distinct message, fix, reference list and excerpt line.

    Most findings of a rule share its message and fix, and excerpts repeat lines (`}`, an
    `#include`): kept once each, a finding takes 390 bytes instead of 860 (50,000 findings of
    benchmarks/scan_memory.py). The tables stop growing at ``_LIMIT`` entries.
    """

    __slots__ = ("_fixes", "_refs", "_texts")
    _LIMIT = 1 << 14

    def __init__(self) -> None:
        self._texts: dict[str, str] = {}
        self._fixes: dict[Fix, Fix] = {}
        self._refs: dict[tuple[str, ...], tuple[str, ...]] = {}

    def finding(self, finding: Finding, excerpt: Excerpt | None) -> Finding:
        fix = finding.fix
        if excerpt is not None:  # the same line in other files (`}`, an #include) kept once
            texts = self._texts
            excerpt = Excerpt(excerpt.start_line, tuple(self._one(texts, t) for t in excerpt.lines))
        return replace(
            finding,
            message=self._one(self._texts, finding.message),
            fix=None if fix is None else self._one(self._fixes, fix),
            references=self._one(self._refs, finding.references),
            excerpt=excerpt,
        )

    def _one(self, table: dict[_T, _T], value: _T) -> _T:
        found = table.get(value)
        if found is not None:
            return found
        if len(table) < self._LIMIT:
            table[value] = value
        return value


def _scan_file(
    file: ProjectFile,
    max_bytes: int,
    enabled: frozenset[str],
    need_prints: bool,
    canonical: _Canonical,
    facts: ProjectFacts = NO_PROJECT_FACTS,
) -> _FileOutcome:
    source = read_text(file, max_bytes)
    if isinstance(source, Skipped):
        return _FileOutcome([], [source], 0, False, 0, file.kind.value, file.rel)
    if facts is not NO_PROJECT_FACTS:
        source = replace(source, facts=facts)
    skipped: list[Skipped] = [source.problem] if source.problem else []
    raw: list[Finding] = []
    calls: list[CallFacts] = []
    with _collector_paused():
        _run_scanners(file, source, enabled, raw, skipped, calls)
    if not raw:
        return _FileOutcome([], skipped, 0, True, file.size, file.kind.value, file.rel, calls=calls)
    # A finding may sit in another file than the one scanned (a requirements file reached only
    # through `-r`): its excerpt, suppression markers and fingerprint come from that file.
    texts: dict[str, _LinesOf] = {file.rel: _LinesOf(source.text.splitlines())}
    kept: list[tuple[Finding, str]] = []
    suppressed = 0
    elsewhere: list[tuple[str, int, int, str, str]] = []
    seen: set[tuple[str, str, int, int, str]] = set()
    for finding in raw:
        loc = finding.location
        key = (loc.path, finding.rule_id, loc.line, loc.column, finding.message)
        if key in seen:  # two scanners, or one rule twice on the same spot
            continue
        seen.add(key)
        of = texts.get(loc.path)
        if of is None:
            of = texts[loc.path] = _LinesOf(_other_file_lines(file, loc.path, max_bytes))
        lines = of.lines
        if _is_suppressed(finding, of.suppressions):
            suppressed += 1
            if loc.path != file.rel:
                elsewhere.append(finding.sort_key)
            continue
        excerpt = finding.excerpt
        if excerpt is None and loc.line > 0 and lines:
            start = max(1, loc.line - EXCERPT_CONTEXT)
            end = min(len(lines), loc.line + EXCERPT_CONTEXT)
            excerpt = Excerpt(start, tuple(lines[start - 1 : end]))
        finding = canonical.finding(finding, excerpt)
        fingerprint = ""
        if need_prints:
            line_text = lines[loc.line - 1] if 0 < loc.line <= len(lines) else ""
            fingerprint = finding.fingerprint(line_text)
        kept.append((finding, fingerprint))
    return _FileOutcome(
        kept, skipped, suppressed, True, file.size, file.kind.value, file.rel, elsewhere, calls
    )


@contextmanager
def _collector_paused() -> Iterator[None]:
    """No cyclic garbage collection while one file is scanned.

    A file's syntax tree and the walk's tables are freed by reference counting when its scan
    ends; collecting while they grow walked them again and again (a third of ``ast.parse``'s
    time on DeepSpeed's Python). Whatever cycles a scan leaves are collected after it.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _run_scanners(
    file: ProjectFile,
    source: SourceText,
    enabled: frozenset[str],
    raw: list[Finding],
    skipped: list[Skipped],
    calls: list[CallFacts],
) -> None:
    """The findings (to ``raw``) and input problems (to ``skipped``) of every scanner of
    ``file``'s kind; a scanner that crashes is reported as one and the others still run."""
    for sc in scanners_for(file.kind):
        try:
            for item in sc.function(source, enabled):
                if isinstance(item, Skipped):
                    skipped.append(item)
                elif isinstance(item, CallFacts):
                    calls.append(item)
                elif item.rule_id in enabled:
                    raw.append(item)
        except Exception as exc:  # a bug in gpuport: report it, keep going
            tb = traceback.extract_tb(exc.__traceback__)
            where = f" at {Path(tb[-1].filename).name}:{tb[-1].lineno}" if tb else ""
            skipped.append(
                Skipped(
                    file.rel,
                    SkipKind.RULE_CRASH,
                    f"scanner {sc.name!r} crashed ({type(exc).__name__}: {exc}){where}; "
                    "its findings for this file may be incomplete — please report this bug",
                )
            )


class _LinesOf:
    """One file's lines and the suppression markers in them, worked out once."""

    __slots__ = ("lines", "suppressions")

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.suppressions = _suppressions(lines)


def _other_file_lines(file: ProjectFile, rel: str, max_bytes: int) -> list[str]:
    """The lines of ``rel`` (relative to the scan root of ``file``); [] when it cannot be read.

    Only files inside the scan root are read.
    """
    posix = PurePosixPath(rel)
    if posix.is_absolute() or ".." in posix.parts or not posix.parts:
        return []
    try:
        data = read_within(file.root, file.root.joinpath(*posix.parts), max_bytes)
    except (OSError, ReadRefused):
        return []
    # surrogateescape, as read_text keeps bytes that are not UTF-8: same fingerprints.
    return data.decode("utf-8", "surrogateescape").splitlines()


def _suppressions(lines: list[str]) -> dict[int, frozenset[str] | None]:
    """Line number -> rule ids suppressed there (None: every rule).

    A marker applies to its own line; a marker on a comment-only line also applies to the
    next line.
    """
    out: dict[int, frozenset[str] | None] = {}
    for number, text in enumerate(lines, start=1):
        if "gpuport" not in text:
            continue
        m = _SUPPRESS_RE.search(text)
        if not m:
            continue
        ids = (
            None
            if m.group(1) is None
            else frozenset(p.strip().upper() for p in m.group(1).split(",") if p.strip())
        )
        targets = [number]
        if _COMMENT_ONLY_RE.match(text):
            targets.append(number + 1)
        for t in targets:
            prev = out.get(t, frozenset())
            out[t] = None if ids is None or prev is None else prev | ids
    return out


def _is_suppressed(finding: Finding, suppressions: dict[int, frozenset[str] | None]) -> bool:
    line = finding.location.line
    if line not in suppressions:
        return False
    ids = suppressions[line]
    return ids is None or finding.rule_id in ids
