"""The platform around the code (platform.toml): environment variables, command-line tools,
container images and GPU flags, and pip indexes, each with what replaces it on ROCm; and hosted
notebook services with the GPUs they offer."""

from __future__ import annotations

import datetime
import fnmatch
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpuport.kb.loader import entries, keyed, load_toml
from gpuport.kb.rocm import DEFAULT_ROCM_VERSION, PLATFORM_TOML, fill_index, substitute_rocm


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
        image = substitute_rocm(self.rocm_replacement, rocm_version)
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
        return fill_index(self.rocm_replacement, rocm_version)


@functools.cache
def _platform() -> dict[str, Any]:
    return load_toml(PLATFORM_TOML)


@functools.cache
def env_vars() -> Mapping[str, EnvVar]:
    """Every environment-variable entry, keyed by name (``NCCL_*`` for families)."""
    return keyed(
        _platform(),
        "env",
        PLATFORM_TOML,
        "name",
        "duplicate variable",
        lambda entry, name: EnvVar(
            name=name,
            meaning=entry.text("meaning"),
            rocm_equivalent=entry.text("rocm_equivalent", ""),
            notes=entry.text("notes", ""),
            sources=entry.sources(),
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
        PLATFORM_TOML,
        "name",
        "duplicate command",
        lambda entry, name: ToolCommand(
            name=name,
            rocm_equivalent=entry.text("rocm_equivalent"),
            notes=entry.text("notes", ""),
            sources=entry.sources(),
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
            sources=entry.sources(),
            checked=entry.date(),
        )
        for entry in entries(_platform(), "docker_image", PLATFORM_TOML, "pattern")
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
            sources=entry.sources(),
            checked=entry.date(),
            rocm_flags=entry.texts("rocm_flags"),
        )
        for entry in entries(_platform(), "docker_flag", PLATFORM_TOML, "flag")
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
            sources=entry.sources(),
            checked=entry.date(),
        )
        for entry in entries(_platform(), "pip_index", PLATFORM_TOML, "pattern")
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


@dataclass(frozen=True, slots=True)
class HostedNotebook:
    """A hosted notebook service (Colab, Kaggle) and the makers of the GPUs it offers."""

    name: str
    pattern: str  # a regular expression searched in an install extra's name ("colab")
    gpu_vendors: tuple[str, ...]  # "nvidia", "amd"
    notes: str
    sources: tuple[str, ...]
    checked: datetime.date

    @property
    def nvidia_only(self) -> bool:
        return self.gpu_vendors == ("nvidia",)


@functools.cache
def hosted_notebooks() -> tuple[HostedNotebook, ...]:
    """Every hosted notebook service of platform.toml, in file order."""
    return tuple(
        HostedNotebook(
            name=entry.text("name"),
            pattern=entry.text("pattern"),
            gpu_vendors=entry.texts("gpu_vendors", required=True),
            notes=entry.text("notes", ""),
            sources=entry.sources(),
            checked=entry.date(),
        )
        for entry in entries(_platform(), "hosted_notebook", PLATFORM_TOML, "name")
    )
