"""``gpuport kb`` in its two formats: a look-up's matches, a table, the size of every table.

The terminal format prints with rich into memory, as wide as the terminal (or rich's 80
columns off one); knowledge-base text is printed as the text it is, never as rich markup.
The JSON format carries every field of each entry, with its index URL or image tag filled in
for the requested ROCm version.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import json
from collections.abc import Iterator
from typing import Any

from rich.table import Table

from gpuport import kb as knowledge
from gpuport.kb.query import KbCounts, KbEntry, KbLookup, KbMatch, KbTable
from gpuport.report import Format, RenderOptions, renderer
from gpuport.report.common import console_text, memory_console

# --- JSON ------------------------------------------------------------------------------------


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


def entry_dict(entry: KbEntry, rocm_version: str) -> dict[str, Any]:
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


# --- terminal --------------------------------------------------------------------------------


# Each kind of entry's title, a str.format template of the entry; an entry of a kind not
# here is titled by its kind.
_TITLES: dict[type[KbEntry], str] = {
    knowledge.Package: "package {0.name} — {0.status.value}",
    knowledge.CudaLibrary: "CUDA library {0.name} — {0.status.value}",
    knowledge.EnvVar: "environment variable {0.name}",
    knowledge.ToolCommand: "command {0.name}",
    knowledge.DockerImage: "Docker image {0.pattern}",
    knowledge.DockerFlag: "container flag {0.flag}",
    knowledge.PipIndex: "pip index {0.pattern}",
    knowledge.GpuArch: "AMD GPU target {0.gfx} — {0.family}",
}


def _title(match: KbMatch) -> str:
    template = _TITLES.get(type(match.entry))
    return match.kind if template is None else template.format(match.entry)


def _rows(entry: KbEntry, rocm_version: str) -> Iterator[tuple[str, str]]:
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


def _list_row(entry: KbEntry, rocm_version: str) -> tuple[str, str, str]:
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


def _match_table(match: KbMatch, rocm_version: str) -> Table:
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
    return table


@renderer(KbLookup, Format.TERMINAL)
def render_kb_lookup_terminal(found: KbLookup, options: RenderOptions) -> str:
    """Each match as a two-column table: its title, its fields, how the name matched."""
    console = memory_console(options)
    for match in found.matches:
        console.print(_match_table(match, found.rocm_version))
        console.print()
    return console_text(console)


@renderer(KbTable, Format.TERMINAL)
def render_kb_table_terminal(listing: KbTable, options: RenderOptions) -> str:
    """One line per entry: its name, its status or kind, and what it becomes on ROCm."""
    view = Table(title=f"{listing.table} ({len(listing.entries)})", title_justify="left", box=None)
    view.add_column("name", no_wrap=True)
    view.add_column("status")
    view.add_column("on ROCm / details", overflow="fold")
    for entry in listing.entries:
        view.add_row(*_list_row(entry, listing.rocm_version))
    console = memory_console(options)
    console.print(view)
    return console_text(console)


@renderer(KbCounts, Format.TERMINAL)
def render_kb_counts_terminal(counts: KbCounts, options: RenderOptions) -> str:
    return "".join(f"{name:<10} {count:>4}\n" for name, count in counts.counts)


@renderer(KbLookup, Format.JSON)
def render_kb_lookup_json(found: KbLookup, options: RenderOptions) -> str:
    payload = [match_dict(match, found.rocm_version) for match in found.matches]
    return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"


@renderer(KbTable, Format.JSON)
def render_kb_table_json(listing: KbTable, options: RenderOptions) -> str:
    payload = [entry_dict(entry, listing.rocm_version) for entry in listing.entries]
    return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"


@renderer(KbCounts, Format.JSON)
def render_kb_counts_json(counts: KbCounts, options: RenderOptions) -> str:
    return json.dumps(dict(counts.counts), indent=2) + "\n"
