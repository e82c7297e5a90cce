"""The kernel rules' knowledge: PTX instructions and registers with their HIP counterparts, and CUDA library/API names.

The facts live in ``ptx.toml`` and ``cuda_kernel_apis.toml`` beside this module, each entry
with its sources and the date it was checked; this module loads them once into frozen
dataclasses for :mod:`gpuport.scan.kernels`. ``tests/kb/test_kernels_kb.py`` validates them.
"""

from __future__ import annotations

import datetime
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TypeVar

from gpuport.kb.loader import Entry, KbError, entries, keyed, load_toml

__all__ = [
    "PTX_FAMILIES",
    "KernelApi",
    "KernelLibrary",
    "PtxConstraint",
    "PtxFeature",
    "PtxInstruction",
    "PtxMemoryScope",
    "PtxQualifier",
    "PtxWrapper",
    "SpecialRegister",
    "kernel_apis",
    "kernel_libraries",
    "nvptx_constraints",
    "ptx_features",
    "ptx_instructions",
    "ptx_memory_scopes",
    "ptx_qualifiers",
    "ptx_wrappers",
    "special_registers",
]

# The feature families of PTX that have their own rule: Hopper-or-newer instructions (GP309),
# thread-block clusters (GP310), asynchronous copies (GP311).
PTX_FAMILIES = ("hopper", "cluster", "async")
_PTX = "ptx.toml"
_APIS = "cuda_kernel_apis.toml"


@dataclass(frozen=True, slots=True)
class PtxInstruction:
    """A PTX opcode (before the first '.') and what replaces it in HIP ("" when nothing does)."""

    opcode: str
    hip: str
    bare: bool  # the opcode alone, without qualifiers, marks a template as PTX
    sources: tuple[str, ...]
    checked: datetime.date


@dataclass(frozen=True, slots=True)
class PtxQualifier:
    """A mode qualifier (``shfl.bfly``) that decides an opcode's HIP counterpart."""

    opcode: str
    qualifier: str
    hip: str
    sources: tuple[str, ...]
    checked: datetime.date


@dataclass(frozen=True, slots=True)
class PtxMemoryScope:
    """A PTX scope qualifier (``.gpu``) and the HIP memory scope (``__HIP_MEMORY_SCOPE_AGENT``)."""

    ptx: str
    hip: str
    sources: tuple[str, ...]
    checked: datetime.date


@dataclass(frozen=True, slots=True)
class SpecialRegister:
    """A PTX special register (``%laneid``) and what replaces it in HIP ("" when nothing does)."""

    name: str
    hip: str
    prefix: bool  # stands for every register whose name starts with ``name``
    family: str  # one of PTX_FAMILIES, or "" for none
    sources: tuple[str, ...]
    checked: datetime.date


@dataclass(frozen=True, slots=True)
class PtxConstraint:
    """An inline-asm operand constraint letter of an NVPTX register class that AMDGPU lacks."""

    letter: str
    register: str
    sources: tuple[str, ...]
    checked: datetime.date


@dataclass(frozen=True, slots=True)
class PtxFeature:
    """The opcode prefixes of one PTX feature family."""

    family: str
    opcode_prefixes: tuple[str, ...]
    sources: tuple[str, ...]
    checked: datetime.date


@dataclass(frozen=True, slots=True)
class PtxWrapper:
    """The name prefixes of libcu++'s ``cuda::ptx::`` functions of one feature family."""

    family: str
    name_prefixes: tuple[str, ...]
    sources: tuple[str, ...]
    checked: datetime.date


@dataclass(frozen=True, slots=True)
class KernelLibrary:
    """A library one rule reports once per file: how its names and headers look, what to say."""

    rule: str
    label: str
    identifiers: re.Pattern[str] | None  # matched where a word starts
    headers: re.Pattern[str] | None  # searched in the path of each #include
    advice: str
    skip: frozenset[str]  # names (and their ``name::`` members) another rule reports
    sources: tuple[str, ...]
    checked: datetime.date

    @property
    def skip_prefixes(self) -> tuple[str, ...]:
        return tuple(name + "::" for name in sorted(self.skip))


@dataclass(frozen=True, slots=True)
class KernelApi:
    """A set of CUDA names (a pattern) a rule reports, or uses as its ``role`` says."""

    name: str
    rule: str
    role: str  # "" (the rule reports these names), "headers", "not-renamed", "renamed-headers"
    pattern: re.Pattern[str]
    sources: tuple[str, ...]
    checked: datetime.date


def _pattern(entry: Entry, key: str) -> re.Pattern[str] | None:
    text = entry.optional_text(key)
    if text is None:
        return None
    try:
        return re.compile(text)
    except re.error as exc:
        raise KbError(f"{entry.where}: {key!r} is not a regular expression: {exc}") from None


def _family(entry: Entry, required: bool) -> str:
    family = entry.text("family") if required else entry.text("family", "")
    if family and family not in PTX_FAMILIES:
        raise KbError(f"{entry.where}: family {family!r} is not one of {', '.join(PTX_FAMILIES)}")
    return family


@functools.cache
def ptx_instructions() -> Mapping[str, PtxInstruction]:
    """Every PTX instruction entry, keyed by opcode."""
    return keyed(
        load_toml(_PTX),
        "instruction",
        _PTX,
        "opcode",
        "duplicate opcode",
        lambda entry, opcode: PtxInstruction(
            opcode=opcode,
            hip=entry.text("hip", ""),
            bare=entry.flag("bare"),
            sources=entry.texts("sources", required=True),
            checked=entry.date(),
        ),
    )


@functools.cache
def ptx_qualifiers() -> Mapping[tuple[str, str], PtxQualifier]:
    """Every mode-qualifier entry, keyed by (opcode, qualifier)."""
    result: dict[tuple[str, str], PtxQualifier] = {}
    for entry in entries(load_toml(_PTX), "qualifier", _PTX, "qualifier"):
        qualifier = PtxQualifier(
            opcode=entry.text("opcode"),
            qualifier=entry.text("qualifier"),
            hip=entry.text("hip"),
            sources=entry.texts("sources", required=True),
            checked=entry.date(),
        )
        key = (qualifier.opcode, qualifier.qualifier)
        if key in result:
            raise KbError(f"{entry.where}: duplicate qualifier")
        result[key] = qualifier
    return MappingProxyType(result)


@functools.cache
def ptx_memory_scopes() -> Mapping[str, PtxMemoryScope]:
    """Every memory-scope entry, keyed by its PTX qualifier."""
    return keyed(
        load_toml(_PTX),
        "memory_scope",
        _PTX,
        "ptx",
        "duplicate memory scope",
        lambda entry, name: PtxMemoryScope(
            ptx=name,
            hip=entry.text("hip"),
            sources=entry.texts("sources", required=True),
            checked=entry.date(),
        ),
    )


@functools.cache
def special_registers() -> Mapping[str, SpecialRegister]:
    """Every special-register entry, keyed by name."""
    return keyed(
        load_toml(_PTX),
        "special_register",
        _PTX,
        "name",
        "duplicate special register",
        lambda entry, name: SpecialRegister(
            name=name,
            hip=entry.text("hip", ""),
            prefix=entry.flag("prefix"),
            family=_family(entry, required=False),
            sources=entry.texts("sources", required=True),
            checked=entry.date(),
        ),
    )


_FamilyPrefixes = TypeVar("_FamilyPrefixes", PtxFeature, PtxWrapper)


def _prefixes_by_family(
    table: str, prefixes: str, duplicate: str, kind: type[_FamilyPrefixes]
) -> Mapping[str, _FamilyPrefixes]:
    """A ``[[table]]`` of name prefixes per PTX feature family, keyed by family."""
    return keyed(
        load_toml(_PTX),
        table,
        _PTX,
        "family",
        duplicate,
        lambda entry, _: kind(
            _family(entry, required=True),
            entry.texts(prefixes, required=True),
            entry.texts("sources", required=True),
            entry.date(),
        ),
    )


@functools.cache
def ptx_features() -> Mapping[str, PtxFeature]:
    """The opcode prefixes of each feature family, keyed by family."""
    return _prefixes_by_family("feature", "opcode_prefixes", "duplicate feature family", PtxFeature)


@functools.cache
def nvptx_constraints() -> Mapping[str, PtxConstraint]:
    """The NVPTX-only operand constraint letters, keyed by letter."""
    return keyed(
        load_toml(_PTX),
        "constraint",
        _PTX,
        "letter",
        "duplicate constraint letter",
        lambda entry, letter: PtxConstraint(
            letter, entry.text("register"), entry.texts("sources", required=True), entry.date()
        ),
    )


@functools.cache
def ptx_wrappers() -> Mapping[str, PtxWrapper]:
    """The ``cuda::ptx::`` name prefixes of each feature family, keyed by family."""
    return _prefixes_by_family("wrapper", "name_prefixes", "duplicate wrapper family", PtxWrapper)


@functools.cache
def kernel_libraries() -> Mapping[str, KernelLibrary]:
    """Every library entry, keyed by the id of the rule that reports it."""
    return keyed(
        load_toml(_APIS),
        "library",
        _APIS,
        "rule",
        "a rule reports one library",
        lambda entry, rule_id: KernelLibrary(
            rule=rule_id,
            label=entry.text("label"),
            identifiers=_pattern(entry, "identifiers"),
            headers=_pattern(entry, "headers"),
            advice=entry.text("advice"),
            skip=frozenset(entry.texts("skip")),
            sources=entry.texts("sources", required=True),
            checked=entry.date(),
        ),
    )


@functools.cache
def kernel_apis() -> Mapping[str, KernelApi]:
    """Every API-name entry, keyed by its name."""

    def build(entry: Entry, name: str) -> KernelApi:
        pattern = _pattern(entry, "pattern")
        if pattern is None:
            raise KbError(f"{entry.where}: missing 'pattern'")
        return KernelApi(
            name=name,
            rule=entry.text("rule"),
            role=entry.text("role", ""),
            pattern=pattern,
            sources=entry.texts("sources", required=True),
            checked=entry.date(),
        )

    return keyed(load_toml(_APIS), "api", _APIS, "name", "duplicate API name", build)
