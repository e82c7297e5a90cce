"""python_code.toml: every entry complete, sourced, dated, and consistent with the rest of the KB."""

from __future__ import annotations

import dataclasses
import re
import tomllib
from importlib import resources
from typing import Any

import pytest

from gpuport import kb
from gpuport.kb import python_code
from gpuport.kb.loader import Entry, KbError
from kb_checks import check_entry, check_known_keys

TABLES: dict[str, type] = {
    "package_status": python_code.StatusWhereImported,
    "env_severity": python_code.EnvSeverity,
    "nccl_fabric": python_code.NcclFabricPrefix,
    "nccl_same_meaning": python_code.NcclSameMeaning,
    "nccl_build_location": python_code.NcclBuildLocation,
    "precision_switch": python_code.PrecisionSwitch,
    "amd_gpu_name": python_code.AmdGpuName,
}


def raw() -> dict[str, Any]:
    text = resources.files("gpuport.kb").joinpath("python_code.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


def all_entries() -> list[Any]:
    return [
        *python_code.statuses_where_imported().values(),
        *python_code.env_severities().values(),
        *python_code.nccl_fabric_prefixes(),
        *python_code.nccl_same_meaning_prefixes(),
        *python_code.nccl_build_location_suffixes(),
        *python_code.precision_switches().values(),
        *python_code.amd_gpu_names(),
    ]


ENTRIES = all_entries()


def label(entry: Any) -> str:
    return f"{type(entry).__name__} {dataclasses.astuple(entry)[0]}"


@pytest.mark.parametrize("entry", ENTRIES, ids=[label(e) for e in ENTRIES])
def test_every_entry_has_web_sources_and_a_past_check_date(entry: Any) -> None:
    check_entry(entry)
    for field in dataclasses.fields(entry):
        assert getattr(entry, field.name) != "", f"{field.name} is empty"


def test_the_file_has_only_known_tables_and_keys() -> None:
    data = raw()
    assert set(data) == set(TABLES)
    for table, kind in TABLES.items():
        allowed = {f.name for f in dataclasses.fields(kind)}
        assert data[table], f"[[{table}]] is empty"
        check_known_keys(f"[[{table}]]", data[table], allowed)


def test_every_status_gp201_reports_has_its_severity_and_words() -> None:
    reported = set(kb.PackageStatus) - {kb.PackageStatus.WORKS}
    assert set(python_code.statuses_where_imported()) == reported


def test_severities_name_cuda_variables_the_platform_table_knows() -> None:
    for name, severity in python_code.env_severities().items():
        assert name in kb.env_vars(), f"{name}: no [[env]] entry in platform.toml"
        assert "CUDA" in name or "NVIDIA" in name, f"{name}: GP207 never looks at it"
        assert severity.read in python_code.SEVERITY_WORDS
        assert severity.write in python_code.SEVERITY_WORDS


def test_nccl_fabric_prefixes_are_nccl_names() -> None:
    for fabric in python_code.nccl_fabric_prefixes():
        assert re.fullmatch(r"NCCL_[A-Z0-9_]+", fabric.prefix), fabric.prefix
        assert kb.find_env_var(fabric.prefix + "_ENABLE") is not None  # the NCCL_* family


def test_nccl_same_meaning_prefixes_are_nccl_names_and_no_fabric() -> None:
    fabric = tuple(f.prefix for f in python_code.nccl_fabric_prefixes())
    for same in python_code.nccl_same_meaning_prefixes():
        assert re.fullmatch(r"NCCL_[A-Z0-9_]+", same.prefix), same.prefix
        assert not same.prefix.startswith(fabric) and not any(
            f.startswith(same.prefix) for f in fabric
        ), same.prefix


def test_nccl_build_location_suffixes_never_end_a_same_meaning_name() -> None:
    suffixes = tuple(b.suffix for b in python_code.nccl_build_location_suffixes())
    assert all(re.fullmatch(r"_?[A-Z]+", suffix) for suffix in suffixes)
    for same in python_code.nccl_same_meaning_prefixes():
        assert not same.prefix.endswith(suffixes), same.prefix


def test_precision_switches_are_pytorch_attributes() -> None:
    switches = python_code.precision_switches()
    assert {s.kind for s in switches.values()} == set(python_code.SWITCH_KINDS)
    for name in switches:
        assert name.startswith("torch.backends."), name
        assert all(part.isidentifier() for part in name.split(".")), name
    assert "torch.backends.cudnn.allow_tf32" in switches  # cudnn.flags(allow_tf32=…) reads it


@pytest.mark.parametrize(
    "text,amd",
    [
        ("AMD Instinct MI300X", True),
        ("AMD Radeon RX 7900 XTX", True),
        ("gfx942:sramecc+:xnack-", True),
        ("navi31", True),
        ("mi250x", True),
        ("NVIDIA H100 80GB HBM3", False),
        ("Tesla V100-SXM2", False),
        ("A100", False),
        ("amdgpu", False),
    ],
)
def test_amd_gpu_names_match_amd_products_only(text: str, amd: bool) -> None:
    assert bool(python_code.amd_gpu_name_re().search(text)) is amd


def test_a_word_outside_its_choices_is_a_kb_error() -> None:
    entry = Entry({"severity": "severe"}, "kb/python_code.toml [[env_severity]] X")
    with pytest.raises(KbError, match="severe"):
        entry.choice("severity", python_code.SEVERITY_WORDS)
