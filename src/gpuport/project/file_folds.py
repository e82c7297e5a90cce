"""The triage's folds of one file, one folder or one package's imports (project/triage.py).

Each takes the findings still listed and sets aside (into ``set_aside``) those one decision
settles, counting them on the line that stays: every other finding of a file GP330 calls a
Blackwell-only kernel; the findings of a folder named for NVFP4; the GP300 renames of a
cuDNN-graph file (GP314) and the GP314 line of the header that only declares its entry points;
the GP505 lines of one build file with the same ROCm counterpart; a CUTLASS source and its
header (GP312); GP201 imports under the dependency line that names the package; and the
Hopper-or-newer features (GP309) of a component, with :func:`gathered_by_hopper_lines` for the
verdict. :func:`fold_by_folder` (not applied by the scan) folds the rules of
:data:`FOLD_BY_FOLDER` into one finding per folder, for reports that summarise. Also the small
helpers the other triage modules share (:func:`rule_counts`, :func:`shown_names`,
:data:`PROJECT_RULES`).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, replace

from gpuport import kb
from gpuport.findings import Category, Finding, Fix, Location, Tier
from gpuport.project.model import ComponentStatus, ProjectModel
from gpuport.rules import find_rule


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
PROJECT_RULES = frozenset({"GP601", "GP602", "GP603"})  # the folds' own lines are never folded
# …except a file's GP603 line under its GP330 line: both say the same file is one decision.
_KEPT_BESIDE_GP330 = PROJECT_RULES - {"GP603"}


def shown_names(names: tuple[str, ...], most: int = 4) -> str:
    shown = ", ".join(names[:most])
    return f"{shown} and {len(names) - most} more" if len(names) > most else shown


def rule_counts(findings: list[Finding]) -> str:
    counts = Counter(f.rule_id for f in findings)
    return ", ".join(f"{rule_id} x{n}" for rule_id, n in sorted(counts.items()))


def fold_blackwell_files(findings: list[Finding], set_aside: list[Finding]) -> list[Finding]:
    """``findings`` with every other finding of a file GP330 calls a Blackwell-only kernel set
    aside under GP330's one line (appended to ``set_aside``): the file is one decision. Its
    GP603 line (helpers only its guarded kernels call) is one of them, counted there too."""
    heads = {f.location.path: f for f in findings if f.rule_id == BLACKWELL_FILE_RULE}
    if not heads:
        return findings
    kept: list[Finding] = []
    inside: dict[str, list[Finding]] = defaultdict(list)
    for finding in findings:
        head = heads.get(finding.location.path)
        if head is None or finding is head or finding.rule_id in _KEPT_BESIDE_GP330:
            kept.append(finding)
        else:
            inside[finding.location.path].append(finding)
    for path, folded in inside.items():
        head = heads[path]
        note = f"; {len(folded)} other finding(s) in this file set aside ({rule_counts(folded)})"
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


def fold_nvfp4_folders(findings: list[Finding], set_aside: list[Finding]) -> list[Finding]:
    """``findings`` with the findings of each folder named for NVFP4 (two or more, per tier)
    set aside under the folder's first one, whose message counts them (appended to
    ``set_aside``): keeping NVFP4 on ROCm, or leaving it out, is one decision for the folder,
    not one per PTX conversion, CuTe DSL import or capability check in it."""
    groups: dict[tuple[str, Tier], list[Finding]] = defaultdict(list)
    for finding in findings:
        folder = _nvfp4_folder(finding.location.path)
        if folder is not None and finding.rule_id not in PROJECT_RULES:
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
                f"; {len(rest)} other finding(s) in {folder}/ set aside ({rule_counts(rest)}): "
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


# GP300's message in a file that includes torch's headers, read per file as hipified by torch
# (scan/kernels/renames.py): "N CUDA API references in a PyTorch extension, which torch's own
# hipify renames when torch.utils.cpp_extension builds it for ROCm: runtime 8 (…)".
_TORCH_HIPIFIED_RE = re.compile(
    r"^(\d+ CUDA API references?) in a PyTorch extension, which torch's own hipify renames "
    r"when torch\.utils\.cpp_extension builds it for ROCm: (.*)$"
)


def not_hipified_by_torch(finding: Finding, model: ProjectModel) -> Finding:
    """``finding`` as GP300's plain rename finding (its own severity and fix) when it was read
    as hipified by torch but the project builds its torch extensions only as ``CppExtension``
    (:attr:`ProjectModel.torch_cpp_only`): torch hipifies CUDAExtension and load() builds only,
    so the renames are work. Any other finding is returned as it is; so is every finding of a
    project with no torch extension build found (the per-file guess stands)."""
    if finding.rule_id != "GP300" or not model.torch_cpp_only:
        return finding
    m = _TORCH_HIPIFIED_RE.match(finding.message)
    rule = find_rule("GP300")
    if m is None or rule is None:
        return finding
    where = model.torch_cpp_only[0]
    message = (
        f"{m.group(1)} that gpuport port renames to HIP: {m.group(2)}: the project builds this "
        f"PyTorch extension as a CppExtension ({where.path}:{where.line}), which torch does not "
        "hipify"
    )
    return replace(
        finding,
        message=message,
        severity=rule.severity,
        fix=Fix(rule.fix, mechanical=rule.mechanical),
    )


def fold_cudnn_graph_files(findings: list[Finding], set_aside: list[Finding]) -> list[Finding]:
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


def fold_imports_under_dependency(
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
            where = shown_names(tuple(str(f.location) for f in sorted(folded, key=_sort)))
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
            f"{shown_names(tuple(str(f.location) for f in rest))})"
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


def fold_hopper_features(
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
    """The GP309 findings that ``fold_hopper_features`` set aside under a GP309 line: not those
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
        f"{where}{HOPPER_FOLD_MARK} that ROCm does not have ({shown_names(tuple(features))}) "
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


def fold_cudnn_entry_headers(findings: list[Finding], set_aside: list[Finding]) -> list[Finding]:
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


def fold_same_counterpart_targets(
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


def fold_cutlass_header_pairs(findings: list[Finding], set_aside: list[Finding]) -> list[Finding]:
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
