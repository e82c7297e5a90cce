"""Looking names up across the knowledge base's tables: what ``gpuport kb`` shows and lists.

:func:`lookup` finds every entry a name designates (a package, an import, a header, a
variable, a command, an image, a flag, a pip index or a gfx id); :func:`suggestions` offers
close names when nothing matched. The result types (:class:`KbLookup`, :class:`KbTable`,
:class:`KbCounts`) are rendered by ``gpuport.report.kb_formats``.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from gpuport import kb as knowledge

# One entry of any table.
KbEntry = (
    knowledge.Package
    | knowledge.CudaLibrary
    | knowledge.EnvVar
    | knowledge.ToolCommand
    | knowledge.DockerImage
    | knowledge.DockerFlag
    | knowledge.PipIndex
    | knowledge.GpuArch
)

# The tables `gpuport kb list` knows, in the order `gpuport kb list` prints its summary.
TABLES = ("packages", "libraries", "env", "commands", "docker", "indexes", "gpus")


@dataclass(frozen=True, slots=True)
class KbMatch:
    """One knowledge-base entry that a looked-up name matched, and how it matched."""

    kind: str  # package, library, env, command, docker-image, docker-flag, pip-index, gpu
    matched_by: str  # e.g. "name", "import", "header", "link name", "pattern"
    entry: KbEntry


@dataclass(frozen=True, slots=True)
class KbLookup:
    """What ``gpuport kb show NAME`` found, with index URLs and tags for ``rocm_version``."""

    name: str
    matches: tuple[KbMatch, ...]
    rocm_version: str


@dataclass(frozen=True, slots=True)
class KbTable:
    """One table of the knowledge base (``gpuport kb list TABLE``), in its file's order."""

    table: str
    entries: tuple[KbEntry, ...]
    rocm_version: str


@dataclass(frozen=True, slots=True)
class KbCounts:
    """How many entries each table holds (``gpuport kb list``), in :data:`TABLES` order."""

    counts: tuple[tuple[str, int], ...]


def lookup(name: str) -> list[KbMatch]:
    """Every entry that ``name`` designates, across all tables, without duplicates."""
    found: list[KbMatch] = []
    seen: set[int] = set()

    def add(kind: str, matched_by: str, entry: KbEntry | None) -> None:
        if entry is None:
            return
        identity = id(_original(entry))
        if identity not in seen:
            seen.add(identity)
            found.append(KbMatch(kind, matched_by, entry))

    text = name.strip()
    if not text:
        return found
    package = knowledge.find_package(text)
    if package is not None:
        exact = knowledge.normalize_name(text) in knowledge.packages()
        add("package", "name" if exact else "pattern", package)
    if _looks_like_module(text):
        add("package", "import", knowledge.package_for_import(text))
    for library in knowledge.cuda_libraries().values():
        if library.name.lower() == text.lower():
            add("library", "name", library)
    add("library", "header", knowledge.library_for_header(text))
    add("library", "link name", knowledge.library_for_link_name(text))
    add("library", "CMake target", knowledge.library_for_cmake_target(text))
    add("env", "name", knowledge.find_env_var(text))
    add("command", "name", knowledge.find_command(text))
    add("gpu", "gfx id or product", knowledge.find_gpu_arch(text))
    add("docker-flag", "flag", knowledge.find_docker_flag(text))
    if "/" in text or ":" in text:
        add("docker-image", "pattern", knowledge.find_docker_image(text))
    if "://" in text:
        add("pip-index", "pattern", knowledge.find_pip_index(text))
    return found


def _original(entry: KbEntry) -> KbEntry:
    """The table's own object for an entry (family matches come back renamed copies)."""
    if isinstance(entry, knowledge.Package):
        for package in knowledge.packages().values():
            if package.sources == entry.sources and package.instead == entry.instead:
                return package
    return entry


def _looks_like_module(text: str) -> bool:
    return all(part.isidentifier() for part in text.split("."))


def known_names() -> list[str]:
    """Every name `gpuport kb show` can find, for suggestions."""
    names: list[str] = []
    for package in knowledge.packages().values():
        names.append(package.name)
        names.extend(package.import_names)
    for library in knowledge.cuda_libraries().values():
        names.append(library.name)
        names.extend(h for h in library.headers if not h.endswith("/"))
        names.extend(library.link_names)
        names.extend(library.cmake_targets)
    names.extend(v for v in knowledge.env_vars() if not v.endswith("*"))
    for command in knowledge.commands().values():
        names.append(command.name)
        names.extend(command.aliases)
    for arch in knowledge.gpu_architectures().values():
        names.append(arch.gfx)
        names.extend(arch.products)
    names.extend(flag.flag for flag in knowledge.docker_flags())
    return sorted(set(names))


def suggestions(name: str, limit: int = 5) -> list[str]:
    """Close matches for a name that matched nothing (case-insensitive)."""
    names = known_names()
    by_folded: dict[str, str] = {}
    for candidate in names:
        by_folded.setdefault(candidate.lower(), candidate)
    close = difflib.get_close_matches(name.strip().lower(), list(by_folded), n=limit, cutoff=0.6)
    return [by_folded[c] for c in close]


def table_entries(table: str) -> tuple[KbEntry, ...]:
    """The entries of one of :data:`TABLES`, in their file's order."""
    if table == "packages":
        return tuple(knowledge.packages().values())
    if table == "libraries":
        return tuple(knowledge.cuda_libraries().values())
    if table == "env":
        return tuple(knowledge.env_vars().values())
    if table == "commands":
        return tuple(knowledge.commands().values())
    if table == "docker":
        return (*knowledge.docker_images(), *knowledge.docker_flags())
    if table == "indexes":
        return tuple(knowledge.pip_indexes())
    if table == "gpus":
        return tuple(knowledge.gpu_architectures().values())
    raise ValueError(f"unknown table {table!r}")


def kb_lookup(name: str, rocm_version: str) -> KbLookup:
    """``gpuport kb show NAME``: every match (possibly none)."""
    return KbLookup(name, tuple(lookup(name)), rocm_version)


def kb_table(table: str, rocm_version: str) -> KbTable:
    """``gpuport kb list TABLE``."""
    return KbTable(table, table_entries(table), rocm_version)


def kb_counts() -> KbCounts:
    """``gpuport kb list``: the size of every table."""
    return KbCounts(tuple((table, len(table_entries(table))) for table in TABLES))
