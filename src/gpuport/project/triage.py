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
``torch.utils.cpp_extension`` (project/hipify.py); and the kernel findings inside ``__device__``
helpers that no code a ROCm build compiles calls under one GP603 line per file
(scan/kernels/callers.py).
:func:`fold_by_folder` folds the rules of :data:`FOLD_BY_FOLDER`, whose findings in the files of
one folder share one fix, into one finding per folder and tier, for reports that summarise.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from gpuport import kb
from gpuport.findings import (
    CallFacts,
    Category,
    Confidence,
    DeviceHelper,
    Finding,
    Fix,
    Location,
    Severity,
    Tier,
)
from gpuport.project.components import NEWER_HARDWARE_WHAT
from gpuport.project.model import Component, ComponentStatus, ProjectModel, VendorExtras
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


@dataclass(frozen=True, slots=True)
class FolderFold:
    """A rule whose findings in one folder share one fix, and how the folded finding reads."""

    rule_id: str
    what: str  # "use CUDA API names that `gpuport port` renames to HIP"


FOLD_BY_FOLDER: tuple[FolderFold, ...] = (
    # GP300 counts the CUDA names `gpuport port` renames, once per file: in a PyTorch extension
    # torch's hipify renames them at build time, and either way one run of `port` over the
    # folder fixes every file (DeepSpeed: 18 files of csrc/includes, one decision).
    FolderFold("GP300", "use CUDA API names that `gpuport port` (or torch's hipify) renames"),
    # GP312 reports CUTLASS/CuTe use once per file; the decision (replace or drop the CUTLASS
    # backend) is made once per folder, not per instantiation file (flash-attention's
    # hopper/instantiations holds hundreds of one-line instantiations).
    FolderFold("GP312", "use CUTLASS/CuTe, which has no AMD backend"),
)
_MIN_FILES_TO_FOLD = 2  # one file's finding stays as it is
# A file this rule fires in is built on Blackwell-only hardware (scan/kernels/arch_rules.py).
BLACKWELL_FILE_RULE = "GP330"
# Renames that torch.utils.cpp_extension does itself in a project built through it.
TORCH_HIPIFIED_RULE = "GP300"
_PROJECT_RULES = frozenset({"GP601", "GP602", "GP603"})  # the folds' own lines are never folded


def triage(
    findings: Iterable[Finding],
    model: ProjectModel,
    enabled: frozenset[str],
    calls: Iterable[CallFacts] = (),
) -> tuple[list[Finding], list[Finding]]:
    """(findings to list, findings set aside): tiers set, components and folders folded."""
    tiered = [_with_tier(f, model) for f in findings]
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
    kept = _fold_blackwell_files(kept, set_aside)
    kept = _fold_nvfp4_folders(kept, set_aside)
    if UNREACHED_HELPERS.id in enabled:
        kept = _set_aside_unreached_helpers(kept, model, list(calls), set_aside)
    kept = _fold_cudnn_graph_files(kept, set_aside)
    kept = _fold_cudnn_entry_headers(kept, set_aside)
    kept = _fold_same_counterpart_targets(kept, set_aside)
    kept = _fold_cutlass_header_pairs(kept, set_aside)
    kept = _fold_imports_under_dependency(kept, set_aside)
    if HOPPER_FEATURE_RULE in enabled:
        kept = _fold_hopper_features(kept, model, set_aside)
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


def _fold_blackwell_files(findings: list[Finding], set_aside: list[Finding]) -> list[Finding]:
    """``findings`` with every other finding of a file GP330 calls a Blackwell-only kernel set
    aside under GP330's one line (appended to ``set_aside``): the file is one decision."""
    heads = {f.location.path: f for f in findings if f.rule_id == BLACKWELL_FILE_RULE}
    if not heads:
        return findings
    kept: list[Finding] = []
    inside: dict[str, list[Finding]] = defaultdict(list)
    for finding in findings:
        head = heads.get(finding.location.path)
        if head is None or finding is head or finding.rule_id in _PROJECT_RULES:
            kept.append(finding)
        else:
            inside[finding.location.path].append(finding)
    for path, folded in inside.items():
        head = heads[path]
        note = f"; {len(folded)} other finding(s) in this file set aside ({_rule_counts(folded)})"
        kept[kept.index(head)] = replace(head, message=head.message + note)
        set_aside.extend(folded)
    return kept


# A folder named for NVFP4 (nvfp4/, nvfp4_training/, cast/nvfp4/): NVIDIA's FP4 format (E2M1
# values with an E4M3 scale per 16, Blackwell's tensor cores,
# https://developer.nvidia.com/blog/introducing-nvfp4-for-efficient-and-accurate-low-precision-inference/),
# which no AMD GPU implements: gfx950 has the OCP MX formats (MXFP4, MXFP6, MXFP8,
# https://www.amd.com/en/products/accelerators/instinct/mi350/mi355x.html). Its code is one
# feature a port keeps (emulated) or leaves out as a whole.
_NVFP4_FOLDER_RE = re.compile(r"(?i)(?:^|[_-])nvfp4(?:$|[_-])")


def _nvfp4_folder(path: str) -> str | None:
    """The outermost folder of ``path`` named for NVFP4, or None."""
    parts = path.split("/")[:-1]
    for at, part in enumerate(parts):
        if _NVFP4_FOLDER_RE.search(part):
            return "/".join(parts[: at + 1])
    return None


def _fold_nvfp4_folders(findings: list[Finding], set_aside: list[Finding]) -> list[Finding]:
    """``findings`` with the findings of each folder named for NVFP4 (two or more, per tier)
    set aside under the folder's first one, whose message counts them (appended to
    ``set_aside``): keeping NVFP4 on ROCm, or leaving it out, is one decision for the folder,
    not one per PTX conversion, CuTe DSL import or capability check in it."""
    groups: dict[tuple[str, Tier], list[Finding]] = defaultdict(list)
    for finding in findings:
        folder = _nvfp4_folder(finding.location.path)
        if folder is not None and finding.rule_id not in _PROJECT_RULES:
            groups[(folder, finding.tier)].append(finding)
    heads: dict[int, tuple[str, list[Finding]]] = {}
    folded: set[int] = set()
    for (folder, _tier), group in groups.items():
        if len(group) < 2:
            continue
        head = min(group, key=lambda f: f.sort_key)
        rest = [f for f in group if f is not head]
        heads[id(head)] = (folder, rest)
        folded.update(id(f) for f in rest)
    if not heads:
        return findings
    kept: list[Finding] = []
    for finding in findings:
        if id(finding) in folded:
            set_aside.append(finding)
        elif id(finding) in heads:
            folder, rest = heads[id(finding)]
            note = (
                f"; {len(rest)} other finding(s) in {folder}/ set aside ({_rule_counts(rest)}): "
                "the folder holds NVFP4 code, NVIDIA's FP4 format, which no AMD GPU implements "
                "(gfx950 has MXFP4/MXFP8): a port keeps it (emulated) or leaves it out as one "
                "decision"
            )
            kept.append(replace(finding, message=finding.message + note))
        else:
            kept.append(finding)
    return kept


# GP314 (cuDNN) writes "cuDNN in this file: 23 references (cudnn_frontend x12, cudnnHandle_t x4,
# …)" (scan/kernels/library_rules.py); GP300 writes "10 CUDA API references that gpuport port
# renames to HIP: runtime 8 (…); headers 2 (…)" (scan/kernels/renames.py).
CUDNN_RULE = "GP314"
_CUDNN_GRAPH_RE = re.compile(r"\bcudnn_frontend(?: x(\d+))?[,)]")
_RENAMES_RE = re.compile(r"^(\d+) CUDA API references? that gpuport port renames to HIP: (.*)$")
_RENAME_FAMILY_RE = re.compile(r"(?:^|; )(\w+) \d+ \(")
# Names a rewrite of the file's cuDNN code rewrites with it: the stream and error calls and the
# CUDA headers around the graph calls. Driver or library families are other work.
_INCIDENTAL_FAMILIES = frozenset({"runtime", "headers"})


def _fold_cudnn_graph_files(findings: list[Finding], set_aside: list[Finding]) -> list[Finding]:
    """``findings`` with the GP300 renames of a file built around cuDNN's graph API set aside
    under the file's GP314 line (appended to ``set_aside``).

    Such a file (it names ``cudnn_frontend`` more often than all its renamed CUDA runtime names
    and headers together) is cuDNN-graph code: MIOpen has no graph API, so a port rewrites or
    replaces the file as a whole, and the ``cudaStream_t`` parameters and ``cudaGetLastError``
    checks around the graph calls go with it. A file that mostly holds other CUDA code beside a
    few cuDNN calls (a backend switch, a kernel path) keeps its GP300: those renames are work."""
    heads: dict[str, tuple[Finding, int]] = {}
    for finding in findings:
        if finding.rule_id == CUDNN_RULE:
            m = _CUDNN_GRAPH_RE.search(finding.message)
            if m is not None:
                heads[finding.location.path] = (finding, int(m.group(1) or 1))
    if not heads:
        return findings
    kept: list[Finding] = []
    folded: dict[str, Finding] = {}
    for finding in findings:
        head, graph_calls = heads.get(finding.location.path, (None, 0))
        renames = _RENAMES_RE.match(finding.message) if finding.rule_id == "GP300" else None
        if (
            head is not None
            and renames is not None
            and finding.tier is head.tier
            and int(renames.group(1)) < graph_calls
            and set(_RENAME_FAMILY_RE.findall(renames.group(2))) <= _INCIDENTAL_FAMILIES
        ):
            folded[finding.location.path] = finding
        else:
            kept.append(finding)
    for path, rename in folded.items():
        head = heads[path][0]
        note = (
            f"; the file is cuDNN-graph code, so its {rename.message.split(' ', 1)[0]} renamed "
            f"CUDA name(s) (GP300, line {rename.location.line}) go with its rewrite and are set "
            "aside"
        )
        kept[kept.index(head)] = replace(head, message=head.message + note)
        set_aside.append(rename)
    return kept


# GP201 (an import of a package with ROCm limits) and the message it writes: "imports tilelang:
# tilelang works on ROCm only in part" (scan/python/rules/imports.py).
IMPORT_RULE = "GP201"
_IMPORTED_RE = re.compile(r"imports ([\w.]+):")
# A dependency finding's message starts with the requirement as written ("tilelang==0.1.8
# supports ROCm only in part", "xformers from PyPI is a CUDA build").
_REQUIREMENT_RE = re.compile(r"([A-Za-z0-9][A-Za-z0-9._-]*)")


def _installs_a_rocm_build(package: kb.Package | None) -> bool:
    """Whether the package's ROCm use is settled by installing its ROCm build (another wheel,
    index or source build) rather than by changing the code that imports it."""
    return package is not None and (
        package.status is kb.PackageStatus.NEEDS_ROCM_BUILD
        or (
            package.status is kb.PackageStatus.PARTIAL
            and bool(package.rocm_package or package.rocm_index)
        )
    )


def _fold_imports_under_dependency(
    findings: list[Finding], set_aside: list[Finding]
) -> list[Finding]:
    """``findings`` with GP201 imports folded where one decision settles them (the originals
    appended to ``set_aside``):

    - each import of a package whose ROCm build must be installed, under the product
      dependency finding (GP1xx) that already names the package (mamba's ``tilelang==0.1.8`` in
      pyproject.toml, imported by four kernel files): installing the ROCm build is one decision,
      taken at the dependency, not once per importing file;
    - each guarded product import (``try: import cudnn``) of a package with no ROCm build, under
      the dependency finding naming it (TransformerEngine's ``nvidia-cudnn-frontend``): the code
      already runs without it, so on ROCm the one decision is whether to replace it; the line
      lists where the imports are. An unguarded import of such a package breaks its module on
      ROCm and stays listed;
    - imports of a package whose ROCm build must be installed that no dependency finding names
      (a sibling package the project's README installs, like pytorch_sparse's torch_scatter),
      in two or more files of one tier, under the first of them.
    """
    heads: dict[str, list[Finding]] = defaultdict(list)
    for finding in sorted(findings, key=lambda f: f.sort_key):
        if finding.category is Category.DEPENDENCIES and finding.tier is Tier.PRODUCT:
            m = _REQUIREMENT_RE.match(finding.message)
            package = kb.find_package(m.group(1)) if m else None
            if package is not None and (
                _installs_a_rocm_build(package) or package.status is kb.PackageStatus.NOT_SUPPORTED
            ):
                heads[package.name].append(finding)
    kept: list[Finding] = []
    inside: dict[int, list[Finding]] = defaultdict(list)  # id(head) -> its imports
    loose: dict[tuple[str, Tier], list[Finding]] = defaultdict(list)
    for finding in findings:
        m = _IMPORTED_RE.match(finding.message) if finding.rule_id == IMPORT_RULE else None
        package = kb.package_for_import(m.group(1)) if m else None
        if package is None:
            kept.append(finding)
        elif package.name in heads and (
            _installs_a_rocm_build(package)
            or (_GUARDED_IMPORT in finding.message and finding.tier is Tier.PRODUCT)
        ):
            inside[id(_nearest(heads[package.name], finding.location.path))].append(finding)
        elif package.name not in heads and _installs_a_rocm_build(package):
            loose[(package.name, finding.tier)].append(finding)
        else:
            kept.append(finding)
    by_id = {id(h): h for group in heads.values() for h in group}
    for key, folded in inside.items():
        head = by_id[key]
        imported = _IMPORTED_RE.match(folded[0].message)
        package = kb.package_for_import(imported.group(1)) if imported else None
        files = sorted({f.location.path for f in folded})
        first = min(folded, key=lambda f: f.sort_key).location
        if package is not None and _installs_a_rocm_build(package):
            note = (
                f" {len(folded)} import finding(s) of {package.name} in {len(files)} file(s) "
                f"set aside under this one install (first: {first})."
            )
        else:
            where = _shown_names(tuple(str(f.location) for f in sorted(folded, key=_sort)))
            note = (
                f" {len(folded)} guarded import(s) of it set aside under this one decision "
                f"(replace it, or let ROCm take the code's fallback): {where}."
            )
        kept[kept.index(head)] = replace(head, message=head.message.rstrip() + note)
        set_aside.extend(folded)
    for (name, _tier), group in loose.items():
        group.sort(key=_sort)
        files = sorted({f.location.path for f in group})
        if len(files) < _MIN_FILES_TO_FOLD:
            kept.extend(group)
            continue
        head, rest = group[0], group[1:]
        note = (
            f" ({len(rest)} other import(s) of {name} in {len(files) - 1} other file(s) set "
            f"aside under this one: installing its ROCm build is one decision; "
            f"{_shown_names(tuple(str(f.location) for f in rest))})"
        )
        kept.append(replace(head, message=head.message.rstrip() + note))
        set_aside.extend(rest)
    return kept


# GP201's words for an import inside try/except (scan/python/rules/imports.py).
_GUARDED_IMPORT = "(optional here:"


def _sort(finding: Finding) -> tuple[object, ...]:
    return finding.sort_key


def _nearest(heads: list[Finding], path: str) -> Finding:
    """The dependency finding whose file's folder holds ``path`` most closely (a subpackage's
    own pyproject before the root's), else the first."""

    def depth(head: Finding) -> int:
        folder = head.location.path.rpartition("/")[0]
        return len(folder) + 1 if not folder or path.startswith(folder + "/") else -1

    return max(heads, key=depth)


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
        if group is None or finding.rule_id in _PROJECT_RULES:
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


def _shown_names(names: tuple[str, ...], most: int = 4) -> str:
    shown = ", ".join(names[:most])
    return f"{shown} and {len(names) - most} more" if len(names) > most else shown


def _extras_finding(group: VendorExtras, inside: list[Finding], model: ProjectModel) -> Finding:
    alternative = (
        f"its ROCm extras ({_shown_names(group.rocm_extras)})"
        if group.rocm_extras
        else "its ROCm install path"
    )
    message = (
        f"{group.path} has {len(group.extras)} extras that install CUDA or XPU builds "
        f"({_shown_names(group.extras)}): {len(inside)} finding(s) in them set aside "
        f"({_rule_counts(inside)}); on ROCm the project installs {alternative}."
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


def _rule_counts(findings: list[Finding]) -> str:
    counts = Counter(f.rule_id for f in findings)
    return ", ".join(f"{rule_id} x{n}" for rule_id, n in sorted(counts.items()))


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
        f"{len(inside)} finding(s) in it set aside ({_rule_counts(inside)}); "
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
        f"{len(inside)} finding(s) in it set aside ({_rule_counts(inside)}); the project has "
        "no ROCm alternative to it."
    )
    fix = Fix(
        f"Leave {shown} out of the ROCm build ({how}); "
        "port it only if ROCm must run it, as new code for AMD's hardware."
    )
    return message, fix


def fold_by_folder(findings: list[Finding]) -> tuple[list[Finding], list[Finding]]:
    """(findings with each :data:`FOLD_BY_FOLDER` rule's per-folder groups folded, originals).

    Not applied by the scan: a finding per file is what ``port``, baselines, suppressions and
    the fixtures' line markers work with. Reports that summarise (``assess``) may apply it.
    """
    wanted = {fold.rule_id: fold for fold in FOLD_BY_FOLDER}
    groups: dict[tuple[str, str, Tier], list[Finding]] = defaultdict(list)
    kept: list[Finding] = []
    for finding in findings:
        if finding.rule_id in wanted and finding.location.line > 0:
            folder = finding.location.path.rpartition("/")[0]
            groups[(finding.rule_id, folder, finding.tier)].append(finding)
        else:
            kept.append(finding)
    folded: list[Finding] = []
    for (rule_id, folder, _tier), group in groups.items():
        files = sorted({f.location.path for f in group})
        if len(files) < _MIN_FILES_TO_FOLD:
            kept.extend(group)
            continue
        kept.append(_folder_finding(wanted[rule_id], folder, files, group))
        folded.extend(group)
    return kept, folded


def _folder_finding(
    fold: FolderFold, folder: str, files: list[str], group: list[Finding]
) -> Finding:
    """One finding for a folder, placed at its first finding, with the highest severity."""
    first = min(group, key=lambda f: f.sort_key)
    where = f"{folder}/" if folder else "the project root"
    message = (
        f"{len(files)} files in {where} {fold.what} ({len(group)} finding(s); first: "
        f"{first.location}): {first.message}"
    )
    loc = first.location
    return replace(
        first,
        message=message,
        location=Location(loc.path, loc.line, loc.column, loc.end_line, loc.end_column),
        severity=max(f.severity for f in group),
        confidence=min(f.confidence for f in group),
    )


# -- Hopper-or-newer features: one decision per component -------------------------------------

# GP309 (scan/kernels/ptx_rules.py) reports each use of TMA (CUtensorMap, cp.async.bulk.tensor),
# wgmma, setmaxnreg and the other Hopper-or-newer features. ROCm has none of them, so every use is
# settled by one decision, not a fix per line: compile those paths only for NVIDIA and take the
# project's portable path on ROCm (AMD's TransformerEngine fork guards its TMA code out that
# way). Its findings in two or more files of one component (or of the project, outside every
# component) are folded into one GP309 line that names the decision and lists the files.
HOPPER_FEATURE_RULE = "GP309"
# The fold line's message starts "<scope>/ uses Hopper-or-newer NVIDIA features"; the labelling
# (benchmarks/precision/score.py) reads the scope back from it.
HOPPER_FOLD_MARK = " uses Hopper-or-newer NVIDIA features"


def _fold_hopper_features(
    findings: list[Finding], model: ProjectModel, set_aside: list[Finding]
) -> list[Finding]:
    """``findings`` with each component's GP309 findings (two or more files) replaced by one
    GP309 line naming the decision; the originals are appended to ``set_aside``."""
    groups: dict[tuple[str, Tier], list[Finding]] = defaultdict(list)
    kept: list[Finding] = []
    for finding in findings:
        if finding.rule_id == HOPPER_FEATURE_RULE and finding.location.line > 0:
            component = model.component_of(finding.location.path)
            scope = component.path.rstrip("/") if component is not None else ""
            groups[(scope, finding.tier)].append(finding)
        else:
            kept.append(finding)
    for (scope, _tier), group in groups.items():
        files = Counter(f.location.path for f in group)
        if len(files) < _MIN_FILES_TO_FOLD:
            kept.extend(group)
            continue
        kept.append(_hopper_fold_finding(scope, files, group))
        set_aside.extend(group)
    return kept


def gathered_by_hopper_lines(
    findings: Iterable[Finding], set_aside: Iterable[Finding], model: ProjectModel | None
) -> list[Finding]:
    """The GP309 findings that ``_fold_hopper_features`` set aside under a GP309 line: not those
    of a component the ROCm build leaves out, nor of a file a GP330 line already stands for.

    The line folds how the work is shown, not the work: each of those files still has to take
    the non-TMA path, so the verdict counts them one by one (assess/verdict.py).
    """
    blackwell = {f.location.path for f in findings if f.rule_id == BLACKWELL_FILE_RULE}

    def left_out(path: str) -> bool:
        component = model.component_of(path) if model is not None else None
        return component is not None and component.status is ComponentStatus.NVIDIA_ONLY

    return [
        f
        for f in set_aside
        if f.rule_id == HOPPER_FEATURE_RULE
        and f.location.line > 0
        and f.location.path not in blackwell
        and not left_out(f.location.path)
    ]


def _common_folder(paths: Iterable[str]) -> str:
    """The deepest folder holding every path ("" for the project root)."""
    parts = [p.split("/")[:-1] for p in paths]
    common: list[str] = []
    for names in zip(*parts, strict=False):
        if any(n != names[0] for n in names):
            break
        common.append(names[0])
    return "/".join(common)


# A feature's many names, one family each (CUtensorMapSwizzle, cp_async_bulk_wait_group ...).
_FEATURE_FAMILIES = (
    "CUtensorMap",
    "cuTensorMap",
    "cp_async_bulk",
    "cp.async.bulk",
    "inline PTX",
    "cuda::ptx::",
)


def _feature_family(message: str) -> str:
    """ "CUtensorMapSwizzle: a Hopper-or-newer feature ..." -> CUtensorMap."""
    family = next((f for f in _FEATURE_FAMILIES if message.startswith(f)), None)
    return family.rstrip(":") if family else message.partition(":")[0]


def _hopper_fold_finding(scope: str, files: Counter[str], group: list[Finding]) -> Finding:
    """One GP309 line for a component's Hopper-or-newer uses, placed at its first finding."""
    first = min(group, key=lambda f: f.sort_key)
    folder = scope if scope else _common_folder(files)
    where = f"{folder}/" if folder else "the project"
    cut = len(folder) + 1 if folder else 0
    listed = ", ".join(f"{path[cut:]} ({n})" for path, n in sorted(files.items()))
    features = sorted({_feature_family(f.message) for f in group})
    message = (
        f"{where}{HOPPER_FOLD_MARK} that ROCm does not have ({_shown_names(tuple(features))}) "
        f"in {len(files)} files, {len(group)} finding(s) set aside: {listed}. One decision for a "
        "port: build these paths only for NVIDIA and take the non-TMA (portable) path on ROCm."
    )
    fix = Fix(
        "Compile the Hopper-or-newer code only for NVIDIA (`#ifndef __HIP_PLATFORM_AMD__`, or the "
        "project's own guard) and make its dispatch take the portable path on ROCm; write an AMD "
        "kernel (composable_kernel, hipBLASLt) only where the project has no such path.",
        mechanical=False,
    )
    return replace(
        first,
        message=message,
        fix=fix,
        excerpt=None,  # the line names a component, not the source line it is placed on
        severity=max(f.severity for f in group),
        confidence=min(f.confidence for f in group),
    )


# -- the header of a cuDNN-graph file's entry points ---------------------------------------------

# GP314's message for a header that names cuDNN only as the handle type of its declarations:
# "cuDNN in this file: 2 references (cudnnHandle_t x2)", maybe "and #include <cudnn.h>".
_HANDLE_ONLY_RE = re.compile(
    r"^cuDNN in this file: \d+ references? \(cudnnHandle_t(?: x\d+)?\)"
    r"(?: and #include <cudnn\.h>)?;"
)
_SOURCE_SUFFIXES = (".cu", ".cpp", ".cc", ".cxx")
_HEADER_SUFFIXES = (".h", ".cuh", ".hpp", ".hh")


def _fold_cudnn_entry_headers(findings: list[Finding], set_aside: list[Finding]) -> list[Finding]:
    """``findings`` with the GP314 line of a header that only declares a cuDNN-graph file's
    entry points set aside under that file's GP314 line (appended to ``set_aside``).

    The header (``fused_attn.h`` beside ``fused_attn.cu``, same folder and stem) names cuDNN
    only as the ``cudnnHandle_t`` parameter of those declarations (and includes <cudnn.h> for
    it); the source file is cuDNN-graph code (it calls ``cudnn_frontend``). Replacing that
    backend rewrites the declarations with it: one decision, counted on the source's line. A
    header with other cuDNN names (descriptors, status checks, the frontend) keeps its line."""
    graph: dict[str, Finding] = {}
    for finding in findings:
        path = finding.location.path
        if (
            finding.rule_id == CUDNN_RULE
            and path.endswith(_SOURCE_SUFFIXES)
            and _CUDNN_GRAPH_RE.search(finding.message)
        ):
            graph[path.rsplit(".", 1)[0]] = finding
    if not graph:
        return findings
    kept: list[Finding] = []
    folded: dict[str, Finding] = {}  # stem -> the header's line
    for finding in findings:
        path = finding.location.path
        head = graph.get(path.rsplit(".", 1)[0]) if path.endswith(_HEADER_SUFFIXES) else None
        if (
            head is not None
            and finding.rule_id == CUDNN_RULE
            and finding.tier is head.tier
            and _HANDLE_ONLY_RE.match(finding.message)
        ):
            folded[path.rsplit(".", 1)[0]] = finding
        else:
            kept.append(finding)
    for stem, header in folded.items():
        head = graph[stem]
        note = (
            f"; {header.location.path.rsplit('/', 1)[-1]} only declares this file's entry points "
            f"with a cudnnHandle_t (GP314, line {header.location.line}): it goes with the rewrite "
            "and is set aside"
        )
        kept[kept.index(head)] = replace(head, message=head.message + note)
        set_aside.append(header)
    return kept


# -- CUDA:: targets of one CMake file with one ROCm counterpart ----------------------------------

# GP505 (scan/build/cmake.py) writes "CUDA::cudart is a CUDA toolkit target; ROCm's counterpart
# is HIP runtime (driver and runtime APIs in one library, amdhip64)", maybe ending "(and 1 more
# on this line)".
CUDA_TARGET_RULE = "GP505"
_TARGET_RE = re.compile(
    r"^(CUDA::\w+) is a CUDA toolkit target; ROCm's counterpart is (.+?)"
    r"(?: \(and \d+ more on this line\))?$"
)


def _fold_same_counterpart_targets(
    findings: list[Finding], set_aside: list[Finding]
) -> list[Finding]:
    """``findings`` with the GP505 lines of one build file whose CUDA targets have the same ROCm
    counterpart (``CUDA::cudart`` and ``CUDA::cuda_driver``: both the HIP runtime) set aside
    under the first of them, counted there (appended to ``set_aside``).

    A port links that counterpart once for the file (``hip::host``), and the link lines follow;
    a target with another counterpart (``CUDA::cublas``: hipBLAS) keeps its own line."""
    groups: dict[tuple[str, str, Tier], list[tuple[Finding, str]]] = defaultdict(list)
    for finding in findings:
        if finding.rule_id == CUDA_TARGET_RULE:
            m = _TARGET_RE.match(finding.message)
            if m is not None:
                key = (finding.location.path, m.group(2), finding.tier)
                groups[key].append((finding, m.group(1)))
    folded: dict[int, list[tuple[Finding, str]]] = {}  # id(head) -> the lines under it
    gone: set[int] = set()
    for group in groups.values():
        if len(group) < _MIN_FILES_TO_FOLD:
            continue
        group.sort(key=lambda pair: pair[0].sort_key)
        folded[id(group[0][0])] = group[1:]
        gone.update(id(f) for f, _ in group[1:])
    if not folded:
        return findings
    kept: list[Finding] = []
    for finding in findings:
        if id(finding) in gone:
            set_aside.append(finding)
            continue
        under = folded.get(id(finding))
        if under is not None:
            listed = ", ".join(f"{target} line {f.location.line}" for f, target in under)
            note = (
                f"; {len(under)} more link(s) in this file with the same ROCm counterpart set "
                f"aside ({listed}): one decision, the same ROCm target replaces each"
            )
            finding = replace(finding, message=finding.message + note)
        kept.append(finding)
    return kept


# -- a CUTLASS source and its header, one backend -------------------------------------------------

CUTLASS_RULE = "GP312"
# GP312 writes "CUTLASS/CuTe in this file: 42 references (cutlass::gemm x8, …) and #include …".
_REFERENCES_RE = re.compile(r" in this file: (\d+) references?")


def _references(finding: Finding) -> int:
    m = _REFERENCES_RE.search(finding.message)
    return int(m.group(1)) if m else 0


def _fold_cutlass_header_pairs(findings: list[Finding], set_aside: list[Finding]) -> list[Finding]:
    """``findings`` with the two GP312 lines of a CUTLASS source file and its header (same
    folder and stem: ``grouped_gemm.cu`` and ``grouped_gemm.cuh``) made one: the line of the
    file with more CUTLASS references stays and counts the other (appended to ``set_aside``).

    The header holds the kernels and the source instantiates them: one CUTLASS backend, which
    a port replaces (hipBLASLt, composable_kernel) or leaves out as a whole."""
    by_stem: dict[tuple[str, Tier], list[Finding]] = defaultdict(list)
    for finding in findings:
        path = finding.location.path
        if finding.rule_id == CUTLASS_RULE and path.endswith(_SOURCE_SUFFIXES + _HEADER_SUFFIXES):
            by_stem[(path.rsplit(".", 1)[0], finding.tier)].append(finding)
    pairs: dict[int, Finding] = {}  # id(the line that stays) -> the line set aside
    for group in by_stem.values():
        sources = [f for f in group if f.location.path.endswith(_SOURCE_SUFFIXES)]
        headers = [f for f in group if f.location.path.endswith(_HEADER_SUFFIXES)]
        if len(sources) != 1 or len(headers) != 1:
            continue
        stays, goes = sorted(
            (sources[0], headers[0]), key=lambda f: (-_references(f), f.location.path)
        )
        pairs[id(stays)] = goes
    if not pairs:
        return findings
    gone = {id(f) for f in pairs.values()}
    kept: list[Finding] = []
    for finding in findings:
        if id(finding) in gone:
            set_aside.append(finding)
            continue
        other = pairs.get(id(finding))
        if other is not None:
            note = (
                f"; {other.location.path.rsplit('/', 1)[-1]} (GP312, line "
                f"{other.location.line}) is the other half of this CUTLASS code and is set aside: "
                "one backend to replace"
            )
            finding = replace(finding, message=finding.message + note)
        kept.append(finding)
    return kept


UNREACHED_HELPERS = rule(
    id="GP603",
    slug="unreached-device-helpers",
    category=Category.PROJECT,
    severity=Severity.INFO,
    confidence=Confidence.MEDIUM,
    summary="Device helpers that no code a ROCm build compiles calls",
    what="Folds the kernel findings inside a file's `__device__` helpers whose every call in the "
    "project sits where HIP never compiles it (an `#if __CUDA_ARCH__ >= 1000` or `CUDA_VERSION` "
    "branch, the CUDA arm of an `#ifdef USE_ROCM`, a file GP330 calls Blackwell-only, an "
    "NVIDIA-only component, or another such helper), or that nothing in the project calls, into "
    "one line per file naming the helpers and why. Only what HIP never compiles is folded: every "
    "finding of a template helper (HIP instantiates it only from a call); in a helper that is "
    "not a template, the findings that show only when it runs (lane math, kept 32-bit masks, "
    "`__CUDA_ARCH__` trap fallbacks) and, when it is inline or static, its inline PTX (clang "
    "neither emits such a function nor checks its asm when nothing calls it). Its 32-bit "
    "`__shfl_sync` masks, wmma or FP8 types stay reported: HIP's headers reject them as soon as "
    "the body is parsed. A helper that host code may call (`__host__ __device__`), one named "
    "anywhere HIP compiles, and an uncalled one in a header that no scanned file includes or in a "
    "public `include/` folder (code the scan never read may call it) stay reported.",
    why="A helper only a CUDA-only branch calls is ported, or dropped, with that branch: its "
    "findings are that branch's decision, not work of their own.",
    example="template <int P> __device__ void wait_phase(uint64_t* bar) { asm volatile(...); }\n"
    "__global__ void k(uint64_t* bar) {\n#if __CUDA_ARCH__ >= 1000\n  wait_phase<0>(bar);\n"
    "#endif\n}",
    instead="Port or drop the `#if __CUDA_ARCH__ >= 1000` branch; the helper goes with it.",
    fix="Nothing to port in these helpers on their own: decide their callers' CUDA-only branch "
    "(or, for a helper nothing calls, delete it or leave it unused).",
    mechanical=False,
)

# Kernel rules whose problem shows only when the code runs (lane math, 32-bit masks kept,
# `__CUDA_ARCH__` fallbacks, sleeps): moot in a helper HIP never calls. The others (a 32-bit
# mask HIP's `__shfl_sync` rejects with a static_assert, wmma, FP8 types, warpSize as a
# constant, CUTLASS) fail when HIP parses the body, which it does for a non-template function
# whether or not anything calls it; only a template's body waits for a call to instantiate it.
_RUN_TIME_KERNEL_RULES = frozenset(
    {"GP302", "GP304", "GP305", "GP307", "GP308", "GP319", "GP320", "GP324", "GP327", "GP328"}
    | {"GP329"}
)
# Inline PTX: clang defers a device function's asm diagnostics until it emits the function,
# and it emits an inline or static one only when something calls it (clang's "deferred
# diagnostics" for CUDA/HIP, clang/lib/Sema/SemaStmtAsm.cpp's targetDiag).
_EMITTED_RULES = frozenset({"GP301"})
_PUBLIC_HEADERS_RE = re.compile(r"(?:^|/)include/")
_TRANSLATION_UNIT_RE = re.compile(r"\.(?:cu|cpp|cc|cxx|c)$")
_MOST_NAMED = 4


def _set_aside_unreached_helpers(
    findings: list[Finding], model: ProjectModel, calls: list[CallFacts], set_aside: list[Finding]
) -> list[Finding]:
    """``findings`` less the kernel findings inside a project ``__device__`` helper that no code
    HIP compiles calls (appended to ``set_aside``), counted on one GP603 line per file that
    names the helpers and why (scan/kernels/callers.py gives the call index). A helper's
    findings go only where HIP never compiles them (``_folded_in``): all of a template's; of
    another helper those of ``_RUN_TIME_KERNEL_RULES``, and its inline PTX when it is inline
    or static. Kept: a ``__host__ __device__`` helper (host files the index never reads may
    call it), a helper named anywhere HIP compiles, and an uncalled helper whose callers the
    scan may not have read (``_callers_all_read``). A CUDA file the scan skipped (too large)
    is not read for calls."""
    if not calls:
        return findings
    blackwell = {f.location.path for f in set_aside if f.rule_id == BLACKWELL_FILE_RULE} | {
        f.location.path for f in findings if f.rule_id == BLACKWELL_FILE_RULE
    }

    def unreached_file(rel: str) -> str:
        """Why HIP never compiles ``rel`` ("" when it does)."""
        if rel in blackwell:
            return "Blackwell-only "
        component = model.component_of(rel)
        if component is not None and component.status is ComponentStatus.NVIDIA_ONLY:
            return "NVIDIA-only "
        return ""

    live: set[str] = set()
    defined: dict[str, list[tuple[str, DeviceHelper]]] = defaultdict(list)
    for fact in calls:
        if not unreached_file(fact.rel):
            live |= fact.live
        for helper in fact.helpers:
            defined[helper.name].append((fact.rel, helper))
    reached = set(live)  # a call in a helper HIP compiles is a compiled call
    frontier = [name for name in defined if name in reached]
    while frontier:
        for rel, helper in defined[frontier.pop()]:
            if not unreached_file(rel):
                new = helper.calls - reached
                reached |= new
                frontier.extend(n for n in new if n in defined)
    unreached = {
        (rel, helper)
        for name, defs in defined.items()
        if name not in reached
        for rel, helper in defs
        if not helper.host
    }
    if not unreached:
        return findings
    spans: dict[str, list[tuple[str, DeviceHelper]]] = defaultdict(list)
    for rel, helper in unreached:
        spans[rel].append((rel, helper))
    kept: list[Finding] = []
    inside: dict[tuple[str, DeviceHelper], list[Finding]] = defaultdict(list)
    for finding in findings:
        loc = finding.location
        home = next(
            (
                (rel, helper)
                for rel, helper in spans.get(loc.path, ())
                if helper.first <= loc.line <= helper.last
            ),
            None,
        )
        if (
            home is not None
            and finding.rule_id.startswith("GP3")
            and finding.rule_id != BLACKWELL_FILE_RULE
            and _folded_in(home[1], finding.rule_id)
        ):
            inside[home].append(finding)
        else:
            kept.append(finding)
    if not inside:
        return findings
    why = _HelperCallers(calls, unreached_file, {h.name for _r, h in unreached})
    by_file: dict[str, list[tuple[DeviceHelper, list[Finding]]]] = defaultdict(list)
    included = {name for fact in calls for name in fact.included}
    for (rel, helper), folded in inside.items():
        if not why.called(helper.name) and not _callers_all_read(rel, included):
            kept.extend(folded)  # its callers may be code the scan never read
        else:
            by_file[rel].append((helper, folded))
    for rel, group in by_file.items():
        group.sort(key=lambda item: item[0].first)
        folded = [f for _h, fs in group for f in fs]
        set_aside.extend(folded)
        kept.append(_unreached_helpers_finding(rel, group, folded, why))
    return kept


def _callers_all_read(rel: str, included: set[str]) -> bool:
    """Whether the scan read every place that may call a helper of ``rel`` with none found: a
    source file (its own translation unit), or a header that project files include and that
    is no public ``include/`` API. A header nothing includes (a snippet, a library's API) may
    be called by code the scan never saw."""
    if _TRANSLATION_UNIT_RE.search(rel):
        return True
    return rel.rsplit("/", 1)[-1] in included and not _PUBLIC_HEADERS_RE.search(rel)


def _folded_in(helper: DeviceHelper, rule_id: str) -> bool:
    """Whether HIP never compiles ``rule_id``'s problem in ``helper`` when nothing calls it."""
    return (
        helper.template
        or rule_id in _RUN_TIME_KERNEL_RULES
        or (helper.inline and rule_id in _EMITTED_RULES)
    )


class _HelperCallers:
    """Where the project names each unreached helper, to say why HIP never calls it."""

    def __init__(
        self, calls: list[CallFacts], unreached_file: Callable[[str], str], names: set[str]
    ) -> None:
        self._where: dict[str, list[str]] = defaultdict(list)
        for fact in calls:
            kind = unreached_file(fact.rel)
            base = fact.rel.rsplit("/", 1)[-1]
            seen = (fact.dead if not kind else fact.dead | fact.live) & names
            for name in seen:
                place = f"{kind}{base}" if kind else f"CUDA-only branches of {base}"
                self._where[name].append(place)
            for helper in fact.helpers:
                for name in (helper.calls & names) - {helper.name}:
                    self._where[name].append(f"{helper.name}()")

    def called(self, name: str) -> bool:
        return bool(self._where.get(name))

    def reason(self, name: str) -> str:
        where = sorted(set(self._where.get(name, ())))
        if not where:
            return f"{name} (never called)"
        shown = ", ".join(where[:2]) + (f" and {len(where) - 2} more" if len(where) > 2 else "")
        return f"{name} (only called from {shown})"


def _unreached_helpers_finding(
    rel: str,
    group: list[tuple[DeviceHelper, list[Finding]]],
    folded: list[Finding],
    why: _HelperCallers,
) -> Finding:
    names = list(dict.fromkeys(h.name for h, _fs in group))
    shown = "; ".join(why.reason(n) for n in names[:_MOST_NAMED])
    more = f"; and {len(names) - _MOST_NAMED} more" if len(names) > _MOST_NAMED else ""
    message = (
        f"{len(folded)} finding(s) in device helpers no code a ROCm build compiles calls, set "
        f"aside ({_rule_counts(folded)}): {shown}{more}"
    )
    finding = UNREACHED_HELPERS.finding(rel, group[0][0].first, message=message)
    return replace(finding, tier=folded[0].tier)
