"""Dependency rules (GP1xx): CUDA builds, indexes and packages declared in dependency files.

The parsing lives in ``deps_parse``; this module decides what each record means on ROCm,
using the knowledge base (``gpuport.kb``) for package status and index replacements. The
decision is an :class:`Advice`: the scanner turns it into a finding, and ``gpuport port``
(``port/rewrite_deps.py``) applies its edit, so both always agree.
"""

from __future__ import annotations

import enum
import functools
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from packaging.markers import Marker
from packaging.version import InvalidVersion, Version

from gpuport import kb
from gpuport.files import FileKind, ProjectFile, SourceText, classify
from gpuport.findings import Category, Confidence, Finding, Fix, Severity, Skipped
from gpuport.rules import Rule, rule
from gpuport.scan.base import scanner
from gpuport.syntax.conda import parse_conda_env
from gpuport.syntax.dependencies import (
    CondaPackage,
    DependencyFile,
    FileFormat,
    Form,
    IndexRole,
    IndexSource,
    Requirement,
)
from gpuport.syntax.pep508 import normalize as normalize_name
from gpuport.syntax.pipfile import parse_pipfile
from gpuport.syntax.pyproject import allowed_versions, parse_pyproject
from gpuport.syntax.requirements import parse_requirements
from gpuport.syntax.setuppy import parse_setup_cfg, parse_setup_py

_PYTORCH_ROCM_DOCS = "https://pytorch.org/get-started/locally/"
_PIP_REQ_FILE_DOCS = "https://pip.pypa.io/en/stable/reference/requirements-file-format/"
_PEP440_LOCAL = "https://peps.python.org/pep-0440/#local-version-identifiers"

# ---------------------------------------------------------------------------------------------
# Rules

CUDA_LOCAL_VERSION = rule(
    id="GP101",
    slug="cuda-local-version",
    category=Category.DEPENDENCIES,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="Version pinned to a CUDA build through a local version label such as +cu121",
    what=(
        "Finds requirements whose pinned version carries a CUDA local label: `+cu121`, "
        "`+cu118`, `+cuda12.cudnn89`, `+pt23cu121`, in a version specifier, a Poetry or "
        "Pipfile table, or the file name of a direct wheel URL."
    ),
    why=(
        "The local label selects one build of a release. `torch==2.3.0+cu121` can only ever "
        "install the CUDA 12.1 build, so on a ROCm machine torch imports but sees no GPU "
        "(`torch.cuda.is_available()` is False). PyTorch's ROCm wheels carry `+rocmX.Y` "
        "labels instead."
    ),
    example="--extra-index-url https://download.pytorch.org/whl/cu121\ntorch==2.3.0+cu121",
    instead="--index-url https://download.pytorch.org/whl/rocm6.4\ntorch==2.3.0+rocm6.4",
    fix=(
        "For torch, torchvision and torchaudio, replace the label with the ROCm one of the "
        "index you install from (`+rocm6.4`); for other packages, drop the label and install "
        "the package's ROCm build (see the package rules)."
    ),
    mechanical=True,
    references=(_PEP440_LOCAL, _PYTORCH_ROCM_DOCS),
)

_DEPS = Category.DEPENDENCIES

CUDA_PIP_INDEX = rule(
    id="GP102",
    slug="cuda-pip-index",
    category=_DEPS,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="Package index or find-links page that serves CUDA builds",
    what=(
        "Finds `--index-url`, `--extra-index-url` and `--find-links` options, Poetry, uv, "
        "PDM and Pipenv sources, and setup.py `dependency_links` that point at a CUDA wheel "
        "index such as `https://download.pytorch.org/whl/cu121`."
    ),
    why=(
        "A CUDA index only has CUDA builds: whatever pip takes from it will not use an AMD "
        "GPU. PyTorch publishes one index per ROCm release (`whl/rocm6.4`) with the ROCm "
        "builds of torch, torchvision and torchaudio."
    ),
    example="--index-url https://download.pytorch.org/whl/cu121",
    instead="--index-url https://download.pytorch.org/whl/rocm6.4",
    fix=(
        "Point the option or source at the ROCm index gpuport names (the knowledge base's "
        "replacement for that CUDA index), or remove it when nothing replaces it."
    ),
    mechanical=True,
    references=(_PYTORCH_ROCM_DOCS, _PIP_REQ_FILE_DOCS),
)

ROCM_INDEX_AS_EXTRA = rule(
    id="GP103",
    slug="rocm-index-as-extra",
    category=_DEPS,
    severity=Severity.MEDIUM,
    confidence=Confidence.MEDIUM,
    summary="ROCm PyTorch index added beside PyPI while torch is not pinned to a ROCm build",
    what=(
        "Finds a PyTorch ROCm index given with `--extra-index-url` (or `--find-links`, a "
        "Poetry supplemental source, a PDM source) in a file whose torch, torchvision or "
        "torchaudio requirement has no `+rocmX.Y` label."
    ),
    why=(
        "pip merges an extra index with PyPI and takes the highest version it finds. When "
        "PyPI has a newer torch than the ROCm index, or the ROCm index has no build of the "
        "pinned version, pip silently installs PyPI's torch, which on Linux is the CUDA build."
    ),
    example="--extra-index-url https://download.pytorch.org/whl/rocm6.4\ntorch>=2.4",
    instead=(
        "--index-url https://download.pytorch.org/whl/rocm6.4\ntorch>=2.4\n"
        "# or keep the extra index and pin the build:\ntorch==2.7.1+rocm6.4"
    ),
    fix=(
        "Install the PyTorch packages with `--index-url` (from a requirements file of their "
        "own when other packages need PyPI), or pin them with the index's `+rocmX.Y` label."
    ),
    mechanical=False,
    references=(_PYTORCH_ROCM_DOCS, "https://github.com/pytorch/pytorch/issues/132570"),
)

NO_ROCM_BUILD = rule(
    id="GP104",
    slug="no-rocm-build",
    category=_DEPS,
    severity=Severity.HIGH,
    confidence=Confidence.HIGH,
    summary="Package has no ROCm build",
    what=(
        "Finds dependencies that gpuport's knowledge base lists as not supported on ROCm: "
        "TensorRT, TensorRT-LLM, pycuda, NVIDIA DALI, RAPIDS and the like. The severity is "
        "blocker when the package is an engine the project is built around (an inference "
        "engine, a serving stack, a framework, an attention kernel, a compiler), high otherwise."
    ),
    why=(
        "There is no build of the package for AMD GPUs, so it either fails to install, fails "
        "to load, or finds no GPU. The code that uses it has to move to another library."
    ),
    example="tensorrt==10.0.1",
    instead="onnxruntime-migraphx  # and run the ONNX model with MIGraphXExecutionProvider",
    fix=(
        "Replace the package with the alternative the message names and port the code that "
        "uses it; gpuport cannot do this for you."
    ),
    mechanical=False,
    references=("https://rocm.docs.amd.com/en/latest/compatibility/compatibility-matrix.html",),
)

ROCM_PACKAGE_REPLACEMENT = rule(
    id="GP105",
    slug="rocm-package-replacement",
    category=_DEPS,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="Package or extra selects a CUDA build; a ROCm build is published under another name",
    what=(
        "Finds requirements whose CUDA build has a ROCm counterpart under another name or "
        "extra: `cupy-cuda12x` (CuPy's ROCm wheels are `cupy-rocm-*`), `onnxruntime-gpu`, "
        "`tensorflow[and-cuda]`, `jax[cuda12]`, `jax-cuda12-plugin`, `torch-scatter`..."
    ),
    why=(
        "The CUDA wheel installs on an AMD machine but finds no CUDA driver, so the package "
        "falls back to the CPU or fails at import. Its ROCm build has a different name."
    ),
    example="cupy-cuda12x>=13\nonnxruntime-gpu==1.18.0",
    instead="cupy-rocm-7-0\nonnxruntime-migraphx",
    fix=(
        "Replace the requirement name with the ROCm package the message names (and drop the "
        "CUDA extra); check that the version constraint exists for it."
    ),
    mechanical=True,
    references=(
        "https://docs.cupy.dev/en/stable/install.html#using-cupy-on-amd-gpu-experimental",
        "https://onnxruntime.ai/docs/execution-providers/MIGraphX-ExecutionProvider.html",
    ),
)

NEEDS_ROCM_BUILD = rule(
    id="GP106",
    slug="needs-rocm-build",
    category=_DEPS,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="Package's PyPI build targets CUDA; the ROCm build comes from elsewhere",
    what=(
        "Finds dependencies whose ROCm build is not on PyPI under the same name: it comes "
        "from another index, a fork, an image, or a source build (flash-attn, vllm, "
        "deepspeed ops, mamba-ssm, xformers...)."
    ),
    why=(
        "`pip install` of these packages on a ROCm machine gets a CUDA wheel, or tries to "
        "build CUDA sources, and fails or runs without the GPU."
    ),
    example="flash-attn==2.6.3",
    instead="# build flash-attn from source on a ROCm torch (GPU_ARCHS=gfx942), or use torch SDPA",
    fix="Follow the install path the message gives (index, fork, image or source build).",
    mechanical=False,
    references=(
        "https://rocm.docs.amd.com/en/latest/how-to/rocm-for-ai/inference-optimization/"
        "model-acceleration-libraries.html",
    ),
)

PARTIAL_ROCM_SUPPORT = rule(
    id="GP107",
    slug="partial-rocm-support",
    category=_DEPS,
    severity=Severity.MEDIUM,
    confidence=Confidence.MEDIUM,
    summary="Package supports ROCm only in part",
    what=(
        "Finds dependencies that work on ROCm with limits: some kernels, GPUs or features "
        "only, an experimental backend, or a legacy path (flash-attn-3, flashinfer, autoawq...)."
    ),
    why=(
        "The project may install and import fine and then fail, or fall back to slow paths, "
        "on the features it actually uses."
    ),
    example="flashinfer-python==0.2.0",
    instead="# check the features you use against the package's ROCm notes",
    fix="Read the package's ROCm notes in the message and test the features the project uses.",
    mechanical=False,
)

CUDA_RUNTIME_WHEEL = rule(
    id="GP108",
    slug="cuda-runtime-wheel",
    category=_DEPS,
    severity=Severity.LOW,
    confidence=Confidence.HIGH,
    summary="NVIDIA CUDA runtime wheel pinned as a dependency",
    what=(
        "Finds `nvidia-*` runtime wheels (`nvidia-cublas-cu12`, `nvidia-cudnn-cu12`, "
        "`nvidia-nccl-cu12`...), `cuda-toolkit`, `pytorch-triton` and other packages the "
        "knowledge base marks as CUDA-only artifacts."
    ),
    why=(
        "They are CUDA torch's transitive dependencies, usually frozen into a lock file. On "
        "ROCm nothing loads them: they cost gigabytes of download, and their pins can clash "
        "with the ROCm torch's own requirements."
    ),
    example="nvidia-cudnn-cu12==8.9.2.26",
    instead="# nvidia-cudnn-cu12==8.9.2.26  (not needed on ROCm)",
    fix="Remove the requirement; `gpuport port` comments it out with a note.",
    mechanical=True,
    references=("https://pypi.org/project/nvidia-cuda-runtime-cu12/",),
)

CONDA_CUDA_PACKAGE = rule(
    id="GP109",
    slug="conda-cuda-package",
    category=_DEPS,
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
        _PYTORCH_ROCM_DOCS,
        "https://github.com/conda-forge/pytorch-cpu-feedstock/issues/198",
    ),
)

CONDA_NVIDIA_CHANNEL = rule(
    id="GP110",
    slug="conda-nvidia-channel",
    category=_DEPS,
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
)

TORCH_WITHOUT_INDEX = rule(
    id="GP111",
    slug="torch-without-index",
    category=_DEPS,
    severity=Severity.LOW,
    confidence=Confidence.MEDIUM,
    summary="PyTorch installed with no index, from a file that also pins CUDA packages",
    what=(
        "Finds torch, torchvision or torchaudio requirements with no index, find-links page "
        "or source at all, in a file that also pins CUDA-only things (CUDA labels, CUDA "
        "indexes, nvidia-* wheels, CUDA builds of other packages)."
    ),
    why=(
        "On Linux, PyPI's torch wheel is the CUDA build. A file that pins CUDA packages beside "
        "a plain `torch` is written for CUDA: installed as-is on a ROCm machine it replaces "
        "any ROCm torch already there with the CUDA one."
    ),
    example="torch==2.3.0\nnvidia-cudnn-cu12==8.9.2.26",
    instead="--index-url https://download.pytorch.org/whl/rocm6.4\ntorch==2.3.0",
    fix=(
        "Install the PyTorch packages from the ROCm index (`--index-url`), or pin them with "
        "a `+rocmX.Y` label."
    ),
    mechanical=False,
    references=(_PYTORCH_ROCM_DOCS,),
)

VERSION_BEFORE_ROCM_SUPPORT = rule(
    id="GP112",
    slug="version-before-rocm-support",
    category=_DEPS,
    severity=Severity.MEDIUM,
    confidence=Confidence.MEDIUM,
    summary="Pinned version is older than the package's first ROCm-capable release",
    what=(
        "Finds requirements whose version constraint allows only releases older than the "
        "first one that works on ROCm from its ordinary channel (the knowledge base's "
        "`rocm_min_version`, e.g. bitsandbytes 0.50)."
    ),
    why=(
        "The package itself works on ROCm, but not the pinned release: it installs, then "
        "fails at import or at its first GPU call, or silently runs without GPU kernels."
    ),
    example="bitsandbytes==0.43.3",
    instead="bitsandbytes>=0.50",
    fix="Raise the pin to the first ROCm-capable release or newer, and test the upgrade.",
    mechanical=False,
)

# ---------------------------------------------------------------------------------------------
# Knowledge that belongs to the rules above, not to the knowledge base

# PyTorch's release train: one index per ROCm version, local labels `+rocmX.Y`, matched versions.
# https://pytorch.org/get-started/previous-versions/
TORCH_FAMILY = frozenset({"torch", "torchvision", "torchaudio"})
# Conda names of the same packages (conda's `pytorch` is pip's `torch`).
_CONDA_TORCH = {"pytorch": "torch", "torchvision": "torchvision", "torchaudio": "torchaudio"}

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
_CONDA_CUDA_RE = re.compile(
    r"^(?:pytorch-cuda|pytorch-gpu|tensorflow-gpu|cudatoolkit(?:-dev)?|cudnn|nccl|cutensor|"
    r"cusparselt|cuda-(?!python$)[a-z0-9-]+|libcu[a-z0-9-]*|libnv[a-z0-9-]*|libnpp[a-z0-9-]*)$"
)
_NVIDIA_CHANNEL_RE = re.compile(r"(?:^|/)nvidia(?:/|$)", re.IGNORECASE)
_CONDA_EXACT_VERSION_RE = re.compile(r"^=?=?\s*(\d+(?:\.\d+){1,3})\s*$")

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
def _template_regex(template: str) -> re.Pattern[str]:
    pattern = re.escape(template.rstrip("/"))
    pattern = pattern.replace(re.escape("{rocm}"), r"\d[\d.]*").replace(
        re.escape("{rocm_nodot}"), r"\d+"
    )
    return re.compile(pattern + "/?", re.IGNORECASE)


def _normal_url(url: str) -> str:
    return re.sub(r"^http://", "https://", url.strip(), flags=re.IGNORECASE).rstrip("/")


def is_rocm_index(url: str) -> bool:
    """Whether a URL is a ROCm wheel index (a knowledge-base template or a rocmX.Y path)."""
    wanted = _normal_url(url)
    if _ROCM_URL_SEGMENT_RE.search(wanted + "/"):
        return True
    templates = [p.rocm_index for p in kb.packages().values() if p.rocm_index]
    templates += [i.rocm_replacement for i in kb.pip_indexes() if i.rocm_replacement]
    return any(_template_regex(t).fullmatch(wanted) for t in templates)


def _is_pytorch_host(url: str) -> bool:
    return _normal_url(url).lower().startswith("https://download.pytorch.org/")


def served_by(url: str) -> frozenset[str]:
    """Packages the knowledge base says a ROCm index serves (PyTorch's: the torch family...)."""
    wanted = _normal_url(url)
    names = {
        p.name
        for p in kb.packages().values()
        if p.rocm_index and _template_regex(p.rocm_index).fullmatch(wanted)
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


def _confidence(text: str) -> Confidence:
    return {"high": Confidence.HIGH, "medium": Confidence.MEDIUM}.get(text, Confidence.LOW)


def _is_central(package: kb.Package) -> bool:
    category = package.category.lower()
    return any(word in category for word in _CENTRAL_CATEGORY_WORDS)


# ---------------------------------------------------------------------------------------------
# Advice: one decision about one place in a dependency file


class Edit(enum.StrEnum):
    """What ``gpuport port`` does about an advice."""

    REPLACE = "replace"  # apply ``replacements`` to the lines line..end_line
    COMMENT_OUT = "comment-out"  # keep the line, commented out with a note
    TO_PIP = "to-pip"  # conda: comment the package out and install ``pip_line`` with pip
    NONE = "none"  # nothing mechanical: a person decides


@dataclass(frozen=True, slots=True)
class Advice:
    """One rule's verdict on one requirement, index or conda entry, with the edit to make."""

    rule: Rule
    path: str
    line: int
    column: int
    message: str
    fix: str
    edit: Edit
    family: str  # what aspect of the file: "local-version", "index", "package", "conda"...
    subject: str  # the package or URL the advice is about
    end_line: int = 0
    replacements: tuple[tuple[str, str], ...] = ()  # (before, after) substrings
    severity: Severity | None = None
    confidence: Confidence | None = None
    review: str = ""  # set when the edit is mechanical but a person should check the result
    pip_line: str = ""  # Edit.TO_PIP: the pip requirement that replaces the conda package
    form: Form | None = None  # how the requirement is written, for requirement advice

    @property
    def mechanical(self) -> bool:
        return self.edit is not Edit.NONE

    def finding(self, line_text: str = "") -> Finding:
        replacement = None
        if self.edit is Edit.REPLACE and line_text:
            replacement = line_text
            for before, after in self.replacements:
                replacement = replacement.replace(before, after, 1)
        elif self.edit in (Edit.COMMENT_OUT, Edit.TO_PIP) and line_text:
            indent = line_text[: len(line_text) - len(line_text.lstrip())]
            replacement = f"{indent}# {line_text.lstrip()}"
        return self.rule.finding(
            self.path,
            self.line,
            self.column,
            message=self.message,
            fix=Fix(self.fix, self.mechanical, replacement),
            end_line=self.end_line or self.line,
            severity=self.severity,
            confidence=self.confidence,
        )


@dataclass(slots=True)
class _Context:
    file: DependencyFile
    rocm_version: str
    requirements: list[Requirement]  # this file's and its includes'
    indexes: list[IndexSource]
    label: str  # "rocm6.4"
    torch_index: str  # PyTorch's ROCm index URL for rocm_version


def advise(dep: DependencyFile, rocm_version: str = kb.DEFAULT_ROCM_VERSION) -> list[Advice]:
    """Every advice for the records written in ``dep`` itself (includes give context only)."""
    context = _Context(
        file=dep,
        rocm_version=rocm_version,
        requirements=[r for r in dep.all_requirements() if on_linux(r)],
        indexes=dep.all_indexes(),
        label=pytorch_rocm_label(rocm_version),
        torch_index=kb.pytorch_rocm_index(rocm_version),
    )
    advice: list[Advice] = []
    for requirement in dep.requirements:
        if on_linux(requirement):
            advice.extend(_requirement_advice(requirement, context))
    for index in dep.indexes:
        advice.extend(_index_advice(index, context))
    advice.extend(_conda_advice(dep, context))
    advice.extend(_torch_without_index(dep, context, advice))
    advice.sort(key=lambda a: (a.line, a.column, a.rule.id))
    return advice


def _spelled(requirement: Requirement) -> str:
    """The requirement as a user would recognise it: ``torch==2.3.0+cu121``, ``jax[cuda12]``."""
    if requirement.form is Form.PEP508 and requirement.text:
        return requirement.text.split(";", 1)[0].strip()
    extras = f"[{','.join(requirement.extras)}]" if requirement.extras else ""
    return f'{requirement.name}{extras} = "{requirement.specifier or "*"}"'


def _requirement_advice(requirement: Requirement, context: _Context) -> Iterator[Advice]:
    for item in (
        *_local_version_advice(requirement, context),
        *_package_advice(requirement, context),
    ):
        item = replace(item, form=requirement.form)
        if requirement.hashes and item.edit is Edit.REPLACE:
            # pip checks every download against these: they belong to the CUDA wheel.
            stale = (
                "its --hash values belong to the CUDA build: regenerate them "
                "(pip-compile --generate-hashes)"
            )
            item = replace(item, review=f"{item.review}; {stale}" if item.review else stale)
        yield item


def _local_version_advice(requirement: Requirement, context: _Context) -> Iterator[Advice]:
    label = requirement.local_version
    if not is_cuda_label(label):
        return
    shown = _spelled(requirement)
    common = {
        "path": requirement.path,
        "line": requirement.line,
        "column": requirement.column,
        "end_line": requirement.end_line,
        "family": "local-version",
        "subject": requirement.key,
    }
    if requirement.url:
        target = (
            f"`{requirement.name}==<version>+{context.label}` from {context.torch_index}"
            if requirement.key in TORCH_FAMILY
            else f"the ROCm build of {requirement.name or 'the package'}"
        )
        yield Advice(
            CUDA_LOCAL_VERSION,
            message=(
                f"{requirement.url} is a CUDA build (+{label}) of {requirement.name or 'a package'}"
                f"; on ROCm install {target} instead"
            ),
            fix=f"Replace the wheel URL with {target}.",
            edit=Edit.NONE,
            **common,  # type: ignore[arg-type]
        )
        return
    if requirement.key in TORCH_FAMILY:
        new_label = context.label
        after = f"+{new_label}"
        yield Advice(
            CUDA_LOCAL_VERSION,
            message=(
                f"{shown} pins the CUDA build (+{label}) of {requirement.name}; on ROCm pin the "
                f"ROCm build instead: `{_spelled_after(requirement, f'+{label}', after)}` from "
                f"{context.torch_index}"
            ),
            fix=(
                f"Replace +{label} with {after} and install from {context.torch_index}. "
                f"{requirement.name} releases are built only for the ROCm versions current at "
                "their release: if pip finds no such build, move to a newer version."
            ),
            edit=Edit.REPLACE,
            replacements=((f"+{label}", after),),
            review=(
                f"check that {requirement.name} {_bare_version(requirement)} was built for "
                f"{new_label} ({context.torch_index})"
            ),
            **common,  # type: ignore[arg-type]
        )
        return
    after_text = _spelled_after(requirement, f"+{label}", "")
    package = kb.find_package(requirement.key) if requirement.key else None
    then = (
        f"{package.instead.rstrip('.')}."
        if package is not None
        else f"Then install the ROCm build of {requirement.name}."
    )
    yield Advice(
        CUDA_LOCAL_VERSION,
        message=(
            f"{shown} pins a CUDA build (+{label}) of {requirement.name}; drop the label: "
            f"`{after_text}`. {then}"
        ),
        fix=f"Remove +{label} from the version and install the package's ROCm build.",
        edit=Edit.REPLACE,
        replacements=((f"+{label}", ""),),
        review=f"{requirement.name} {_bare_version(requirement)} must now come from a ROCm build",
        **common,  # type: ignore[arg-type]
    )


def _bare_version(requirement: Requirement) -> str:
    return re.sub(r"^[=<>!~^ ]+", "", requirement.specifier).split("+", 1)[0]


def _spelled_after(requirement: Requirement, before: str, after: str) -> str:
    return _spelled(requirement).replace(before, after, 1)


def _package_advice(requirement: Requirement, context: _Context) -> Iterator[Advice]:
    if not requirement.key or requirement.key in TORCH_FAMILY:
        return
    package = kb.find_package(requirement.key)
    if package is None:
        return
    cuda_extras = tuple(e for e in requirement.extras if normalize_name(e) in package.cuda_extras)
    status = package.status
    shown = _spelled(requirement)
    too_old = _version_before_rocm_support(requirement, package, shown)
    if too_old is not None:
        yield too_old
    if status is kb.PackageStatus.WORKS and not cuda_extras:
        return
    common = {
        "path": requirement.path,
        "line": requirement.line,
        "column": requirement.column,
        "end_line": requirement.end_line,
        "family": "package",
        "subject": requirement.key,
        "confidence": _confidence(package.confidence),
    }
    instead = package.instead.rstrip(".")
    if status is kb.PackageStatus.NOT_APPLICABLE:
        yield Advice(
            CUDA_RUNTIME_WHEEL,
            message=f"{shown} is a CUDA-only artifact, not needed on ROCm. {instead}.",
            fix=f"Remove {requirement.name}; `gpuport port` comments it out with a note.",
            edit=Edit.COMMENT_OUT,
            **common,  # type: ignore[arg-type]
        )
        return
    if status is kb.PackageStatus.NOT_SUPPORTED:
        alternative = f" (for example {package.rocm_package})" if package.rocm_package else ""
        yield Advice(
            NO_ROCM_BUILD,
            message=f"{shown} has no ROCm build{alternative}. {instead}.",
            fix=f"Replace {requirement.name} and port the code that uses it: {instead}.",
            edit=Edit.NONE,
            severity=Severity.BLOCKER if _is_central(package) else Severity.HIGH,
            **common,  # type: ignore[arg-type]
        )
        return
    if status is kb.PackageStatus.PARTIAL:
        yield Advice(
            PARTIAL_ROCM_SUPPORT,
            message=f"{shown} supports ROCm only in part. {instead}.",
            fix=instead + ".",
            edit=Edit.NONE,
            **common,  # type: ignore[arg-type]
        )
        return
    if package.rocm_package or cuda_extras:
        yield _replacement_advice(requirement, package, cuda_extras, shown, common)
        return
    if package.rocm_index:
        rocm_index = package.index_for(context.rocm_version) or package.rocm_index
        if _index_available(package, context):
            return
        yield Advice(
            NEEDS_ROCM_BUILD,
            message=(
                f"{shown} from PyPI is a CUDA build; install {requirement.name} from "
                f"{rocm_index}. {instead}."
            ),
            fix=f"Install {requirement.name} from {rocm_index}.",
            edit=Edit.NONE,
            **common,  # type: ignore[arg-type]
        )
        return
    yield Advice(
        NEEDS_ROCM_BUILD,
        message=f"{shown} needs a ROCm build from outside PyPI. {instead}.",
        fix=instead + ".",
        edit=Edit.NONE,
        **common,  # type: ignore[arg-type]
    )


def _version_before_rocm_support(
    requirement: Requirement, package: kb.Package, shown: str
) -> Advice | None:
    """Advice when the constraint admits only releases older than ``rocm_min_version``."""
    if not package.rocm_min_version or not requirement.specifier:
        return None
    allowed = allowed_versions(requirement)
    try:
        first = Version(package.rocm_min_version)
    except InvalidVersion:
        return None
    if allowed is None:
        return None  # a form gpuport does not read: say nothing rather than guess
    # Too old when no release from the first ROCm-capable one on is allowed: try that release,
    # a far-future one, and every version the constraint itself names at or above it.
    named = (Version(m) for m in re.findall(r"\d+(?:\.\d+)*", str(allowed)))
    candidates = [first, Version("99999"), *(v for v in named if v >= first)]
    if any(allowed.contains(v, prereleases=True) for v in candidates):
        return None
    return Advice(
        VERSION_BEFORE_ROCM_SUPPORT,
        path=requirement.path,
        line=requirement.line,
        column=requirement.column,
        end_line=requirement.end_line,
        message=(
            f"{shown} allows only releases older than {package.rocm_min_version}, the first "
            f"{requirement.name} release that works on ROCm. {package.instead.rstrip('.')}."
        ),
        fix=f"Require {requirement.name}>={package.rocm_min_version} and test the upgrade.",
        edit=Edit.NONE,
        family="package",
        subject=requirement.key,
        confidence=_confidence(package.confidence),
    )


def _replacement_advice(
    requirement: Requirement,
    package: kb.Package,
    cuda_extras: tuple[str, ...],
    shown: str,
    common: dict[str, object],
) -> Advice:
    instead = package.instead.rstrip(".")
    kept_extras = [e for e in requirement.extras if e not in cuda_extras]
    new_name = package.rocm_package or requirement.name
    new_head = new_name + (f"[{','.join(kept_extras)}]" if kept_extras else "")
    written_head = _written_head(requirement)
    mechanical = bool(package.rocm_package) and written_head is not None
    if requirement.form is Form.TABLE and requirement.extras:
        mechanical = False  # Poetry/Pipfile extras live in an inline table: edit by hand
    new_text = (
        requirement.text.replace(written_head, new_head, 1)
        if written_head and requirement.text
        else f"{new_head}{requirement.specifier}"
    )
    if requirement.form is Form.TABLE:
        new_text = f'{new_name} = "{requirement.specifier or "*"}"'
    if mechanical:
        message = (
            f"{shown} is the CUDA build; on ROCm use {new_name}: `{new_text.split(';')[0].strip()}`"
        )
        fix = f"Replace {written_head} with {new_head}. {instead}."
    else:
        extras = ", ".join(f"[{e}]" for e in cuda_extras)
        what = f"the {extras} extra of {requirement.name}" if cuda_extras else requirement.name
        message = f"{shown}: {what} selects the CUDA build. {instead}."
        fix = instead + "."
    review = ""
    if mechanical and requirement.specifier:
        specifier = requirement.specifier.strip()
        if is_cuda_label(requirement.local_version):
            specifier = specifier.replace(f"+{requirement.local_version}", "")
        review = (
            f"check that {new_name} has a release matching {specifier} "
            f"(its versions need not follow {requirement.name}'s)"
        )
    return Advice(
        ROCM_PACKAGE_REPLACEMENT,
        message=message,
        fix=fix,
        edit=Edit.REPLACE if mechanical else Edit.NONE,
        replacements=((written_head, new_head),) if mechanical and written_head else (),
        review=review,
        **common,  # type: ignore[arg-type]
    )


def _written_head(requirement: Requirement) -> str | None:
    """``name[extras]`` exactly as written, so that a rewriter can replace it in place."""
    if requirement.form is Form.TABLE:
        return requirement.name if not requirement.extras else None
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?", requirement.text)
    if not match or normalize_name(match.group(1)) != requirement.key:
        return None
    return match.group(0).strip()


def _index_available(package: kb.Package, context: _Context) -> bool:
    """Whether the file (after gpuport's index rewrite) already names the package's ROCm index."""
    if not package.rocm_index:
        return False
    pattern = _template_regex(package.rocm_index)
    for index in context.indexes:
        if index.role is IndexRole.CHANNEL:
            continue
        url = _normal_url(index.url)
        replaced = cuda_index(index.url, context.rocm_version)
        if pattern.fullmatch(url) or (
            replaced
            and replaced.replacement
            and pattern.fullmatch(_normal_url(replaced.replacement))
        ):
            return True
    return False


def _index_advice(index: IndexSource, context: _Context) -> Iterator[Advice]:
    if index.role is IndexRole.CHANNEL:
        return
    common = {
        "path": index.path,
        "line": index.line,
        "column": index.column,
        "family": "index",
        "subject": index.url,
    }
    found = cuda_index(index.url, context.rocm_version)
    if found is not None:
        yield _cuda_index_advice(index, found, context, common)
        return
    if is_rocm_index(index.url) and index.role in (IndexRole.EXTRA, IndexRole.FIND_LINKS):
        unpinned = _unpinned_torch(context, index)
        if unpinned:
            names = ", ".join(f"`{_spelled(r)}`" for r in unpinned)
            label = _label_of(index.url) or context.label
            example = unpinned[0]
            way = (
                f"use `--index-url {index.url}` for the PyTorch packages"
                if _pip_style(index)
                else "tie the PyTorch packages to this source (Poetry `source =`, an explicit "
                "uv index with [tool.uv.sources], PDM `include_packages`)"
            )
            yield Advice(
                ROCM_INDEX_AS_EXTRA,
                message=(
                    f"{_shown_index(index)} is searched beside PyPI and "
                    f"{names} {'is' if len(unpinned) == 1 else 'are'} not pinned to a ROCm "
                    f"build, so the installer may take PyPI's CUDA wheel; {way}, or pin "
                    f"`{example.name}==<version>+{label}`"
                ),
                fix=(
                    f"{way[0].upper()}{way[1:]} (in a file of their own if other packages need "
                    f"PyPI), or pin them with +{label}."
                ),
                edit=Edit.NONE,
                **common,  # type: ignore[arg-type]
            )


def _shown_index(index: IndexSource, url: str | None = None) -> str:
    """An index as it is written in its file: ``--index-url URL``, ``url = "URL"``..."""
    url = index.url if url is None else url
    if index.option.startswith("-") or index.option == "dependency_links":
        return f"{index.option} {url}"
    return f'{index.option or "url"} = "{url}"'


def _pip_style(index: IndexSource) -> bool:
    return index.option.startswith("-")


def _label_of(url: str) -> str:
    match = re.search(r"/(rocm\d[\d.]*)(?:/|$)", _normal_url(url) + "/")
    return match.group(1) if match else ""


def _unpinned_torch(context: _Context, index: IndexSource) -> list[Requirement]:
    """Torch-family requirements that an extra ROCm index leaves open to PyPI's CUDA wheel."""
    return [
        r
        for r in context.requirements
        if r.key in TORCH_FAMILY
        and not r.url
        and not is_rocm_label(r.local_version)
        and not is_cuda_label(r.local_version)  # GP101 handles those
        # A requirement tied to a named source (Poetry `source =`, uv sources, PDM
        # include_packages) is searched there only, so PyPI's wheel cannot win.
        and not r.index
    ]


def _cuda_index_advice(
    index: IndexSource, found: CudaIndex, context: _Context, common: dict[str, object]
) -> Advice:
    shown = _shown_index(index)
    if found.replacement is None:
        detail = f" ({found.notes.rstrip('.')})" if found.notes else ""
        guess = " looks like a CUDA wheel index and" if not found.known else ""
        return Advice(
            CUDA_PIP_INDEX,
            message=(
                f"{shown}{guess} serves CUDA builds; nothing replaces it on ROCm"
                f"{detail}: remove it and install the ROCm builds of what it provided"
            ),
            fix="Remove the index and install the packages it served from their ROCm sources.",
            edit=Edit.NONE,
            confidence=None if found.known else Confidence.MEDIUM,
            **common,  # type: ignore[arg-type]
        )
    new_url = found.replacement
    if index.role is IndexRole.FIND_LINKS and _normal_url(index.url).lower().endswith(".html"):
        # A page of links (…/cu121/torch_stable.html) is not an index: the ROCm index root
        # would list projects, not files, so the option itself has to change.
        return Advice(
            CUDA_PIP_INDEX,
            message=(
                f"{shown} lists CUDA builds; on ROCm drop it and use "
                f"`--extra-index-url {new_url}` (or `--index-url` when only the PyTorch "
                "packages come from it)"
            ),
            fix=f"Replace the find-links page with the index {new_url}.",
            edit=Edit.NONE,
            **common,  # type: ignore[arg-type]
        )
    replacements: list[tuple[str, str]] = [(index.url, new_url)]
    new_option = index.option
    review = ""
    if index.option == "--extra-index-url":
        if _only_served_packages(new_url, context):
            new_option = "--index-url"
            replacements.insert(0, ("--extra-index-url", "--index-url"))
        else:
            unpinned = [
                r
                for r in context.requirements
                if r.key in TORCH_FAMILY and not r.url and not r.local_version
            ]
            if unpinned:
                names = ", ".join(r.name for r in unpinned)
                review = (
                    f"{names} {'is' if len(unpinned) == 1 else 'are'} not pinned to a ROCm build "
                    "and PyPI is searched too; pin them with "
                    f"+{_label_of(new_url) or context.label} or install them from a file of "
                    "their own with --index-url"
                )
    shown_new = _shown_index(replace(index, option=new_option), new_url)
    return Advice(
        CUDA_PIP_INDEX,
        message=f"{shown} serves CUDA builds; on ROCm use `{shown_new}`",
        fix=f"Replace it with {shown_new}.",
        edit=Edit.REPLACE,
        replacements=tuple(replacements),
        review=review,
        **common,  # type: ignore[arg-type]
    )


def _only_served_packages(new_url: str, context: _Context) -> bool:
    """Whether every requirement of the file can come from ``new_url`` (so --index-url is safe)."""
    if any(i.role is IndexRole.PRIMARY for i in context.indexes):
        return False  # another --index-url (a mirror?) would be overridden
    served = served_by(new_url)
    keys = [r.key for r in context.requirements if not r.url]
    return bool(keys) and all(k in served for k in keys)


# ---------------------------------------------------------------------------------------------
# conda


def _conda_advice(dep: DependencyFile, context: _Context) -> Iterator[Advice]:
    channels = [i for i in dep.indexes if i.role is IndexRole.CHANNEL]
    nvidia_channels = [c for c in channels if _NVIDIA_CHANNEL_RE.search(c.url)]
    cuda_packages = [p for p in dep.conda_packages if _is_conda_cuda(p)]
    selects_cuda = bool(nvidia_channels or cuda_packages)
    for channel in nvidia_channels:
        yield Advice(
            CONDA_NVIDIA_CHANNEL,
            path=channel.path,
            line=channel.line,
            column=channel.column,
            message=f"channel {channel.url} only serves NVIDIA CUDA packages; remove it for ROCm",
            fix=f"Remove the {channel.url} channel.",
            edit=Edit.COMMENT_OUT,
            family="conda-channel",
            subject=channel.url,
        )
    for package in dep.conda_packages:
        common = {
            "path": package.path,
            "line": package.line,
            "column": package.column,
            "family": "conda",
            "subject": package.name,
        }
        if package.name in _CONDA_TORCH and (selects_cuda or "cuda" in package.build.lower()):
            pip_line = _conda_torch_pip_line(package, context)
            yield Advice(
                CONDA_CUDA_PACKAGE,
                message=(
                    f"conda {package.text} is a CUDA build of PyTorch here and conda has no ROCm "
                    f"build; install `{pip_line}` with pip from {context.torch_index}"
                ),
                fix=(
                    f"Remove {package.text} from the conda list and add {pip_line} to the pip "
                    f"section with the index {context.torch_index}."
                ),
                edit=Edit.TO_PIP,
                pip_line=pip_line,
                review=""
                if is_rocm_label(pip_line.rpartition("+")[2])
                else f"{pip_line} is not pinned to a ROCm build; check what pip installs",
                **common,  # type: ignore[arg-type]
            )
        elif _is_conda_cuda(package):
            why = (
                f"comes from the {package.channel} channel"
                if package.channel and _NVIDIA_CHANNEL_RE.search(package.channel)
                else "is part of CUDA"
                if _CONDA_CUDA_RE.match(package.name)
                else f"is a CUDA build ({package.build})"
            )
            yield Advice(
                CONDA_CUDA_PACKAGE,
                message=(
                    f"conda {package.text} {why}; remove it for ROCm (ROCm torch from pip brings "
                    "its own ROCm libraries)"
                ),
                fix=f"Remove {package.text}.",
                edit=Edit.COMMENT_OUT,
                **common,  # type: ignore[arg-type]
            )
        else:
            yield from _conda_kb_advice(package, common)


def _is_conda_cuda(package: CondaPackage) -> bool:
    if package.name in _CONDA_TORCH:
        return "cuda" in package.build.lower() or bool(_NVIDIA_CHANNEL_RE.search(package.channel))
    return (
        bool(_CONDA_CUDA_RE.match(package.name))
        or bool(package.channel and _NVIDIA_CHANNEL_RE.search(package.channel))
        or "cuda" in package.build.lower()
    )


def _conda_kb_advice(package: CondaPackage, common: dict[str, object]) -> Iterator[Advice]:
    """Conda names that are also pip names the knowledge base knows (tensorrt, pycuda...)."""
    entry = kb.find_package(package.name)
    if entry is None or entry.status in (kb.PackageStatus.WORKS, kb.PackageStatus.NOT_APPLICABLE):
        return
    instead = entry.instead.rstrip(".")
    common = dict(common, confidence=_confidence(entry.confidence))
    if entry.status is kb.PackageStatus.NOT_SUPPORTED:
        yield Advice(
            NO_ROCM_BUILD,
            message=f"conda {package.text} has no ROCm build. {instead}.",
            fix=instead + ".",
            edit=Edit.NONE,
            severity=Severity.BLOCKER if _is_central(entry) else Severity.HIGH,
            **common,  # type: ignore[arg-type]
        )
    elif entry.status is kb.PackageStatus.PARTIAL:
        yield Advice(
            PARTIAL_ROCM_SUPPORT,
            message=f"conda {package.text} supports ROCm only in part. {instead}.",
            fix=instead + ".",
            edit=Edit.NONE,
            **common,  # type: ignore[arg-type]
        )
    else:
        yield Advice(
            NEEDS_ROCM_BUILD,
            message=f"conda {package.text} is a CUDA build. {instead}.",
            fix=instead + ".",
            edit=Edit.NONE,
            **common,  # type: ignore[arg-type]
        )


def _conda_torch_pip_line(package: CondaPackage, context: _Context) -> str:
    """``pytorch=2.1.0`` -> ``torch==2.1.0+rocm6.4``; a looser constraint loses the label."""
    name = _CONDA_TORCH[package.name]
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


# ---------------------------------------------------------------------------------------------
# torch with no index


_CUDA_SIGNAL_RULES = frozenset(
    r.id
    for r in (
        CUDA_LOCAL_VERSION,
        CUDA_PIP_INDEX,
        NO_ROCM_BUILD,
        ROCM_PACKAGE_REPLACEMENT,
        NEEDS_ROCM_BUILD,
        CUDA_RUNTIME_WHEEL,
        CONDA_CUDA_PACKAGE,
        CONDA_NVIDIA_CHANNEL,
    )
)


def _torch_without_index(
    dep: DependencyFile, context: _Context, advice: list[Advice]
) -> Iterator[Advice]:
    if any(i.role is not IndexRole.CHANNEL for i in context.indexes):
        return
    signals = [a for a in advice if a.rule.id in _CUDA_SIGNAL_RULES]
    if not signals:
        # Included files count too: their own scan reports them, here they are context.
        for other in dep.walk():
            if other is dep:
                continue
            sub = _Context(other, context.rocm_version, [], [], context.label, context.torch_index)
            signals.extend(
                a for r in other.requirements if on_linux(r) for a in _requirement_advice(r, sub)
            )
        if not signals:
            return
    first = signals[0]
    where = f"line {first.line}: {first.subject}" if first.path == dep.path else first.path
    for requirement in dep.requirements:
        if (
            requirement.key not in TORCH_FAMILY
            or not on_linux(requirement)
            or requirement.url
            or requirement.index
            or requirement.local_version
        ):
            continue
        pip_style = requirement.section in ("requirements", "constraints", "conda.pip")
        how = (
            f"add `--index-url {context.torch_index}`"
            if pip_style
            else f"install it from {context.torch_index} (a uv index or Poetry source)"
        )
        yield Advice(
            TORCH_WITHOUT_INDEX,
            path=requirement.path,
            line=requirement.line,
            column=requirement.column,
            end_line=requirement.end_line,
            message=(
                f"{_spelled(requirement)} has no index, so on Linux pip installs PyPI's CUDA build,"
                f" and this file pins CUDA packages ({where}); {how} or pin "
                f"`{requirement.name}==<version>+{context.label}`"
            ),
            fix=f"Install {requirement.name} from {context.torch_index}.",
            edit=Edit.NONE,
            family="index",
            subject=requirement.key,
        )


# ---------------------------------------------------------------------------------------------
# The scanner


def parse_source(source: SourceText, texts: dict[str, str] | None = None) -> DependencyFile:
    """Parse one dependency file by its kind; includes are read relative to it.

    ``texts``, when given, receives the text of every included file read, by its path.
    """
    rel = source.file.rel
    text = source.text
    kind = source.file.kind
    if kind is FileKind.REQUIREMENTS:
        return parse_requirements(text, rel, read=_reader(source.file, texts))
    if kind is FileKind.PYPROJECT:
        return parse_pyproject(text, rel)
    if kind is FileKind.SETUP_PY:
        return parse_setup_py(text, rel)
    if kind is FileKind.SETUP_CFG:
        return parse_setup_cfg(text, rel)
    if kind is FileKind.CONDA_ENV:
        return parse_conda_env(text, rel, read=_reader(source.file, texts))
    if kind is FileKind.PIPFILE:
        return parse_pipfile(text, rel)
    return DependencyFile(rel, FileFormat.PIP, text)


_INCLUDE_MAX_BYTES = 8 * 1024 * 1024


def _reader(file: ProjectFile, texts: dict[str, str] | None) -> Callable[[str], str | None]:
    """Read included files by their path relative to the scan root."""
    root = file.root

    def read(target: str) -> str | None:
        candidate = root / target
        try:
            if not candidate.is_file() or candidate.stat().st_size > _INCLUDE_MAX_BYTES:
                return None
            text = candidate.read_bytes().decode("utf-8", "replace")
        except OSError:
            return None
        if texts is not None:
            texts[target] = text
        return text

    return read


def _scanned_on_its_own(path: str, root: Path) -> bool:
    """Whether the walk finds ``path`` by its name (so its own scan reports what is in it)."""
    # The walk passes the folder's name too (`requirements/base.txt`), the root's included.
    return classify(PurePosixPath(path).name, (root / path).parent.name) is not None


def unlisted_includes(dep: DependencyFile, root: Path) -> list[DependencyFile]:
    """Files reached through ``-r``/``-c`` whose names the walk does not recognise, once each.

    Nothing else scans them (``common/base.txt``, ``pins/gpu.txt``), so the files that include
    them report their findings; files outside the scan root are left alone.
    """
    out: list[DependencyFile] = []
    seen = {dep.path}
    for other in dep.walk():
        posix = PurePosixPath(other.path)
        if other.path in seen or posix.is_absolute() or ".." in posix.parts:
            continue
        seen.add(other.path)
        if not _scanned_on_its_own(other.path, root):
            out.append(other)
    return out


def _own_problems(dep: DependencyFile, root: Path) -> Iterable[Skipped]:
    """Problems of this file, and of included files that are not scanned on their own."""
    yield from dep.problems
    for other in dep.walk():
        if other is dep:
            continue
        if _scanned_on_its_own(other.path, root):
            continue
        yield from other.problems


# The kinds of file the dependency scanner reads.
DEPENDENCY_KINDS = (
    FileKind.REQUIREMENTS,
    FileKind.PYPROJECT,
    FileKind.SETUP_PY,
    FileKind.SETUP_CFG,
    FileKind.CONDA_ENV,
    FileKind.PIPFILE,
)


@scanner(*DEPENDENCY_KINDS, name="dependencies")
def scan_dependencies(source: SourceText, enabled: frozenset[str]) -> Iterator[Finding | Skipped]:
    """Findings GP101-GP112 for one dependency file, and the input problems met reading it."""
    texts: dict[str, str] = {}
    dep = parse_source(source, texts)
    seen: set[Skipped] = set()
    root = source.file.root
    for problem in _own_problems(dep, root):
        if problem not in seen:
            seen.add(problem)
            yield problem
    lines = {dep.path: source.text.splitlines()}
    advice = advise(dep)
    for other in unlisted_includes(dep, root):
        lines[other.path] = texts.get(other.path, "").splitlines()
        advice.extend(advise(other))
    for item in advice:
        own = lines.get(item.path, [])
        text = own[item.line - 1] if 0 < item.line <= len(own) else ""
        yield item.finding(text)
