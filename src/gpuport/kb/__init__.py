"""The knowledge base: what each CUDA-side package, library, variable, tool and image becomes on ROCm.

The facts live in TOML files beside this module (``packages.toml``, ``cuda_libraries.toml``,
``platform.toml``, ``gpu_arch.toml``); every entry carries its sources and the date it was
checked. This module only loads them into frozen dataclasses, once, and answers look-ups.
``tests/kb/test_kb_schema.py`` validates every entry.
"""

from __future__ import annotations

import datetime
import fnmatch
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from types import MappingProxyType
from typing import Any

from gpuport.kb.loader import Entry, KbError, entries, keyed, load_toml

__all__ = [
    "DEFAULT_CHECK_OFFLOAD_ARCH",
    "DEFAULT_OFFLOAD_ARCHS",
    "DEFAULT_ROCM_VERSION",
    "CudaLibrary",
    "DockerFlag",
    "DockerImage",
    "EnvVar",
    "GpuArch",
    "KbError",
    "LibraryStatus",
    "Package",
    "PackageStatus",
    "PipIndex",
    "ToolCommand",
    "commands",
    "cuda_libraries",
    "docker_flags",
    "docker_images",
    "env_vars",
    "find_command",
    "find_docker_flag",
    "find_docker_image",
    "find_env_var",
    "find_gpu_arch",
    "find_package",
    "find_pip_index",
    "gpu_architectures",
    "library_for_cmake_target",
    "library_for_header",
    "library_for_link_name",
    "normalize_name",
    "package_for_import",
    "packages",
    "pip_indexes",
    "pytorch_rocm_index",
    "pytorch_rocm_versions",
]


def _defaults() -> Entry:
    return Entry(load_toml("platform.toml").get("defaults"), "kb/platform.toml [defaults]")


# What gpuport proposes when the user names nothing else (platform.toml [defaults] says why):
# the ROCm release, the AMD GPU targets for a CUDA architecture list, and `port --check`'s one.
DEFAULT_ROCM_VERSION: str = _defaults().text("rocm_version")
DEFAULT_OFFLOAD_ARCHS: tuple[str, ...] = _defaults().texts("offload_archs", required=True)
DEFAULT_CHECK_OFFLOAD_ARCH: str = _defaults().text("check_offload_arch")

_ROCM_PLACEHOLDER = "{rocm}"
_ROCM_NODOT_PLACEHOLDER = "{rocm_nodot}"
_PYTORCH_INDEX_PREFIX = "https://download.pytorch.org/whl/"


class PackageStatus(StrEnum):
    """What happens to a Python package when the project moves to ROCm."""

    WORKS = "works-as-is"  # pure Python or already ROCm-aware
    NEEDS_ROCM_BUILD = "needs-rocm-build-or-index"  # a ROCm build exists elsewhere
    PARTIAL = "partial"  # some features, GPUs or kernels only; experimental
    NOT_SUPPORTED = "not-supported"  # no ROCm build: replace it
    NOT_APPLICABLE = "not-applicable"  # a CUDA-only artifact: drop it on ROCm


class LibraryStatus(StrEnum):
    """How far a CUDA library's AMD counterpart goes."""

    EQUIVALENT = "equivalent"  # a HIP/ROCm library with the same shape; hipify maps the names
    PARTIAL = "partial"  # a counterpart exists but covers less, or names differ in places
    DIFFERENT_API = "different-api"  # a counterpart exists with another API: a rewrite
    NOT_NEEDED = "not-needed"  # the HIP toolchain already provides it (headers, built-ins)
    NONE = "none"  # no AMD counterpart


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

    def index_for(self, rocm_version: str = DEFAULT_ROCM_VERSION) -> str | None:
        """The ROCm index URL for ``rocm_version`` (e.g. "6.4"), or None when there is none.

        PyTorch's index is snapped to the nearest version PyTorch publishes (not above the
        requested one); other indexes get the version substituted as written.
        """
        if self.rocm_index is None:
            return None
        return _fill_index(self.rocm_index, rocm_version)


@dataclass(frozen=True, slots=True)
class CudaLibrary:
    """A CUDA library (or header family) and its AMD counterpart."""

    name: str
    headers: tuple[str, ...]  # as written in #include, e.g. "cublas_v2.h", "cub/cub.cuh"
    link_names: tuple[str, ...]  # -l names / library files without lib prefix, e.g. "cublas"
    cmake_targets: tuple[str, ...]  # e.g. "CUDA::cublas"
    amd_counterpart: str  # e.g. "hipBLAS (on rocBLAS)"
    status: LibraryStatus
    notes: str
    sources: tuple[str, ...]
    checked: datetime.date
    amd_headers: tuple[str, ...] = ()  # e.g. "hipblas/hipblas.h"
    amd_link_names: tuple[str, ...] = ()  # e.g. "hipblas"
    amd_cmake_targets: tuple[str, ...] = ()  # e.g. "roc::hipblas"
    amd_find_package: str = ""  # the CMake package to find, e.g. "hipblas"


@dataclass(frozen=True, slots=True)
class EnvVar:
    """An environment variable a CUDA setup uses and its ROCm counterpart.

    ``name`` may end in ``*`` to stand for a family (``NCCL_*``).
    """

    name: str
    meaning: str
    rocm_equivalent: str  # "" when ROCm has none
    notes: str
    sources: tuple[str, ...]
    checked: datetime.date
    honoured_on_rocm: bool = False  # the CUDA name itself still works on a ROCm stack
    rocm_names: tuple[str, ...] = ()  # the variable names to use on ROCm


@dataclass(frozen=True, slots=True)
class ToolCommand:
    """A CUDA-side command-line tool and what to run on ROCm."""

    name: str
    rocm_equivalent: str
    notes: str
    sources: tuple[str, ...]
    checked: datetime.date
    rocm_commands: tuple[str, ...] = ()  # bare executable names, e.g. ("amd-smi", "rocm-smi")
    aliases: tuple[str, ...] = ()  # other spellings of the CUDA-side tool


# Ubuntu releases AMD publishes rocm/dev-ubuntu-* images for
# (https://hub.docker.com/u/rocm, checked 2026-11-21).
ROCM_DEV_UBUNTU_RELEASES = frozenset({"20.04", "22.04", "24.04"})


@dataclass(frozen=True, slots=True)
class DockerImage:
    """A CUDA base image (glob over ``repository:tag``) and its ROCm replacement."""

    pattern: str
    rocm_replacement: str  # an image reference; "{rocm}" marks the ROCm version
    notes: str
    sources: tuple[str, ...]
    checked: datetime.date

    def image_for(self, rocm_version: str = DEFAULT_ROCM_VERSION, original: str = "") -> str:
        """The replacement for ``rocm_version``. Given the ``original`` reference, a
        ``rocm/dev-ubuntu-*`` replacement keeps its Ubuntu release, and a ``-runtime`` or
        ``-base`` CUDA image gets the plain tag rather than ``-complete`` (which adds the
        compilers and libraries a -devel image has)."""
        image = _substitute_rocm(self.rocm_replacement, rocm_version)
        if not original or not image.startswith("rocm/dev-ubuntu-"):
            return image
        release = re.search(r"ubuntu-?(\d\d\.\d\d)", original.split(":", 1)[-1])
        if release and release.group(1) in ROCM_DEV_UBUNTU_RELEASES:
            image = re.sub(r"ubuntu-\d\d\.\d\d", f"ubuntu-{release.group(1)}", image, count=1)
        tag = original.rsplit(":", 1)[-1]
        if re.search(r"-(?:runtime|base)-", tag) and image.endswith("-complete"):
            image = image.removesuffix("-complete")
        return image


@dataclass(frozen=True, slots=True)
class DockerFlag:
    """A ``docker run`` / compose / Kubernetes way of asking for NVIDIA GPUs, and ROCm's."""

    flag: str
    rocm_replacement: str
    notes: str
    sources: tuple[str, ...]
    checked: datetime.date
    rocm_flags: tuple[str, ...] = ()  # the replacement as separate argv words


@dataclass(frozen=True, slots=True)
class PipIndex:
    """A CUDA pip index (glob over the URL) and its ROCm replacement."""

    pattern: str
    rocm_replacement: str | None  # "{rocm}" marks the version; None when nothing replaces it
    notes: str
    sources: tuple[str, ...]
    checked: datetime.date

    def index_for(self, rocm_version: str = DEFAULT_ROCM_VERSION) -> str | None:
        """The replacement URL for ``rocm_version``; PyTorch's stable index is snapped to a
        published one (nightly and test indexes get the version as written)."""
        if self.rocm_replacement is None:
            return None
        return _fill_index(self.rocm_replacement, rocm_version)


@dataclass(frozen=True, slots=True)
class GpuArch:
    """An AMD GPU target (``gfx`` id) with its products and wavefront size."""

    gfx: str
    family: str  # e.g. "CDNA3", "RDNA3"
    products: tuple[str, ...]
    wavefront: int  # the default wavefront size HIP compiles for (64 on GCN/CDNA, 32 on RDNA)
    notes: str
    sources: tuple[str, ...]
    checked: datetime.date
    wavefronts_supported: tuple[int, ...] = ()  # RDNA can also run wave64
    officially_supported: bool = False  # listed in AMD's ROCm on Linux support matrix
    support_note: str = ""  # which ROCm release the support statement refers to


# ---------------------------------------------------------------------------------------------
# Loading


def normalize_name(name: str) -> str:
    """PEP 503 normalization of a distribution name: lower case, runs of -_. become -."""
    return re.sub(r"[-_.]+", "-", name.strip()).lower()


def _enum(kind: type[StrEnum], entry: Entry, key: str) -> Any:
    value = entry.text(key)
    try:
        return kind(value)
    except ValueError:
        choices = ", ".join(member.value for member in kind)
        raise KbError(f"{entry.where}: {key} {value!r} is not one of {choices}") from None


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
            status=_enum(PackageStatus, entry, "status"),
            rocm_since=entry.text("rocm_since", ""),
            instead=entry.text("instead"),
            rocm_index=entry.optional_text("rocm_index"),
            rocm_package=entry.optional_text("rocm_package"),
            notes=entry.text("notes", ""),
            sources=entry.texts("sources", required=True),
            checked=entry.date(),
            confidence=entry.text("confidence"),
            patterns=entry.texts("patterns"),
            cuda_extras=entry.texts("cuda_extras"),
            rocm_min_version=entry.optional_text("rocm_min_version"),
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


@functools.cache
def cuda_libraries() -> Mapping[str, CudaLibrary]:
    """Every CUDA library entry, keyed by name."""
    data = load_toml("cuda_libraries.toml")
    return keyed(
        data,
        "library",
        "cuda_libraries.toml",
        "name",
        "duplicate library name",
        lambda entry, name: CudaLibrary(
            name=name,
            headers=entry.texts("headers"),
            link_names=entry.texts("link_names"),
            cmake_targets=entry.texts("cmake_targets"),
            amd_counterpart=entry.text("amd_counterpart"),
            status=_enum(LibraryStatus, entry, "status"),
            notes=entry.text("notes", ""),
            sources=entry.texts("sources", required=True),
            checked=entry.date(),
            amd_headers=entry.texts("amd_headers"),
            amd_link_names=entry.texts("amd_link_names"),
            amd_cmake_targets=entry.texts("amd_cmake_targets"),
            amd_find_package=entry.text("amd_find_package", ""),
        ),
    )


def _normalize_header(header: str) -> str:
    return header.strip().strip('<>"').replace("\\", "/")


@functools.cache
def _libraries_by(attribute: str) -> Mapping[str, CudaLibrary]:
    result: dict[str, CudaLibrary] = {}
    for library in cuda_libraries().values():
        for key in getattr(library, attribute):
            folded = key if attribute == "headers" else key.lower()
            result.setdefault(folded, library)
    return MappingProxyType(result)


def library_for_header(header: str) -> CudaLibrary | None:
    """The library that ``#include <header>`` belongs to.

    Matches the exact path first, then a directory prefix (``cub/block/block_reduce.cuh``
    belongs to ``cub/``), then the file name alone.
    """
    wanted = _normalize_header(header)
    by_header = _libraries_by("headers")
    if wanted in by_header:
        return by_header[wanted]
    parts = wanted.split("/")
    for length in range(len(parts) - 1, 0, -1):
        found = by_header.get("/".join(parts[:length]) + "/")
        if found is not None:
            return found
    return None


def library_for_link_name(name: str) -> CudaLibrary | None:
    """The library for a linker name: ``cublas``, ``-lcublas``, ``libcublas.so``, ``cublas_static``."""
    wanted = name.strip().lower().removeprefix("-l")
    wanted = re.sub(r"\.(so(\.\d+)*|a|lib|dll)$", "", wanted).removeprefix("lib")
    return _libraries_by("link_names").get(wanted)


def library_for_cmake_target(target: str) -> CudaLibrary | None:
    """The library for a CMake target such as ``CUDA::cublas`` (case-insensitive)."""
    return _libraries_by("cmake_targets").get(target.strip().lower())


@functools.cache
def _platform() -> dict[str, Any]:
    return load_toml("platform.toml")


@functools.cache
def env_vars() -> Mapping[str, EnvVar]:
    """Every environment-variable entry, keyed by name (``NCCL_*`` for families)."""
    return keyed(
        _platform(),
        "env",
        "platform.toml",
        "name",
        "duplicate variable",
        lambda entry, name: EnvVar(
            name=name,
            meaning=entry.text("meaning"),
            rocm_equivalent=entry.text("rocm_equivalent", ""),
            notes=entry.text("notes", ""),
            sources=entry.texts("sources", required=True),
            checked=entry.date(),
            honoured_on_rocm=entry.flag("honoured_on_rocm"),
            rocm_names=entry.texts("rocm_names"),
        ),
    )


def find_env_var(name: str) -> EnvVar | None:
    """The entry for variable ``name``: exact first, then the longest matching ``PREFIX_*``."""
    wanted = name.strip().removeprefix("$").strip("{}")
    table = env_vars()
    if wanted in table:
        return table[wanted]
    families = [
        var for key, var in table.items() if key.endswith("*") and wanted.startswith(key[:-1])
    ]
    return max(families, key=lambda var: len(var.name), default=None)


@functools.cache
def commands() -> Mapping[str, ToolCommand]:
    """Every CUDA-side tool entry, keyed by name."""
    return keyed(
        _platform(),
        "command",
        "platform.toml",
        "name",
        "duplicate command",
        lambda entry, name: ToolCommand(
            name=name,
            rocm_equivalent=entry.text("rocm_equivalent"),
            notes=entry.text("notes", ""),
            sources=entry.texts("sources", required=True),
            checked=entry.date(),
            rocm_commands=entry.texts("rocm_commands"),
            aliases=entry.texts("aliases"),
        ),
    )


def find_command(name: str) -> ToolCommand | None:
    """The entry for executable ``name`` (a path such as /usr/local/cuda/bin/nvcc is fine)."""
    wanted = name.strip().rsplit("/", 1)[-1]
    table = commands()
    if wanted in table:
        return table[wanted]
    for command in table.values():
        if wanted in command.aliases:
            return command
    return None


@functools.cache
def docker_images() -> tuple[DockerImage, ...]:
    """Every CUDA image pattern, most specific first (the order of platform.toml)."""
    return tuple(
        DockerImage(
            pattern=entry.text("pattern"),
            rocm_replacement=entry.text("rocm_replacement"),
            notes=entry.text("notes", ""),
            sources=entry.texts("sources", required=True),
            checked=entry.date(),
        )
        for entry in entries(_platform(), "docker_image", "platform.toml", "pattern")
    )


def _normalize_image(ref: str) -> str:
    """``docker.io/library/x`` -> ``x:latest``; digests dropped; registry kept otherwise."""
    image = ref.strip().split("@", 1)[0]
    for prefix in ("docker.io/", "index.docker.io/", "registry-1.docker.io/"):
        image = image.removeprefix(prefix)
    image = image.removeprefix("library/")
    last = image.rsplit("/", 1)[-1]
    if ":" not in last:
        image += ":latest"
    return image.lower()


def find_docker_image(ref: str) -> DockerImage | None:
    """The entry for an image reference such as ``nvidia/cuda:12.4.1-devel-ubuntu22.04``."""
    image = _normalize_image(ref)
    for entry in docker_images():
        if fnmatch.fnmatchcase(image, entry.pattern.lower()):
            return entry
    return None


@functools.cache
def docker_flags() -> tuple[DockerFlag, ...]:
    """Ways of requesting NVIDIA GPUs in containers and what to write for AMD GPUs."""
    return tuple(
        DockerFlag(
            flag=entry.text("flag"),
            rocm_replacement=entry.text("rocm_replacement"),
            notes=entry.text("notes", ""),
            sources=entry.texts("sources", required=True),
            checked=entry.date(),
            rocm_flags=entry.texts("rocm_flags"),
        )
        for entry in entries(_platform(), "docker_flag", "platform.toml", "flag")
    )


def find_docker_flag(flag: str) -> DockerFlag | None:
    """The entry for a flag as written (``--gpus``, ``--gpus=all``, ``--runtime=nvidia``)."""
    wanted = flag.strip()
    for entry in docker_flags():
        if wanted == entry.flag or fnmatch.fnmatchcase(wanted, entry.flag):
            return entry
    head = wanted.split("=", 1)[0]
    for entry in docker_flags():
        if head == entry.flag:
            return entry
    return None


@functools.cache
def pip_indexes() -> tuple[PipIndex, ...]:
    """Every CUDA pip index pattern, most specific first (the order of platform.toml)."""
    return tuple(
        PipIndex(
            pattern=entry.text("pattern"),
            rocm_replacement=entry.optional_text("rocm_replacement"),
            notes=entry.text("notes", ""),
            sources=entry.texts("sources", required=True),
            checked=entry.date(),
        )
        for entry in entries(_platform(), "pip_index", "platform.toml", "pattern")
    )


def _normalize_url(url: str) -> str:
    text = url.strip().rstrip("/")
    text = re.sub(r"^http://", "https://", text, flags=re.IGNORECASE)
    scheme, sep, rest = text.partition("://")
    if not sep:
        return text
    host, slash, path = rest.partition("/")
    return f"{scheme.lower()}://{host.lower()}{slash}{path}"


def find_pip_index(url: str) -> PipIndex | None:
    """The entry for an index or find-links URL (trailing slashes and http:// are ignored)."""
    wanted = _normalize_url(url)
    for entry in pip_indexes():
        if fnmatch.fnmatchcase(wanted, _normalize_url(entry.pattern)):
            return entry
    return None


@functools.cache
def pytorch_rocm_versions() -> tuple[str, ...]:
    """ROCm versions for which download.pytorch.org publishes a stable ``whl/rocmX.Y`` index."""
    table = _platform().get("pytorch_rocm")
    entry = Entry(table, "kb/platform.toml [pytorch_rocm]")
    versions = entry.texts("published", required=True)
    entry.texts("sources", required=True)
    entry.date()
    return tuple(sorted(versions, key=_version_key))


def _version_key(version: str) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in version.split("."))
    except ValueError:
        raise KbError(f"not a ROCm version: {version!r}") from None


def pytorch_rocm_index(rocm_version: str = DEFAULT_ROCM_VERSION) -> str:
    """PyTorch's index URL for the newest published ROCm version not above ``rocm_version``.

    A version below every published one gets the oldest published index.
    """
    wanted = _version_key(rocm_version.strip().removeprefix("rocm"))
    published = pytorch_rocm_versions()
    chosen = published[0]
    for version in published:
        if _version_key(version) <= wanted:
            chosen = version
    return f"{_PYTORCH_INDEX_PREFIX}rocm{chosen}"


def _fill_index(template: str, rocm_version: str) -> str:
    """Put ``rocm_version`` into an index URL template.

    PyTorch's stable index exists only for the versions in ``pytorch_rocm_versions()``, so
    that one is snapped to the nearest published version; anything else is substituted.
    """
    stable = f"{_PYTORCH_INDEX_PREFIX}rocm{_ROCM_PLACEHOLDER}"
    if template.startswith(stable):
        return pytorch_rocm_index(rocm_version) + template.removeprefix(stable)
    return _substitute_rocm(template, rocm_version)


def _substitute_rocm(template: str, rocm_version: str) -> str:
    version = rocm_version.strip().removeprefix("rocm")
    return template.replace(_ROCM_PLACEHOLDER, version).replace(
        _ROCM_NODOT_PLACEHOLDER, version.replace(".", "")
    )


@functools.cache
def gpu_architectures() -> Mapping[str, GpuArch]:
    """Every AMD GPU target, keyed by gfx id."""
    data = load_toml("gpu_arch.toml")
    return keyed(
        data,
        "gpu",
        "gpu_arch.toml",
        "gfx",
        "duplicate gfx id",
        lambda entry, gfx: GpuArch(
            gfx=gfx,
            family=entry.text("family"),
            products=entry.texts("products", required=True),
            wavefront=entry.integer("wavefront"),
            notes=entry.text("notes", ""),
            sources=entry.texts("sources", required=True),
            checked=entry.date(),
            wavefronts_supported=entry.ints("wavefronts_supported"),
            officially_supported=entry.flag("officially_supported"),
            support_note=entry.text("support_note", ""),
        ),
    )


def find_gpu_arch(name: str) -> GpuArch | None:
    """The entry for a gfx id (``gfx942``, ``gfx942:sramecc+:xnack-``) or a product name."""
    wanted = name.strip().lower()
    table = gpu_architectures()
    gfx = wanted.split(":", 1)[0]
    if gfx in table:
        return table[gfx]
    for arch in table.values():
        if any(wanted == product.lower() for product in arch.products):
            return arch
    return None
