"""kb/hip_signatures.toml: every argument rewrite is complete, sourced and dated, names CUDA
functions the name map knows, and a malformed entry is refused with its name."""

from __future__ import annotations

from typing import Any

import pytest

from gpuport.kb.loader import Entry, KbError
from gpuport.port.apimap import load_api_map
from gpuport.port.translate import signatures
from gpuport.port.translate.signatures import SIGNATURES_TOML, signature_facts
from kb_checks import check_known_keys, check_sources_and_date, raw

COMMON = {"sources", "checked"}
SIGNATURE_KEYS = COMMON | {
    "cuda",
    "arguments",
    "hip",
    "drop",
    "keep_note",
    "insert_at",
    "insert",
    "replace_at",
    "replace",
    "append",
    "append_from",
    "constants",
    "symbol_string",
    "report",
    "note",
}
TABLE_KEYS = {
    "legacy_cublas": COMMON | {"header", "v2_header", "note", "v1_only"},
    "clash_guard": COMMON
    | {"guard", "atomics", "atomic_types", "vector_operators", "scalar_types"},
    "device_printf": COMMON | {"builtins", "cast", "note"},
}
DATA = raw(SIGNATURES_TOML)


def test_the_file_has_exactly_the_known_tables() -> None:
    assert set(DATA) == {"signature", *TABLE_KEYS}
    check_known_keys("[[signature]]", DATA["signature"], SIGNATURE_KEYS)
    for table, keys in TABLE_KEYS.items():
        check_known_keys(f"[{table}]", [DATA[table]], keys)


@pytest.mark.parametrize("item", DATA["signature"], ids=lambda i: f"{i['cuda']}/{i['arguments']}")
def test_every_signature_is_sourced_dated_and_known_to_the_map(item: dict[str, Any]) -> None:
    check_sources_and_date(item["sources"], item["checked"])
    entry = load_api_map().entries.get(item["cuda"])
    assert entry is not None and entry.hip, f"{item['cuda']} has no HIP name in the map"
    assert item["note"] == item["note"].strip() and len(item["note"]) > 40
    hip = item.get("hip")
    if hip is not None:
        assert hip in {e.hip for e in load_api_map().entries.values()}, hip
    for constant, hip_constant in item.get("constants", {}).items():
        assert constant in load_api_map().entries, constant
        assert hip_constant.startswith("HIP_"), hip_constant


@pytest.mark.parametrize("table", sorted(TABLE_KEYS))
def test_tables_are_sourced_and_dated(table: str) -> None:
    check_sources_and_date(DATA[table]["sources"], DATA[table]["checked"])


def test_the_loaded_facts_cover_the_issue_s_signatures() -> None:
    facts = signature_facts()
    assert {
        "cudaEventCreate",
        "cuOccupancyMaxPotentialBlockSize",
        "cuOccupancyMaxPotentialBlockSizeWithFlags",
        "cusparseSpSM_solve",
        "cudaGetDriverEntryPoint",
        "cuGetProcAddress",
    } <= set(facts.signatures)
    assert facts.legacy_cublas.header == "cublas.h"
    assert "atomicMin" in facts.clash_guard.atomics
    assert "cublasSaxpy" in signatures.legacy_cublas_names()
    assert "cublasSetVector" not in signatures.legacy_cublas_names()  # one form for both APIs
    assert "cublasAlloc" in signatures.legacy_cublas_names()  # v1's own helper


def _entry(**fields: Any) -> Entry:
    base: dict[str, Any] = {
        "cuda": "cudaEventCreate",
        "arguments": [2],
        "note": "why",
        "sources": ["https://example.org"],
        "checked": DATA["signature"][0]["checked"],
    }
    return Entry(base | fields, "kb/hip_signatures.toml [[signature]] test")


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"arguments": []}, "at least one argument count"),
        ({"drop": 1}, "'drop' and 'keep_note' go together"),
        ({"insert_at": 1}, "'insert_at' and 'insert' go together"),
        ({"replace": "x"}, "'replace_at' and 'replace' go together"),
        ({"append_from": {"call": "f", "match": 0, "take": 1}}, "needs 'append'"),
        ({"drop": 5, "keep_note": "fix"}, "drop 5 is not an argument"),
        ({"sources": []}, "needs at least one source"),
        ({"report": "fix", "hip": "hipX"}, "no rewrite keys"),
    ],
)
def test_malformed_entries_are_refused_with_their_name(
    fields: dict[str, Any], message: str
) -> None:
    with pytest.raises(KbError, match=message) as caught:
        signatures._signature(_entry(**fields))
    assert "[[signature]] test" in str(caught.value)
