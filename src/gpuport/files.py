"""Finding and reading a project's files: classification, size caps, binary and encoding checks.

Nothing here executes or imports the user's code. Directory walking follows symbolic links
that stay inside the scan root once (a link cycle is reported, not followed forever); a link
that leads out of the root is reported and never followed, a FIFO, socket or device node with a
source file's name is reported and never opened, and gpuport's own backups, journal and
temporary files are reported and not read. Reading goes through :mod:`gpuport.read_policy`.
"""

from __future__ import annotations

import enum
import fnmatch
import os
import posixpath
import re
import stat
from collections.abc import Collection, Container, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from gpuport.findings import SkipKind, Skipped
from gpuport.read_policy import ReadRefused, is_within, read_regular, read_within, what_is

DEFAULT_MAX_FILE_BYTES = 8 * 1024 * 1024
# `port --in-place` keeps each original as FILE + this suffix (`--backup-suffix`).
DEFAULT_BACKUP_SUFFIX = ".orig"
# `port --in-place` records what it is doing here, in the project root, until it is done.
PORT_JOURNAL_NAME = ".gpuport-port-journal.json"
# io.write_atomic's temporary files: `.NAME.<random>.tmp` beside NAME.
_ATOMIC_TEMP = re.compile(r"\..+\.[A-Za-z0-9_]{6,}\.tmp\Z", re.DOTALL)
BINARY_SNIFF_BYTES = 8192

# Folders nobody wants scanned: VCS metadata, virtual environments, caches, vendored deps.
DEFAULT_EXCLUDED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        "node_modules",
        "__pycache__",
        ".mypy_cache",
        ".ruff_cache",
        ".pytest_cache",
        "site-packages",
        ".ipynb_checkpoints",
        ".eggs",
        ".cache",
    }
)


class FileKind(enum.StrEnum):
    PYTHON = "python"
    NOTEBOOK = "notebook"
    CUDA = "cuda"  # .cu, .cuh
    CXX = "cxx"  # C/C++ sources and headers; scanned when they use CUDA
    REQUIREMENTS = "requirements"
    PYPROJECT = "pyproject"
    SETUP_PY = "setup-py"
    SETUP_CFG = "setup-cfg"
    CONDA_ENV = "conda-env"
    PIPFILE = "pipfile"
    DOCKERFILE = "dockerfile"
    COMPOSE = "compose"
    YAML = "yaml"  # Kubernetes manifests, Helm values, CI files: looked at for GPU resources
    SHELL = "shell"
    CMAKE = "cmake"
    MAKEFILE = "makefile"


_SUFFIX_KIND = {
    ".py": FileKind.PYTHON,
    ".pyi": FileKind.PYTHON,
    ".ipynb": FileKind.NOTEBOOK,
    ".cu": FileKind.CUDA,
    ".cuh": FileKind.CUDA,
    ".c": FileKind.CXX,
    ".cc": FileKind.CXX,
    ".cpp": FileKind.CXX,
    ".cxx": FileKind.CXX,
    ".c++": FileKind.CXX,
    ".h": FileKind.CXX,
    ".hh": FileKind.CXX,
    ".hpp": FileKind.CXX,
    ".hxx": FileKind.CXX,
    ".inl": FileKind.CXX,
    ".sh": FileKind.SHELL,
    ".bash": FileKind.SHELL,
    ".cmake": FileKind.CMAKE,
    ".mk": FileKind.MAKEFILE,
    ".yaml": FileKind.YAML,
    ".yml": FileKind.YAML,
}


def classify(name: str, parent: str = "") -> FileKind | None:
    """The kind of a file from its name (and its folder's name), or None when not read.

    ``-r requirements/base.txt`` layouts keep requirements in a ``requirements/`` folder
    under names that do not say so.
    """
    lower = name.lower()
    if parent.lower() in ("requirements", "reqs") and lower.endswith((".txt", ".in")):
        return FileKind.REQUIREMENTS
    if lower == "pyproject.toml":
        return FileKind.PYPROJECT
    if lower == "setup.py":
        return FileKind.SETUP_PY
    if lower == "setup.cfg":
        return FileKind.SETUP_CFG
    if lower == "pipfile":
        return FileKind.PIPFILE
    if lower == "cmakelists.txt":
        return FileKind.CMAKE
    if lower in ("makefile", "gnumakefile") or lower.startswith("makefile."):
        return FileKind.MAKEFILE
    if (
        lower == "dockerfile"
        # Dockerfile.rocm, and the underscore/dash spellings (AutoGPTQ's Dockerfile_amd)
        or lower.startswith(("dockerfile.", "dockerfile_", "dockerfile-"))
        or lower.endswith(".dockerfile")
        or lower == "containerfile"
    ):
        return FileKind.DOCKERFILE
    if lower.startswith(("requirements", "constraints")) and lower.endswith((".txt", ".in")):
        return FileKind.REQUIREMENTS
    if lower.endswith(".txt") and "requirements" in lower:
        return FileKind.REQUIREMENTS
    stem, dot, suffix = lower.rpartition(".")
    if dot and suffix in ("yml", "yaml"):
        if stem in ("environment", "conda", "env") or stem.startswith(("environment", "conda")):
            return FileKind.CONDA_ENV
        if stem in ("docker-compose", "compose") or stem.startswith(("docker-compose", "compose.")):
            return FileKind.COMPOSE
    return _SUFFIX_KIND.get(os.path.splitext(lower)[1])


@dataclass(frozen=True, slots=True)
class ProjectFile:
    """A file found under the scan root; ``rel`` is the path shown to users."""

    path: Path
    rel: str
    kind: FileKind
    size: int
    # False only for a file the user named on the command line (the user's own choice): it is
    # read wherever a link in its name leads. Every other file must stay inside its root.
    confined: bool = True

    @property
    def root(self) -> Path:
        """The scan root this file was found under: its path less its ``rel``."""
        return self.path.parents[len(PurePosixPath(self.rel).parts) - 1]


@dataclass(frozen=True, slots=True)
class HeaderFacts:
    """What including one of the project's own headers brings into a file: the CUDA names it
    maps for ROCm and the macros it leaves defined only where ROCm never looks, its own and
    those of the project headers it includes (transitively)."""

    path: str  # relative to the project root, forward slashes
    rocm_aliases: frozenset[str] = frozenset()
    cuda_only_macros: frozenset[str] = frozenset()
    # macros defined as a CUDA toolkit-version test (`#define FP4_TYPE_SUPPORTED (CUDA_VERSION
    # >= 12080)`): defined, and 0, on ROCm, so `#if FP4_TYPE_SUPPORTED` is dead there
    zero_macros: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class ProjectFacts:
    """What every scanner may know about the whole project, worked out before any file is scanned.

    Built by :func:`gpuport.project.build_model`; small, so it travels to worker processes.
    """

    # Macros the project's ROCm build defines (from its build files: -DUSE_ROCM, BUILD_HIP…),
    # beyond the HIP compiler's own (__HIP_PLATFORM_AMD__, __HIPCC__, __HIP__).
    rocm_macros: frozenset[str] = frozenset()
    # CUDA names mapped for HIP in every file (a compat header force-included by the build).
    # A compat header's own names (`#define __shfl_xor_sync(mask, var, lane) __shfl_xor(var,
    # lane)` under USE_ROCM) apply only where it is included: see ``headers``.
    rocm_aliases: frozenset[str] = frozenset()
    # Macros left undefined on ROCm in every file. A header that defines one only in a branch
    # ROCm never compiles (DeepSpeed's `#if __CUDA_ARCH__ >= 530` `#define PTX_AVAILABLE`)
    # makes `#ifdef PTX_AVAILABLE` dead only where it is included: see ``headers``.
    cuda_only_macros: frozenset[str] = frozenset()
    # The project's own top-level import names: importing them is not a third-party dependency.
    first_party: frozenset[str] = frozenset()
    # The project's headers that bring aliases or CUDA-only macros into the files including
    # them, and the headers sharing a file name with one (so an include is told apart).
    headers: tuple[HeaderFacts, ...] = ()
    # The project's own include folders (relative to the root, shallowest first), where a
    # quoted include not found beside the including file is looked up (project/headers.py).
    include_dirs: tuple[str, ...] = ()
    # "header:NAME" of the headers' warp-size constants of 32 whose every read in the project
    # files reaching them is a size (GP305 leaves them: scan/kernels/warp_width_rules.py).
    size_only_warp_constants: frozenset[str] = frozenset()

    def included(self, rel: str, includes: Iterable[str]) -> HeaderFacts:
        """What the file at ``rel``, with these ``#include`` names (as written), sees: the
        project-wide names, those of every project header among ``includes``, and, when ``rel``
        is one of ``headers``, what the files including it have in effect."""
        aliases, macros = set(self.rocm_aliases), set(self.cuda_only_macros)
        zero: set[str] = set()
        if self.headers:
            by_name: dict[str, dict[str, HeaderFacts]] = {}
            for header in self.headers:
                by_name.setdefault(posixpath.basename(header.path), {})[header.path] = header
            # the file itself when it is a header: what its includers have in effect
            own = by_name.get(posixpath.basename(rel), {}).get(rel)
            if own is not None:
                aliases |= own.rocm_aliases
                macros |= own.cuda_only_macros
                zero |= own.zero_macros
            for include in includes:
                same_name = by_name.get(posixpath.basename(include.strip()))
                found = resolve_include(rel, include, same_name) if same_name else None
                if same_name and found is not None:
                    aliases |= same_name[found].rocm_aliases
                    macros |= same_name[found].cuda_only_macros
                    zero |= same_name[found].zero_macros
        return HeaderFacts(rel, frozenset(aliases), frozenset(macros), frozenset(zero))


def resolve_include(including: str, include: str, paths: Collection[str]) -> str | None:
    """Which of ``paths`` (project headers, relative to the root) ``#include include`` in the
    file ``including`` names, or None.

    The path next to the including file first (as a compiler does for a quoted name), then a
    header whose path ends with the include's relative path (``"exllamav2/compat.cuh"``, an
    include directory), then one with the same file name; among several, the one nearest to
    the including file."""
    name = include.strip().replace("\\", "/")
    if not name:
        return None
    folder = posixpath.dirname(including)
    beside = posixpath.normpath(posixpath.join(folder, name))
    if beside in paths:
        return beside
    tail = posixpath.normpath(name)
    while tail.startswith(("../", "./")):
        tail = tail.split("/", 1)[1]
    base = posixpath.basename(tail)
    same_name = [p for p in paths if p == base or p.endswith("/" + base)]
    if not same_name:
        return None
    by_tail = [p for p in same_name if p == tail or p.endswith("/" + tail)]
    return max(by_tail or same_name, key=lambda p: (_shared_depth(p, folder), -len(p), p))


def _shared_depth(path: str, folder: str) -> int:
    shared = 0
    for a, b in zip(path.split("/")[:-1], folder.split("/"), strict=False):
        if a != b:
            break
        shared += 1
    return shared


NO_PROJECT_FACTS = ProjectFacts()


@dataclass(frozen=True, slots=True)
class SourceText:
    """A file's decoded text. Non-UTF-8 bytes are kept as surrogate escapes (lossless)."""

    file: ProjectFile
    text: str
    problem: Skipped | None = None  # set when the file was read only in part or lossily
    bom: bool = False  # the bytes began with a UTF-8 byte-order mark, which ``text`` leaves out
    facts: ProjectFacts = NO_PROJECT_FACTS  # what the scan knows about the whole project

    @property
    def lines(self) -> list[str]:
        return self.text.splitlines()


@dataclass(frozen=True, slots=True)
class WalkOptions:
    exclude: tuple[str, ...] = ()  # glob patterns matched against the relative path
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    follow_symlinks: bool = True  # links that stay inside the root; others are never followed
    backup_suffix: str = DEFAULT_BACKUP_SUFFIX  # port's backups: reported, never read


def is_port_artifact(
    name: str,
    backup_suffix: str = DEFAULT_BACKUP_SUFFIX,
    siblings: Container[str] | None = None,
) -> bool:
    """Is ``name`` a file gpuport itself writes: a backup, the port journal, an atomic temp file?

    Such files are never scanned or ported: a second ``port --in-place`` must not port its own
    backups, and a scan must not report findings in them. Given ``siblings`` (the names in its
    folder), FILE + suffix is a backup only when FILE sits beside it: a lone ``Dockerfile.orig``
    is somebody's Dockerfile.
    """
    if name == PORT_JOURNAL_NAME or _ATOMIC_TEMP.match(name) is not None:
        return True
    if not backup_suffix or not name.endswith(backup_suffix) or name == backup_suffix:
        return False
    return siblings is None or name[: -len(backup_suffix)] in siblings


def is_excluded(rel: str, patterns: tuple[str, ...]) -> bool:
    """Does ``--exclude`` (globs over the path relative to the scan root) leave ``rel`` out?"""
    posix = PurePosixPath(rel)
    for pat in patterns:
        if fnmatch.fnmatch(rel, pat) or posix.match(pat):
            return True
        if fnmatch.fnmatch(rel, pat.rstrip("/") + "/*"):
            return True
    return False


def walk(root: Path, options: WalkOptions = WalkOptions()) -> Iterator[ProjectFile | Skipped]:
    """Yield every file gpuport reads below ``root`` (or ``root`` itself), and what was skipped.

    Order is deterministic (sorted by name) so that reports are stable.
    """
    try:
        st = root.stat()
    except FileNotFoundError:
        yield Skipped(str(root), SkipKind.MISSING, "no such file or directory")
        return
    except OSError as exc:
        yield Skipped(str(root), SkipKind.UNREADABLE, exc.strerror or str(exc))
        return
    if not stat.S_ISDIR(st.st_mode):
        kind = classify(root.name, root.parent.name)
        if kind is None:
            # an explicitly named file is read by content-free guess: treat by suffix only
            yield Skipped(root.name, SkipKind.UNREADABLE, "not a kind of file gpuport reads")
            return
        if not stat.S_ISREG(st.st_mode):
            yield Skipped(root.name, SkipKind.NOT_REGULAR, _not_regular(st.st_mode))
            return
        yield ProjectFile(root, root.name, kind, st.st_size, confined=False)
        return
    seen_dirs: set[tuple[int, int]] = {(st.st_dev, st.st_ino)}
    yield from _walk_dir(root, "", options, seen_dirs, os.path.realpath(root))


def _not_regular(mode: int) -> str:
    return f"{what_is(mode)} with a source file's name, not a regular file; never opened"


def _artifact_reason(name: str, backup_suffix: str) -> str:
    if name == PORT_JOURNAL_NAME:
        return "gpuport's own journal of `port --in-place`; not scanned"
    if _ATOMIC_TEMP.match(name):
        return "gpuport's own temporary file, left by an interrupted write; not scanned"
    # patch(1) leaves FILE.orig too: either way a backup, not the project's source.
    return f"a backup copy (`port --in-place` keeps originals as FILE{backup_suffix}); not scanned"


def _link_out(entry: os.DirEntry[str], real_root: str) -> str | None:
    """Why the symbolic link ``entry`` is not followed, or None when it stays inside the root."""
    if is_within(real_root, entry.path):
        return None
    try:
        target = os.readlink(entry.path)
    except OSError:
        target = "?"
    return f"symbolic link to {target} leads out of the project; not followed"


def _walk_dir(
    directory: Path,
    rel_dir: str,
    options: WalkOptions,
    seen: set[tuple[int, int]],
    real_root: str,
) -> Iterator[ProjectFile | Skipped]:
    try:
        with os.scandir(directory) as it:
            entries = sorted(it, key=lambda e: e.name)
        names = {entry.name for entry in entries}
    except OSError as exc:
        yield Skipped(rel_dir or ".", SkipKind.UNREADABLE, exc.strerror or str(exc))
        return
    for entry in entries:
        rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
        if options.exclude and is_excluded(rel, options.exclude):
            continue
        try:
            is_link = entry.is_symlink()
            if is_link and not options.follow_symlinks:
                continue
            is_dir = entry.is_dir(follow_symlinks=True)
        except OSError as exc:
            yield Skipped(rel, SkipKind.UNREADABLE, exc.strerror or str(exc))
            continue
        if is_dir and entry.name in DEFAULT_EXCLUDED_DIRS:
            continue
        if is_link:
            # Reported only where the walk would have gone: a folder, or a file it reads.
            outside = _link_out(entry, real_root)
            if outside is not None:
                if is_dir or classify(entry.name, directory.name) is not None:
                    yield Skipped(rel, SkipKind.OUTSIDE_ROOT, outside)
                continue
        if is_dir:
            try:
                st = entry.stat(follow_symlinks=True)
            except OSError as exc:
                reason = exc.strerror or str(exc)
                skip_kind = (
                    SkipKind.SYMLINK_LOOP if "loop" in reason.lower() else SkipKind.UNREADABLE
                )
                yield Skipped(rel, skip_kind, reason)
                continue
            key = (st.st_dev, st.st_ino)
            if key in seen:
                if is_link:
                    yield Skipped(
                        rel,
                        SkipKind.SYMLINK_LOOP,
                        f"symbolic link to {os.readlink(entry.path)!s} leads back to a folder "
                        "already scanned",
                    )
                continue
            seen.add(key)
            yield from _walk_dir(Path(entry.path), rel, options, seen, real_root)
            continue
        kind = classify(entry.name, directory.name)
        if kind is None:
            continue
        if is_port_artifact(entry.name, options.backup_suffix, names):
            yield Skipped(
                rel, SkipKind.PORT_ARTIFACT, _artifact_reason(entry.name, options.backup_suffix)
            )
            continue
        try:
            st = entry.stat(follow_symlinks=True)
        except OSError as exc:
            reason = exc.strerror or str(exc)
            skind = SkipKind.SYMLINK_LOOP if "loop" in reason.lower() else SkipKind.UNREADABLE
            if is_link and isinstance(exc, FileNotFoundError):
                reason = f"broken symbolic link to {os.readlink(entry.path)}"
            yield Skipped(rel, skind, reason)
            continue
        if not stat.S_ISREG(st.st_mode):
            yield Skipped(rel, SkipKind.NOT_REGULAR, _not_regular(st.st_mode))
            continue
        yield ProjectFile(Path(entry.path), rel, kind, st.st_size)


def read_text(file: ProjectFile, max_bytes: int = DEFAULT_MAX_FILE_BYTES) -> SourceText | Skipped:
    """Read a file as text, or say why not. Never raises for a bad file.

    The file is read only if it is still a regular file inside its root when it is opened (it
    may have been swapped for a FIFO or a link since the walk found it).
    """
    if file.size > max_bytes:
        return Skipped(file.rel, SkipKind.TOO_LARGE, _too_large(file.size, max_bytes))
    try:
        if file.confined:
            data = read_within(file.root, file.path, max_bytes)
        else:
            data = read_regular(file.path, max_bytes)
    except ReadRefused as refused:
        if refused.kind is SkipKind.TOO_LARGE:  # it grew since the walk
            return Skipped(file.rel, SkipKind.TOO_LARGE, f"{refused.reason}{_RAISE_LIMIT}")
        return Skipped(file.rel, refused.kind, refused.reason)
    except OSError as exc:
        return Skipped(file.rel, SkipKind.UNREADABLE, exc.strerror or str(exc))
    return decode(file, data)


_RAISE_LIMIT = " (raise it with --max-file-size or [tool.gpuport] max-file-size)"


def _too_large(size: int, max_bytes: int) -> str:
    return f"{size:,} bytes is over the {max_bytes:,}-byte limit{_RAISE_LIMIT}"


def decode(file: ProjectFile, data: bytes) -> SourceText | Skipped:
    """Decode bytes: NUL bytes mean binary; bad UTF-8 is kept losslessly and reported."""
    nul = data.find(b"\0", 0, BINARY_SNIFF_BYTES)
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        return Skipped(file.rel, SkipKind.BINARY, "binary file (contains NUL bytes)", line)
    bom = data.startswith(b"\xef\xbb\xbf")
    if bom:
        data = data[3:]
    try:
        return SourceText(file, data.decode("utf-8"), bom=bom)
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        problem = Skipped(
            file.rel,
            SkipKind.NOT_UTF8,
            f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at line {line}, column {col}); "
            "analysed with the bad bytes kept as they are",
            line,
            partial=True,
        )
        return SourceText(file, data.decode("utf-8", "surrogateescape"), problem, bom)
