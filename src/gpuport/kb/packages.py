"""Python distributions seen in ML projects (packages.toml) and what each becomes on ROCm."""

from __future__ import annotations

import datetime
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from types import MappingProxyType

from gpuport.kb.loader import keyed, load_toml
from gpuport.kb.rocm import DEFAULT_ROCM_VERSION, fill_index


class PackageStatus(StrEnum):
    """What happens to a Python package when the project moves to ROCm."""

    WORKS = "works-as-is"  # pure Python or already ROCm-aware
    NEEDS_ROCM_BUILD = "needs-rocm-build-or-index"  # a ROCm build exists elsewhere
    PARTIAL = "partial"  # some features, GPUs or kernels only; experimental
    NOT_SUPPORTED = "not-supported"  # no ROCm build: replace it
    NOT_APPLICABLE = "not-applicable"  # a CUDA-only artifact: drop it on ROCm


@dataclass(frozen=True, slots=True)
class Package:
    """A Python distribution seen in ML projects and what to do with it on ROCm."""

    name: str  # PEP 503 normalized
    import_names: tuple[str, ...]  # top-level modules this entry speaks for (may be empty)
    category: str
    status: PackageStatus
    rocm_since: str  # first version/date with ROCm support; "" when none
    instead: str  # what to do
    rocm_index: str | None  # pip index for the ROCm build; "{rocm}" marks the ROCm version
    rocm_package: str | None  # the replacement requirement name, when there is one
    notes: str
    sources: tuple[str, ...]
    checked: datetime.date
    confidence: str  # high | medium | low
    # Regular expressions (full match, on normalized names) for families such as
    # nvidia-cublas-cu12 or cupy-cuda12x that this entry also speaks for.
    patterns: tuple[str, ...] = ()
    # pip extras that select CUDA builds, e.g. tensorflow[and-cuda], jax[cuda12].
    cuda_extras: tuple[str, ...] = ()
    # The first release (PEP 440) usable on ROCm from its ordinary channel; older pins need
    # an upgrade. None when there is no such release or the question does not apply.
    rocm_min_version: str | None = None
    # For a package whose CPU path works anywhere and whose GPU path is asked for by a
    # parameter (xgboost's device="cuda", tree_method="gpu_hist", gpu_id=0): how those
    # parameters start, as a string literal or a keyword's name. Code that writes none of them
    # runs on the CPU, which ROCm does not change.
    gpu_words: tuple[str, ...] = ()

    def index_for(self, rocm_version: str = DEFAULT_ROCM_VERSION) -> str | None:
        """The ROCm index URL for ``rocm_version`` (e.g. "6.4"), or None when there is none.

        PyTorch's index is snapped to the nearest version PyTorch publishes (not above the
        requested one); other indexes get the version substituted as written.
        """
        if self.rocm_index is None:
            return None
        return fill_index(self.rocm_index, rocm_version)


def normalize_name(name: str) -> str:
    """PEP 503 normalization of a distribution name: lower case, runs of -_. become -."""
    return re.sub(r"[-_.]+", "-", name.strip()).lower()


@functools.cache
def packages() -> Mapping[str, Package]:
    """Every package entry, keyed by normalized name."""
    data = load_toml("packages.toml")
    return keyed(
        data,
        "package",
        "packages.toml",
        "name",
        "duplicate package name",
        lambda entry, name: Package(
            name=name,
            import_names=entry.texts("import_names"),
            category=entry.text("category"),
            status=entry.member("status", PackageStatus),
            rocm_since=entry.text("rocm_since", ""),
            instead=entry.text("instead"),
            rocm_index=entry.optional_text("rocm_index"),
            rocm_package=entry.optional_text("rocm_package"),
            notes=entry.text("notes", ""),
            sources=entry.sources(),
            checked=entry.date(),
            confidence=entry.text("confidence"),
            patterns=entry.texts("patterns"),
            cuda_extras=entry.texts("cuda_extras"),
            rocm_min_version=entry.optional_text("rocm_min_version"),
            gpu_words=entry.texts("gpu_words"),
        ),
    )


@functools.cache
def _package_patterns() -> tuple[tuple[re.Pattern[str], Package], ...]:
    return tuple(
        (re.compile(pattern), package)
        for package in packages().values()
        for pattern in package.patterns
    )


@functools.cache
def _packages_by_import() -> Mapping[str, Package]:
    result: dict[str, Package] = {}
    for package in packages().values():
        for module in package.import_names:
            result.setdefault(module, package)
    return MappingProxyType(result)


def _strip_requirement(name: str) -> str:
    """``Foo_Bar[extra]>=1.0 ; marker`` -> ``Foo_Bar``: the distribution name alone."""
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", name)
    return match.group(1) if match else name


def find_package(name: str) -> Package | None:
    """The entry for distribution ``name`` (any spelling; extras and versions are ignored).

    Exact names win; otherwise a family pattern (``nvidia-cublas-cu12``, ``cupy-cuda12x``,
    ``jax-cuda12-plugin``...) answers, with ``name`` set to the name asked about.
    """
    normalized = normalize_name(_strip_requirement(name))
    exact = packages().get(normalized)
    if exact is not None:
        return exact
    for pattern, package in _package_patterns():
        if pattern.fullmatch(normalized):
            return replace(package, name=normalized)
    return None


def package_for_import(module: str) -> Package | None:
    """The entry for ``import module`` (dotted names: the longest known prefix wins)."""
    by_import = _packages_by_import()
    parts = module.strip().split(".")
    for length in range(len(parts), 0, -1):
        found = by_import.get(".".join(parts[:length]))
        if found is not None:
            return found
    return None
