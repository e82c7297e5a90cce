"""Another vendor's extras: a pyproject's optional-dependency groups that install CUDA or XPU builds.

A project that ships its own ROCm install often keeps one extra per CUDA (or Intel XPU) build
beside it: unsloth's pyproject has ``cu118onlytorch211``, ``cu121-ampere-torch240``,
``intelgputorch260``… next to ``amd`` and ``rocm72-torch291``. Each pin in those extras names a
CUDA wheel, but a ROCm user never selects them: the decision is one (install the ROCm extras),
not one per pin. An extra is another vendor's when its name says so (``cu118``, ``cuda12``,
``intel``, ``xpu``), when it pins a CUDA build (``/whl/cu121/``, ``+cu118``, ``cu12torch2.6``) or
when it asks for such an extra of the project itself (``unsloth[cu121onlytorch220]``), or when
only such extras of the project ask for it (unsloth's ``flashattention``, which only its
``cu1xx-ampere`` extras name), or, in a pyproject that has ROCm extras, when it is named for a
hosted notebook service whose GPUs are all NVIDIA's (unsloth's ``colab-new``, ``kaggle``: the
knowledge base's [[hosted_notebook]] entries, with their sources). An extra whose name says ROCm
(``rocm``, ``amd``, ``hip``) never is.
"""

from __future__ import annotations

import re

from gpuport import kb
from gpuport.project.model import Evidence, VendorExtras
from gpuport.project.texts import ProjectTexts
from gpuport.syntax.dependencies import Requirement
from gpuport.syntax.pep508 import normalize
from gpuport.syntax.pyproject import parse_pyproject

_SECTION_PREFIX = "project.optional-dependencies."
# Extra names that select another vendor's build: cu118, cu12x, cuda12, intelgpu, xpu.
_VENDOR_NAME_RE = re.compile(r"cu\d{2,3}|cu\d+x|cuda|intel|xpu", re.I)
_ROCM_NAME_RE = re.compile(r"rocm|amd|hip", re.I)
# A pin of a CUDA build: PyTorch's /whl/cu121/ index, a +cu118 local label, flash-attn's
# release wheels (+cu12torch2.6cxx11abiFALSE).
_CUDA_BUILD_RE = re.compile(r"/whl/cu\d+|(?:\+|%2B)cu\d+|cu\d+torch\d", re.I)


def vendor_extras(texts: ProjectTexts, pyprojects: list[str]) -> list[VendorExtras]:
    """Each pyproject's extras that install another vendor's builds (none: left out)."""
    found: list[VendorExtras] = []
    for rel in pyprojects:
        text = texts.text(rel)
        if text is None or "optional-dependencies" not in text:
            continue
        try:
            dep = parse_pyproject(text, rel)
        except RecursionError:  # nested too deeply for tomllib; its scanner reports it
            continue
        groups = _by_extra(dep.requirements)
        own = normalize(dep.project_name) if dep.project_name else ""
        rocm = tuple(name for name in groups if _ROCM_NAME_RE.search(name))
        vendor = _vendor_extras(groups, own, bool(rocm))
        if not vendor:
            continue
        lines = frozenset(r.line for name in vendor for r in groups[name])
        first = min(min(r.line for r in groups[name]) for name in vendor)
        why = f"{len(vendor)} optional-dependency extras install CUDA or XPU builds"
        found.append(
            VendorExtras(rel, first, tuple(vendor), lines, rocm, (Evidence(rel, first, why),))
        )
    return found


def _by_extra(requirements: list[Requirement]) -> dict[str, list[Requirement]]:
    groups: dict[str, list[Requirement]] = {}
    for requirement in requirements:
        if requirement.section.startswith(_SECTION_PREFIX) and requirement.line > 0:
            name = requirement.section.removeprefix(_SECTION_PREFIX)
            groups.setdefault(name, []).append(requirement)
    return groups


def _gpu_package(requirement: Requirement) -> bool:
    """A package the knowledge base knows to install differently on ROCm (flash-attn)."""
    package = kb.find_package(requirement.key)
    return package is not None and package.status is not kb.PackageStatus.WORKS


def _nvidia_notebook(name: str) -> bool:
    """Whether the extra is named for a hosted notebook service that offers only NVIDIA GPUs."""
    return any(
        service.nvidia_only and re.search(service.pattern, name, re.IGNORECASE)
        for service in kb.hosted_notebooks()
    )


def _vendor_extras(groups: dict[str, list[Requirement]], own: str, has_rocm: bool) -> list[str]:
    """The extras that install another vendor's build, the ones that ask for them included
    (``has_rocm``: the file has ROCm extras, so one named for an NVIDIA-only notebook service
    is a CUDA install beside them)."""
    vendor = {
        name
        for name, requirements in groups.items()
        if not _ROCM_NAME_RE.search(name)
        and (
            _VENDOR_NAME_RE.search(name)
            or any(_CUDA_BUILD_RE.search(r.url or r.specifier) for r in requirements)
            or (has_rocm and _nvidia_notebook(name))
        )
    }
    # Which of the project's own extras each extra asks for (unsloth's cu121-ampere asks for
    # unsloth[flashattention]).
    asks = {
        name: {e for r in requirements if own and r.key == own for e in r.extras}
        for name, requirements in groups.items()
    }
    changed = bool(own)
    while changed:
        changed = False
        for name in groups:
            if name in vendor or _ROCM_NAME_RE.search(name):
                continue
            askers = {other for other, wanted in asks.items() if name in wanted}
            # An extra asking for one of the project's own vendor extras is one too; and so is
            # an extra that only vendor extras ask for and that installs a GPU package whose
            # ROCm install differs (unsloth's flashattention, flash-attn, asked for by its
            # cu1xx-ampere extras alone): a ROCm install never selects it either.
            if asks[name] & vendor or (
                askers and askers <= vendor and any(map(_gpu_package, groups[name]))
            ):
                vendor.add(name)
                changed = True
    return [name for name in groups if name in vendor]
