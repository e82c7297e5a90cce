"""The port's knowledge-base files (hip_translation.toml, compile_check.toml): every entry is
complete, sourced and dated, and the facts agree with the name map and the compilers' words."""

from __future__ import annotations

import datetime
import re
from typing import Any
from urllib.parse import urlsplit

import pytest

from gpuport.kb.loader import Entry, KbError
from gpuport.port.apimap import load_api_map
from gpuport.port.knowledge import (
    CHECK_TOML,
    TRANSLATION_TOML,
    check_facts,
    translation_facts,
)
from kb_checks import check_sources_and_date, raw

# The keys each table may have (a typo would otherwise be silently ignored).
COMMON = {"sources", "checked"}
TABLE_KEYS: dict[str, dict[str, set[str]]] = {
    TRANSLATION_TOML: {
        "vector_types": COMMON | {"bases", "components"},
        "atomic_functions": COMMON | {"names"},
        "warp_builtins": COMMON | {"names"},
        "masked_warp": COMMON | {"cuda", "hip"},
        "match_warp": COMMON | {"names"},
        "tile_vote": COMMON | {"member", "wave_wide"},
        "pointer_cast": COMMON | {"cuda", "argument", "cast_to"},
        "toolkit_header": COMMON | {"what", "pattern"},
    },
    CHECK_TOML: {
        "rocm_library_headers": COMMON | {"library", "prefixes"},
        "missing_header_message": COMMON | {"compiler", "pattern"},
    },
}


def all_entries() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for filename, tables in TABLE_KEYS.items():
        data = raw(filename)
        for table in tables:
            value = data[table]
            items = value if isinstance(value, list) else [value]
            out += [(f"{filename} {table} #{i}", item) for i, item in enumerate(items)]
    return out


ENTRIES = all_entries()


def is_web_url(text: str) -> bool:
    parts = urlsplit(text)
    return parts.scheme in ("http", "https") and bool(parts.netloc) and not re.search(r"\s", text)


@pytest.mark.parametrize("filename", sorted(TABLE_KEYS))
def test_files_have_only_known_tables(filename: str) -> None:
    assert set(raw(filename)) == set(TABLE_KEYS[filename])


@pytest.mark.parametrize("label,item", ENTRIES, ids=[label for label, _ in ENTRIES])
def test_every_entry_is_sourced_dated_and_uses_known_keys(label: str, item: dict[str, Any]) -> None:
    filename, table, _ = label.split(" ")
    unknown = set(item) - TABLE_KEYS[filename][table]
    assert not unknown, f"unknown keys {unknown}"
    check_sources_and_date(item["sources"], item["checked"])


def test_vector_types_are_cudas() -> None:
    facts = translation_facts()
    assert len(facts.vector_types) == 48
    assert {"float4", "uchar2", "ulonglong3", "double1"} <= facts.vector_types
    assert {"make_float4", "atomicMax"} <= facts.clash_functions


def test_warp_tables_pair_up() -> None:
    facts = translation_facts()
    assert all(name.endswith("_sync") for name in facts.masked_warp)
    assert all(name.endswith("_sync") for name in facts.match_warp)
    assert not facts.match_warp & set(facts.masked_warp)
    maskless = set(facts.masked_warp.values())
    assert facts.warp_builtins <= maskless
    assert all(hip == cuda.removesuffix("_sync") for cuda, hip in facts.masked_warp.items())
    assert set(facts.tile_votes) == {"any", "all", "ballot", "match_any", "match_all"}
    assert {v for v in facts.tile_votes.values() if v} <= maskless


def test_pointer_casts_are_of_renamed_runtime_calls() -> None:
    api = load_api_map()
    for name, cast in translation_facts().pointer_casts.items():
        entry = api.entries.get(name)
        assert entry is not None and entry.hip and entry.family == "runtime", name
        assert cast.argument >= 0
        assert cast.cast_to in ("void**", "const void*"), cast.cast_to


@pytest.mark.parametrize(
    "header",
    [
        "cuda_runtime.h",
        "cuda_fp16.hpp",
        "cudaTypedefs.h",
        "cuda.h",
        "sm_32_intrinsics.hpp",
        "mma.h",
        "cublasLt.h",
        "nccl.h",
        "cub/block/block_reduce.cuh",
        "thrust/sort.h",
        "cuda/std/atomic",
        "cooperative_groups/reduce.h",
        "nvtx3/nvToolsExt.h",
    ],
)
def test_toolkit_headers_are_recognised(header: str) -> None:
    assert translation_facts().toolkit_header_re.match(header)


@pytest.mark.parametrize("header", ["cuda_utils.h", "my_cuda.h", "helper_cuda.h", "kernels/cub.h"])
def test_a_projects_own_headers_are_not_the_toolkits(header: str) -> None:
    assert not translation_facts().toolkit_header_re.match(header)


def test_rocm_library_prefixes_are_unique_and_cover_the_maps_library_headers() -> None:
    prefixes = check_facts().rocm_library_header_prefixes
    assert len(set(prefixes)) == len(prefixes)
    library_families = {"cublas", "curand", "cufft", "cusparse", "cusolver", "cub", "nccl", "nvtx"}
    for entry in load_api_map().headers.values():
        if entry.family in library_families and entry.hip:
            assert entry.hip.startswith(prefixes), entry.hip


@pytest.mark.parametrize(
    "output,header",
    [
        ("a.cpp:1:10: fatal error: 'hipblas/hipblas.h' file not found", "hipblas/hipblas.h"),
        (
            "b.cu:3:10: fatal error: missing_local.cuh: No such file or directory",
            "missing_local.cuh",
        ),
        ('a.cu(2): catastrophic error: cannot open source file "cub/cub.cuh"', "cub/cub.cuh"),
        ('a.cu(2): error: cannot open source file "thrust/sort.h"', "thrust/sort.h"),
    ],
)
def test_missing_header_messages_name_the_header(output: str, header: str) -> None:
    found = next(m for p in check_facts().missing_header_res if (m := p.search(output)))
    assert found.group(1) == header


def test_an_entry_without_sources_is_rejected() -> None:
    from gpuport.port import knowledge

    with pytest.raises(KbError, match="sources"):
        knowledge._sourced(Entry({"checked": datetime.date(2026, 1, 1)}, "kb/x.toml [t]"))
    with pytest.raises(KbError, match="checked"):
        knowledge._sourced(Entry({"sources": ["https://example.org"]}, "kb/x.toml [t]"))
