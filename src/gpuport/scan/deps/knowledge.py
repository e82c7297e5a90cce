"""What the dependency rules know: CUDA and ROCm labels, indexes, conda's CUDA packages, Linux markers.

Look-ups over the knowledge base (``gpuport.kb``: package status, pip index replacements) and
the facts that only the dependency rules use.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from gpuport import kb
from gpuport.findings import Confidence
from gpuport.kb import dependency_rules
from gpuport.kb.loader import load_toml, table_entry
from gpuport.kb.rocm import PLATFORM_TOML
from gpuport.rules import case_variants
from gpuport.syntax.dependencies import CondaPackage, Requirement
from gpuport.syntax.pep508 import normalize

# Where the rules' facts are documented (the rules' references).
PYTORCH_ROCM_DOCS = "https://pytorch.org/get-started/locally/"
PIP_REQ_FILE_DOCS = "https://pip.pypa.io/en/stable/reference/requirements-file-format/"
PEP440_LOCAL = "https://peps.python.org/pep-0440/#local-version-identifiers"

# The look-ups below are cached: they depend only on the knowledge base and their arguments,
# and several rules ask them again for each file.

# The facts below come from kb/dependency_rules.toml, which gives each one's sources.
TORCH_FAMILY = frozenset(dependency_rules.torch_family().pip_names)
# Conda names of the same packages (conda's `pytorch` is pip's `torch`).
CONDA_TORCH = dependency_rules.torch_family().conda_names
PYTORCH_INDEX_HOST = dependency_rules.torch_family().index_host
_CENTRAL_CATEGORY_WORDS = dependency_rules.central_categories().words

_CUDA_LABEL_RE = dependency_rules.pattern("cuda-local-label")
_ROCM_LABEL_RE = dependency_rules.pattern("rocm-local-label")
# Index URLs that name a CUDA version but that the knowledge base's pip indexes do not list.
_CUDA_URL_RE = dependency_rules.pattern("cuda-index-path")
_ROCM_URL_SEGMENT_RE = dependency_rules.pattern("rocm-index-segment")
CONDA_CUDA_RE = dependency_rules.pattern("conda-cuda-package")
NVIDIA_CHANNEL_RE = dependency_rules.pattern("nvidia-channel")

_LINUX = dependency_rules.linux_environment()
_EXTRA_IN_MARKER_RE = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")


def name_needles(names: Iterable[str]) -> tuple[str, ...]:
    """Needles for a requirement or conda package named one of ``names`` (normalized names, or
    the knowledge base's name patterns); empty when a name gives none (it may fire anywhere).

    Names compare case-insensitively with runs of ``-_.`` alike (PEP 503), so every spelling of
    a name holds its first separator-free word in some case: the needles are every case
    spelling of that word's first six characters (at most 2**6 of them; a longer word would
    let fewer files through, at up to 2**n needles).
    """
    words: set[str] = set()
    for name in names:
        word = _leading_word(name)
        if not word:
            return ()
        words.add(word[:6])
    # A word holding another is found wherever the shorter one is ("torcha", "torch").
    kept = sorted(w for w in words if not any(o != w and o in w for o in words))
    return case_variants(*kept)


def _leading_word(pattern: str) -> str:
    """The word every name ``pattern`` matches begins with ("" if none is sure)."""
    depth, escaped = 0, False
    for char in pattern:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char in "()":
            depth += 1 if char == "(" else -1
        elif char == "|" and depth == 0:
            return ""  # alternatives at the top: no word is common to them
    match = _LEADING_WORD_RE.match(pattern)
    word = match.group(1) if match else ""
    return word[:-1] if match and match.group(2) else word  # "abc?": the c is optional


_LEADING_WORD_RE = re.compile(r"([a-z0-9]*)([?*{])?")


def kb_package_needles(chosen: Callable[[kb.Package], bool]) -> tuple[str, ...]:
    """:func:`name_needles` of the knowledge base's ``chosen`` packages (names and patterns)."""
    return name_needles(
        name
        for package in kb.packages().values()
        if chosen(package)
        for name in (package.name, *package.patterns)
    )


@functools.cache
def marker_allows_linux(marker: str) -> bool:
    """Whether ``marker`` can be true on Linux x86-64 (unknown or odd markers count as yes)."""
    if not marker.strip():
        return True
    from packaging.markers import Marker  # imported where a marker is read (about 40 ms)

    try:
        parsed = Marker(marker)
    except Exception:
        return True
    extras = _EXTRA_IN_MARKER_RE.findall(marker) or [""]
    for python in _LINUX.python_versions:
        for extra in extras:
            env = dict(_LINUX.markers, python_version=python, python_full_version=python + ".0")
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


@functools.lru_cache(maxsize=1024)
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


@functools.lru_cache(maxsize=1024)
def is_rocm_index(url: str) -> bool:
    """Whether a URL is a ROCm wheel index (a knowledge-base template or a rocmX.Y path)."""
    wanted = normal_url(url)
    if _ROCM_URL_SEGMENT_RE.search(wanted + "/"):
        return True
    templates = [p.rocm_index for p in kb.packages().values() if p.rocm_index]
    templates += [i.rocm_replacement for i in kb.pip_indexes() if i.rocm_replacement]
    return any(template_regex(t).fullmatch(wanted) for t in templates)


def _is_pytorch_host(url: str) -> bool:
    return normal_url(url).lower().startswith(PYTORCH_INDEX_HOST)


@functools.lru_cache(maxsize=1024)
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


@functools.lru_cache(maxsize=1024)
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
    package = find_package(requirement.key)
    if package is None:
        return None
    return package, tuple(e for e in requirement.extras if normalize(e) in package.cuda_extras)


@functools.lru_cache(maxsize=4096)
def find_package(name: str) -> kb.Package | None:
    """``kb.find_package``, once per name: several rules ask about each requirement."""
    return kb.find_package(name)


@functools.lru_cache(maxsize=64)
def pytorch_rocm_index(rocm_version: str) -> str:
    """``kb.pytorch_rocm_index``, once per version: every file's context asks."""
    return kb.pytorch_rocm_index(rocm_version)


@functools.cache
def torch_rocm_releases() -> dict[str, tuple[str, ...]]:
    """torch release (major.minor) -> the ROCm versions whose PyTorch index serves its wheels
    (kb/platform.toml ``[pytorch_rocm.releases]``)."""
    entry = table_entry(load_toml(PLATFORM_TOML), "pytorch_rocm", PLATFORM_TOML).table("releases")
    return {release: entry.texts(release, required=True) for release in entry.raw}
