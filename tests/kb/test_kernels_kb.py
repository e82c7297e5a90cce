"""The kernel rules' knowledge (kb/ptx.toml, kb/cuda_kernel_apis.toml): complete, well-formed, sourced and dated."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import pytest

from gpuport.kb import kernels
from gpuport.kb.loader import Entry, KbError
from gpuport.rules import Rule
from gpuport.scan.catalog import all_rules
from gpuport.scan.kernels import library_rules
from kb_checks import check_entry, check_known_keys, raw

# (file, table) -> the dataclass its entries load into
TABLES: dict[tuple[str, str], type] = {
    ("ptx.toml", "instruction"): kernels.PtxInstruction,
    ("ptx.toml", "qualifier"): kernels.PtxQualifier,
    ("ptx.toml", "memory_scope"): kernels.PtxMemoryScope,
    ("ptx.toml", "special_register"): kernels.SpecialRegister,
    ("ptx.toml", "feature"): kernels.PtxFeature,
    ("ptx.toml", "wrapper"): kernels.PtxWrapper,
    ("ptx.toml", "constraint"): kernels.PtxConstraint,
    ("cuda_kernel_apis.toml", "library"): kernels.KernelLibrary,
    ("cuda_kernel_apis.toml", "api"): kernels.KernelApi,
}


def all_entries() -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []
    found += [(f"instruction {i.opcode}", i) for i in kernels.ptx_instructions().values()]
    found += [(f"qualifier {q.opcode}.{q.qualifier}", q) for q in kernels.ptx_qualifiers().values()]
    found += [(f"scope {s.ptx}", s) for s in kernels.ptx_memory_scopes().values()]
    found += [(f"register {r.name}", r) for r in kernels.special_registers().values()]
    found += [(f"feature {f.family}", f) for f in kernels.ptx_features().values()]
    found += [(f"wrapper {w.family}", w) for w in kernels.ptx_wrappers().values()]
    found += [(f"constraint {c.letter}", c) for c in kernels.nvptx_constraints().values()]
    found += [(f"library {lib.rule}", lib) for lib in kernels.kernel_libraries().values()]
    found += [(f"api {a.name}", a) for a in kernels.kernel_apis().values()]
    return found


ENTRIES = all_entries()
IDS = [label for label, _ in ENTRIES]


def test_every_file_and_table_is_known_and_not_empty() -> None:
    for filename in {filename for filename, _ in TABLES}:
        tables = set(raw(filename))
        assert tables == {table for name, table in TABLES if name == filename}, filename
    for (filename, table), kind in TABLES.items():
        items = raw(filename)[table]
        assert items, f"{filename} [[{table}]] is empty"
        allowed = {field.name for field in dataclasses.fields(kind)}
        check_known_keys(f"{filename} [[{table}]]", items, allowed)


@pytest.mark.parametrize("entry", [e for _, e in ENTRIES], ids=IDS)
def test_every_entry_has_web_sources_a_real_check_date_and_trimmed_text(entry: Any) -> None:
    check_entry(entry)


def test_ptx_names_are_ptx_spellings() -> None:
    for opcode in kernels.ptx_instructions():
        assert re.fullmatch(r"[a-z][a-z0-9_]*", opcode), opcode  # before the first '.'
    for opcode, qualifier in kernels.ptx_qualifiers():
        assert opcode in kernels.ptx_instructions(), f"{opcode}.{qualifier}: unknown opcode"
        assert re.fullmatch(r"[a-z0-9_]+", qualifier), qualifier
    for name in kernels.special_registers():
        assert re.fullmatch(r"[a-z][a-z0-9_]*", name), name
    scopes = kernels.ptx_memory_scopes()
    assert "gpu" in scopes  # the default of an ordering qualifier with no scope
    for scope in scopes.values():
        assert re.fullmatch(r"[a-z]+", scope.ptx), scope.ptx
        assert re.fullmatch(r"__HIP_MEMORY_SCOPE_[A-Z]+", scope.hip), scope.hip
    for qualifier in kernels.ptx_qualifiers().values():
        assert qualifier.hip.replace("{scope}", "").count("{") == 0, qualifier.hip


def test_every_ptx_family_has_its_opcode_prefixes_and_hopper_its_wrappers() -> None:
    assert set(kernels.ptx_features()) == set(kernels.PTX_FAMILIES)
    assert "hopper" in kernels.ptx_wrappers()
    for feature in kernels.ptx_features().values():
        assert all(re.fullmatch(r"[a-z][a-z0-9_.:]*", p) for p in feature.opcode_prefixes)
    families = {r.family for r in kernels.special_registers().values()}
    assert families <= {"", *kernels.PTX_FAMILIES}


def test_instructions_with_a_counterpart_say_what_it_is() -> None:
    # Bare opcodes may have none (ret, bra, …); the rest are listed for their counterpart.
    for instruction in kernels.ptx_instructions().values():
        assert instruction.hip or instruction.bare, instruction.opcode


def test_every_library_rule_has_its_library_and_nothing_else_does() -> None:
    library_rule_ids = {
        value.id for value in vars(library_rules).values() if isinstance(value, Rule)
    }
    assert set(kernels.kernel_libraries()) == library_rule_ids
    for library in kernels.kernel_libraries().values():
        assert library.label and library.advice
        assert library.identifiers is not None or library.headers is not None


def test_api_entries_name_kernel_rules_and_known_roles() -> None:
    kernel_ids = {r.id for r in all_rules() if r.id.startswith("GP3")}
    for api in kernels.kernel_apis().values():
        assert api.rule in kernel_ids, api.name
        assert api.role in ("", "headers", "not-renamed", "renamed-headers"), api.name


def test_a_malformed_pattern_or_family_names_the_entry() -> None:
    entry = Entry({"family": "volta", "pattern": "(unclosed"}, "kb/test [[api]] x")
    with pytest.raises(KbError, match=r"kb/test \[\[api\]\] x: 'pattern'"):
        kernels._pattern(entry, "pattern")
    with pytest.raises(KbError, match="family 'volta'"):
        kernels._family(entry, required=True)
