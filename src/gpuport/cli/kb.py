"""``gpuport kb show NAME`` and ``gpuport kb list [TABLE]``: what a CUDA name becomes on ROCm."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import json
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from rich.console import Console

from gpuport import kb as knowledge
from gpuport.cli.common import fail, format_option, handle_errors
from gpuport.kb.query import TABLES, KbMatch, kb_counts, lookup, suggestions, table_entries

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


@click.group("kb")
def kb() -> None:
    """The knowledge base: what CUDA packages, libraries, variables, tools and images become on ROCm."""


@kb.command("show")
@click.argument("name")
@format_option(("terminal", "json"))
@_rocm_option
@handle_errors
def show(name: str, fmt: str, rocm_version: str) -> None:
    """Show every entry NAME designates: a package, import, library, header, variable, command,
    image, flag, pip index or gfx id. Put `--` before a NAME that starts with a dash
    (gpuport kb show -- --gpus)."""
    matches = lookup(name)
    if not matches:
        close = suggestions(name)
        hint = f" (did you mean: {', '.join(close)}?)" if close else ""
        fail(f"nothing in the knowledge base for {name!r}{hint}")
    if fmt == "json":
        payload = [match_dict(match, rocm_version) for match in matches]
        click.echo(json.dumps(payload, indent=2, ensure_ascii=False))
        return
    render_matches(matches, rocm_version)


@kb.command("list")
@click.argument("table", required=False, type=click.Choice(TABLES))
@format_option(("terminal", "json"))
@_rocm_option
@handle_errors
def list_table(table: str | None, fmt: str, rocm_version: str) -> None:
    """List one TABLE of the knowledge base; without TABLE, count the entries of each."""
    if table is None:
        rows = list(kb_counts().counts)
        if fmt == "json":
            click.echo(json.dumps(dict(rows), indent=2))
            return
        for name, count in rows:
            click.echo(f"{name:<10} {count:>4}")
        return
    entries = table_entries(table)
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
