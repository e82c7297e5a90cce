"""``gpuport kb``: look up what a package, library, variable, tool, image or GPU becomes on ROCm."""

from __future__ import annotations

import dataclasses
import datetime
import difflib
import enum
import json
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from rich.console import Console

from gpuport import kb as knowledge

EXIT_USAGE = 2

# The tables `gpuport kb list` knows, in the order `gpuport kb list` prints its summary.
TABLES = ("packages", "libraries", "env", "commands", "docker", "indexes", "gpus")


@dataclass(frozen=True, slots=True)
class KbMatch:
    """One knowledge-base entry that a looked-up name matched, and how it matched."""

    kind: str  # package, library, env, command, docker-image, docker-flag, pip-index, gpu
    matched_by: str  # e.g. "name", "import", "header", "link name", "pattern"
    entry: Any  # one of the gpuport.kb dataclasses


def lookup(name: str) -> list[KbMatch]:
    """Every entry that ``name`` designates, across all tables, without duplicates."""
    found: list[KbMatch] = []
    seen: set[int] = set()

    def add(kind: str, matched_by: str, entry: object | None) -> None:
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


def _original(entry: object) -> object:
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


# ---------------------------------------------------------------------------------------------
# Plain data for JSON


def _plain(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, tuple | list):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value


def entry_dict(entry: Any, rocm_version: str) -> dict[str, Any]:
    """An entry as JSON-ready data, with its index filled in for ``rocm_version``."""
    data = {f.name: _plain(getattr(entry, f.name)) for f in dataclasses.fields(entry)}
    if isinstance(entry, knowledge.Package | knowledge.PipIndex):
        data["index_for_rocm"] = entry.index_for(rocm_version)
    if isinstance(entry, knowledge.DockerImage):
        data["image_for_rocm"] = entry.image_for(rocm_version)
    return data


def match_dict(match: KbMatch, rocm_version: str) -> dict[str, Any]:
    return {
        "kind": match.kind,
        "matched_by": match.matched_by,
        "entry": entry_dict(match.entry, rocm_version),
    }


# ---------------------------------------------------------------------------------------------
# Terminal rendering (rich)


def _title(match: KbMatch) -> str:
    entry = match.entry
    if isinstance(entry, knowledge.Package):
        return f"package {entry.name} — {entry.status.value}"
    if isinstance(entry, knowledge.CudaLibrary):
        return f"CUDA library {entry.name} — {entry.status.value}"
    if isinstance(entry, knowledge.EnvVar):
        return f"environment variable {entry.name}"
    if isinstance(entry, knowledge.ToolCommand):
        return f"command {entry.name}"
    if isinstance(entry, knowledge.DockerImage):
        return f"Docker image {entry.pattern}"
    if isinstance(entry, knowledge.DockerFlag):
        return f"container flag {entry.flag}"
    if isinstance(entry, knowledge.PipIndex):
        return f"pip index {entry.pattern}"
    if isinstance(entry, knowledge.GpuArch):
        return f"AMD GPU target {entry.gfx} — {entry.family}"
    return match.kind


def _rows(entry: Any, rocm_version: str) -> Iterator[tuple[str, str]]:
    """(label, text) pairs for the fields worth showing a person, empty ones left out."""
    if isinstance(entry, knowledge.Package):
        yield "on ROCm", entry.instead
        yield "ROCm index", entry.index_for(rocm_version) or ""
        yield "replacement", entry.rocm_package or ""
        yield "ROCm since", entry.rocm_since
        yield "first usable", entry.rocm_min_version or ""
        yield "imports", ", ".join(entry.import_names)
        yield "CUDA extras", ", ".join(entry.cuda_extras)
        yield "category", entry.category
        yield "confidence", entry.confidence
    elif isinstance(entry, knowledge.CudaLibrary):
        yield "AMD counterpart", entry.amd_counterpart
        yield "CUDA headers", ", ".join(entry.headers)
        yield "CUDA link names", ", ".join(entry.link_names)
        yield "CUDA CMake targets", ", ".join(entry.cmake_targets)
        yield "ROCm headers", ", ".join(entry.amd_headers)
        yield "ROCm link names", ", ".join(entry.amd_link_names)
        yield "ROCm CMake targets", ", ".join(entry.amd_cmake_targets)
        if entry.amd_find_package:
            yield "CMake", f"find_package({entry.amd_find_package})"
    elif isinstance(entry, knowledge.EnvVar):
        yield "meaning", entry.meaning
        yield "on ROCm", entry.rocm_equivalent or "no counterpart"
        yield "ROCm names", ", ".join(entry.rocm_names)
        yield "still read on ROCm", "yes" if entry.honoured_on_rocm else "no"
    elif isinstance(entry, knowledge.ToolCommand):
        yield "on ROCm", entry.rocm_equivalent
        yield "ROCm commands", ", ".join(entry.rocm_commands)
        yield "also known as", ", ".join(entry.aliases)
    elif isinstance(entry, knowledge.DockerImage):
        yield "on ROCm", entry.image_for(rocm_version)
    elif isinstance(entry, knowledge.DockerFlag):
        yield "on ROCm", entry.rocm_replacement
    elif isinstance(entry, knowledge.PipIndex):
        yield "on ROCm", entry.index_for(rocm_version) or "no replacement index"
    elif isinstance(entry, knowledge.GpuArch):
        yield "products", ", ".join(entry.products)
        sizes = entry.wavefronts_supported or (entry.wavefront,)
        yield "wavefront", f"{entry.wavefront} (supports {', '.join(map(str, sizes))})"
        yield "ROCm support", "official" if entry.officially_supported else "not official"
        yield "support note", entry.support_note
    yield "notes", entry.notes
    yield "sources", "\n".join(entry.sources)
    yield "checked", entry.checked.isoformat()


def _console() -> Console:
    from rich.console import Console

    # No file given: rich writes to whatever sys.stdout is at print time (CliRunner's too),
    # and itself leaves colour out when that is not a terminal or NO_COLOR is set.
    return Console(highlight=False)


def render_matches(matches: Iterable[KbMatch], rocm_version: str) -> None:
    from rich.table import Table

    console = _console()
    for match in matches:
        table = Table(
            title=_title(match),
            title_justify="left",
            show_header=False,
            box=None,
            pad_edge=False,
            caption=f"matched by {match.matched_by}",
            caption_justify="left",
        )
        table.add_column(style="bold", no_wrap=True)
        table.add_column(overflow="fold")
        for label, text in _rows(match.entry, rocm_version):
            if text:
                table.add_row(label, text)
        console.print(table)
        console.print()


def _summary_rows() -> list[tuple[str, int]]:
    return [(table, len(_table_entries(table))) for table in TABLES]


def _table_entries(table: str) -> list[Any]:
    if table == "packages":
        return list(knowledge.packages().values())
    if table == "libraries":
        return list(knowledge.cuda_libraries().values())
    if table == "env":
        return list(knowledge.env_vars().values())
    if table == "commands":
        return list(knowledge.commands().values())
    if table == "docker":
        return [*knowledge.docker_images(), *knowledge.docker_flags()]
    if table == "indexes":
        return list(knowledge.pip_indexes())
    if table == "gpus":
        return list(knowledge.gpu_architectures().values())
    raise ValueError(f"unknown table {table!r}")


def _list_row(entry: Any, rocm_version: str) -> tuple[str, str, str]:
    """(key, status or kind, what to do) for one line of `gpuport kb list`."""
    if isinstance(entry, knowledge.Package):
        return (
            entry.name,
            entry.status.value,
            entry.rocm_package or entry.index_for(rocm_version) or _first_sentence(entry.instead),
        )
    if isinstance(entry, knowledge.CudaLibrary):
        return entry.name, entry.status.value, entry.amd_counterpart
    if isinstance(entry, knowledge.EnvVar):
        return (
            entry.name,
            "read on ROCm" if entry.honoured_on_rocm else "",
            (", ".join(entry.rocm_names) or entry.rocm_equivalent or "no counterpart"),
        )
    if isinstance(entry, knowledge.ToolCommand):
        return entry.name, "", ", ".join(entry.rocm_commands) or entry.rocm_equivalent
    if isinstance(entry, knowledge.DockerImage):
        return entry.pattern, "image", entry.image_for(rocm_version)
    if isinstance(entry, knowledge.DockerFlag):
        return entry.flag, "flag", entry.rocm_replacement
    if isinstance(entry, knowledge.PipIndex):
        return entry.pattern, "index", entry.index_for(rocm_version) or "none"
    if isinstance(entry, knowledge.GpuArch):
        official = "official" if entry.officially_supported else "unofficial"
        return (
            entry.gfx,
            f"{entry.family}, wave{entry.wavefront}, {official}",
            ", ".join(entry.products),
        )
    raise TypeError(type(entry).__name__)


def _first_sentence(text: str) -> str:
    head, dot, _ = text.partition(". ")
    return head + ("." if dot else "")


# ---------------------------------------------------------------------------------------------
# The commands


def _rocm_option(function: Any) -> Any:
    return click.option(
        "--rocm",
        "rocm_version",
        default=knowledge.DEFAULT_ROCM_VERSION,
        show_default=True,
        metavar="VERSION",
        help="ROCm version to fill into index URLs and image tags.",
    )(function)


def _format_option(function: Any) -> Any:
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(["terminal", "json"]),
        default="terminal",
        show_default=True,
        help="Output format.",
    )(function)


@click.group("kb")
def kb() -> None:
    """The knowledge base: what CUDA packages, libraries, variables, tools and images become on ROCm."""


@kb.command("show")
@click.argument("name")
@_format_option
@_rocm_option
@click.pass_context
def show(ctx: click.Context, name: str, fmt: str, rocm_version: str) -> None:
    """Show every entry NAME designates: a package, import, library, header, variable, command,
    image, flag, pip index or gfx id. Put `--` before a NAME that starts with a dash
    (gpuport kb show -- --gpus)."""
    matches = lookup(name)
    if not matches:
        close = suggestions(name)
        hint = f" (did you mean: {', '.join(close)}?)" if close else ""
        click.echo(f"error: nothing in the knowledge base for {name!r}{hint}", err=True)
        ctx.exit(EXIT_USAGE)
    if fmt == "json":
        payload = [match_dict(match, rocm_version) for match in matches]
        click.echo(json.dumps(payload, indent=2, ensure_ascii=False))
        return
    render_matches(matches, rocm_version)


@kb.command("list")
@click.argument("table", required=False, type=click.Choice(TABLES))
@_format_option
@_rocm_option
def list_table(table: str | None, fmt: str, rocm_version: str) -> None:
    """List one TABLE of the knowledge base; without TABLE, count the entries of each."""
    if table is None:
        rows = _summary_rows()
        if fmt == "json":
            click.echo(json.dumps(dict(rows), indent=2))
            return
        for name, count in rows:
            click.echo(f"{name:<10} {count:>4}")
        return
    entries = _table_entries(table)
    if fmt == "json":
        payload = [entry_dict(entry, rocm_version) for entry in entries]
        click.echo(json.dumps(payload, indent=2, ensure_ascii=False))
        return
    from rich.table import Table

    view = Table(title=f"{table} ({len(entries)})", title_justify="left", box=None)
    view.add_column("name", no_wrap=True)
    view.add_column("status")
    view.add_column("on ROCm / details", overflow="fold")
    for entry in entries:
        view.add_row(*_list_row(entry, rocm_version))
    _console().print(view)


def main() -> None:  # pragma: no cover - `python -m gpuport.kb.command`
    kb(sys.argv[1:])


if __name__ == "__main__":  # pragma: no cover
    main()
