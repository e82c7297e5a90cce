"""kb/dependency_rules.toml: every entry sourced and dated, every pattern true to its examples."""

from __future__ import annotations

import datetime
import tomllib
from importlib import resources
from typing import Any
from urllib.parse import urlsplit

import pytest
from packaging.markers import default_environment

from gpuport.kb import dependency_rules
from gpuport.kb.loader import KbError
from kb_checks import check_sources_and_date

TOP_LEVEL = {"torch_family", "central_categories", "linux_environment", "pattern"}
PATTERN_KEYS = {
    "name",
    "meaning",
    "regex",
    "ignore_case",
    "matches",
    "rejects",
    "sources",
    "checked",
}
# The patterns the dependency rules look up by name.
USED_PATTERNS = {
    "cuda-local-label",
    "rocm-local-label",
    "cuda-index-path",
    "rocm-index-segment",
    "conda-cuda-package",
    "nvidia-channel",
}


def raw() -> dict[str, Any]:
    text = resources.files("gpuport.kb").joinpath(dependency_rules.FILENAME).read_text("utf-8")
    return tomllib.loads(text)


def sourced_entries() -> list[tuple[str, tuple[str, ...], datetime.date]]:
    family = dependency_rules.torch_family()
    central = dependency_rules.central_categories()
    linux = dependency_rules.linux_environment()
    found = [
        ("torch_family", family.sources, family.checked),
        ("central_categories", central.sources, central.checked),
        ("linux_environment", linux.sources, linux.checked),
    ]
    found += [
        (f"pattern {p.name}", p.sources, p.checked) for p in dependency_rules.patterns().values()
    ]
    return found


def test_file_has_only_known_tables_and_keys() -> None:
    data = raw()
    assert set(data) == TOP_LEVEL
    for item in data["pattern"]:
        assert set(item) <= PATTERN_KEYS, item.get("name")
        assert PATTERN_KEYS - {"ignore_case"} <= set(item), item.get("name")


@pytest.mark.parametrize(("label", "sources", "checked"), sourced_entries())
def test_every_entry_has_web_sources_and_a_past_date(
    label: str, sources: tuple[str, ...], checked: datetime.date
) -> None:
    check_sources_and_date(sources, checked)


@pytest.mark.parametrize("pattern", list(dependency_rules.patterns().values()), ids=str)
def test_pattern_finds_its_matches_and_not_its_rejects(
    pattern: dependency_rules.NamePattern,
) -> None:
    assert pattern.meaning.strip() and pattern.matches and pattern.rejects
    for text in pattern.matches:
        assert pattern.regex.search(text), (pattern.name, text)
    for text in pattern.rejects:
        assert not pattern.regex.search(text), (pattern.name, text)


def test_the_patterns_the_rules_use_are_there() -> None:
    assert set(dependency_rules.patterns()) >= USED_PATTERNS
    with pytest.raises(KbError):
        dependency_rules.pattern("no-such-pattern")


def test_torch_family_is_pip_names_with_their_conda_names() -> None:
    family = dependency_rules.torch_family()
    assert "torch" in family.pip_names
    assert family.conda_names["pytorch"] == "torch"
    assert set(family.conda_names.values()) == set(family.pip_names)
    assert urlsplit(family.index_host).scheme == "https" and family.index_host.endswith("/")


def test_linux_environment_sets_every_pep508_variable_but_the_python_ones() -> None:
    linux = dependency_rules.linux_environment()
    pythons = {"python_version", "python_full_version"}
    assert set(linux.markers) == set(default_environment()) - pythons
    assert linux.markers["sys_platform"] == "linux"
    assert all(v.count(".") == 1 for v in linux.python_versions)


def test_central_categories_name_categories_of_packages() -> None:
    from gpuport import kb

    words = dependency_rules.central_categories().words
    categories = {p.category.lower() for p in kb.packages().values()}
    for word in words:
        assert any(word in category for category in categories), word
