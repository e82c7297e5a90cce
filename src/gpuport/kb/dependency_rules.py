"""The dependency rules' facts (``kb/dependency_rules.toml``): PyTorch's family, name patterns, Linux.

Loaded once through :mod:`gpuport.kb.loader`; ``tests/kb/test_dependency_rules_kb.py`` checks
every entry (sources, date, and each pattern against its own examples).
"""

from __future__ import annotations

import datetime
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from gpuport.kb.loader import Entry, KbError, entries, load_toml

FILENAME = "dependency_rules.toml"


@dataclass(frozen=True, slots=True)
class TorchFamily:
    """The packages of PyTorch's release train, by their pip and conda names."""

    pip_names: tuple[str, ...]
    conda_names: Mapping[str, str]  # conda name -> pip name ("pytorch" -> "torch")
    index_host: str  # where PyTorch's own indexes are: every one of them serves the family
    sources: tuple[str, ...]
    checked: datetime.date


@dataclass(frozen=True, slots=True)
class NamePattern:
    """A regular expression over names or URLs, with what it means and examples of both sides."""

    name: str
    regex: re.Pattern[str]
    meaning: str
    matches: tuple[str, ...]  # texts it must find something in
    rejects: tuple[str, ...]  # texts it must find nothing in
    sources: tuple[str, ...]
    checked: datetime.date


@dataclass(frozen=True, slots=True)
class LinuxEnvironment:
    """PEP 508 marker values of the environments a ROCm wheel installs on."""

    markers: Mapping[str, str]
    python_versions: tuple[str, ...]
    sources: tuple[str, ...]
    checked: datetime.date


@dataclass(frozen=True, slots=True)
class CentralCategories:
    """Package categories (kb/packages.toml) of what a project is built around."""

    words: tuple[str, ...]
    sources: tuple[str, ...]
    checked: datetime.date


def _table(name: str) -> Entry:
    return Entry(load_toml(FILENAME).get(name), f"kb/{FILENAME} [{name}]")


@functools.cache
def torch_family() -> TorchFamily:
    entry = _table("torch_family")
    pip_names = entry.texts("pip_names", required=True)
    conda_names = entry.texts("conda_names", required=True)
    if len(conda_names) != len(pip_names):
        raise KbError(f"{entry.where}: conda_names must follow pip_names one for one")
    return TorchFamily(
        pip_names,
        MappingProxyType(dict(zip(conda_names, pip_names, strict=True))),
        entry.text("index_host"),
        entry.texts("sources", required=True),
        entry.date(),
    )


@functools.cache
def central_categories() -> CentralCategories:
    entry = _table("central_categories")
    return CentralCategories(
        entry.texts("words", required=True), entry.texts("sources", required=True), entry.date()
    )


@functools.cache
def linux_environment() -> LinuxEnvironment:
    entry = _table("linux_environment")
    markers = Entry(entry.raw.get("markers"), f"{entry.where} markers")
    return LinuxEnvironment(
        MappingProxyType({key: markers.text(key, "") for key in markers.raw}),
        entry.texts("python_versions", required=True),
        entry.texts("sources", required=True),
        entry.date(),
    )


@functools.cache
def patterns() -> Mapping[str, NamePattern]:
    """Every name pattern, by name."""
    result: dict[str, NamePattern] = {}
    for entry in entries(load_toml(FILENAME), "pattern", FILENAME, "name"):
        name = entry.text("name")
        flags = re.IGNORECASE if entry.flag("ignore_case") else 0
        try:
            regex = re.compile(entry.text("regex"), flags)
        except re.error as exc:
            raise KbError(f"{entry.where}: regex does not compile ({exc})") from None
        if name in result:
            raise KbError(f"{entry.where}: duplicate pattern name")
        result[name] = NamePattern(
            name,
            regex,
            entry.text("meaning"),
            entry.texts("matches", required=True),
            entry.texts("rejects", required=True),
            entry.texts("sources", required=True),
            entry.date(),
        )
    return MappingProxyType(result)


def pattern(name: str) -> re.Pattern[str]:
    """The compiled regular expression of the pattern ``name`` (a KbError when there is none)."""
    found = patterns().get(name)
    if found is None:
        raise KbError(f"kb/{FILENAME}: no pattern named {name!r}")
    return found.regex
