"""Every entry of kb/build_tools.toml is complete, well-formed, sourced and dated."""

from __future__ import annotations

import dataclasses
import re
import tomllib
from importlib import resources
from typing import Any

import pytest

from gpuport.kb import build_tools
from gpuport.scan.build.words import CONVERTED_NVCC_FLAGS
from kb_checks import check_entry, check_known_keys

RAW = tomllib.loads(
    resources.files("gpuport.kb").joinpath(build_tools.FILENAME).read_text(encoding="utf-8")
)

# table -> (its entries, the keys an entry may have, the least number of entries)
_NAME_KEYS = {"name", "pattern", "sources", "checked"}
TABLES: dict[str, tuple[Any, set[str], int]] = {
    "nvcc_flag": (
        list(build_tools.nvcc_flags().values()),
        {f.name for f in dataclasses.fields(build_tools.NvccFlag)},
        20,
    ),
    "arch_variable": (
        list(build_tools.arch_variables().values()),
        {f.name for f in dataclasses.fields(build_tools.ArchVariable)},
        4,
    ),
    "cmake_setting": (build_tools.cmake_settings(), _NAME_KEYS | {"no_counterpart"}, 15),
    "findcuda": (build_tools.findcuda_names(), _NAME_KEYS | {"kind"}, 25),
    "toolkit_location": (build_tools.toolkit_locations(), _NAME_KEYS | {"kind"}, 5),
    "nvidia_container_env": (build_tools.nvidia_container_env(), _NAME_KEYS, 8),
    "system_package": (build_tools.system_packages(), _NAME_KEYS | {"manager"}, 25),
    "package_repository": (build_tools.package_repositories(), _NAME_KEYS, 1),
    "conda_channel": (build_tools.conda_channels(), _NAME_KEYS, 1),
}
ENTRIES = [(table, entry) for table, (items, _, _) in TABLES.items() for entry in items]
IDS = [f"{table} {getattr(entry, 'name', None) or entry.flag}" for table, entry in ENTRIES]


def test_the_file_has_exactly_the_known_tables() -> None:
    assert set(RAW) == set(TABLES)


@pytest.mark.parametrize("table", sorted(TABLES))
def test_table_uses_only_known_keys_and_has_enough_entries(table: str) -> None:
    items, allowed, minimum = TABLES[table]
    assert len(RAW[table]) == len(items) >= minimum
    check_known_keys(f"[[{table}]]", RAW[table], allowed)


@pytest.mark.parametrize("entry", [e for _, e in ENTRIES], ids=IDS)
def test_every_entry_has_web_sources_a_past_check_date_and_trimmed_text(entry: Any) -> None:
    check_entry(entry)


@pytest.mark.parametrize("table", sorted(set(TABLES) - {"nvcc_flag", "arch_variable"}))
def test_patterns_compile_and_start_with_a_word_a_needle_can_find(table: str) -> None:
    """Rules take their needles from the patterns' literal starts: none may be empty."""
    items, _, _ = TABLES[table]
    names = [(p.kind, p.name) for p in items]
    assert len(names) == len(set(names)), f"[[{table}]]: a name is listed twice"
    for entry in items:
        re.compile(entry.pattern)
        assert build_tools.literal_prefix(entry.pattern), entry.name


def test_named_kinds_are_known() -> None:
    assert {p.kind for p in build_tools.findcuda_names()} == {"command", "variable"}
    assert {p.kind for p in build_tools.toolkit_locations()} == {"folder", "variable"}
    assert {p.kind for p in build_tools.system_packages()} == {"apt", "conda"}


def test_literal_prefix_stops_where_the_pattern_varies() -> None:
    assert build_tools.literal_prefix(r"libcudnn\d*(?:[-_][\w.+-]+)?") == "libcudnn"
    assert build_tools.literal_prefix(r"developer\.download\.nvidia") == "developer.download.nvidia"
    assert build_tools.literal_prefix("cudas?") == "cuda"
    assert build_tools.literal_prefix("nvidia") == "nvidia"


def test_each_nvcc_option_is_converted_or_says_why_not() -> None:
    flags = build_tools.nvcc_flags()
    without_reason = {f.flag for f in flags.values() if not f.no_counterpart}
    assert without_reason == set(CONVERTED_NVCC_FLAGS)


def test_nvcc_spellings_are_options() -> None:
    """The command walk hands only words starting with '-' to the option rules."""
    assert all(s.startswith("-") for s in build_tools.nvcc_flag_spellings())


def test_nvcc_spellings_name_one_option_each() -> None:
    spellings = build_tools.nvcc_flag_spellings()
    flags = build_tools.nvcc_flags()
    assert len(spellings) == sum(1 + len(f.aliases) for f in flags.values())
    assert all(spellings[f.flag] == f.flag for f in flags.values())


def test_arch_variables_are_read_somewhere() -> None:
    for variable in build_tools.arch_variables().values():
        assert variable.environment or variable.cmake, variable.name
        assert variable.rocm_name != variable.name
