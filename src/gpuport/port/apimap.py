"""The CUDA→HIP name and header map: HIPIFY's tables plus gpuport's hand-written extras.

``kb/cuda_hip_api.tsv`` is generated from the HIPIFY tables by ``tools/build_api_map.py``;
``kb/cuda_hip_extra.toml`` adds what they lack (headers, bf16/fp8 types, NVTX, macros, the
versions the warp rewrite depends on). An entry in the extras wins over the table.
"""

from __future__ import annotations

import datetime
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gpuport import kb
from gpuport.kb import loader
from gpuport.kb.loader import Entry, KbError, TsvTable

API_TSV = "cuda_hip_api.tsv"
# The TSV's columns, in the order tools/build_api_map.py writes them.
API_COLUMNS = (
    "cuda",
    "hip",
    "family",
    "hip_added",
    "hip_deprecated",
    "hip_removed",
    "cuda_removed",
    "note",
)
EXTRA_TOML = "cuda_hip_extra.toml"
VERSIONS_TOML = "rocm_versions.toml"
FAMILIES = frozenset(
    {
        "runtime",
        "driver",
        "device",
        "rtc",
        "cublas",
        "curand",
        "cufft",
        "cusparse",
        "cusolver",
        "cub",
        "complex",
        "cudnn",
        # families of the extras only
        "macro",
        "arch",
        "nvtx",
        "nccl",
        "thrust",
    }
)
_VERSION_RE = re.compile(r"^\d+(?:\.\d+){0,3}$")

Version = tuple[int, int, int]


def parse_version(text: str) -> Version:
    """``"6.4"`` → ``(6, 4, 0)``; raises ``ValueError`` for anything else."""
    text = text.strip()
    if not _VERSION_RE.match(text):
        raise ValueError(f"not a ROCm version: {text!r} (expected e.g. 6.4 or 6.2.1)")
    parts = [int(p) for p in text.split(".")][:3]
    while len(parts) < 3:
        parts.append(0)
    return (parts[0], parts[1], parts[2])


def version_text(version: Version) -> str:
    """``(6, 4, 0)`` → ``"6.4"``; ``(6, 2, 1)`` → ``"6.2.1"``."""
    major, minor, patch = version
    return f"{major}.{minor}.{patch}" if patch else f"{major}.{minor}"


@dataclass(frozen=True, slots=True)
class ApiEntry:
    """One CUDA name: its HIP counterpart ("" when there is none) and when it appeared."""

    cuda: str
    hip: str
    family: str
    hip_added: Version | None = None
    hip_deprecated: Version | None = None
    hip_removed: Version | None = None
    cuda_removed: str = ""
    note: str = ""
    source: str = "hipify"  # "hipify" (the table) or "extra" (cuda_hip_extra.toml)
    # The name HIP had for it before ``hip_added`` (a rename such as hipSPARSE's
    # HIPSPARSE_ORDER_COLUMN → HIPSPARSE_ORDER_COL in 5.4), and when that name appeared.
    hip_before: str = ""
    hip_before_added: Version | None = None


@dataclass(frozen=True, slots=True)
class HeaderEntry:
    """A CUDA header (or folder prefix ending in "/") and what replaces it."""

    cuda: str
    hip: str  # "" when there is no counterpart
    family: str
    since: Version | None = None
    flat: str = ""  # the path before ``moved`` (library headers moved into folders)
    moved: Version | None = None
    drop: bool = False  # delete the #include line
    keep: bool = False  # the same path works on ROCm (thrust/)
    needs_runtime: bool = False  # hip/hip_runtime.h must be included before it
    note: str = ""
    sources: tuple[str, ...] = ()

    def path_for(self, target: Version) -> str:
        """The header path on ``target``: the flat name before the move, the folder one after."""
        if self.flat and self.moved is not None and target < self.moved:
            return self.flat
        return self.hip


@dataclass(frozen=True, slots=True)
class WarpVersions:
    sync_preview_since: Version
    sync_default_since: Version
    syncwarp_since: Version
    # cooperative groups' tile votes (thread_block_tile::any/all/ballot/match_*)
    tile_vote_since: Version


@dataclass(frozen=True, slots=True)
class Difference:
    """One way the translation differs between releases (rocm_versions.toml [[difference]])."""

    id: str
    since: Version
    what: str  # what ``since`` and later get
    older: str  # what an older target gets
    data: str  # the table that drives it


@dataclass(frozen=True, slots=True)
class LocationForm:
    """A CUDA memory call whose cudaMemLocation form maps to a HIP _v2 function from ``since``."""

    cuda: str
    hip: str
    since: Version
    location_argument: int  # 0-based
    location_counts: tuple[int, ...]  # argument counts only the location form has
    older: str  # what to write for an older target


@dataclass(frozen=True, slots=True)
class ContextParams:
    """cuCtxCreate's CUDA 13 form: a CUctxCreateParams pointer as argument ``params_argument``."""

    cuda: tuple[str, ...]
    hip: str
    arguments: int
    params_argument: int
    unsupported: str  # what to do when the parameters are not null


@dataclass(frozen=True, slots=True)
class VersionFacts:
    """What rocm_versions.toml says: the differences between releases and what drives them."""

    differences: tuple[Difference, ...]
    location_forms: Mapping[str, LocationForm]
    context_params: Mapping[str, ContextParams]
    warp_size_not_constant_since: Version
    warp_size_fix: str

    def between(self, older: Version, newer: Version) -> tuple[Difference, ...]:
        """The differences a target of ``older`` sees that ``newer`` does not."""
        return tuple(d for d in self.differences if older < d.since <= newer)


@dataclass(frozen=True, slots=True)
class ApiMap:
    entries: Mapping[str, ApiEntry]
    headers: Mapping[str, HeaderEntry]
    header_prefixes: tuple[HeaderEntry, ...]
    warp: WarpVersions
    source: str  # the TSV's "# source:" line
    generated: str  # the TSV's "# generated:" date
    extra_checked: datetime.date | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)
    versions: VersionFacts | None = None

    def header(self, path: str) -> HeaderEntry | None:
        """The entry for an #include path, exact names first, then folder prefixes."""
        entry = self.headers.get(path)
        if entry is not None:
            return entry
        for prefix in self.header_prefixes:
            if path.startswith(prefix.cuda):
                return prefix
        return None


def _optional_version(text: str, where: str) -> Version | None:
    """The ROCm version ``text`` holds, or None when it is empty; errors name ``where``."""
    text = text.strip()
    if not text:
        return None
    try:
        return parse_version(text)
    except ValueError as exc:
        raise KbError(f"{where}: {exc}") from None


def _version_or_none(entry: Entry, key: str) -> Version | None:
    """The ROCm version in ``key``, or None when the key is absent or empty."""
    return _optional_version(entry.text(key, ""), entry.where)


def _api_entries(table: TsvTable) -> dict[str, ApiEntry]:
    entries: dict[str, ApiEntry] = {}
    for row in table.rows:
        cells = row.cells
        where = table.where(row)
        if cells["family"] not in FAMILIES:
            raise KbError(f"{where}: unknown family {cells['family']!r}")
        entries[cells["cuda"]] = ApiEntry(
            cuda=cells["cuda"],
            hip=cells["hip"],
            family=cells["family"],
            hip_added=_optional_version(cells["hip_added"], where),
            hip_deprecated=_optional_version(cells["hip_deprecated"], where),
            hip_removed=_optional_version(cells["hip_removed"], where),
            cuda_removed=cells["cuda_removed"],
            note=cells["note"],
        )
    return entries


def _sourced(entry: Entry) -> tuple[str, ...]:
    """The entry's sources; every entry of the extras also names the date it was checked."""
    sources = entry.sources()
    entry.date()
    return sources


def _family(entry: Entry) -> str:
    family = entry.text("family", "")
    if family not in FAMILIES:
        raise KbError(f"{entry.where}: unknown family {family!r}")
    return family


def _header_entry(entry: Entry) -> HeaderEntry:
    header = HeaderEntry(
        cuda=entry.text("cuda"),
        hip=entry.text("hip", ""),
        family=_family(entry),
        since=_version_or_none(entry, "since"),
        flat=entry.text("flat", ""),
        moved=_version_or_none(entry, "moved"),
        drop=entry.flag("drop"),
        keep=entry.flag("keep"),
        needs_runtime=entry.flag("needs_runtime"),
        note=entry.text("note", ""),
        sources=_sourced(entry),
    )
    if (header.hip or header.drop or header.keep) and header.since is None:
        raise KbError(f"{entry.where}: a header with a counterpart needs `since`")
    if not (header.hip or header.drop or header.keep) and not header.note:
        raise KbError(f"{entry.where}: a header without counterpart needs a note saying what to do")
    return header


def _merge_extras(
    entries: dict[str, ApiEntry], extra: dict[str, Any]
) -> tuple[dict[str, HeaderEntry], tuple[HeaderEntry, ...], WarpVersions]:
    headers: dict[str, HeaderEntry] = {}
    for item in loader.entries(extra, "header", EXTRA_TOML, "cuda"):
        header = _header_entry(item)
        headers[header.cuda] = header
    prefixes = tuple(
        _header_entry(item) for item in loader.entries(extra, "header_prefix", EXTRA_TOML, "cuda")
    )
    for item in loader.entries(extra, "dropped_suffix", EXTRA_TOML, "suffix"):
        _drop_suffix(entries, item)
    for item in loader.entries(extra, "name", EXTRA_TOML, "cuda"):
        _sourced(item)
        since = _version_or_none(item, "since")
        hip = item.text("hip", "")
        if since is None or not hip:
            raise KbError(f"{item.where}: a rename needs `hip` and `since`")
        before = item.text("before", "")
        before_since = _version_or_none(item, "before_since")
        if bool(before) != (before_since is not None) or (
            before_since is not None and before_since >= since
        ):
            raise KbError(f"{item.where}: `before` needs a `before_since` earlier than `since`")
        cuda = item.text("cuda")
        entries[cuda] = ApiEntry(
            cuda=cuda,
            hip=hip,
            family=_family(item),
            hip_added=since,
            note=item.text("note", ""),
            source="extra",
            hip_before=before,
            hip_before_added=before_since,
        )
    for item in loader.entries(extra, "unsupported", EXTRA_TOML, "cuda"):
        _sourced(item)
        note = item.text("note", "")
        if not note:
            raise KbError(f"{item.where}: say what to do instead in `note`")
        cuda = item.text("cuda")
        entries[cuda] = ApiEntry(cuda=cuda, hip="", family=_family(item), note=note, source="extra")
    for group in loader.entries(extra, "same_name", EXTRA_TOML, "family"):
        _sourced(group)
        since = _version_or_none(group, "since")
        family = _family(group)
        for name in group.texts("names"):
            held = entries.get(name)
            if held is not None and held.hip:
                continue  # the table already knows a counterpart (and its version)
            entries[name] = ApiEntry(
                cuda=name,
                hip=name,
                family=family,
                hip_added=since,
                note=group.text("note", ""),
                source="extra",
            )
    warp = loader.table_entry(extra, "warp", EXTRA_TOML)
    _sourced(warp)

    def required_version(key: str) -> Version:
        version = _version_or_none(warp, key)
        if version is None:
            raise KbError(f"{warp.where}: missing {key!r}")
        return version

    versions = WarpVersions(
        sync_preview_since=required_version("sync_preview_since"),
        sync_default_since=required_version("sync_default_since"),
        syncwarp_since=required_version("syncwarp_since"),
        tile_vote_since=required_version("tile_vote_since"),
    )
    return headers, prefixes, versions


def _drop_suffix(entries: dict[str, ApiEntry], rule: Entry) -> None:
    """From ``since`` on, the table's HIP names of ``family`` ending in ``suffix`` lose it
    (hipBLAS 3.0 gave the plain names the signatures of the ``_v2`` ones and dropped those)."""
    _sourced(rule)
    family = _family(rule)
    suffix = rule.text("suffix", "")
    since = _version_or_none(rule, "since")
    if not suffix or since is None:
        raise KbError(f"{rule.where}: needs `suffix` and `since`")
    note = rule.text("note", "")
    for name, entry in list(entries.items()):
        if entry.family != family or not entry.hip.endswith(suffix) or entry.hip_removed:
            continue
        entries[name] = ApiEntry(
            cuda=entry.cuda,
            hip=entry.hip[: -len(suffix)],
            family=entry.family,
            hip_added=since,
            cuda_removed=entry.cuda_removed,
            note=note or entry.note,
            source="extra",
            hip_before=entry.hip,
            hip_before_added=entry.hip_added,
        )


@functools.cache
def load_api_map() -> ApiMap:
    """The map shipped with gpuport (read once per process)."""
    table = loader.load_tsv(API_TSV, API_COLUMNS)
    extra = loader.load_toml(EXTRA_TOML)
    entries = _api_entries(table)
    headers, prefixes, warp = _merge_extras(entries, extra)
    versions = _version_facts(entries, loader.load_toml(VERSIONS_TOML))
    return ApiMap(
        entries=entries,
        headers=headers,
        header_prefixes=prefixes,
        warp=warp,
        source=table.meta.get("source", ""),
        generated=table.meta.get("generated", ""),
        extra_checked=loader.table_entry(extra, "meta", EXTRA_TOML).date(),
        meta=dict(table.meta),
        versions=versions,
    )


def _required(entry: Entry, key: str) -> Version:
    version = _version_or_none(entry, key)
    if version is None:
        raise KbError(f"{entry.where}: missing {key!r}")
    return version


def _version_facts(entries: dict[str, ApiEntry], data: dict[str, Any]) -> VersionFacts:
    """rocm_versions.toml, read; its renames go into ``entries``."""
    differences = []
    for item in loader.entries(data, "difference", VERSIONS_TOML, "id"):
        _sourced(item)
        differences.append(
            Difference(
                item.text("id"),
                _required(item, "since"),
                item.text("what"),
                item.text("older"),
                item.text("data"),
            )
        )
    forms: dict[str, LocationForm] = {}
    for item in loader.entries(data, "location_form", VERSIONS_TOML, "cuda"):
        _sourced(item)
        form = LocationForm(
            item.text("cuda"),
            item.text("hip"),
            _required(item, "since"),
            item.integer("location_argument"),
            item.ints("location_counts"),
            item.text("older"),
        )
        forms[form.cuda] = form
    contexts: dict[str, ContextParams] = {}
    for item in loader.entries(data, "context_params", VERSIONS_TOML, "hip"):
        _sourced(item)
        _required(item, "since")
        params = ContextParams(
            item.texts("cuda", required=True),
            item.text("hip"),
            item.integer("arguments"),
            item.integer("params_argument"),
            item.text("unsupported"),
        )
        contexts.update(dict.fromkeys(params.cuda, params))
    for item in loader.entries(data, "name", VERSIONS_TOML, "cuda"):
        _sourced(item)
        cuda = item.text("cuda")
        entries[cuda] = ApiEntry(
            cuda=cuda,
            hip=item.text("hip"),
            family=_family(item),
            hip_added=_required(item, "since"),
            note=item.text("note", ""),
            source="extra",
        )
    warp_size = loader.table_entry(data, "warp_size", VERSIONS_TOML)
    _sourced(warp_size)
    return VersionFacts(
        tuple(sorted(differences, key=lambda d: (d.since, d.id))),
        forms,
        contexts,
        _required(warp_size, "not_constant_since"),
        warp_size.text("fix"),
    )


def version_facts() -> VersionFacts:
    """The version differences of the shipped map."""
    facts = load_api_map().versions
    assert facts is not None  # load_api_map always reads them
    return facts


def default_rocm_version() -> str:
    """The knowledge base's default target."""
    return kb.DEFAULT_ROCM_VERSION
