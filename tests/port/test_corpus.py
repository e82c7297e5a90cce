"""The translation oracle: each corpus program compiles with nvcc, and its translation with hipcc.

``tests/corpus/`` holds CUDA programs written by the team (one ``.cu`` file, or a folder for a
multi-file project). ``tests/corpus/EXPECTED.toml`` says what each one exercises and what
must happen to its translation for the ROCm release whose compiler is installed here
(Debian's HIP 5.2); any other outcome fails. Newer releases cannot be compiled here, so the
translations for them are checked against the API map: no name or header the release lacks,
no CUDA name left that the release could have taken, warp intrinsics with 64-bit masks or a
report. No silent failure: every hipcc error of every corpus translation must be explained by
a diagnostic of gpuport's (on the error's line, or naming what the error names), or the
compile test fails whatever EXPECTED.toml says. The compile tests carry the ``compilers`` marker and skip only when nvcc or hipcc
is missing; without ``pytest-xdist`` the compilations run two at a time in the background.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import tempfile
import tomllib
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from silent_failures import line_map, silent_errors

from gpuport.port.apimap import ApiMap, Version, load_api_map, parse_version, version_text
from gpuport.port.check import ROCM_LIBRARY_HEADER_PREFIXES, CheckOptions, check_project
from gpuport.port.model import ChangeStatus, CheckStatus, CompileCheck, FileResult, PortResult
from gpuport.port.project import port_project
from gpuport.syntax.cxx import code_only

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "corpus"
EXPECTED_TOML = CORPUS / "EXPECTED.toml"
# scripts/cuda_headers.sh puts the cuBLAS/cuRAND/... headers here (CUDA's own are nvcc's).
CUDA_HEADERS = Path(os.environ.get("GPUPORT_CUDA_HEADERS", ROOT / ".cache" / "cuda-headers"))
COMPILED_ROCM = "5.2"  # the release of Debian's hipcc, the one compiler we have
MAP_ONLY_ROCM = ("6.4", "7.2")  # checked against the API map only
OFFLOAD_ARCH = "gfx90a"
COMPILE_TIMEOUT_S = 300
UNIT_SUFFIXES = frozenset({".cu", ".cpp", ".cc", ".cxx"})
SOURCE_SUFFIXES = UNIT_SUFFIXES | {".cuh", ".h", ".hpp", ".hh", ".inl"}
OUTCOME_KINDS = ("both-compile", "header-unavailable", "known-failure", "translator-bug")

NVCC = shutil.which("nvcc")
HIPCC = shutil.which("hipcc")
needs_compilers = pytest.mark.skipif(
    NVCC is None or HIPCC is None,
    reason=f"needs nvcc and hipcc on PATH (nvcc: {NVCC or 'absent'}, hipcc: {HIPCC or 'absent'})",
)

# A compiler's diagnostics (nvcc's EDG front end, gcc, clang, lld); not a Python traceback.
_ERROR_LINE_RE = re.compile(r"(?:^|[\s:)])(?:fatal |catastrophic )?error\s*:", re.IGNORECASE)
_MISSING_HEADER_RE = re.compile(r"fatal error: '([^']+)' file not found")
_INCLUDE_RE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"\r\n]+)[>"]', re.MULTILINE)
_IDENT_RE = re.compile(r"(?<![A-Za-z0-9_$])[A-Za-z_$][A-Za-z0-9_$]*")
_WARP_SYNC_RE = re.compile(
    r"(?<![A-Za-z0-9_$])(__shfl(?:_up|_down|_xor)?_sync|__ballot_sync|__any_sync|__all_sync"
    r"|__match_(?:any|all)_sync)\s*\("
)
_WARP_MASKLESS_ONLY = ("__activemask", "__syncwarp")  # names with versions of their own


# ------------------------------------------------------------------------------ the table


@dataclass(frozen=True)
class Program:
    """One corpus program and what EXPECTED.toml says must happen to it."""

    path: str  # relative to tests/corpus: a .cu file or a project folder
    exercises: str
    outcome: str  # "<kind>" or "<kind>:<detail>"
    errors: tuple[str, ...] = ()  # patterns: every hipcc error line must match one
    reported: tuple[str, ...] = ()  # patterns: each must match a reported change
    must_contain: tuple[str, ...] = ()  # text every checked translation must contain
    must_contain_at: dict[str, tuple[str, ...]] = field(default_factory=dict)  # by release
    nvcc_flags: tuple[str, ...] = ()
    include_dirs: tuple[str, ...] = ()  # relative to the program's folder
    map_bugs: dict[str, str] = field(default_factory=dict)  # rocm version -> bug id

    @property
    def kind(self) -> str:
        return self.outcome.partition(":")[0]

    @property
    def detail(self) -> str:
        return self.outcome.partition(":")[2]

    @property
    def root(self) -> Path:
        return CORPUS / self.path

    def units(self) -> list[str]:
        """The translation units, relative to the program's folder."""
        if self.root.is_file():
            return [self.root.name]
        return sorted(
            p.relative_to(self.root).as_posix()
            for p in self.root.rglob("*")
            if p.is_file() and p.suffix in UNIT_SUFFIXES
        )

    def sources(self) -> list[Path]:
        if self.root.is_file():
            return [self.root]
        return sorted(p for p in self.root.rglob("*") if p.suffix in SOURCE_SUFFIXES)


def _strings(item: dict[str, object], key: str) -> tuple[str, ...]:
    value = item.get(key, [])
    assert isinstance(value, list) and all(isinstance(v, str) for v in value), key
    return tuple(str(v) for v in value)


@functools.cache
def load_programs() -> tuple[Program, ...]:
    data = tomllib.loads(EXPECTED_TOML.read_text(encoding="utf-8"))
    programs = []
    for item in data["program"]:
        bugs = item.get("map_bugs", {})
        at = item.get("must_contain_at", {})
        assert isinstance(bugs, dict) and isinstance(at, dict)
        programs.append(
            Program(
                path=str(item["path"]),
                exercises=str(item["exercises"]),
                outcome=str(item["outcome"]),
                errors=_strings(item, "errors"),
                reported=_strings(item, "reported"),
                must_contain=_strings(item, "must_contain"),
                must_contain_at={str(k): _strings(at, k) for k in at},
                nvcc_flags=_strings(item, "nvcc_flags"),
                include_dirs=_strings(item, "include_dirs"),
                map_bugs={str(k): str(v) for k, v in bugs.items()},
            )
        )
    return tuple(programs)


PROGRAMS = load_programs()
PROGRAM_IDS = [p.path for p in PROGRAMS]


def test_table_lists_every_program_once() -> None:
    on_disk = {
        p.name
        for p in CORPUS.iterdir()
        if (p.is_file() and p.suffix == ".cu") or (p.is_dir() and not p.name.startswith("."))
    }
    listed = [p.path for p in PROGRAMS]
    assert len(listed) == len(set(listed)), "a program is listed twice"
    assert set(listed) == on_disk, (
        f"not in EXPECTED.toml: {sorted(on_disk - set(listed))}; "
        f"listed but missing: {sorted(set(listed) - on_disk)}"
    )
    assert len(PROGRAMS) >= 40


@pytest.mark.parametrize("program", PROGRAMS, ids=PROGRAM_IDS)
def test_table_entry_is_well_formed(program: Program) -> None:
    assert program.kind in OUTCOME_KINDS, program.outcome
    if program.kind != "both-compile":
        assert program.detail, f"{program.outcome}: say which header, or why"
    if program.kind in ("known-failure", "translator-bug"):
        assert program.errors, "say which hipcc errors are expected"
    if program.kind == "known-failure":
        assert program.reported, "an expected failure must be one gpuport reports"
    for pattern in (*program.errors, *program.reported):
        re.compile(pattern)
    for version in (*program.map_bugs, *program.must_contain_at):
        assert version in MAP_ONLY_ROCM or version == COMPILED_ROCM, version
    assert program.units(), "no .cu/.cpp translation unit"
    for unit in program.units():
        first = (program.root if program.root.is_file() else program.root / unit).read_bytes()
        assert first.startswith(b"// Exercises: "), f"{unit}: first line says what it exercises"


# ------------------------------------------------------------------------------ porting


@functools.cache
def ported(path: str, rocm: str, fix_warp_masks: bool = False) -> PortResult:
    result = port_project(
        CORPUS / path, rocm, fix_warp_masks=fix_warp_masks, rewrite_surroundings=False
    )
    assert not result.problems, result.problems
    return result


def _reported_names(file: FileResult) -> set[str]:
    """Names the translator left for a person, with a note saying why."""
    names: set[str] = set()
    for change in file.changes:
        if change.status is ChangeStatus.CONVERTED:
            continue
        if change.family == "kernel" and not _IDENT_RE.fullmatch(change.before):
            continue  # a scanner finding quotes its whole line: not a report of each name in it
        names.update(_IDENT_RE.findall(change.before))
        names.update(_IDENT_RE.findall(change.after))
    return names


def _reported_lines(file: FileResult) -> set[int]:
    return {c.line for c in file.changes if c.status is not ChangeStatus.CONVERTED}


def _mirror(program: Program, result: PortResult, tree: Path, translated: bool) -> None:
    """The program's files under ``tree``: the originals, or the translations over them."""
    by_path = {f.path: f for f in result.files}
    base = program.root.parent if program.root.is_file() else program.root
    for source in program.sources():
        rel = source.relative_to(base).as_posix()
        target = tree / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        port = by_path.get(rel)
        if translated and port is not None and port.translated is not None:
            (tree / port.new_path).parent.mkdir(parents=True, exist_ok=True)
            (tree / port.new_path).write_bytes(port.translated.encode("utf-8", "surrogateescape"))
        else:
            shutil.copyfile(source, target)


# ---------------------------------------------------------------------------- compiling


@dataclass(frozen=True)
class Compiled:
    unit: str
    ok: bool
    errors: tuple[str, ...]  # the compiler's error lines, paths made relative

    def first(self) -> str:
        return self.errors[0] if self.errors else "(no error line)"


@dataclass(frozen=True)
class ProgramRun:
    originals: tuple[Compiled, ...] = ()
    translations: tuple[Compiled, ...] = ()
    checks: tuple[CompileCheck, ...] = ()  # gpuport's own compile check (header-unavailable)


def compiler_errors(output: str, tree: Path) -> tuple[str, ...]:
    """Error lines only: no warnings, no notes, no rocm_agent_enumerator traceback (HIP 5.2's
    hipcc prints one when the machine has no GPU; it means nothing for a compile)."""
    lines: list[str] = []
    in_traceback = False
    for line in output.replace(str(tree) + os.sep, "").splitlines():
        if line.startswith("Traceback (most recent call last)"):
            in_traceback = True
            continue
        if in_traceback:
            if line.startswith((" ", "\t")) or not line.strip():
                continue
            in_traceback = False
            continue  # the exception line that closes the traceback
        if _ERROR_LINE_RE.search(line):
            lines.append(line.strip())
    return tuple(lines)


def _compile(argv: list[str], tree: Path, unit: str, env: dict[str, str] | None) -> Compiled:
    source = tree / unit
    try:
        done = subprocess.run(
            [*argv, str(source), "-o", str(source) + ".o"],
            cwd=source.parent,
            env=env,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=COMPILE_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return Compiled(unit, False, (f"timed out after {COMPILE_TIMEOUT_S} s",))
    errors = compiler_errors(done.stderr + done.stdout, tree)
    if done.returncode != 0 and not errors:
        errors = (f"exit status {done.returncode} without an error line",)
    return Compiled(unit, done.returncode == 0, errors)


def nvcc_argv(program: Program, tree: Path) -> list[str]:
    assert NVCC is not None
    includes = [f"-I{tree / d}" for d in program.include_dirs]
    return [
        NVCC,
        "-std=c++17",
        "-c",
        f"-I{CUDA_HEADERS / 'include'}",
        *includes,
        *program.nvcc_flags,
    ]


def hipcc_argv(program: Program, tree: Path) -> list[str]:
    assert HIPCC is not None
    includes = [f"-I{tree / d}" for d in program.include_dirs]
    # every error, not the first twenty: the table explains each one
    return [
        HIPCC,
        f"--offload-arch={OFFLOAD_ARCH}",
        "-std=c++17",
        "-ferror-limit=0",
        "-c",
        *includes,
    ]


def run_program(program: Program) -> ProgramRun:
    """nvcc on every original unit, hipcc on every translated one (ROCm 5.2). A program on
    a library this machine lacks goes through gpuport's own compile check instead, whose
    verdict ("not compiled: header … unavailable") is what the test checks."""
    result = ported(program.path, COMPILED_ROCM)
    if program.kind == "header-unavailable":
        options = CheckOptions(
            offload_arch=OFFLOAD_ARCH,
            jobs=1,
            nvcc_flags=("-std=c++17", f"-I{CUDA_HEADERS / 'include'}", *program.nvcc_flags),
            hipcc_flags=("-std=c++17",),
        )
        return ProgramRun(checks=tuple(check_project(program.root, result, options)))
    by_path = {f.path: f for f in result.files}
    hip_env = dict(os.environ, HIP_PLATFORM="amd")
    with tempfile.TemporaryDirectory(prefix="gpuport-corpus-") as tmp:
        cuda_tree, hip_tree = Path(tmp) / "cuda", Path(tmp) / "hip"
        _mirror(program, result, cuda_tree, translated=False)
        _mirror(program, result, hip_tree, translated=True)
        originals = tuple(
            _compile(nvcc_argv(program, cuda_tree), cuda_tree, unit, None)
            for unit in program.units()
        )
        translations = tuple(
            _compile(
                hipcc_argv(program, hip_tree),
                hip_tree,
                by_path[unit].new_path if unit in by_path else unit,
                hip_env,
            )
            for unit in program.units()
        )
    return ProgramRun(originals, translations)


class _Runs:
    """Compilations started ahead, two at a time, when pytest runs in one process."""

    def __init__(self, programs: list[Program]) -> None:
        self._pool: ThreadPoolExecutor | None = None
        self._futures: dict[str, Future[ProgramRun]] = {}
        if programs and not os.environ.get("PYTEST_XDIST_WORKER"):
            self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="corpus")
            self._futures = {p.path: self._pool.submit(run_program, p) for p in programs}

    def get(self, program: Program) -> ProgramRun:
        future = self._futures.get(program.path)
        return future.result() if future is not None else run_program(program)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)


_COMPILE_TESTS = ("test_translation_compiles", "test_library_header_unavailable")


@pytest.fixture(scope="module")
def runs(request: pytest.FixtureRequest) -> Iterator[Callable[[Program], ProgramRun]]:
    selected = []
    if NVCC is not None and HIPCC is not None:
        for item in request.session.items:
            callspec = getattr(item, "callspec", None)
            compile_test = getattr(item, "originalname", "") in _COMPILE_TESTS
            if compile_test and callspec:
                program = callspec.params.get("program")
                if isinstance(program, Program):
                    selected.append(program)
    pending = _Runs(selected)
    yield pending.get
    pending.close()


def _explain(run: ProgramRun) -> str:
    parts = []
    for label, items in (("nvcc", run.originals), ("hipcc", run.translations)):
        for c in items:
            parts.append(f"{label} {c.unit}: {'ok' if c.ok else c.first()}")
    return "\n".join(parts)


def _hip_errors(run: ProgramRun) -> list[str]:
    return [line for c in run.translations for line in c.errors]


def _assert_errors_match(program: Program, errors: list[str]) -> None:
    patterns = [re.compile(p) for p in program.errors]
    unexplained = [e for e in errors if not any(p.search(e) for p in patterns)]
    assert not unexplained, "hipcc errors EXPECTED.toml does not explain:\n" + "\n".join(
        unexplained[:10]
    )
    unseen = [p.pattern for p in patterns if not any(p.search(e) for e in errors)]
    assert not unseen, f"expected hipcc errors that did not occur: {unseen}"


def _assert_no_silent_failure(result: PortResult, run: ProgramRun) -> None:
    silent = silent_errors(result, _hip_errors(run))
    assert not silent, (
        "hipcc errors that no gpuport diagnostic explains (a silent failure: report it where "
        "the translator knows, or fix the translation):\n" + "\n".join(silent[:10])
    )


def test_a_hipcc_error_without_a_diagnostic_is_a_silent_failure() -> None:
    """The checker itself: errors on a reported line, or quoting a reported name, a header or
    an operator, are explained; any other error is silent."""
    from gpuport.port.model import Change

    def report(line: int, before: str, note: str = "why") -> Change:
        return Change(line, 1, "runtime", before, before, ChangeStatus.UNCONVERTED, note)

    original = "a\nb\nc\nd\n#define CHECK(x) \\\n  cusparseFail(x)\nCHECK(1);\n"
    translated = "#include <hip/hip_runtime.h>\n" + original  # one line added on top
    changes = [
        report(2, "cudaFoo"),
        report(4, "operator+=", "defines operator+= on float4"),
        report(6, "cusparseFail"),
        Change(3, 1, "runtime", "cudaBar", "hipBar", ChangeStatus.CONVERTED, ""),
    ]
    result = PortResult(
        "/p", "5.2", [FileResult("a.cu", "a.cu", "cuda", original, translated, changes)]
    )
    errors = [
        "a.cu:3:5: error: too few arguments to function call",  # line 2 of the original
        "a.cu:5:1: error: use of undeclared identifier 'cudaFoo'",
        "a.cu:4:1: error: no matching function for call to 'hipBar'",  # converted: silent
        "/usr/include/hip/x.h:9:1: error: use of overloaded operator '+=' is ambiguous",
        "a.cu:1:10: fatal error: 'cusparse.h' file not found",
        "garbled",
        "a.cu:8:1: error: cannot initialize a parameter of type 'int'",  # CHECK's expansion
    ]
    assert silent_errors(result, errors) == [errors[2], errors[4], errors[5]]


def test_an_error_on_a_continuation_line_is_explained_by_the_calls_report() -> None:
    from gpuport.port.model import Change

    original = "int f() {\n  use(cudaAdvise(p,\n             loc));\n  other(x);\n}\n"
    change = Change(2, 7, "runtime", "cudaAdvise", "cudaAdvise", ChangeStatus.UNCONVERTED, "why")
    result = PortResult("/p", "5.2", [FileResult("a.cu", "a.cu", "cuda", original, None, [change])])
    inside = "a.cu:3:14: error: no viable conversion from 'hipMemLocation' to 'int'"
    after = "a.cu:4:3: error: use of undeclared identifier 'other'"
    assert silent_errors(result, [inside, after]) == [after]


def _assert_reported(program: Program, result: PortResult) -> None:
    notes = [
        f"{c.before} -> {c.after}: {c.note}"
        for f in result.files
        for c in f.changes
        if c.status is not ChangeStatus.CONVERTED
    ]
    for pattern in program.reported:
        assert any(re.search(pattern, n) for n in notes), (
            f"gpuport does not report {pattern!r}; its notes:\n" + "\n".join(notes[:20])
        )


@needs_compilers
@pytest.mark.compilers
@pytest.mark.parametrize(
    "program", [p for p in PROGRAMS if p.kind != "header-unavailable"], ids=lambda p: p.path
)
def test_translation_compiles(program: Program, runs: Callable[[Program], ProgramRun]) -> None:
    """nvcc compiles the original; hipcc compiles the translation, or fails as the table says."""
    if not (CUDA_HEADERS / "include").is_dir():
        pytest.fail(f"CUDA library headers missing in {CUDA_HEADERS}: run scripts/cuda_headers.sh")
    result = ported(program.path, COMPILED_ROCM)
    run = runs(program)
    bad_originals = [c for c in run.originals if not c.ok]
    assert not bad_originals, "nvcc rejects the original:\n" + _explain(run)
    hip_ok = all(c.ok for c in run.translations)
    if program.kind == "both-compile":
        assert hip_ok, "hipcc rejects the translation:\n" + _explain(run)
        return
    _assert_no_silent_failure(result, run)
    if program.kind == "known-failure":
        assert not hip_ok, f"now compiles: update EXPECTED.toml ({program.outcome})"
        _assert_errors_match(program, _hip_errors(run))
        _assert_reported(program, result)
        return
    # translator-bug: a bug on file in corpus_failures.md; fails until the translator is fixed
    if hip_ok:
        pytest.fail(f"{program.detail} looks fixed (hipcc compiles it): update EXPECTED.toml")
    _assert_errors_match(program, _hip_errors(run))
    pytest.xfail(f"{program.detail}: {_hip_errors(run)[0]}")


@needs_compilers
@pytest.mark.compilers
@pytest.mark.parametrize(
    "program", [p for p in PROGRAMS if p.kind == "header-unavailable"], ids=lambda p: p.path
)
def test_library_header_unavailable(
    program: Program, runs: Callable[[Program], ProgramRun]
) -> None:
    """Programs on ROCm libraries this machine lacks: nvcc compiles the original, gpuport's
    compile check says the translation was not compiled for want of the header, and every
    HIP name it emitted is one the API map gives ROCm 5.2."""
    if not (CUDA_HEADERS / "include").is_dir():
        pytest.fail(f"CUDA library headers missing in {CUDA_HEADERS}: run scripts/cuda_headers.sh")
    header = program.detail
    assert header.startswith(ROCM_LIBRARY_HEADER_PREFIXES), header
    assert not any((d / header).exists() for d in _hip_include_dirs()), (
        f"{header} is installed now: compile it and update EXPECTED.toml"
    )
    result = ported(program.path, COMPILED_ROCM)
    checks = runs(program).checks
    assert {c.path for c in checks} >= set(program.units()), "a unit was not checked"
    for check in checks:
        assert not check.original_error, f"nvcc rejects {check.path}: {check.original_error}"
        assert check.status is CheckStatus.NOT_COMPILED, (check.path, check.status, check.detail)
        assert f"translation not compiled: header {header} unavailable" in check.detail, check
    translated = "".join(f.translated or "" for f in result.files)
    assert f"#include <{header}>" in translated
    _assert_reported(program, result)
    problems = map_problems(result, COMPILED_ROCM)
    assert not problems, "\n".join(problems)


@functools.cache
def _hip_include_dirs() -> tuple[Path, ...]:
    return tuple(p for p in (Path("/usr/include"), Path("/opt/rocm/include")) if p.is_dir())


# ---------------------------------------------------------------------- the API map check


@dataclass(frozen=True)
class _Availability:
    added: Version | None
    removed: Version | None

    def at(self, target: Version) -> bool:
        if self.added is not None and self.added > target:
            return False
        return self.removed is None or self.removed > target


@functools.cache
def _hip_names() -> dict[str, tuple[_Availability, ...]]:
    """Every HIP name the map can emit, with each version range it exists in."""
    api = load_api_map()
    names: dict[str, list[_Availability]] = {}
    for entry in api.entries.values():
        if entry.hip and _IDENT_RE.fullmatch(entry.hip):
            names.setdefault(entry.hip, []).append(
                _Availability(entry.hip_added, entry.hip_removed)
            )
    return {k: tuple(v) for k, v in names.items()}


def _exists(name: str, target: Version) -> bool:
    return any(a.at(target) for a in _hip_names().get(name, ()))


def _hip_headers(api: ApiMap) -> dict[str, list[str]]:
    """HIP header path -> the CUDA headers it can stand for (by any release's path)."""
    paths: dict[str, list[str]] = {}
    for entry in (*api.headers.values(), *api.header_prefixes):
        for path in {entry.hip, entry.flat} - {""}:
            paths.setdefault(path, []).append(entry.cuda)
    return paths


def _header_right(api: ApiMap, cuda: str, path: str, target: Version) -> bool:
    entry = api.header(cuda)
    if entry is None:
        return False
    return (entry.since is None or entry.since <= target) and entry.path_for(target) == path


def _first_argument(code: str, open_paren: int) -> str:
    depth, start = 0, open_paren + 1
    for i in range(open_paren, len(code)):
        ch = code[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return code[start:i].strip()
        elif ch == "," and depth == 1:
            return code[start:i].strip()
    return code[start:].strip()


def map_problems(result: PortResult, rocm: str, *, fixed_masks: bool = False) -> list[str]:
    """What the translations for ``rocm`` get wrong by the API map (empty when nothing)."""
    api = load_api_map()
    target = parse_version(rocm)
    headers = _hip_headers(api)
    problems: list[str] = []
    for file in result.files:
        if file.translated is None or file.kind not in ("cuda", "cxx"):
            continue
        where = f"{file.path} (ROCm {rocm})"
        reported = _reported_names(file)
        code = code_only(file.translated)
        lines_back = line_map(file.original, file.translated)
        for match in _IDENT_RE.finditer(code):
            name = match.group()
            line = code.count("\n", 0, match.start()) + 1
            if name in _hip_names() and not _exists(name, target) and name not in reported:
                problems.append(f"{where}:{line}: emits {name}, which ROCm {rocm} lacks")
            entry = api.entries.get(name)
            if (
                entry is not None
                and entry.hip
                and entry.hip != name
                and _Availability(entry.hip_added, entry.hip_removed).at(target)
                and name not in reported
            ):
                problems.append(f"{where}:{line}: {name} left as is; ROCm {rocm} has {entry.hip}")
        notes = [c.before for c in file.changes if c.status is not ChangeStatus.CONVERTED]
        for match in _INCLUDE_RE.finditer(file.translated):
            if code[match.start() + match.group(0).index("#")] != "#":
                continue  # inside a comment
            path = match.group(2).strip()
            line = file.translated.count("\n", 0, match.start()) + 1
            if (
                match.group(1) == '"'
                and (Path(result.root) / file.path).parent.joinpath(path).is_file()
            ):
                continue  # the project's own header beside the file, whatever its name
            cuda_header = api.header(path)
            if (
                cuda_header is not None
                and not cuda_header.keep
                and not any(path in note for note in notes)
            ):
                problems.append(f"{where}:{line}: #include <{path}> left, unreported")
            sources = headers.get(path, [])
            if sources and not any(_header_right(api, c, path, target) for c in sources):
                problems.append(f"{where}:{line}: <{path}> is not the ROCm {rocm} header")
        problems.extend(_warp_problems(file, code, target, rocm, lines_back, fixed_masks))
    return problems


def _warp_problems(
    file: FileResult,
    code: str,
    target: Version,
    rocm: str,
    lines_back: dict[int, int],
    fixed_masks: bool,
) -> list[str]:
    api = load_api_map()
    where = f"{file.path} (ROCm {rocm})"
    reported_lines = _reported_lines(file)
    problems = []
    for match in _WARP_SYNC_RE.finditer(code):
        name = match.group(1)
        line = code.count("\n", 0, match.start()) + 1
        original_line = lines_back.get(line)
        flagged = original_line in reported_lines
        if target < api.warp.sync_preview_since:
            if not flagged:
                problems.append(
                    f"{where}:{line}: {name} before ROCm {version_text(api.warp.sync_preview_since)}"
                    " (only the mask-less forms exist), unreported"
                )
            continue
        mask = _first_argument(code, match.end() - 1)
        known = _mask_value(code, mask)
        if known is None:
            if not flagged:
                problems.append(
                    f"{where}:{line}: {name} mask `{mask}` not shown 64-bit, unreported"
                )
        elif not known[1] and not flagged:
            problems.append(f"{where}:{line}: {name} mask `{mask}` is 32-bit, unreported")
        elif fixed_masks and known[0] == 0xFFFFFFFF and not flagged:
            problems.append(f"{where}:{line}: --fix-warp-masks left the 32-lane mask `{mask}`")
    for name in _WARP_MASKLESS_ONLY:
        for match in re.finditer(rf"(?<![A-Za-z0-9_$]){name}\s*\(", code):
            line = code.count("\n", 0, match.start()) + 1
            since = api.warp.syncwarp_since if name == "__syncwarp" else api.warp.sync_preview_since
            if target < since and lines_back.get(line) not in reported_lines:
                problems.append(f"{where}:{line}: {name} before ROCm {version_text(since)}")
    return problems


def _mask_value(code: str, mask: str, depth: int = 0) -> tuple[int, bool] | None:
    """A mask's value and whether it is 64 bits wide, when the file spells it out: a literal,
    a ``#define`` of one, or a ``const``/``constexpr`` variable initialised with one."""
    mask = mask.strip().strip("()").strip()
    literal = re.fullmatch(r"(0[xX][0-9a-fA-F]+|\d+)([uUlL]*)", mask)
    if literal:
        digits = literal.group(1)
        number = int(digits, 16) if digits[:2] in ("0x", "0X") else int(digits, 10)
        return number, "ll" in literal.group(2).lower() or number > 0xFFFFFFFF
    if depth > 3 or not _IDENT_RE.fullmatch(mask):
        return None
    name = re.escape(mask)
    define = re.search(rf"^[ \t]*#[ \t]*define[ \t]+{name}[ \t]+([^\r\n]+)", code, re.MULTILINE)
    if define:
        return _mask_value(code, define.group(1), depth + 1)
    const = re.search(
        rf"\b(?:constexpr|const)\s+([A-Za-z_][\w\s:]*?)\s+{name}\s*=\s*([^;]+);", code
    )
    if const:
        initial = _mask_value(code, const.group(2), depth + 1)
        wide_type = re.search(r"long\s+long|int64_t|uint64_t|size_t|\blong\b", const.group(1))
        if initial is not None:
            return initial[0], bool(wide_type)
    return None


def _byte_problems(result: PortResult) -> list[str]:
    """Line endings and undecodable bytes come back as they were."""
    problems = []
    for file in result.files:
        if file.translated is None:
            continue
        original, translated = file.original, file.translated
        try:
            translated.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError as exc:
            problems.append(f"{file.path}: translation cannot be written back: {exc}")
        crlf_only = "\r\n" in original and re.search(r"(?<!\r)\n", original) is None
        if crlf_only and re.search(r"(?<!\r)\n", translated):
            problems.append(f"{file.path}: a CRLF file got LF-only lines")
        escaped = re.findall(r"[\udc80-\udcff]", original)
        if sorted(escaped) != sorted(re.findall(r"[\udc80-\udcff]", translated)):
            problems.append(f"{file.path}: the bytes that are not UTF-8 changed")
    return problems


@pytest.mark.parametrize("rocm", [COMPILED_ROCM, *MAP_ONLY_ROCM])
@pytest.mark.parametrize("program", PROGRAMS, ids=PROGRAM_IDS)
def test_translation_fits_the_api_map(program: Program, rocm: str) -> None:
    """Names, headers and warp masks of each translation exist in that ROCm release."""
    result = ported(program.path, rocm)
    problems = map_problems(result, rocm) + _byte_problems(result)
    translated = "".join(f.translated or "" for f in result.files)
    wanted = (*program.must_contain, *program.must_contain_at.get(rocm, ()))
    problems += [f"the translation lacks {text!r}" for text in wanted if text not in translated]
    fixed = ported(program.path, rocm, fix_warp_masks=True)
    problems += [f"--fix-warp-masks: {p}" for p in map_problems(fixed, rocm, fixed_masks=True)]
    bug = program.map_bugs.get(rocm)
    if bug:
        if not problems:
            pytest.fail(f"{bug} looks fixed for ROCm {rocm}: remove it from EXPECTED.toml")
        pytest.xfail(f"{bug}: {problems[0]}")
    assert not problems, "\n".join(problems)
