"""After the scan: each finding's tier, and findings folded where one decision settles them.

The scan folds every finding inside an NVIDIA-only component (one the project's ROCm build
leaves out, with a ROCm alternative the project already has) into **one** GP601 finding for the
component, keeping the originals in ``ScanResult.set_aside`` (nothing is lost); another
vendor's extras (CUDA, XPU) of a pyproject into one GP602 finding; every other finding of a
file GP330 calls a Blackwell-only kernel under that one finding, and of a folder named for NVFP4
(NVIDIA's FP4 format) under its first finding; every GP201 import of a package
whose ROCm build must be installed, and every guarded import of a package with no ROCm build,
under the product dependency finding (GP1xx) naming it (imports of such a package that no
dependency line names, in several files, under the first of them); the CUDA renames (GP300) of
a file built around cuDNN's graph API under its cuDNN finding (GP314); and sets aside the GP300
renames that torch's hipify does itself when the project builds its extensions through
``torch.utils.cpp_extension`` (project/hipify.py), or turns them back into plain renames when
it builds them only as ``CppExtension``, which torch does not hipify; and the kernel findings inside ``__device__``
helpers that no code a ROCm build compiles calls under one GP603 line per file
(scan/kernels/callers.py).

This module holds :func:`triage` itself, the tier step and the component and vendor-extras
folds with their rules (GP601, GP602); the folds of one file, folder or import are in
:mod:`.file_folds` (with :func:`~.file_folds.fold_by_folder`, for reports that summarise), and
GP603 is in :mod:`.unreached_helpers`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import replace

from gpuport.findings import (
    CallFacts,
    Category,
    Confidence,
    Finding,
    Fix,
    Severity,
)
from gpuport.project.components import NEWER_HARDWARE_WHAT
from gpuport.project.file_folds import (
    HOPPER_FEATURE_RULE,
    PROJECT_RULES,
    fold_blackwell_files,
    fold_cudnn_entry_headers,
    fold_cudnn_graph_files,
    fold_cutlass_header_pairs,
    fold_hopper_features,
    fold_imports_under_dependency,
    fold_nvfp4_folders,
    fold_same_counterpart_targets,
    not_hipified_by_torch,
    rule_counts,
    shown_names,
)
from gpuport.project.model import Component, ComponentStatus, ProjectModel, VendorExtras
from gpuport.project.unreached_helpers import UNREACHED_HELPERS, set_aside_unreached_helpers
from gpuport.rules import rule

NVIDIA_ONLY_COMPONENT = rule(
    id="GP601",
    slug="nvidia-only-component",
    category=Category.PROJECT,
    severity=Severity.INFO,
    confidence=Confidence.MEDIUM,
    summary="A component the project's ROCm build leaves out, with a ROCm alternative already in "
    "the project",
    what="Folds every finding inside a component that the project's own build compiles only "
    "for CUDA (a Hopper-only package, a CUTLASS backend, a sub-package that depends on NVIDIA-only "
    "packages) into one finding that names the component, how many findings it folds, and the "
    "ROCm alternative the project builds instead. An extension the build compiles only for NVIDIA "
    "Hopper and newer (all its nvcc arch flags sm_90 or above) is folded the same way, also in a "
    "project with no ROCm path, and so, in a project with no ROCm path, is a folder whose every kernel "
    "file is built on Hopper-or-newer hardware (TMA tensor maps, bulk tensor copies, wgmma, "
    "tcgen05/UMMA) and whose helper headers nothing outside it includes; and so is an extension a setup.py "
    "builds only when asked (a flag or an environment switch) on an NVIDIA library with no ROCm "
    "build (cuDNN's C++ frontend, NVSHMEM); and so is a CMake sub-build added only under an option that is "
    "OFF by default and compiles only CUDA. Also folded: a second, CUDA-only CMake build beside "
    "a setup.py that builds the package for ROCm (a C++-API build), a Python module named for an "
    "NVIDIA-only kernel DSL or API beside its AMD twin of the same name (cutedsl_gemm.py beside "
    "flydsl_gemm.py, attn_cuda.py beside attn_hip.py), and project headers that only "
    "NVIDIA-only files, or includes ROCm never compiles, reach. The folded findings are kept "
    "with the scan's result, set aside rather than listed one by one.",
    why="Porting code the ROCm build never compiles is not porting work: the project already "
    "runs on AMD GPUs through its alternative. Listing each finding in it one by one hides the "
    "findings that matter.",
    example="# setup.py\nif IS_ROCM:\n    sources = glob('csrc/attn_ck/*.cpp')\nelse:\n"
    "    sources = glob('csrc/attn_cutlass/*.cu')",
    instead="Build the project's ROCm path (here csrc/attn_ck) on ROCm; leave csrc/attn_cutlass "
    "as it is.",
    fix="Nothing to port: build the project's ROCm alternative on ROCm. Port the component only "
    "if ROCm must run it too.",
    mechanical=False,
)


VENDOR_EXTRAS = rule(
    id="GP602",
    slug="vendor-only-extras",
    category=Category.PROJECT,
    severity=Severity.INFO,
    confidence=Confidence.MEDIUM,
    summary="Optional-dependency extras that install CUDA or XPU builds, in a project with a ROCm "
    "path",
    what="Folds every finding inside a pyproject's extras that select another vendor's build "
    "(named cu118, cuda12, intelgpu, xpu…; pinning /whl/cu121/ or +cu118 wheels; or asking for "
    "such an extra of the project itself; or asked for by such extras alone and installing a GPU "
    "package whose ROCm install differs, like a flash-attn extra only the CUDA extras name; or, "
    "beside ROCm extras, named for a hosted notebook service whose GPUs are all NVIDIA's, like "
    "colab or kaggle) into "
    "one finding per pyproject, naming the extras and "
    "the project's ROCm extras. The folded findings are kept with the scan's result, set aside.",
    why="A ROCm user never installs a CUDA extra: the project's ROCm install (its ROCm extras or "
    "its ROCm guide) is the decision, once, not one finding per CUDA wheel pinned in each extra.",
    example='[project.optional-dependencies]\ncu121-torch240 = ["xformers @ https://download.'
    'pytorch.org/whl/cu121/xformers-0.0.27.post2-cp311-cp311-manylinux2014_x86_64.whl"]\n'
    'rocm64-torch260 = ["torch==2.6.0"]',
    instead="pip install 'pkg[rocm64-torch260]' on ROCm; leave the cu1xx extras as they are.",
    fix="Nothing to port in these extras: install the project's ROCm extras (or follow its ROCm "
    "install guide) on ROCm.",
    mechanical=False,
)


# Renames that torch.utils.cpp_extension does itself in a project built through it.
TORCH_HIPIFIED_RULE = "GP300"


def triage(
    findings: Iterable[Finding],
    model: ProjectModel,
    enabled: frozenset[str],
    calls: Iterable[CallFacts] = (),
) -> tuple[list[Finding], list[Finding]]:
    """(findings to list, findings set aside): tiers set, components and folders folded."""
    tiered = [not_hipified_by_torch(_with_tier(f, model), model) for f in findings]
    kept: list[Finding] = []
    set_aside: list[Finding] = []
    by_component: dict[Component, list[Finding]] = defaultdict(list)
    nvidia_only = NVIDIA_ONLY_COMPONENT.id in enabled and any(
        c.status is ComponentStatus.NVIDIA_ONLY for c in model.components
    )
    for finding in tiered:
        component = model.component_of(finding.location.path) if nvidia_only else None
        if component is not None and component.status is ComponentStatus.NVIDIA_ONLY:
            by_component[component].append(finding)
        elif finding.rule_id == TORCH_HIPIFIED_RULE and model.hipified_by_torch(
            finding.location.path
        ):
            # Done by the build: torch's hipify renames these names on a ROCm PyTorch.
            set_aside.append(finding)
        else:
            kept.append(finding)
    if UNREACHED_HELPERS.id in enabled:
        kept = set_aside_unreached_helpers(kept, model, list(calls), set_aside)
    # After GP603: a GP330 file's GP603 line is folded under GP330's, counted there.
    kept = fold_blackwell_files(kept, set_aside)
    kept = fold_nvfp4_folders(kept, set_aside)
    kept = fold_cudnn_graph_files(kept, set_aside)
    kept = fold_cudnn_entry_headers(kept, set_aside)
    kept = fold_same_counterpart_targets(kept, set_aside)
    kept = fold_cutlass_header_pairs(kept, set_aside)
    kept = fold_imports_under_dependency(kept, set_aside)
    if HOPPER_FEATURE_RULE in enabled:
        kept = fold_hopper_features(kept, model, set_aside)
    if VENDOR_EXTRAS.id in enabled and model.vendor_extras:
        kept = _fold_vendor_extras(kept, model, set_aside)
    if nvidia_only:
        # One line per NVIDIA-only component, also when no finding fell in it: the reader
        # learns that the folder is not porting work, and what ROCm runs instead.
        for component in model.components:
            if component.status is ComponentStatus.NVIDIA_ONLY:
                inside = by_component.get(component, [])
                if inside or component.listed_when_empty:
                    kept.append(_component_finding(component, inside, model))
                set_aside.extend(inside)
    return kept, set_aside


def _fold_vendor_extras(
    findings: list[Finding], model: ProjectModel, set_aside: list[Finding]
) -> list[Finding]:
    """``findings`` with those inside another vendor's extras replaced by one line per file
    (the originals appended to ``set_aside``)."""
    kept: list[Finding] = []
    by_group: dict[VendorExtras, list[Finding]] = defaultdict(list)
    for finding in findings:
        loc = finding.location
        group = next((g for g in model.vendor_extras if g.holds(loc.path, loc.line)), None)
        if group is None or finding.rule_id in PROJECT_RULES:
            kept.append(finding)
        else:
            by_group[group].append(finding)
    for group in model.vendor_extras:
        component = model.component_of(group.path)
        if component is not None and component.status is ComponentStatus.NVIDIA_ONLY:
            continue  # the whole package is folded into its GP601 line already
        # One line per file, also when nothing was reported in the extras: the reader learns
        # which install the ROCm build takes.
        inside = by_group.get(group, [])
        kept.append(_extras_finding(group, inside, model))
        set_aside.extend(inside)
    return kept


def _extras_finding(group: VendorExtras, inside: list[Finding], model: ProjectModel) -> Finding:
    alternative = (
        f"its ROCm extras ({shown_names(group.rocm_extras)})"
        if group.rocm_extras
        else "its ROCm install path"
    )
    message = (
        f"{group.path} has {len(group.extras)} extras that install CUDA or XPU builds "
        f"({shown_names(group.extras)}): {len(inside)} finding(s) in them set aside "
        f"({rule_counts(inside)}); on ROCm the project installs {alternative}."
    )
    fix = Fix(
        f"Nothing to port in these extras: install {alternative} on ROCm; leave the CUDA and "
        "XPU extras as they are."
    )
    finding = VENDOR_EXTRAS.finding(group.path, group.line, message=message, fix=fix)
    return replace(finding, tier=model.tier_of(group.path))


def _with_tier(finding: Finding, model: ProjectModel) -> Finding:
    tier = model.tier_of(finding.location.path)
    return finding if tier is finding.tier else replace(finding, tier=tier)


def _shown(component: Component, inside: list[Finding]) -> str:
    """The component as a reader names it: a folder ends in "/", a file (a Dockerfile, a
    header) is its path; a component is a file when its findings sit in that very path."""
    prefix = component.path.rstrip("/")
    return prefix if any(f.location.path == prefix for f in inside) else prefix + "/"


def _component_finding(component: Component, inside: list[Finding], model: ProjectModel) -> Finding:
    evidence = "; ".join(str(e) for e in component.evidence) or "the project's build files"
    shown = _shown(component, inside)
    alternative = component.rocm_alternative or "the project's ROCm build"
    message = (
        f"{shown} is NVIDIA-only: {component.summary or 'the ROCm build leaves it out'} "
        f"({evidence}). "
        f"{len(inside)} finding(s) in it set aside ({rule_counts(inside)}); "
        f"on ROCm the project uses {alternative}."
    )
    fix = Fix(
        f"Nothing to port in {shown}: build the project's ROCm path ({alternative}) "
        "on ROCm; port this component only if ROCm must run it too."
    )
    if not component.rocm_alternative and not model.supports_rocm:
        message, fix = _no_alternative(shown, evidence, inside)
    # Placed where the build says so (the CUDA branch's line), so that a reader lands on it.
    first = component.evidence[0] if component.evidence else None
    path, line = (first.path, first.line) if first else (component.path, 0)
    finding = NVIDIA_ONLY_COMPONENT.finding(path, line, message=message, fix=fix)
    return replace(finding, tier=model.tier_of(component.path))


def _no_alternative(shown: str, evidence: str, inside: list[Finding]) -> tuple[str, Fix]:
    """The GP601 text for a component only NVIDIA GPUs build (one built for Hopper and newer
    only, an opt-in CUDA-only sub-build), in a project with no ROCm path: nothing replaces it,
    and a port leaves it out."""
    newer = "sm_" in evidence  # newer_gpu_only_components names the nvcc targets
    what = (
        "the build targets only newer NVIDIA GPUs"
        if newer
        else "an opt-in part of the build that only CUDA compiles"
    )
    how = "do not build this extension there" if newer else "leave its option off"
    if NEWER_HARDWARE_WHAT in evidence:  # a kernel folder read from its sources
        what = "its kernels are written for newer NVIDIA GPUs, one decision for a port"
        how = "exclude its kernels there and make their dispatch refuse or take a portable path"
    message = (
        f"{shown} is NVIDIA-only: {what} ({evidence}). "
        f"{len(inside)} finding(s) in it set aside ({rule_counts(inside)}); the project has "
        "no ROCm alternative to it."
    )
    fix = Fix(
        f"Leave {shown} out of the ROCm build ({how}); "
        "port it only if ROCm must run it, as new code for AMD's hardware."
    )
    return message, fix
