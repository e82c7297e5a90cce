"""Compile the originals with nvcc and the translations with hipcc, and say what happened.

Both trees are mirrored into a temporary folder (every C/C++/CUDA file, translated or not,
at its relative path) so that ``#include "../common.h"`` resolves as it does in the
project. Each translated source file is compiled with ``nvcc -c`` (original) and
``HIP_PLATFORM=amd hipcc --offload-arch=ARCH -c`` (translation); headers are checked
through the sources that include them. Compilations run two at a time.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from gpuport import kb
from gpuport.files import FileKind, WalkOptions, walk
from gpuport.findings import Skipped
from gpuport.io import write_atomic
from gpuport.port.knowledge import check_facts
from gpuport.port.model import CheckStatus, CompileCheck, FileResult, PortResult

DEFAULT_OFFLOAD_ARCH = kb.DEFAULT_CHECK_OFFLOAD_ARCH
COMPILE_TIMEOUT_S = 300
# What the two compilers compile (headers are checked through the sources that include them).
COMPILABLE_SUFFIXES = frozenset({".cu", ".cpp", ".cc", ".cxx", ".c++", ".c", ".hip"})
# Headers of ROCm libraries that a machine may lack (the check machine has HIP and a few
# libraries only): a translation that stops on one of these was not compiled, not broken.
ROCM_LIBRARY_HEADER_PREFIXES = check_facts().rocm_library_header_prefixes
# How clang (hipcc), gcc (nvcc's host pass) and EDG (nvcc) say an #include was not found.
_MISSING_HEADER_RES = check_facts().missing_header_res
_ERROR_RE = re.compile(r"\berror\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class CheckOptions:
    offload_arch: str = DEFAULT_OFFLOAD_ARCH
    nvcc: str = "nvcc"
    hipcc: str = "hipcc"
    jobs: int = 2
    timeout_s: int = COMPILE_TIMEOUT_S
    nvcc_flags: tuple[str, ...] = ()
    hipcc_flags: tuple[str, ...] = ()
    # folders the build passes with -I, relative to the project root (the folder of a
    # single file); searched in both mirrored trees
    include_dirs: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class _Outcome:
    ok: bool
    error: str = ""  # first error line
    missing_header: str = ""
    not_run: str = ""  # why the compiler did not run


_HIP_VERSION_RE = re.compile(r"HIP version:\s*(\d+)\.(\d+)")


def hipcc_version(hipcc: str = "hipcc") -> tuple[int, int] | None:
    """The HIP release of ``hipcc`` (``HIP version: 5.2.21153-0`` → (5, 2)), or None."""
    path = shutil.which(hipcc)
    if path is None:
        return None
    try:
        done = subprocess.run(
            [path, "--version"], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = _HIP_VERSION_RE.search(done.stdout + done.stderr)
    return (int(m.group(1)), int(m.group(2))) if m else None


def compilers_available(options: CheckOptions = CheckOptions()) -> dict[str, str | None]:
    """The path of each compiler, or None when it is not installed."""
    return {"nvcc": shutil.which(options.nvcc), "hipcc": shutil.which(options.hipcc)}


def check_project(
    root: Path,
    result: PortResult,
    options: CheckOptions = CheckOptions(),
    progress: Callable[[int, int], None] | None = None,
) -> list[CompileCheck]:
    """Compile every translated source of ``result`` both ways; one CompileCheck per file."""
    targets = [f for f in result.files if _compilable(f)]
    if not targets:
        return []
    with tempfile.TemporaryDirectory(prefix="gpuport-check-") as tmp:
        original_tree = Path(tmp) / "cuda"
        hip_tree = Path(tmp) / "hip"
        _mirror(root, result, original_tree, hip_tree)
        paths = compilers_available(options)
        jobs = max(1, options.jobs)

        def run(file: FileResult) -> CompileCheck:
            return _check_one(file, original_tree, hip_tree, paths, options)

        checks: list[CompileCheck] = []
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            for i, check in enumerate(pool.map(run, targets), 1):
                checks.append(check)
                if progress is not None:
                    progress(i, len(targets))
    return checks


def _compilable(file: FileResult) -> bool:
    if file.skipped or file.kind not in (FileKind.CUDA.value, FileKind.CXX.value):
        return False
    return PurePosixPath(file.path).suffix.lower() in COMPILABLE_SUFFIXES and (
        file.changed or bool(file.changes)
    )


def _mirror(root: Path, result: PortResult, original_tree: Path, hip_tree: Path) -> None:
    """Copy every C/C++/CUDA file of ``root`` into both trees, translations into the HIP one."""
    translated = {f.path: f for f in result.files}
    if root.is_file():
        files = [(root.name, root)]
    else:
        files = [
            (item.rel, item.path)
            for item in walk(root, WalkOptions())
            if not isinstance(item, Skipped) and item.kind in (FileKind.CUDA, FileKind.CXX)
        ]
    for rel, path in files:
        for tree in (original_tree, hip_tree):
            (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        try:
            shutil.copyfile(path, original_tree / rel)
        except OSError:
            continue
        port = translated.get(rel)
        if port is not None and port.translated is not None:
            write_atomic(hip_tree / port.new_path, port.translated, root=hip_tree)
        else:
            shutil.copyfile(path, hip_tree / rel)


def _check_one(
    file: FileResult,
    original_tree: Path,
    hip_tree: Path,
    paths: dict[str, str | None],
    options: CheckOptions,
) -> CompileCheck:
    nvcc, hipcc = paths["nvcc"], paths["hipcc"]
    if nvcc is None:
        original = _Outcome(False, not_run=f"{options.nvcc} not found")
    else:
        original = _compile(
            [nvcc, "-c", *options.nvcc_flags], original_tree, file.path, options, env=None
        )
    if hipcc is None:
        translation = _Outcome(False, not_run=f"{options.hipcc} not found")
    else:
        env = dict(os.environ, HIP_PLATFORM="amd")
        translation = _compile(
            # nvcc's default language level is C++17; hipcc's (clang's) may be older
            [
                hipcc,
                f"--offload-arch={options.offload_arch}",
                "-std=c++17",
                "-c",
                *options.hipcc_flags,
            ],
            hip_tree,
            file.new_path,
            options,
            env=env,
        )
    return _verdict(file.path, original, translation)


def _compile(
    command: Sequence[str],
    tree: Path,
    rel: str,
    options: CheckOptions,
    env: dict[str, str] | None,
) -> _Outcome:
    source = tree / rel
    out = source.with_name(source.name + ".o")
    argv = [*command, str(source), "-o", str(out), f"-I{source.parent}", f"-I{tree}"]
    argv += [f"-I{tree / folder}" for folder in options.include_dirs]
    argv += [f"-I{folder}" for folder in _include_folders(tree)]
    try:
        done = subprocess.run(
            argv,
            cwd=source.parent,
            env=env,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=options.timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return _Outcome(False, not_run=f"{command[0]} timed out after {options.timeout_s} s")
    except OSError as exc:
        return _Outcome(False, not_run=f"{command[0]} could not run: {exc.strerror or exc}")
    if done.returncode == 0:
        return _Outcome(True)
    output = (done.stderr or "") + (done.stdout or "")
    output = output.replace(str(tree) + os.sep, "")
    for pattern in _MISSING_HEADER_RES:
        m = pattern.search(output)
        if m:
            return _Outcome(False, _first_error(output), missing_header=m.group(1))
    return _Outcome(False, _first_error(output))


def _include_folders(tree: Path, limit: int = 16) -> list[Path]:
    """Folders named include/ or inc/ in the mirrored tree: where a build's -I usually points."""
    found: list[Path] = []
    for folder in sorted(tree.rglob("*")):
        if folder.is_dir() and folder.name in ("include", "inc"):
            found.append(folder)
            if len(found) == limit:
                break
    return found


def _first_error(output: str) -> str:
    for line in output.splitlines():
        if _ERROR_RE.search(line):
            return line.strip()[:300]
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    return lines[0][:300] if lines else "failed without a message"


def _is_library_header(header: str) -> bool:
    return header.startswith(ROCM_LIBRARY_HEADER_PREFIXES)


def _verdict(path: str, original: _Outcome, translation: _Outcome) -> CompileCheck:
    """One file's result from both compilations (see CheckStatus)."""
    details: list[str] = []
    if original.not_run:
        details.append(f"original not compiled: {original.not_run}")
    elif original.missing_header:
        details.append(f"original not compiled: header {original.missing_header} unavailable")
    if translation.not_run:
        details.append(f"translation not compiled: {translation.not_run}")
    elif translation.missing_header and _is_library_header(translation.missing_header):
        details.append(f"translation not compiled: header {translation.missing_header} unavailable")
    detail = "; ".join(details)
    original_error = "" if original.ok else original.error
    translation_error = "" if translation.ok else translation.error
    translation_unknown = bool(translation.not_run) or (
        bool(translation.missing_header) and _is_library_header(translation.missing_header)
    )
    original_unknown = bool(original.not_run) or bool(original.missing_header)
    if original.missing_header and translation.missing_header:
        # neither side finds a header: the project's include path, not the translation
        translation_unknown = True
        if not _is_library_header(translation.missing_header):
            details.append(
                f"header {translation.missing_header} not found by either compiler "
                "(an include path the build adds?)"
            )
            detail = "; ".join(details)
    if translation_unknown:
        status = CheckStatus.NOT_COMPILED
    elif translation.ok:
        if original.ok:
            status = CheckStatus.BOTH_COMPILE
        elif original_unknown:
            status = CheckStatus.NOT_COMPILED
            detail = f"{detail}; the translation compiles" if detail else "the translation compiles"
        else:
            status = CheckStatus.ORIGINAL_FAILS
    elif original.ok or original_unknown:
        status = CheckStatus.TRANSLATION_FAILS
    else:
        status = CheckStatus.ORIGINAL_FAILS
    return CompileCheck(path, status, original_error, translation_error, detail)
