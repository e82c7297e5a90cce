"""The port's facts from the knowledge base: what the translator and the compile check know.

``kb/hip_translation.toml`` holds what the translator knows beyond the name map (vector types,
functions HIP already defines, warp functions, pointer casts, the CUDA toolkit's headers);
``kb/compile_check.toml`` the ROCm library headers a machine may lack and the compilers'
missing-header messages. Both are read once, through :mod:`gpuport.kb.loader`, into frozen
objects; a malformed entry is a :class:`~gpuport.kb.loader.KbError` naming it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpuport.kb.loader import Entry, KbError, entries, keyed, load_toml

TRANSLATION_TOML = "hip_translation.toml"
CHECK_TOML = "compile_check.toml"


@dataclass(frozen=True, slots=True)
class PointerCast:
    """A HIP function's pointer parameter that has no template overload, unlike CUDA's."""

    argument: int  # 0-based index of the argument
    cast_to: str  # the C type HIP's function takes there


@dataclass(frozen=True, slots=True)
class TranslationFacts:
    vector_types: frozenset[str]  # float4, uchar2...: CUDA's built-in vector types
    atomic_functions: frozenset[str]  # atomicMin...: HIP defines them for float and double too
    warp_builtins: frozenset[str]  # HIP's mask-less warp functions: __shfl, __ballot...
    masked_warp: Mapping[str, str]  # CUDA's _sync warp function -> HIP's mask-less form
    match_warp: frozenset[str]  # __match_any_sync, __match_all_sync
    tile_votes: Mapping[str, str]  # a tile's vote member -> the wave-wide function ("" if none)
    pointer_casts: Mapping[str, PointerCast]  # by CUDA function name
    toolkit_header_re: re.Pattern[str]  # matches a whole #include path of the CUDA toolkit

    @property
    def clash_functions(self) -> frozenset[str]:
        """Functions HIP's headers define that CUDA code often defines for itself: the
        atomics and a make_<type> function for each vector type (hip_vector_types.h)."""
        return self.atomic_functions | {f"make_{t}" for t in self.vector_types}


@dataclass(frozen=True, slots=True)
class CheckFacts:
    rocm_library_header_prefixes: tuple[str, ...]  # "hipblas/", "hipblas.h", ...
    missing_header_res: tuple[re.Pattern[str], ...]  # group 1 is the header; tried in order


def _table(data: dict[str, Any], name: str, filename: str) -> Entry:
    entry = Entry(data.get(name), f"kb/{filename} [{name}]")
    _sourced(entry)
    return entry


def _sourced(entry: Entry) -> None:
    """Every entry of the port's files names its sources and when it was checked."""
    entry.texts("sources", required=True)
    entry.date()


def _names(data: dict[str, Any], name: str, filename: str) -> frozenset[str]:
    return frozenset(_table(data, name, filename).texts("names", required=True))


def _pattern(entry: Entry, key: str = "pattern") -> re.Pattern[str]:
    text = entry.text(key)
    try:
        return re.compile(text)
    except re.error as exc:
        raise KbError(f"{entry.where}: {key!r} is not a regular expression: {exc}") from None


@functools.cache
def translation_facts() -> TranslationFacts:
    """The translator's facts (read once per process)."""
    name = TRANSLATION_TOML
    data = load_toml(name)
    vector = _table(data, "vector_types", name)
    vector_types = frozenset(
        f"{base}{n}"
        for base in vector.texts("bases", required=True)
        for n in vector.ints("components")
    )

    def masked(entry: Entry, cuda: str) -> str:
        _sourced(entry)
        return entry.text("hip")

    def vote(entry: Entry, member: str) -> str:
        _sourced(entry)
        return entry.text("wave_wide", "")

    def cast(entry: Entry, cuda: str) -> PointerCast:
        _sourced(entry)
        return PointerCast(entry.integer("argument"), entry.text("cast_to"))

    headers = []
    for entry in entries(data, "toolkit_header", name, "what"):
        _sourced(entry)
        headers.append(_pattern(entry).pattern)
    return TranslationFacts(
        vector_types=vector_types,
        atomic_functions=_names(data, "atomic_functions", name),
        warp_builtins=_names(data, "warp_builtins", name),
        masked_warp=keyed(data, "masked_warp", name, "cuda", "listed twice", masked),
        match_warp=_names(data, "match_warp", name),
        tile_votes=keyed(data, "tile_vote", name, "member", "listed twice", vote),
        pointer_casts=keyed(data, "pointer_cast", name, "cuda", "listed twice", cast),
        toolkit_header_re=re.compile(f"^(?:{'|'.join(headers)})$"),
    )


@functools.cache
def check_facts() -> CheckFacts:
    """The compile check's facts (read once per process)."""
    name = CHECK_TOML
    data = load_toml(name)
    prefixes: list[str] = []
    for entry in entries(data, "rocm_library_headers", name, "library"):
        _sourced(entry)
        prefixes += entry.texts("prefixes", required=True)
    messages = []
    for entry in entries(data, "missing_header_message", name, "compiler"):
        _sourced(entry)
        pattern = _pattern(entry)
        if pattern.groups < 1:
            raise KbError(f"{entry.where}: the pattern needs a group for the header")
        messages.append(pattern)
    return CheckFacts(tuple(prefixes), tuple(messages))
