"""What every dependency rule reads about the file it checks, and how findings show its records."""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpuport.scan.deps.hits import Source
from gpuport.scan.deps.knowledge import (
    CONDA_TORCH,
    NVIDIA_CHANNEL_RE,
    is_conda_cuda,
    normal_url,
    on_linux,
    pytorch_rocm_index,
    pytorch_rocm_label,
)
from gpuport.syntax.dependencies import (
    CondaPackage,
    DependencyFile,
    Form,
    IndexRole,
    IndexSource,
    Requirement,
)


@dataclass(frozen=True, slots=True)
class Context:
    """One dependency file under check, with what its includes add."""

    source: Source
    rocm_version: str
    requirements: list[Requirement]  # this file's and its includes', those that apply on Linux
    indexes: list[IndexSource]  # this file's and its includes'
    label: str  # the local label of PyTorch's ROCm wheels: "rocm6.4"
    torch_index: str  # PyTorch's ROCm index URL for rocm_version
    selects_cuda: bool  # a conda environment with the nvidia channel or CUDA packages

    @classmethod
    def of(cls, dep: DependencyFile, rocm_version: str) -> Context:
        channels = [i for i in dep.indexes if i.role is IndexRole.CHANNEL]
        return cls(
            Source(dep),
            rocm_version,
            [r for r in dep.all_requirements() if on_linux(r)],
            dep.all_indexes(),
            pytorch_rocm_label(rocm_version),
            pytorch_rocm_index(rocm_version),
            any(NVIDIA_CHANNEL_RE.search(c.url) for c in channels)
            or any(is_conda_cuda(p) for p in dep.conda_packages),
        )

    def alone(self, dep: DependencyFile) -> Context:
        """An included file's own records, with nothing around them (for GP111's evidence)."""
        return Context(Source(dep), self.rocm_version, [], [], self.label, self.torch_index, False)

    @property
    def file(self) -> DependencyFile:
        return self.source.file


def spelled(requirement: Requirement) -> str:
    """The requirement as a user would recognise it: ``torch==2.3.0+cu121``, ``jax[cuda12]``."""
    if requirement.form is Form.PEP508 and requirement.text:
        return requirement.text.split(";", 1)[0].strip()
    extras = f"[{','.join(requirement.extras)}]" if requirement.extras else ""
    return f'{requirement.name}{extras} = "{requirement.specifier or "*"}"'


def spelled_after(requirement: Requirement, before: str, after: str) -> str:
    return spelled(requirement).replace(before, after, 1)


def bare_version(requirement: Requirement) -> str:
    return re.sub(r"^[=<>!~^ ]+", "", requirement.specifier).split("+", 1)[0]


def with_stale_hashes(requirement: Requirement, review: str) -> str:
    """``review`` and, for a requirement with ``--hash`` values, that they must be regenerated."""
    if not requirement.hashes:
        return review
    # pip checks every download against these: they belong to the CUDA wheel.
    stale = "its --hash values belong to the CUDA build: regenerate them (pip-compile --generate-hashes)"
    return f"{review}; {stale}" if review else stale


def shown_index(index: IndexSource, url: str | None = None) -> str:
    """An index as it is written in its file: ``--index-url URL``, ``url = "URL"``..."""
    url = index.url if url is None else url
    if index.option.startswith("-") or index.option == "dependency_links":
        return f"{index.option} {url}"
    return f'{index.option or "url"} = "{url}"'


def label_of(url: str) -> str:
    """The ROCm label an index URL names: ``rocm6.2`` in ``.../whl/rocm6.2``; "" when none."""
    match = re.search(r"/(rocm\d[\d.]*)(?:/|$)", normal_url(url) + "/")
    return match.group(1) if match else ""


def moves_to_pip(package: CondaPackage, context: Context) -> bool:
    """A conda PyTorch package that is a CUDA build here: conda has no ROCm build, pip does."""
    return package.name in CONDA_TORCH and (context.selects_cuda or "cuda" in package.build.lower())


def checked_as_conda_cuda(package: CondaPackage, context: Context) -> bool:
    """Whether GP109 speaks for a conda package (so the package rules leave it alone)."""
    return moves_to_pip(package, context) or is_conda_cuda(package)
