"""What CUDA-side Python code means on ROCm (``python_code.toml``), for the GP2xx rules.

How much a package's status matters where code imports it, how much a CUDA variable matters
where code reads or sets it, PyTorch's precision switches, NCCL's NVIDIA-only fabric settings
and AMD's GPU names. Loaded once through :mod:`gpuport.kb.loader`; severities stay words
("high"), which the rules turn into their own type. ``tests/kb/test_python_code_kb.py``
validates every entry.
"""

from __future__ import annotations

import datetime
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, TypeVar

from gpuport.kb import PackageStatus
from gpuport.kb.loader import entries, keyed, load_toml

_FILE = "python_code.toml"
SEVERITY_WORDS = ("info", "low", "medium", "high", "blocker")
SWITCH_KINDS = ("tf32", "reduced-precision")


@dataclass(frozen=True, slots=True)
class StatusWhereImported:
    """What importing a package of one status means: the finding's severity and words."""

    status: PackageStatus
    severity: str  # one of SEVERITY_WORDS
    words: str  # completes "imports x: <package> ..."
    why: str
    sources: tuple[str, ...]
    checked: datetime.date


@dataclass(frozen=True, slots=True)
class EnvSeverity:
    """The severity of reading and of setting one CUDA environment variable."""

    name: str
    read: str
    write: str
    sources: tuple[str, ...]
    checked: datetime.date
    # setting it is not reported: ROCm never reads it and needs nothing in its place
    write_ignored: bool = False
    # reading it is not reported: HIP reads the same name with the same meaning, so the code
    # sees what the user set, as on CUDA
    read_honoured: bool = False


@dataclass(frozen=True, slots=True)
class NcclFabricPrefix:
    """NCCL variables starting with ``prefix`` tune NVIDIA-only fabric; RCCL has no such setting."""

    prefix: str
    meaning: str
    sources: tuple[str, ...]
    checked: datetime.date


@dataclass(frozen=True, slots=True)
class NcclSameMeaning:
    """NCCL variables starting with ``prefix`` describe the machine or the logging, and RCCL (or
    PyTorch's process group) reads them with the same meaning: setting one is not porting work."""

    prefix: str
    meaning: str
    sources: tuple[str, ...]
    checked: datetime.date


@dataclass(frozen=True, slots=True)
class NcclBuildLocation:
    """NCCL_* names ending in ``suffix`` say where a build finds NCCL; no library reads them."""

    suffix: str
    meaning: str
    sources: tuple[str, ...]
    checked: datetime.date


@dataclass(frozen=True, slots=True)
class PrecisionSwitch:
    """A PyTorch precision switch (a dotted attribute) and what setting it does on ROCm."""

    name: str
    kind: str  # "tf32": anything but False matters; "reduced-precision": ignored on ROCm
    on_rocm: str  # completes "sets <switch>: ..."
    sources: tuple[str, ...]
    checked: datetime.date


@dataclass(frozen=True, slots=True)
class AmdGpuName:
    """A regular expression for a word naming AMD GPUs (matched whole and case-insensitively)."""

    pattern: str
    meaning: str
    sources: tuple[str, ...]
    checked: datetime.date


@functools.cache
def _data() -> dict[str, Any]:
    return load_toml(_FILE)


@functools.cache
def statuses_where_imported() -> Mapping[PackageStatus, StatusWhereImported]:
    """By package status (every status but works-as-is)."""
    by_name = keyed(
        _data(),
        "package_status",
        _FILE,
        "status",
        "duplicate status",
        lambda entry, _: StatusWhereImported(
            status=entry.member("status", PackageStatus),
            severity=entry.choice("severity", SEVERITY_WORDS),
            words=entry.text("words"),
            why=entry.text("why"),
            sources=entry.texts("sources", required=True),
            checked=entry.date(),
        ),
    )
    return MappingProxyType({item.status: item for item in by_name.values()})


@functools.cache
def env_severities() -> Mapping[str, EnvSeverity]:
    """By variable name."""
    return keyed(
        _data(),
        "env_severity",
        _FILE,
        "name",
        "duplicate variable",
        lambda entry, name: EnvSeverity(
            name=name,
            read=entry.choice("read", SEVERITY_WORDS),
            write=entry.choice("write", SEVERITY_WORDS),
            sources=entry.texts("sources", required=True),
            checked=entry.date(),
            write_ignored=entry.flag("write_ignored"),
            read_honoured=entry.flag("read_honoured"),
        ),
    )


_NcclPart = TypeVar("_NcclPart", NcclFabricPrefix, NcclSameMeaning, NcclBuildLocation)


def _nccl_parts(table: str, kind: type[_NcclPart], key: str) -> tuple[_NcclPart, ...]:
    """One NCCL name-part table: each entry's ``key`` (prefix or suffix), meaning and sources."""
    return tuple(
        kind(
            **{key: entry.text(key)},
            meaning=entry.text("meaning"),
            sources=entry.texts("sources", required=True),
            checked=entry.date(),
        )
        for entry in entries(_data(), table, _FILE, key)
    )


@functools.cache
def nccl_fabric_prefixes() -> tuple[NcclFabricPrefix, ...]:
    return _nccl_parts("nccl_fabric", NcclFabricPrefix, "prefix")


@functools.cache
def nccl_same_meaning_prefixes() -> tuple[NcclSameMeaning, ...]:
    return _nccl_parts("nccl_same_meaning", NcclSameMeaning, "prefix")


@functools.cache
def nccl_build_location_suffixes() -> tuple[NcclBuildLocation, ...]:
    return _nccl_parts("nccl_build_location", NcclBuildLocation, "suffix")


@functools.cache
def precision_switches() -> Mapping[str, PrecisionSwitch]:
    """By the switch's dotted name (``torch.backends.cuda.matmul.allow_tf32``)."""
    return keyed(
        _data(),
        "precision_switch",
        _FILE,
        "name",
        "duplicate switch",
        lambda entry, name: PrecisionSwitch(
            name=name,
            kind=entry.choice("kind", SWITCH_KINDS),
            on_rocm=entry.text("on_rocm"),
            sources=entry.texts("sources", required=True),
            checked=entry.date(),
        ),
    )


@functools.cache
def amd_gpu_names() -> tuple[AmdGpuName, ...]:
    return tuple(
        AmdGpuName(
            pattern=entry.text("pattern"),
            meaning=entry.text("meaning"),
            sources=entry.texts("sources", required=True),
            checked=entry.date(),
        )
        for entry in entries(_data(), "amd_gpu_name", _FILE, "pattern")
    )


@functools.cache
def amd_gpu_name_re() -> re.Pattern[str]:
    """Any of :func:`amd_gpu_names` as a whole word, ignoring case."""
    words = "|".join(name.pattern for name in amd_gpu_names())
    return re.compile(rf"(?i)\b(?:{words})\b")
