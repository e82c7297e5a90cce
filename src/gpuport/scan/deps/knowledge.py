"""What the dependency rules know: CUDA and ROCm labels, indexes, conda's CUDA packages, Linux markers.

Look-ups over the knowledge base (``gpuport.kb``: package status, pip index replacements) and
the facts that only the dependency rules use.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from packaging.markers import Marker

from gpuport import kb
from gpuport.findings import Confidence
from gpuport.syntax.dependencies import CondaPackage, Requirement
from gpuport.syntax.pep508 import normalize

# Where the rules' facts are documented (the rules' references).
PYTORCH_ROCM_DOCS = "https://pytorch.org/get-started/locally/"
PIP_REQ_FILE_DOCS = "https://pip.pypa.io/en/stable/reference/requirements-file-format/"
PEP440_LOCAL = "https://peps.python.org/pep-0440/#local-version-identifiers"

# PyTorch's release train: one index per ROCm version, local labels `+rocmX.Y`, matched versions.
# https://pytorch.org/get-started/previous-versions/
TORCH_FAMILY = frozenset({"torch", "torchvision", "torchaudio"})
# Conda names of the same packages (conda's `pytorch` is pip's `torch`).
CONDA_TORCH = {"pytorch": "torch", "torchvision": "torchvision", "torchaudio": "torchaudio"}

# Knowledge-base categories of packages a project is built around: losing one blocks the move.
_CENTRAL_CATEGORY_WORDS = ("framework", "inference engine", "serving", "attention", "compiler")

# Local version labels of CUDA builds: cu121, cu118, cuda12.cudnn89 (old jaxlib), pt23cu121 (PyG).
_CUDA_LABEL_RE = re.compile(r"(?:^|[^a-z])cu(?:da)?\d", re.IGNORECASE)
_ROCM_LABEL_RE = re.compile(r"^rocm\d", re.IGNORECASE)
# Index URLs that name a CUDA version but that the knowledge base does not know.
_CUDA_URL_RE = re.compile(
    r"(?:^|[/_.+=-])cu(?:da)?-?\d{2,3}x?(?=$|[/_.+-])|cuda[_-]releases", re.IGNORECASE
)
_ROCM_URL_SEGMENT_RE = re.compile(r"/(?:rocm\d[\d.]*|rocm-rel-[\d.]+|rocm)(?:/|$)", re.IGNORECASE)
# Conda packages that are CUDA itself. https://anaconda.org/nvidia/repo
CONDA_CUDA_RE = re.compile(
    r"^(?:pytorch-cuda|pytorch-gpu|tensorflow-gpu|cudatoolkit(?:-dev)?|cudnn|nccl|cutensor|"
    r"cusparselt|cuda-(?!python$)[a-z0-9-]+|libcu[a-z0-9-]*|libnv[a-z0-9-]*|libnpp[a-z0-9-]*)$"
)
NVIDIA_CHANNEL_RE = re.compile(r"(?:^|/)nvidia(?:/|$)", re.IGNORECASE)

# Environments in which a ROCm wheel could be installed: Linux on x86-64, any recent CPython.
_LINUX_BASE = {
    "os_name": "posix",
    "sys_platform": "linux",
    "platform_system": "Linux",
    "platform_machine": "x86_64",
    "platform_release": "",
    "platform_version": "",
    "implementation_name": "cpython",
    "platform_python_implementation": "CPython",
    "implementation_version": "3.12.0",
}
_PYTHONS = ("3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "3.14")
_EXTRA_IN_MARKER_RE = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")


@functools.cache
def marker_allows_linux(marker: str) -> bool:
    """Whether ``marker`` can be true on Linux x86-64 (unknown or odd markers count as yes)."""
    if not marker.strip():
        return True
    try:
        parsed = Marker(marker)
    except Exception:
        return True
    extras = _EXTRA_IN_MARKER_RE.findall(marker) or [""]
    for python in _PYTHONS:
        for extra in extras:
            env = dict(_LINUX_BASE, python_version=python, python_full_version=python + ".0")
            env["extra"] = extra
            try:
                if parsed.evaluate(env):
                    return True
            except Exception:
                return True
    return False


def on_linux(requirement: Requirement) -> bool:
    """False when the requirement's marker rules Linux out (ROCm wheels are Linux-only)."""
    return marker_allows_linux(requirement.marker)


def is_cuda_label(label: str) -> bool:
    """Whether a local version label names a CUDA build (``cu121``, ``cuda12.cudnn89``)."""
    return bool(label) and bool(_CUDA_LABEL_RE.search(label))


def is_rocm_label(label: str) -> bool:
    return bool(_ROCM_LABEL_RE.match(label))


def pytorch_rocm_label(rocm_version: str) -> str:
    """The local label of PyTorch's ROCm wheels for ``rocm_version`` ("rocm6.4")."""
    return kb.pytorch_rocm_index(rocm_version).rstrip("/").rsplit("/", 1)[-1]


@functools.cache
def template_regex(template: str) -> re.Pattern[str]:
    pattern = re.escape(template.rstrip("/"))
    pattern = pattern.replace(re.escape("{rocm}"), r"\d[\d.]*").replace(
        re.escape("{rocm_nodot}"), r"\d+"
    )
    return re.compile(pattern + "/?", re.IGNORECASE)


def normal_url(url: str) -> str:
    return re.sub(r"^http://", "https://", url.strip(), flags=re.IGNORECASE).rstrip("/")


def is_rocm_index(url: str) -> bool:
    """Whether a URL is a ROCm wheel index (a knowledge-base template or a rocmX.Y path)."""
    wanted = normal_url(url)
    if _ROCM_URL_SEGMENT_RE.search(wanted + "/"):
        return True
    templates = [p.rocm_index for p in kb.packages().values() if p.rocm_index]
    templates += [i.rocm_replacement for i in kb.pip_indexes() if i.rocm_replacement]
    return any(template_regex(t).fullmatch(wanted) for t in templates)


def _is_pytorch_host(url: str) -> bool:
    return normal_url(url).lower().startswith("https://download.pytorch.org/")


def served_by(url: str) -> frozenset[str]:
    """Packages the knowledge base says a ROCm index serves (PyTorch's: the torch family...)."""
    wanted = normal_url(url)
    names = {
        p.name
        for p in kb.packages().values()
        if p.rocm_index and template_regex(p.rocm_index).fullmatch(wanted)
    }
    if _is_pytorch_host(url):
        names |= TORCH_FAMILY
    return frozenset(names)


@dataclass(frozen=True, slots=True)
class CudaIndex:
    """What a CUDA index becomes on ROCm."""

    replacement: str | None  # the ROCm URL, None when nothing replaces it
    notes: str
    known: bool  # False: recognised only by a CUDA version in its URL


def cuda_index(url: str, rocm_version: str) -> CudaIndex | None:
    """The ROCm replacement of a CUDA index URL, or None when the URL is not a CUDA index."""
    if is_rocm_index(url):
        return None
    entry = kb.find_pip_index(url)
    if entry is not None:
        return CudaIndex(entry.index_for(rocm_version), entry.notes, True)
    if _CUDA_URL_RE.search(urlpath(url)):
        return CudaIndex(None, "", False)
    return None


def urlpath(url: str) -> str:
    """The part of a URL after the host, where CUDA versions are named."""
    rest = url.split("://", 1)[-1]
    return "/" + rest.split("/", 1)[1] if "/" in rest else ""


def confidence_of(text: str) -> Confidence:
    return {"high": Confidence.HIGH, "medium": Confidence.MEDIUM}.get(text, Confidence.LOW)


def is_central(package: kb.Package) -> bool:
    category = package.category.lower()
    return any(word in category for word in _CENTRAL_CATEGORY_WORDS)


def is_conda_cuda(package: CondaPackage) -> bool:
    """Whether a conda package is CUDA itself, comes from the nvidia channel, or is a CUDA build."""
    if package.name in CONDA_TORCH:
        return "cuda" in package.build.lower() or bool(NVIDIA_CHANNEL_RE.search(package.channel))
    return (
        bool(CONDA_CUDA_RE.match(package.name))
        or bool(package.channel and NVIDIA_CHANNEL_RE.search(package.channel))
        or "cuda" in package.build.lower()
    )


def known_package(requirement: Requirement) -> tuple[kb.Package, tuple[str, ...]] | None:
    """The knowledge base's entry for a requirement, with the CUDA extras it asks for.

    None for unnamed requirements, unknown packages and the PyTorch family (whose builds the
    label and index rules handle).
    """
    if not requirement.key or requirement.key in TORCH_FAMILY:
        return None
    package = kb.find_package(requirement.key)
    if package is None:
        return None
    return package, tuple(e for e in requirement.extras if normalize(e) in package.cuda_extras)
