"""Port a whole project: translate its CUDA/C++ sources and rewrite the files around them.

Walks the project like ``scan`` does (same exclusions and size caps), sends each C/C++/CUDA
file to the translator and each dependency, container and build file to its rewriter, and
collects one :class:`~gpuport.port.model.PortResult`. Nothing is written here: the command
decides whether the result becomes a diff, a copy of the tree or an in-place edit.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from gpuport.edits import ChangeStatus
from gpuport.files import (
    DEFAULT_MAX_FILE_BYTES,
    FileKind,
    ProjectFile,
    SourceText,
    WalkOptions,
    is_excluded,  # the walk's own --exclude matching, so both agree
    read_text,
    walk,
)
from gpuport.findings import Skipped
from gpuport.port.apimap import parse_version
from gpuport.port.model import Change, FileResult, PortResult
from gpuport.port.translate import translate_source
from gpuport.scan.deps import parse_source, unlisted_includes

# The rewriters of the files around the sources, by kind: (module, function). Each is
# `(rel, text, rocm_version) -> FileResult`; a module or function not there yet is skipped.
REWRITERS: dict[FileKind, tuple[str, str]] = {
    FileKind.REQUIREMENTS: ("gpuport.port.rewrite_deps", "rewrite_requirements"),
    FileKind.PYPROJECT: ("gpuport.port.rewrite_deps", "rewrite_pyproject"),
    FileKind.PIPFILE: ("gpuport.port.rewrite_deps", "rewrite_pipfile"),
    FileKind.CONDA_ENV: ("gpuport.port.rewrite_deps", "rewrite_conda_env"),
    FileKind.DOCKERFILE: ("gpuport.port.rewrite_infra", "rewrite_dockerfile"),
    FileKind.COMPOSE: ("gpuport.port.rewrite_infra", "rewrite_compose"),
    FileKind.YAML: ("gpuport.port.rewrite_infra", "rewrite_k8s"),
    FileKind.SHELL: ("gpuport.port.rewrite_infra", "rewrite_shell"),
    FileKind.CMAKE: ("gpuport.port.rewrite_infra", "rewrite_cmake"),
    FileKind.MAKEFILE: ("gpuport.port.rewrite_infra", "rewrite_makefile"),
}
SOURCE_KINDS = frozenset({FileKind.CUDA, FileKind.CXX})

Rewriter = Callable[[str, str, str], FileResult]
ProgressCallback = Callable[[int, int], None]  # (files done, bytes read)


@dataclass(frozen=True, slots=True)
class PortOptions:
    fix_warp_masks: bool = False
    translate_strings: bool = False
    diagnostics: bool = True  # add the kernel scanner's findings to each source file
    exclude: tuple[str, ...] = ()
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    rewrite_surroundings: bool = True  # run the dependency/container/build rewriters


def port_project(
    root: Path,
    rocm_version: str,
    *,
    fix_warp_masks: bool = False,
    translate_strings: bool = False,
    diagnostics: bool = True,
    exclude: tuple[str, ...] = (),
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    rewrite_surroundings: bool = True,
    progress: ProgressCallback | None = None,
    display_root: str | None = None,
) -> PortResult:
    """Port everything under ``root`` (a folder or one file) for ROCm ``rocm_version``.

    Raises ``ValueError`` for a malformed version; bad files become ``problems`` or changes,
    never exceptions.
    """
    parse_version(rocm_version)
    options = PortOptions(
        fix_warp_masks,
        translate_strings,
        diagnostics,
        exclude,
        max_file_bytes,
        rewrite_surroundings,
    )
    result = PortResult(
        root=display_root if display_root is not None else str(root), rocm_version=rocm_version
    )
    done = 0
    nbytes = 0
    walk_options = WalkOptions(exclude=exclude, max_file_bytes=max_file_bytes)
    included: dict[str, ProjectFile] = {}
    for item in walk(root, walk_options):
        if isinstance(item, Skipped):
            result.problems.append(str(item))
            continue
        file_result = port_file(item, rocm_version, options, result.problems)
        if options.rewrite_surroundings:
            included.update(_unlisted_includes(item, options))
        done += 1
        nbytes += item.size
        if progress is not None:
            progress(done, nbytes)
        _keep(result, file_result)
    # Requirements files reached only through `-r`/`-c` (common/base.txt): the walk does not
    # know them by name, so they are rewritten here, once each.
    for rel in sorted(included):
        _keep(result, port_file(included[rel], rocm_version, options, result.problems))
    result.files.sort(key=lambda f: f.path)
    return result


def _keep(result: PortResult, file_result: FileResult | None) -> None:
    if file_result is not None and (
        file_result.changed or file_result.changes or file_result.skipped
    ):
        result.files.append(file_result)


def _unlisted_includes(file: ProjectFile, options: PortOptions) -> dict[str, ProjectFile]:
    """Files that ``file`` includes with ``-r``/``-c`` and that the walk does not find by name.

    They are pip requirements files (that is how pip reads them), so they get the
    requirements rewriter. Excluded paths stay excluded.
    """
    if file.kind not in (FileKind.REQUIREMENTS, FileKind.CONDA_ENV):
        return {}
    source = read_text(file, options.max_file_bytes)
    if isinstance(source, Skipped):
        return {}
    root = file.root
    out: dict[str, ProjectFile] = {}
    for other in unlisted_includes(parse_source(source), root):
        if options.exclude and is_excluded(other.path, options.exclude):
            continue
        path = root / other.path
        try:
            size = path.stat().st_size
        except OSError:
            continue  # the scan reports the missing file on the include line
        out[other.path] = ProjectFile(path, other.path, FileKind.REQUIREMENTS, size)
    return out


def port_file(
    file: ProjectFile, rocm_version: str, options: PortOptions, problems: list[str]
) -> FileResult | None:
    """Port one file, or None when gpuport has nothing to do for its kind."""
    if file.kind in SOURCE_KINDS:
        rewriter: Rewriter | None = None
    elif file.kind in REWRITERS and options.rewrite_surroundings:
        rewriter = _rewriter(file.kind)
        if rewriter is None:
            return None
    else:
        return None
    source = read_text(file, options.max_file_bytes)
    if isinstance(source, Skipped):
        problems.append(str(source))
        return FileResult(file.rel, file.rel, file.kind.value, "", None, skipped=source.reason)
    try:
        if rewriter is None:
            result = _translate(file, source, rocm_version, options)
        else:
            result = rewriter(file.rel, source.text, rocm_version)
    except Exception as exc:  # a bug in gpuport: reported, never swallowed
        name = "translator" if rewriter is None else getattr(rewriter, "__name__", "rewriter")
        reason = f"internal error in gpuport's {name}: {type(exc).__name__}: {exc}"
        problems.append(f"{file.rel}: {reason}")
        return FileResult(file.rel, file.rel, file.kind.value, source.text, None, skipped=reason)
    if source.problem is not None:
        result.changes.insert(0, _encoding_note(source))
    return result


def _translate(
    file: ProjectFile, source: SourceText, rocm_version: str, options: PortOptions
) -> FileResult:
    diagnostics = options.diagnostics
    if diagnostics and file.kind is FileKind.CXX:
        # a C++ file gets the kernel rules only when it uses CUDA at all
        diagnostics = _uses_cuda(source.text)
    return translate_source(
        file.rel,
        source.text,
        rocm_version,
        fix_warp_masks=options.fix_warp_masks,
        translate_strings=options.translate_strings,
        diagnostics=diagnostics,
        kind=file.kind,
    )


def _uses_cuda(text: str) -> bool:
    try:
        from gpuport.scan.kernels import uses_cuda
    except ImportError:
        return True
    return bool(uses_cuda(text))


def _encoding_note(source: SourceText) -> Change:
    assert source.problem is not None
    return Change(
        line=source.problem.line,
        column=0,
        family="encoding",
        before="",
        after="",
        status=ChangeStatus.NEEDS_REVIEW,
        note=f"{source.problem.reason}; the bytes that are not UTF-8 are written back unchanged",
    )


def _rewriter(kind: FileKind) -> Rewriter | None:
    module_name, function_name = REWRITERS[kind]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            return None  # that rewriter has not landed yet
        raise
    function = getattr(module, function_name, None)
    return function if callable(function) else None
