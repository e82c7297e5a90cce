"""Port a whole project: translate its CUDA/C++ sources and rewrite the files around them.

Walks the project like ``scan`` does (same exclusions and size caps), sends each C/C++/CUDA
file to the translator and each dependency, container and build file to its rewriter, and
collects one :class:`~gpuport.port.model.PortResult`. Nothing is written here: the command
decides whether the result becomes a diff, a copy of the tree or an in-place edit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType

from gpuport.edits import ChangeStatus
from gpuport.files import (
    DEFAULT_BACKUP_SUFFIX,
    DEFAULT_MAX_FILE_BYTES,
    FileKind,
    ProjectFile,
    SourceText,
    WalkOptions,
    is_excluded,  # the walk's own --exclude matching, so both agree
    read_text,
    walk,
)
from gpuport.findings import SkipKind, Skipped
from gpuport.port.apimap import parse_version
from gpuport.port.model import Change, FileResult, PortResult, Rewriter
from gpuport.port.rewrite_deps import REWRITERS as DEPENDENCY_REWRITERS
from gpuport.port.rewrite_infra import REWRITERS as INFRA_REWRITERS
from gpuport.port.translate import translate_source
from gpuport.port.translate.includes import INCLUDE_STYLES, project_files
from gpuport.scan.deps import parse_source, unlisted_includes
from gpuport.scan.kernels import uses_cuda

# The kinds of file the translator reads.
SOURCE_KINDS = frozenset({FileKind.CUDA, FileKind.CXX})
# The rewriter of each kind of file around the sources: dependency files, then container and
# build files (each rewriter module lists its own).
REWRITERS: Mapping[FileKind, Rewriter] = MappingProxyType(
    {**DEPENDENCY_REWRITERS, **INFRA_REWRITERS}
)
# Kinds the port leaves as they are: Python code and notebooks (the scan reports what they
# need; a rename there is a decision, not a mechanical edit) and setup.py / setup.cfg
# (executable or free-form build scripts, reported by the scan only).
UNPORTED_KINDS = frozenset(
    {FileKind.PYTHON, FileKind.NOTEBOOK, FileKind.SETUP_PY, FileKind.SETUP_CFG}
)

ProgressCallback = Callable[[int, int], None]  # (files done, bytes read)
FileCallback = Callable[[FileResult], None]  # one file's final result, in path order


@dataclass(frozen=True, slots=True)
class PortOptions:
    fix_warp_masks: bool = False
    translate_strings: bool = False
    diagnostics: bool = True  # add the kernel scanner's findings to each source file
    exclude: tuple[str, ...] = ()
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    rewrite_surroundings: bool = True  # run the dependency/container/build rewriters
    include_style: str = "auto"  # library headers: nested, flat or by target (--include-style)
    # the project's files by file name: its own headers ("cuda/util.cuh") stay as they are
    files_by_name: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


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
    include_style: str = "auto",
    backup_suffix: str = DEFAULT_BACKUP_SUFFIX,
    progress: ProgressCallback | None = None,
    display_root: str | None = None,
    on_file: FileCallback | None = None,
    release_texts: bool = False,
) -> PortResult:
    """Port everything under ``root`` (a folder or one file) for ROCm ``rocm_version``.

    ``on_file`` gets each file's result as soon as it is final, in path order (the order of
    ``PortResult.files``); with ``release_texts`` each file's original and translation are
    dropped after that call (``FileResult.changed`` still answers), so that a caller that
    writes as it goes holds one file's texts at a time.

    Raises ``ValueError`` for a malformed version or include style; bad files become ``problems`` or changes,
    never exceptions.
    """
    parse_version(rocm_version)
    if include_style not in INCLUDE_STYLES:
        raise ValueError(
            f"include style {include_style!r} is not one of {', '.join(INCLUDE_STYLES)}"
        )
    options = PortOptions(
        fix_warp_masks,
        translate_strings,
        diagnostics,
        exclude,
        max_file_bytes,
        rewrite_surroundings,
        include_style,
    )
    result = PortResult(
        root=display_root if display_root is not None else str(root), rocm_version=rocm_version
    )
    walk_options = WalkOptions(
        exclude=exclude, max_file_bytes=max_file_bytes, backup_suffix=backup_suffix
    )
    # The files are listed first (names and sizes only) and ported in path order, so that each
    # result is final when it is made and can be written at once (issue 10). The walk's own
    # order (depth first, by name) is not path order ("a-b/x" < "a.txt" < "a/b"), and the
    # requirements files reached only through `-r`/`-c` join them here.
    files: list[ProjectFile] = []
    # problems in the order they were reported before the port streamed: walk order, then the
    # `-r`/`-c` includes; (position, problem) pairs, sorted (stably) at the end
    problems: list[tuple[int, str]] = []
    included: dict[str, ProjectFile] = {}
    for item in walk(root, walk_options):
        if isinstance(item, Skipped):
            if item.kind is not SkipKind.PORT_ARTIFACT:  # its own backups: left alone, no problem
                problems.append((len(files), str(item)))
            continue
        files.append(item)
        if options.rewrite_surroundings:
            included.update(_unlisted_includes(item, options))
    walked = len(files)
    options = replace(options, files_by_name=project_files(file.rel for file in files))
    files += (included[rel] for rel in sorted(included))
    order = sorted(range(len(files)), key=lambda index: files[index].rel)
    done = 0
    nbytes = 0
    for index in order:
        file = files[index]
        file_problems: list[str] = []
        file_result = port_file(file, rocm_version, options, file_problems)
        problems += ((index, problem) for problem in file_problems)
        if index < walked:
            done += 1
            nbytes += file.size
            if progress is not None:
                progress(done, nbytes)
        if file_result is None or not (
            file_result.changed or file_result.changes or file_result.skipped
        ):
            continue
        if on_file is not None:
            on_file(file_result)
        if release_texts:
            file_result.release_texts()
        result.files.append(file_result)
    # a file's problems came before the next walked file's skips (sort is stable)
    result.problems = [problem for _, problem in sorted(problems, key=lambda p: p[0])]
    return result


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
        rewriter = REWRITERS[file.kind]
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
        name = "translator" if rewriter is None else rewriter.__name__
        reason = f"internal error in gpuport's {name}: {type(exc).__name__}: {exc}"
        problems.append(f"{file.rel}: {reason}")
        return FileResult(file.rel, file.rel, file.kind.value, source.text, None, skipped=reason)
    if source.problem is not None:
        result.changes.insert(0, _encoding_note(source))
    result.bom = source.bom
    return result


def _translate(
    file: ProjectFile, source: SourceText, rocm_version: str, options: PortOptions
) -> FileResult:
    diagnostics = options.diagnostics
    if diagnostics and file.kind is FileKind.CXX:
        # a C++ file gets the kernel rules only when it uses CUDA at all
        diagnostics = uses_cuda(source.text)
    return translate_source(
        file.rel,
        source.text,
        rocm_version,
        fix_warp_masks=options.fix_warp_masks,
        translate_strings=options.translate_strings,
        diagnostics=diagnostics,
        kind=file.kind,
        include_style=options.include_style,
        project_files=options.files_by_name,
    )


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
