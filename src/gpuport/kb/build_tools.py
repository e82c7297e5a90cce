"""Build and container tool knowledge (``kb/build_tools.toml``): nvcc options, CMake's CUDA names,
architecture variables, toolkit locations, NVIDIA container variables and NVIDIA packages.

Each table is loaded once into frozen dataclasses; ``tests/kb/test_build_tools.py`` validates every
entry. ``pattern`` fields are regular expressions matching a whole name; the rules join them.
"""

from __future__ import annotations

import datetime
import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from gpuport.kb.loader import Entry, KbError, entries, keyed, load_toml

FILENAME = "build_tools.toml"


@functools.cache
def _data() -> dict[str, object]:
    return load_toml(FILENAME)


def _entries(table: str, key: str) -> list[Entry]:
    return entries(_data(), table, FILENAME, key)


@dataclass(frozen=True, slots=True)
class NvccFlag:
    """An nvcc option with another spelling or none in hipcc (clang)."""

    flag: str  # nvcc's short spelling, e.g. "-Xcompiler"
    aliases: tuple[str, ...]  # its other spellings, e.g. "--compiler-options"
    takes_value: bool  # the value may be the next word
    ambiguous: bool  # other tools spell an option the same: only inside nvcc commands
    no_counterpart: str  # why hipcc has none; empty when gpuport converts it
    sources: tuple[str, ...]
    checked: datetime.date


@functools.cache
def nvcc_flags() -> Mapping[str, NvccFlag]:
    """nvcc's options by their short spelling."""

    def build(entry: Entry, flag: str) -> NvccFlag:
        return NvccFlag(
            flag=flag,
            aliases=entry.texts("aliases"),
            takes_value=entry.flag("takes_value"),
            ambiguous=entry.flag("ambiguous"),
            no_counterpart=entry.text("no_counterpart", ""),
            sources=entry.texts("sources", required=True),
            checked=entry.date(),
        )

    return keyed(_data(), "nvcc_flag", FILENAME, "flag", "nvcc option listed twice", build)


@functools.cache
def nvcc_flag_spellings() -> Mapping[str, str]:
    """Every spelling of the options, short ones included, to the short spelling."""
    spellings: dict[str, str] = {}
    for flag in nvcc_flags().values():
        for spelling in (flag.flag, *flag.aliases):
            if spellings.setdefault(spelling, flag.flag) != flag.flag:
                raise KbError(f"kb/{FILENAME}: nvcc spelling {spelling} names two options")
    return spellings


@dataclass(frozen=True, slots=True)
class ArchVariable:
    """A variable or property listing CUDA GPU architectures, and what takes its place."""

    name: str
    rocm_name: str  # empty: nothing on the HIP side
    environment: bool  # set in the environment or on a command line
    cmake: bool  # a CMake variable or property
    sources: tuple[str, ...]
    checked: datetime.date


@functools.cache
def arch_variables() -> Mapping[str, ArchVariable]:
    def build(entry: Entry, name: str) -> ArchVariable:
        return ArchVariable(
            name=name,
            rocm_name=entry.text("rocm_name", ""),
            environment=entry.flag("environment"),
            cmake=entry.flag("cmake"),
            sources=entry.texts("sources", required=True),
            checked=entry.date(),
        )

    return keyed(_data(), "arch_variable", FILENAME, "name", "variable listed twice", build)


@dataclass(frozen=True, slots=True)
class NamePattern:
    """A name (or a family of names matched by ``pattern``) with an optional note.

    ``kind`` sorts the entries of one table (e.g. FindCUDA's "command" and "variable"); ``note``
    says why there is no counterpart, where a table says so.
    """

    name: str
    pattern: str  # a regular expression matching a whole name; the name itself by default
    kind: str
    note: str
    sources: tuple[str, ...]
    checked: datetime.date


def _name_patterns(table: str, note_key: str = "") -> tuple[NamePattern, ...]:
    result = []
    for entry in _entries(table, "name"):
        name = entry.text("name")
        pattern = entry.text("pattern", re.escape(name))
        try:
            re.compile(pattern)
        except re.error as exc:
            raise KbError(f"{entry.where}: pattern does not compile: {exc}") from exc
        kind = entry.text("kind", "") or entry.text("manager", "")
        note = entry.text(note_key, "") if note_key else ""
        sources = entry.texts("sources", required=True)
        result.append(NamePattern(name, pattern, kind, note, sources, entry.date()))
    return tuple(result)


@functools.cache
def cmake_settings() -> tuple[NamePattern, ...]:
    """CUDA-language variables and properties of CMake; ``note``: why HIP has no counterpart."""
    return _name_patterns("cmake_setting", "no_counterpart")


@functools.cache
def findcuda_names() -> tuple[NamePattern, ...]:
    """The FindCUDA module's commands (kind "command") and variables (kind "variable")."""
    return _name_patterns("findcuda")


@functools.cache
def toolkit_locations() -> tuple[NamePattern, ...]:
    """The CUDA toolkit's install folder (kind "folder") and the variables naming it."""
    return _name_patterns("toolkit_location")


@functools.cache
def nvidia_container_env() -> tuple[NamePattern, ...]:
    """The variables only the NVIDIA Container Toolkit reads."""
    return _name_patterns("nvidia_container_env")


@functools.cache
def system_packages() -> tuple[NamePattern, ...]:
    """NVIDIA's packages; ``kind`` is the manager: "apt" (also yum, dnf...) or "conda"."""
    return _name_patterns("system_package")


@functools.cache
def package_repositories() -> tuple[NamePattern, ...]:
    """NVIDIA's package repository, as found in the commands that set it up."""
    return _name_patterns("package_repository")


@functools.cache
def conda_channels() -> tuple[NamePattern, ...]:
    """The conda channels NVIDIA's packages come from."""
    return _name_patterns("conda_channel")


def alternatives(patterns: Iterable[NamePattern]) -> str:
    """One regular expression group matching any of ``patterns``."""
    return "(?:" + "|".join(p.pattern for p in patterns) + ")"


def literal_prefix(pattern: str) -> str:
    """The text every match of ``pattern`` starts with (``libnccl[\\w.+-]*`` -> ``libnccl``)."""
    out = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern) and not pattern[i + 1].isalnum():
            out.append(pattern[i + 1])
            i += 2
            continue
        if char in "\\.^$*+?{}[]|()":
            break
        out.append(char)
        i += 1
    # A quantifier makes the character before it optional or repeated: leave it out.
    if i < len(pattern) and pattern[i] in "*?{" and out:
        out.pop()
    return "".join(out)
