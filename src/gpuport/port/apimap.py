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
from importlib import resources
from typing import Any

from gpuport import kb
from gpuport.kb.loader import load_toml

API_TSV = "cuda_hip_api.tsv"
EXTRA_TOML = "cuda_hip_extra.toml"
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


class ApiMapError(ValueError):
    """The shipped map is malformed (a bug in gpuport's data, caught by the tests)."""


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
class ApiMap:
    entries: Mapping[str, ApiEntry]
    headers: Mapping[str, HeaderEntry]
    header_prefixes: tuple[HeaderEntry, ...]
    warp: WarpVersions
    source: str  # the TSV's "# source:" line
    generated: str  # the TSV's "# generated:" date
    extra_checked: datetime.date | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)

    def header(self, path: str) -> HeaderEntry | None:
        """The entry for an #include path, exact names first, then folder prefixes."""
        entry = self.headers.get(path)
        if entry is not None:
            return entry
        for prefix in self.header_prefixes:
            if path.startswith(prefix.cuda):
                return prefix
        return None


def _version_or_none(text: str, where: str) -> Version | None:
    text = text.strip()
    if not text:
        return None
    try:
        return parse_version(text)
    except ValueError as exc:
        raise ApiMapError(f"{where}: {exc}") from None


def _read_tsv(text: str) -> tuple[dict[str, ApiEntry], dict[str, str]]:
    meta: dict[str, str] = {}
    entries: dict[str, ApiEntry] = {}
    header: list[str] | None = None
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("#"):
            key, _, value = line[1:].partition(":")
            if value:
                meta.setdefault(key.strip(), value.strip())
            continue
        if not line.strip():
            continue
        cells = line.split("\t")
        if header is None:
            header = cells
            continue
        if len(cells) != len(header):
            raise ApiMapError(f"{API_TSV}:{number}: {len(cells)} cells, expected {len(header)}")
        row = dict(zip(header, cells, strict=True))
        where = f"{API_TSV}:{number}"
        if row["family"] not in FAMILIES:
            raise ApiMapError(f"{where}: unknown family {row['family']!r}")
        entries[row["cuda"]] = ApiEntry(
            cuda=row["cuda"],
            hip=row["hip"],
            family=row["family"],
            hip_added=_version_or_none(row["hip_added"], where),
            hip_deprecated=_version_or_none(row["hip_deprecated"], where),
            hip_removed=_version_or_none(row["hip_removed"], where),
            cuda_removed=row["cuda_removed"],
            note=row["note"],
        )
    return entries, meta


def _require_sources(item: Mapping[str, Any], where: str) -> tuple[str, ...]:
    sources = item.get("sources")
    if not isinstance(sources, list) or not sources or not all(isinstance(s, str) for s in sources):
        raise ApiMapError(f"{where}: needs a non-empty list of sources")
    if not isinstance(item.get("checked"), datetime.date):
        raise ApiMapError(f"{where}: needs a `checked` date")
    return tuple(sources)


def _family(item: Mapping[str, Any], where: str) -> str:
    family = str(item.get("family", ""))
    if family not in FAMILIES:
        raise ApiMapError(f"{where}: unknown family {family!r}")
    return family


def _header_entry(item: Mapping[str, Any], where: str) -> HeaderEntry:
    sources = _require_sources(item, where)
    entry = HeaderEntry(
        cuda=str(item["cuda"]),
        hip=str(item.get("hip", "")),
        family=_family(item, where),
        since=_version_or_none(str(item.get("since", "")), where),
        flat=str(item.get("flat", "")),
        moved=_version_or_none(str(item.get("moved", "")), where),
        drop=bool(item.get("drop", False)),
        keep=bool(item.get("keep", False)),
        needs_runtime=bool(item.get("needs_runtime", False)),
        note=str(item.get("note", "")),
        sources=sources,
    )
    if (entry.hip or entry.drop or entry.keep) and entry.since is None:
        raise ApiMapError(f"{where}: a header with a counterpart needs `since`")
    if not (entry.hip or entry.drop or entry.keep) and not entry.note:
        raise ApiMapError(f"{where}: a header without counterpart needs a note saying what to do")
    return entry


def _merge_extras(
    entries: dict[str, ApiEntry], extra: Mapping[str, Any]
) -> tuple[dict[str, HeaderEntry], tuple[HeaderEntry, ...], WarpVersions]:
    headers: dict[str, HeaderEntry] = {}
    for i, item in enumerate(extra.get("header", [])):
        entry = _header_entry(item, f"{EXTRA_TOML} header #{i + 1} ({item.get('cuda')})")
        headers[entry.cuda] = entry
    prefixes = tuple(
        _header_entry(item, f"{EXTRA_TOML} header_prefix #{i + 1} ({item.get('cuda')})")
        for i, item in enumerate(extra.get("header_prefix", []))
    )
    for i, rule in enumerate(extra.get("dropped_suffix", [])):
        _drop_suffix(entries, rule, f"{EXTRA_TOML} dropped_suffix #{i + 1}")
    for i, item in enumerate(extra.get("name", [])):
        where = f"{EXTRA_TOML} name #{i + 1} ({item.get('cuda')})"
        _require_sources(item, where)
        since = _version_or_none(str(item.get("since", "")), where)
        if since is None or not item.get("hip"):
            raise ApiMapError(f"{where}: a rename needs `hip` and `since`")
        before = str(item.get("before", ""))
        before_since = _version_or_none(str(item.get("before_since", "")), where)
        if bool(before) != (before_since is not None) or (
            before_since is not None and before_since >= since
        ):
            raise ApiMapError(f"{where}: `before` needs a `before_since` earlier than `since`")
        entries[str(item["cuda"])] = ApiEntry(
            cuda=str(item["cuda"]),
            hip=str(item["hip"]),
            family=_family(item, where),
            hip_added=since,
            note=str(item.get("note", "")),
            source="extra",
            hip_before=before,
            hip_before_added=before_since,
        )
    for i, item in enumerate(extra.get("unsupported", [])):
        where = f"{EXTRA_TOML} unsupported #{i + 1} ({item.get('cuda')})"
        _require_sources(item, where)
        if not item.get("note"):
            raise ApiMapError(f"{where}: say what to do instead in `note`")
        entries[str(item["cuda"])] = ApiEntry(
            cuda=str(item["cuda"]),
            hip="",
            family=_family(item, where),
            note=str(item["note"]),
            source="extra",
        )
    for i, group in enumerate(extra.get("same_name", [])):
        where = f"{EXTRA_TOML} same_name #{i + 1}"
        _require_sources(group, where)
        since = _version_or_none(str(group.get("since", "")), where)
        family = _family(group, where)
        for name in group.get("names", []):
            held = entries.get(name)
            if held is not None and held.hip:
                continue  # the table already knows a counterpart (and its version)
            entries[name] = ApiEntry(
                cuda=name,
                hip=name,
                family=family,
                hip_added=since,
                note=str(group.get("note", "")),
                source="extra",
            )
    warp = extra.get("warp")
    if not isinstance(warp, dict):
        raise ApiMapError(f"{EXTRA_TOML}: missing [warp]")
    _require_sources(warp, f"{EXTRA_TOML} [warp]")
    versions = WarpVersions(
        sync_preview_since=parse_version(str(warp["sync_preview_since"])),
        sync_default_since=parse_version(str(warp["sync_default_since"])),
        syncwarp_since=parse_version(str(warp["syncwarp_since"])),
        tile_vote_since=parse_version(str(warp["tile_vote_since"])),
    )
    return headers, prefixes, versions


def _drop_suffix(entries: dict[str, ApiEntry], rule: Mapping[str, Any], where: str) -> None:
    """From ``since`` on, the table's HIP names of ``family`` ending in ``suffix`` lose it
    (hipBLAS 3.0 gave the plain names the signatures of the ``_v2`` ones and dropped those)."""
    _require_sources(rule, where)
    family = _family(rule, where)
    suffix = str(rule.get("suffix", ""))
    since = _version_or_none(str(rule.get("since", "")), where)
    if not suffix or since is None:
        raise ApiMapError(f"{where}: needs `suffix` and `since`")
    for name, entry in list(entries.items()):
        if entry.family != family or not entry.hip.endswith(suffix) or entry.hip_removed:
            continue
        entries[name] = ApiEntry(
            cuda=entry.cuda,
            hip=entry.hip[: -len(suffix)],
            family=entry.family,
            hip_added=since,
            cuda_removed=entry.cuda_removed,
            note=str(rule.get("note", "")) or entry.note,
            source="extra",
            hip_before=entry.hip,
            hip_before_added=entry.hip_added,
        )


@functools.cache
def load_api_map() -> ApiMap:
    """The map shipped with gpuport (read once per process)."""
    package = resources.files("gpuport.kb")
    tsv_text = (package / API_TSV).read_text(encoding="utf-8")
    extra = load_toml(EXTRA_TOML)
    entries, meta = _read_tsv(tsv_text)
    headers, prefixes, warp = _merge_extras(entries, extra)
    extra_meta = extra.get("meta", {})
    checked = extra_meta.get("checked") if isinstance(extra_meta, dict) else None
    return ApiMap(
        entries=entries,
        headers=headers,
        header_prefixes=prefixes,
        warp=warp,
        source=meta.get("source", ""),
        generated=meta.get("generated", ""),
        extra_checked=checked if isinstance(checked, datetime.date) else None,
        meta=dict(meta),
    )


def default_rocm_version() -> str:
    """The knowledge base's default target."""
    return kb.DEFAULT_ROCM_VERSION
