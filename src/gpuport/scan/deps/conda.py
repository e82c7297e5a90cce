"""Dependency rules of conda environments: CUDA packages and CUDA PyTorch (GP109), the nvidia
channel (GP110)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import urlsplit

from gpuport.findings import Category, Confidence, Severity
from gpuport.rules import rule
from gpuport.scan.deps.context import Context, moves_to_pip
from gpuport.scan.deps.hits import DependencyHit, Place, commenting_out
from gpuport.scan.deps.knowledge import (
    CONDA_CUDA_RE,
    CONDA_TORCH,
    NVIDIA_CHANNEL_RE,
    PYTORCH_INDEX_HOST,
    PYTORCH_ROCM_DOCS,
    cuda_index,
    is_conda_cuda,
    is_rocm_index,
    is_rocm_label,
    served_by,
)
from gpuport.syntax.dependencies import CondaPackage, IndexRole, IndexSource

# PyTorch's own indexes' host name ("download.pytorch.org").
_PYTORCH_HOST = urlsplit(PYTORCH_INDEX_HOST).netloc

# An exact conda version: `=2.1.0`, `==2.1.0` (https://docs.conda.io/projects/conda-build/en/latest/resources/package-spec.html)
_CONDA_EXACT_VERSION_RE = re.compile(r"^=?=?\s*(\d+(?:\.\d+){1,3})\s*$")

CONDA_CUDA_PACKAGE = rule(
    id="GP109",
    slug="conda-cuda-package",
    category=Category.DEPENDENCIES,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="Conda environment installs CUDA packages or a CUDA build of PyTorch",
    what=(
        "Finds conda dependencies that are CUDA itself (`pytorch-cuda`, `cudatoolkit`, "
        "`cuda-toolkit`, `cudnn`, `nccl`, packages from the nvidia channel), builds whose "
        "build string names CUDA, and conda `pytorch`/`torchvision`/`torchaudio` in an "
        "environment that selects CUDA."
    ),
    why=(
        "Conda channels publish no ROCm build of PyTorch (PyTorch's own install matrix sends "
        "ROCm users to pip, and conda-forge has no ROCm variant), so a conda environment "
        "that pins CUDA gets a PyTorch that cannot use an AMD GPU."
    ),
    example="dependencies:\n  - pytorch=2.1.0\n  - pytorch-cuda=12.1",
    instead=(
        "dependencies:\n  - pip\n  - pip:\n"
        "    - --index-url https://download.pytorch.org/whl/rocm6.4\n    - torch==2.1.0+rocm6.4"
    ),
    fix=(
        "Drop the CUDA packages and install torch, torchvision and torchaudio with pip from "
        "the PyTorch ROCm index, in the environment's `pip:` section."
    ),
    mechanical=True,
    references=(
        PYTORCH_ROCM_DOCS,
        "https://github.com/conda-forge/pytorch-cpu-feedstock/issues/198",
    ),
    # Conda packages are listed under an environment file's `dependencies:` key.
    needles=("dependencies",),
)


def conda_cuda_package(package: CondaPackage, context: Context) -> Iterator[DependencyHit]:
    """GP109: CUDA itself, or a CUDA build; conda's CUDA PyTorch moves to pip's ROCm index."""
    place = Place.of_conda(context.source, package, "conda")
    if moves_to_pip(package, context):
        pip_line = _conda_torch_pip_line(package, context)
        yield commenting_out(
            CONDA_CUDA_PACKAGE,
            place,
            f"conda {package.text} is a CUDA build of PyTorch here and conda has no ROCm "
            f"build; install `{pip_line}` with pip from {context.torch_index}",
            f"Remove {package.text} from the conda list and add {pip_line} to the pip "
            f"section with the index {context.torch_index}.",
            "conda has no ROCm build of PyTorch; installed with pip from the ROCm index below",
            review=""
            if is_rocm_label(pip_line.rpartition("+")[2])
            else f"{pip_line} is not pinned to a ROCm build; check what pip installs",
            pip_line=pip_line,
            pip_index=_pip_index_line(context),
        )
    elif is_conda_cuda(package):
        why = (
            f"comes from the {package.channel} channel"
            if package.channel and NVIDIA_CHANNEL_RE.search(package.channel)
            else "is part of CUDA"
            if CONDA_CUDA_RE.match(package.name)
            else f"is a CUDA build ({package.build})"
        )
        yield commenting_out(
            CONDA_CUDA_PACKAGE,
            place,
            f"conda {package.text} {why}; remove it for ROCm (ROCm torch from pip brings "
            "its own ROCm libraries)",
            f"Remove {package.text}.",
            "CUDA package, not used on ROCm",
        )


def _pip_index_line(context: Context) -> str:
    """The index option the pip section needs for ROCm torch, or "" when it has one already."""
    dep = context.file
    pip_indexes = [i for i in dep.indexes if i.role is not IndexRole.CHANNEL]
    for index in pip_indexes:
        replaced = cuda_index(index.url, context.rocm_version)
        url = replaced.replacement if replaced and replaced.replacement else index.url
        if is_rocm_index(url) and _PYTORCH_HOST in url:
            return ""
    served = served_by(context.torch_index)
    others = [r.key for r in dep.requirements if r.section == "conda.pip"]
    only_torch = all(key in served for key in others)
    has_primary = any(i.role is IndexRole.PRIMARY for i in pip_indexes)
    # --index-url only when it cannot cut the other pip packages off from PyPI.
    if only_torch and not has_primary:
        return f"--index-url {context.torch_index}"
    return f"--extra-index-url {context.torch_index}"


def _conda_torch_pip_line(package: CondaPackage, context: Context) -> str:
    """``pytorch=2.1.0`` -> ``torch==2.1.0+rocm6.4``; a looser constraint loses the label."""
    name = CONDA_TORCH[package.name]
    spec = package.spec.strip()
    if package.build:
        spec = spec.rsplit("=", 1)[0] if "=" in spec.lstrip("=") else spec.split()[0]
    exact = _CONDA_EXACT_VERSION_RE.match(spec)
    if exact:
        return f"{name}=={exact.group(1)}+{context.label}"
    if not spec:
        return name
    # conda `=2.1` means 2.1.*; other operators read the same in pip.
    if spec.startswith("=") and not spec.startswith("=="):
        return f"{name}=={spec[1:].strip()}.*"
    return f"{name}{spec.replace(' ', '')}"


CONDA_NVIDIA_CHANNEL = rule(
    id="GP110",
    slug="conda-nvidia-channel",
    category=Category.DEPENDENCIES,
    severity=Severity.LOW,
    confidence=Confidence.HIGH,
    summary="Conda environment uses the nvidia channel",
    what="Finds the `nvidia` channel (or `nvidia/label/...`) in an environment file's channels.",
    why=(
        "The channel only serves NVIDIA's CUDA packages; on ROCm it has nothing to offer, and "
        "leaving it in lets CUDA builds win the solve."
    ),
    example="channels:\n  - pytorch\n  - nvidia",
    instead="channels:\n  - pytorch",
    fix="Remove the channel; `gpuport port` comments it out with a note.",
    mechanical=True,
    references=("https://anaconda.org/nvidia",),
    # Channels are listed under an environment file's `channels:` key.
    needles=("channels",),
)


def conda_nvidia_channel(channel: IndexSource, context: Context) -> Iterator[DependencyHit]:
    """GP110: the nvidia channel, commented out by the port."""
    if channel.role is not IndexRole.CHANNEL or not NVIDIA_CHANNEL_RE.search(channel.url):
        return
    yield commenting_out(
        CONDA_NVIDIA_CHANNEL,
        Place.of_index(context.source, channel, "conda-channel"),
        f"channel {channel.url} only serves NVIDIA CUDA packages; remove it for ROCm",
        f"Remove the {channel.url} channel.",
        "the nvidia channel only serves CUDA packages",
    )
