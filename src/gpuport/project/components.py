"""NVIDIA-only components: what a project's CUDA build compiles and its ROCm build leaves out.

Read from ``setup.py`` files with :mod:`ast` (never run): each ``if`` on a ROCm switch
(``IS_ROCM``, ``torch.version.hip``, ``BUILD_TARGET == "rocm"``…) splits the file into a CUDA
branch and a ROCm branch; a folder whose sources only the CUDA branch names is NVIDIA-only, and
the ROCm branch's folders are its alternative. A sub-package whose own pyproject depends on
NVIDIA-only packages (``nvidia-cutlass-dsl``) is NVIDIA-only too. Conservative: a folder either
branch's paths overlap, the root, or a folder that does not exist is never a component.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath

from gpuport.files import resolve_include
from gpuport.project.cmake_components import cmake_nvidia_only, separate_cuda_cmake
from gpuport.project.dockerfiles import dockerfile_components
from gpuport.project.model import Component, ComponentStatus, Evidence
from gpuport.project.op_builders import op_builder_components
from gpuport.project.rocm import SETUP_ROCM_RE
from gpuport.project.survey import Survey
from gpuport.project.texts import SOURCE_BUDGET, SOURCE_BYTES, ProjectTexts, python_tree, tree_nodes
from gpuport.project.tiers import tier_by_name
from gpuport.project.twins import twin_components

_SOURCE_SUFFIXES = (".cu", ".cuh", ".cpp", ".cc", ".c", ".cxx", ".h", ".hpp", ".hip")
# Strings compared with a build target: "rocm"/"hip" select the ROCm build, "cuda" the other.
_ROCM_WORDS = frozenset({"rocm", "hip", "amd"})
_CUDA_WORDS = frozenset({"cuda", "nvidia"})
# Packages with no ROCm build at all: a sub-package depending on one is CUDA-only.
_NVIDIA_ONLY_PACKAGE_RE = re.compile(r"^(?:nvidia-|cuda-python$|cupy-cuda|tensorrt)")
# A name or call an ``if`` tests that is a ROCm switch: any name with "rocm" in it
# (USE_TRITON_ROCM, ROCM_HOME, is_rocm_pytorch()), torch.version.hip, IS_HIP_EXTENSION, HIP_BUILD.
_ROCM_SWITCH_RE = re.compile(r"rocm|version\.hip\b|\bIS_HIP\w*|\bHIP_BUILD\b|\bBUILD_HIP\b", re.I)
_CUDA_SWITCH_RE = re.compile(r"(?:torch\.)?version\.cuda")
# Any mention of ROCm or HIP in a file ("hipcc", "torch.version.hip", "USE_ROCM"), not "ship".
_ROCM_MENTION_RE = re.compile(r"rocm|(?<![a-z])hip", re.IGNORECASE)
# An nvcc target in a flag: "arch=compute_90a,code=sm_90a", "-arch=sm_100".
_ARCH_RE = re.compile(r"(?:compute|sm)_(\d{2,3})[a-z]?\b")
_NEWER_GPU_ARCH = 90  # Hopper: thread-block clusters, TMA, wgmma
# A string that is the nvcc executable's path (cuda_dir + "/bin/nvcc"); a bare "nvcc" is also
# the key of extra_compile_args, so it does not count.
_NVCC_PATH_RE = re.compile(r"/nvcc(?:\.exe)?$")


@dataclass(slots=True)
class _Branches:
    """The folders one setup.py's CUDA and ROCm branches name, with the first line naming each."""

    cuda: dict[str, int] = field(default_factory=dict)
    rocm: dict[str, int] = field(default_factory=dict)
    has_rocm_switch: bool = False


def nvidia_only_components(
    root: Path, texts: ProjectTexts, found: Survey, backends: list[str]
) -> tuple[list[Component], list[str]]:
    """The NVIDIA-only components of a project that has a ROCm path, and notes on what was not
    classified. ``backends`` are the project's ROCm backend folders (an alternative to name)."""
    components: list[Component] = []
    notes: list[str] = []
    rocm_built: list[str] = []  # folders some setup.py's ROCm branch compiles
    nvcc_only: list[tuple[str, str]] = []  # (setup.py, its text) with no ROCm switch of its own
    for rel in found.setup_pys:
        text = texts.text(rel)
        if text is None:
            continue
        base = rel.rsplit("/", 1)[0] if "/" in rel else ""
        try:
            branches = _setup_branches(text, base)
        except RecursionError:  # an expression nested too deeply to walk
            branches = None
        if branches is None:
            notes.append(f"{rel} does not parse; its components are not classified")
            continue
        rocm_built.extend(branches.rocm)
        if not branches.has_rocm_switch:
            if "/" in rel and rel.endswith(".py"):
                nvcc_only.append((rel, text))
            continue
        if not branches.cuda and not branches.rocm:
            notes.append(
                f"{rel} branches on ROCm but names no source folder inside either branch (both "
                "builds share their sources, or compute them); no component is classified"
            )
            continue
        rocm_dirs = sorted(d for d in branches.rocm if _is_dir(root, d))
        alternative = ", ".join(rocm_dirs or backends) or "the project's ROCm build"
        for folder in _cuda_only(root, branches):
            line = branches.cuda[folder]
            why = f"{_name(rel)} compiles {folder}/ only in its CUDA branch"
            components.append(
                Component(
                    folder,
                    ComponentStatus.NVIDIA_ONLY,
                    (Evidence(rel, line, why),),
                    alternative,
                )
            )
    alternative = ", ".join(backends) or "the project's ROCm build"
    # by_source=False: here the build's own evidence decides what the ROCm build leaves out
    for newer in newer_gpu_only_components(root, texts, found, alternative, by_source=False):
        if not any(_overlaps(newer.path, r) for r in rocm_built):
            components.append(newer)
    for rel, text in nvcc_only:
        component = _nvcc_only_package(root, rel, text, rocm_built, backends)
        if component is not None:
            components.append(component)
    components.extend(
        op_builder_components(
            root, texts, found.build_helpers, found.packages, tuple(found.setup_pys)
        )
    )
    for rel in found.cmake_files:
        if rel.lower().endswith("cmakelists.txt"):
            components.extend(cmake_nvidia_only(root, texts, rel, ", ".join(backends)))
    helpers = [rel for rel in found.build_helpers if rel.endswith(".py")]
    python_builds = [*found.setup_pys, *found.pyprojects, *helpers]
    components.extend(
        separate_cuda_cmake(root, texts, python_builds, lambda rel: _rocm_switch_line(texts, rel))
    )
    for rel in found.pyprojects:
        if "/" not in rel:
            continue
        component = _nvidia_only_package(texts, rel, backends)
        if component is not None:
            components.append(component)
    components.extend(dockerfile_components(texts, found.dockerfiles))
    components.extend(twin_components(found.vendor_twins))
    return _outermost(components), notes


def _rocm_switch_line(texts: ProjectTexts, rel: str) -> int:
    """The first line of a setup.py that tests for ROCm (``torch.version.hip``), or 0."""
    for number, line in enumerate((texts.text(rel) or "").splitlines(), start=1):
        if not line.lstrip().startswith("#") and SETUP_ROCM_RE.search(line):
            return number
    return 0


def _setup_branches(text: str, base: str) -> _Branches | None:
    tree = python_tree(text)
    if tree is None:
        return None
    out = _Branches()
    switches = _derived_switches(tree)
    paths = _path_values(tree)
    for node in tree_nodes(tree):
        if not isinstance(node, ast.If | ast.IfExp):
            continue
        polarity = _rocm_polarity(node.test, switches)
        if polarity is None:
            continue
        out.has_rocm_switch = True
        body = node.body if isinstance(node.body, list) else [node.body]
        orelse = node.orelse if isinstance(node.orelse, list) else [node.orelse]
        rocm, cuda = (body, orelse) if polarity else (orelse, body)
        _collect(rocm, base, out.rocm, paths)
        _collect(cuda, base, out.cuda, paths)
    return out


def _derived_switches(tree: ast.Module) -> dict[str, bool]:
    """Names a ROCm branch sets to a constant: hopper/setup.py's ``if USE_TRITON_ROCM:
    SKIP_CUDA_BUILD = True`` makes ``SKIP_CUDA_BUILD`` true in the ROCm build; and names set
    from a test of the build (ao's ``use_cuda = torch.version.cuda and CUDA_HOME is not None``
    holds in the CUDA build only)."""
    switches: dict[str, bool] = {}
    for node in tree_nodes(tree):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and not _ROCM_SWITCH_RE.search(node.targets[0].id)
            and (polarity := _rocm_polarity(node.value, {})) is not None
        ):
            switches.setdefault(node.targets[0].id, polarity)
    for node in tree_nodes(tree):
        if not isinstance(node, ast.If) or _rocm_polarity(node.test, {}) is not True:
            continue
        for statement in node.body:
            if (
                isinstance(statement, ast.Assign)
                and isinstance(statement.value, ast.Constant)
                and isinstance(statement.value.value, bool)
            ):
                for target in statement.targets:
                    if isinstance(target, ast.Name):
                        switches[target.id] = statement.value.value
    return switches


def _rocm_polarity(test: ast.expr, switches: dict[str, bool]) -> bool | None:
    """True: the test holds in the ROCm build; False: in the CUDA build; None: neither says."""
    if isinstance(test, ast.Name) and test.id in switches:
        return switches[test.id]
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _rocm_polarity(test.operand, switches)
        return None if inner is None else not inner
    if isinstance(test, ast.BoolOp):
        said = {p for value in test.values if (p := _rocm_polarity(value, switches)) is not None}
        return said.pop() if len(said) == 1 else None
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        op, other = test.ops[0], test.comparators[0]
        if isinstance(other, ast.Constant) and isinstance(other.value, str):
            word = other.value.lower()
            equal = isinstance(op, ast.Eq)
            if word in _ROCM_WORDS and isinstance(op, ast.Eq | ast.NotEq):
                return equal
            if word in _CUDA_WORDS and isinstance(op, ast.Eq | ast.NotEq):
                return not equal
            return None
        left = _rocm_polarity(test.left, switches)
        if (
            left is not None
            and isinstance(other, ast.Constant)
            and other.value is None
            and isinstance(op, ast.Is | ast.IsNot)
        ):
            return left if isinstance(op, ast.IsNot) else not left
        return None
    if isinstance(test, ast.Name | ast.Attribute | ast.Call):
        text = ast.unparse(test)
        if _ROCM_SWITCH_RE.search(text):
            return True
        # torch.version.cuda is None on a ROCm torch: a test of it holds in the CUDA build
        return False if _CUDA_SWITCH_RE.fullmatch(text) else None
    return None


def _path_values(tree: ast.Module) -> dict[str, str]:
    """Names assigned a path the file builds from literals (ao's ``extensions_dir =
    os.path.join(curdir, "torchao", "csrc")``, ``cuda_sources = glob.glob(os.path.join(
    extensions_cuda_dir, "**/*.cu"))``), the first assignment of each name, in file order."""
    values: dict[str, str] = {}
    for node in tree_nodes(tree):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id not in values
        ):
            value = _path_value(node.value, values)
            if value:
                values[node.targets[0].id] = value
    return values


def _path_value(node: ast.AST, values: dict[str, str], depth: int = 0) -> str | None:
    """The path an expression builds: a literal, a known name, ``os.path.join`` of them (an
    unknown first part, like ``os.getcwd()`` or ``this_dir``, is the project root), and what
    ``glob``/``list``/``sorted`` are given."""
    if depth > 8:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return values.get(node.id)
    if not isinstance(node, ast.Call) or not node.args:
        return None
    called = ast.unparse(node.func)
    if called in ("list", "sorted", "glob", "glob.glob", "iglob", "glob.iglob"):
        return _path_value(node.args[0], values, depth + 1)
    if called not in ("os.path.join", "join", "path.join"):
        return None
    parts = [_path_value(a, values, depth + 1) for a in node.args]
    if parts[0] is None:
        parts[0] = ""  # the folder setup.py sits in
    if any(p is None for p in parts[1:]):
        return None
    return "/".join(p for p in parts if p) or None


def _collect(
    statements: list[ast.stmt] | list[ast.expr],
    base: str,
    into: dict[str, int],
    paths: dict[str, str] | None = None,
) -> None:
    """Record the folder of every source path a branch names (literal or f-string prefix,
    or a path built from literals: a name in ``paths``, an ``os.path.join``)."""
    for statement in statements:
        for node in ast.walk(statement):
            text = _literal_prefix(node)
            if text is None and paths is not None:
                # a name read (not the one assigned: `sources += cuda_sources`) or a join
                read = isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
                if read or isinstance(node, ast.Call):
                    text = _path_value(node, paths)
            if text is None:
                continue
            folder = _source_folder(text)
            if folder is None:
                continue
            joined = f"{base}/{folder}".strip("/") if folder else base
            if joined and joined not in into:
                into[joined] = getattr(node, "lineno", 0)


def _literal_prefix(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr) and node.values:
        first = node.values[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            return first.value + "*"  # the rest is computed: a pattern, like a glob
    return None


def _source_folder(text: str) -> str | None:
    """The folder of a source path or glob ("csrc/x/a.cu" -> "csrc/x"); None: not a path."""
    text = text.strip().removeprefix("./")
    if not text or "\n" in text or " " in text or text.startswith(("/", "-", "$")):
        return None
    if "*" in text:
        head = text.split("*", 1)[0]
        return head.rsplit("/", 1)[0] if "/" in head else ""
    if not text.lower().endswith(_SOURCE_SUFFIXES):
        return None
    return text.rsplit("/", 1)[0] if "/" in text else ""


def _is_dir(root: Path, rel: str) -> bool:
    parts = PurePosixPath(rel).parts
    if not parts or ".." in parts:
        return False
    path = root.joinpath(*parts)
    return path.is_dir() and not path.is_symlink()


def _overlaps(a: str, b: str) -> bool:
    return a == b or a.startswith(b + "/") or b.startswith(a + "/")


def _cuda_only(root: Path, branches: _Branches) -> list[str]:
    """The outermost CUDA-branch folders no ROCm-branch folder overlaps."""
    candidates = [
        d
        for d in branches.cuda
        if _is_dir(root, d) and not any(_overlaps(d, r) for r in branches.rocm)
    ]
    return [d for d in candidates if not any(d.startswith(o + "/") for o in candidates)]


def _nvidia_only_package(texts: ProjectTexts, rel: str, backends: list[str]) -> Component | None:
    text = texts.text(rel)
    if text is None or SETUP_ROCM_RE.search(text) or re.search(r"rocm|\bhip\b", text, re.I):
        return None
    from gpuport.syntax.pyproject import parse_pyproject  # TOML: only with a pyproject

    try:
        deps = parse_pyproject(text, rel)
    except RecursionError:  # nested too deeply for tomllib; its scanner reports it
        return None
    for requirement in deps.requirements:
        if requirement.section == "project.dependencies" and _NVIDIA_ONLY_PACKAGE_RE.match(
            requirement.key
        ):
            folder = rel.rsplit("/", 1)[0]
            why = f"its own package depends on {requirement.key}, which has no ROCm build"
            alternative = ", ".join(backends) or "the project's ROCm build"
            evidence = (Evidence(rel, requirement.line, why),)
            return Component(folder, ComponentStatus.NVIDIA_ONLY, evidence, alternative)
    return None


def newer_gpu_only_components(
    root: Path, texts: ProjectTexts, found: Survey, alternative: str, *, by_source: bool = True
) -> list[Component]:
    """Extensions a setup.py builds only for NVIDIA Hopper and newer: every ``compute_XX`` /
    ``sm_XX`` its nvcc flags name (literals, or names the file assigns them to) is 90 or more
    (apex's ``group_norm_v2_cuda``, built for sm_90/sm_100/sm_120 only, with thread-block
    clusters). Such a component is no target of a ROCm port even in a project without a ROCm
    path (``alternative`` is then empty). Its sources must all sit in one folder that no other
    extension of the file compiles. With ``by_source`` (a project with no ROCm path), also the
    folders :func:`newer_hardware_kernel_folders` finds."""
    out: list[Component] = []
    for rel in found.setup_pys:
        if not rel.endswith(".py"):
            continue
        text = texts.text(rel)
        if text is None:
            continue
        library = _NVIDIA_LIBRARY_RE.search(text) is not None
        if not library and "compute_" not in text and "sm_" not in text:
            continue
        tree = python_tree(text)
        if tree is None:
            continue
        strings = _name_strings(tree)
        parents = {child: node for node in tree_nodes(tree) for child in ast.iter_child_nodes(node)}
        base = rel.rsplit("/", 1)[0] if "/" in rel else ""
        built: list[tuple[ast.Call, set[str], set[int]]] = []
        for node in tree_nodes(tree):
            if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("Extension"):
                built.append(
                    (node, _extension_folders(node, base), _extension_archs(node, strings))
                )
        for node, folders, archs in built:
            if len(folders) != 1:
                continue
            (folder,) = folders
            shared = any(f is not node and folder in other for f, other, _ in built)
            if shared or not folder or not _is_dir(root, folder):
                continue
            if archs and min(archs) >= _NEWER_GPU_ARCH:
                listed = ", ".join(f"sm_{a}" for a in sorted(archs))
                why = (
                    f"{_name(rel)} builds this extension only for {listed} (its nvcc arch "
                    "flags): NVIDIA Hopper and newer"
                )
            else:
                opt_in = _opt_in_library(node, parents) if library else None
                if opt_in is None:
                    continue
                switch, name = opt_in
                why = (
                    f"{_name(rel)} builds this extension only when asked ({switch}), on "
                    f"{name}, which has no ROCm build"
                )
            out.append(
                Component(
                    folder,
                    ComponentStatus.NVIDIA_ONLY,
                    (Evidence(rel, node.lineno, why),),
                    alternative,
                )
            )
    for kernels in newer_hardware_kernel_folders(texts, found) if by_source else []:
        if not any(c.contains(kernels.path) or kernels.contains(c.path) for c in out):
            out.append(replace(kernels, rocm_alternative=alternative))
    return out


# NVIDIA libraries with no ROCm build that an extension can be built on: cuDNN's C++ frontend
# (its graph API; MIOpen has none) and NVSHMEM (ROCm's OpenSHMEM is rocSHMEM, another API).
_NVIDIA_LIBRARY_RE = re.compile(r"cudnn[-_]frontend|nvshmem", re.IGNORECASE)
# A switch an `if` tests to build an extension only when asked: a command-line flag or an
# environment variable (apex's `if has_flag("--cudnn_gbn", "APEX_CUDNN_GBN"):`).
_OPT_IN_TEST_RE = re.compile(r"sys\.argv|environ|getenv|[\"']--[a-z]")


def _opt_in_library(call: ast.Call, parents: dict[ast.AST, ast.AST]) -> tuple[str, str] | None:
    """(the switch, the library) when the extension ``call`` is built only under an opt-in
    switch and names an NVIDIA-only library in its arguments (an include dir, a library)."""
    library = next(
        (
            m.group()
            for node in ast.walk(call)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            for m in [_NVIDIA_LIBRARY_RE.search(node.value)]
            if m is not None
        ),
        None,
    )
    if library is None:
        return None
    switch = None  # the outermost opt-in test above the call
    child: ast.AST = call
    node = parents.get(child)
    while node is not None:
        if isinstance(node, ast.If) and child in node.body:
            test = ast.unparse(node.test)
            if _OPT_IN_TEST_RE.search(test):
                switch = test if len(test) <= 60 else test[:57] + "..."
        child, node = node, parents.get(node)
    return None if switch is None else (f"if {switch}", library)


# What no AMD GPU has, named in CUDA code: TMA tensor maps and bulk tensor copies (Hopper),
# warpgroup MMA (Hopper), tcgen05/UMMA and tensor memory (Blackwell), CuTe's SM90/SM100 atoms,
# and CUTLASS/CuTe's sm90/sm100 headers.
# https://docs.nvidia.com/cuda/cuda-c-programming-guide/#tensor-memory-access
_NEWER_HARDWARE_RE = re.compile(
    r"\b(?:CUtensorMap\w*|cuTensorMapEncode\w*|cp_async_bulk_tensor\w*|tcgen05\w*|UMMA::"
    r"|SM(?:90|1[02]\d)_(?!ALL\b)[A-Z]\w*)|cp\.async\.bulk\.tensor|\bwgmma\."
)
_NEWER_HEADER_RE = re.compile(r"(?:^|[/_])sm(?:90|1[02]\d)[a-z]?[_.]")
# Substrings one of which every match of _NEWER_HARDWARE_RE holds: a cheap test first.
_NEWER_ANCHORS: tuple[str, ...] = ("ensorMap", "cp_async_bulk_tensor", "tcgen05", "UMMA::")
_NEWER_ANCHORS += ("SM90_", "SM1", "cp.async.bulk.tensor", "wgmma.")
_KERNEL_RE = re.compile(r"\b__global__\b")
_CUDA_SUFFIXES = (".cu", ".cuh", ".h", ".hpp", ".hh", ".inl")  # kernels and their headers
_INCLUDE_RE = re.compile(r"^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"\r\n]+)[>\"]", re.MULTILINE)
_MIN_KERNEL_FILES = 2  # one kernel file is the file's own decision (GP330, GP309)
# The evidence of a kernel folder says this; triage words its GP601 line after it.
NEWER_HARDWARE_WHAT = "every kernel file in it is built on Hopper-or-newer NVIDIA hardware"


@dataclass(slots=True)
class _CudaFile:
    kernels: bool  # defines a __global__ kernel
    marker: tuple[int, str] | None  # (line, name) of its first newer-hardware use
    includes: list[str]


def newer_hardware_kernel_folders(texts: ProjectTexts, found: Survey) -> list[Component]:
    """Folders whose every kernel file (a ``.cu``/``.cuh`` defining a ``__global__``) is
    built on Hopper-or-newer hardware no AMD GPU has (TMA tensor maps, bulk tensor copies,
    wgmma, tcgen05/UMMA): a recipe or kernel family written for newer NVIDIA GPUs (a
    Blackwell-only quantisation recipe, a TMA Hadamard transform), one decision for a port
    (leave it out of the ROCm build, or write AMD kernels for it), not a list of lines.

    Conservative: at least two kernel files, product files only (by name), and no file of the
    folder that neither defines a kernel nor uses such hardware (a shared helper header) is
    included from outside the folder; the outermost such folder is the component."""
    files: dict[str, _CudaFile] = {}
    spent = 0
    for rel in [*found.sources, *found.headers]:
        if not rel.endswith(_CUDA_SUFFIXES) or tier_by_name(rel) is not None:
            continue
        data = texts.data(rel, SOURCE_BYTES)
        if data is None:
            return []  # not read: a kernel or an include of it may be missed
        spent += len(data)
        if spent > SOURCE_BUDGET:
            return []
        text = data.decode("utf-8", "replace")
        kernels = "__global__" in text and _KERNEL_RE.search(text) is not None
        includes = _INCLUDE_RE.findall(text) if "include" in text else []
        marker = None
        header = next((h for h in includes if _NEWER_HEADER_RE.search(h)), None)
        newer = any(anchor in text for anchor in _NEWER_ANCHORS)
        if header is not None or (newer and _NEWER_HARDWARE_RE.search(text) is not None):
            code = texts.code(text)  # a name in a comment is no use of the hardware
            m = _NEWER_HARDWARE_RE.search(code)
            if m is not None:
                marker = (code.count("\n", 0, m.start()) + 1, m.group())
            at = code.find(header) if header is not None else -1
            if header is not None and at >= 0:  # an include (a directive, kept by code_only)
                line = code.count("\n", 0, at) + 1
                if marker is None or line < marker[0]:
                    marker = (line, header)
            kernels = kernels and _KERNEL_RE.search(code) is not None
        files[rel] = _CudaFile(kernels, marker, includes)
    folders: set[str] = set()
    for rel in files:
        parts = rel.split("/")[:-1]
        folders.update("/".join(parts[: i + 1]) for i in range(len(parts)))
    by_name: dict[str, list[str]] = {}
    for rel in files:
        by_name.setdefault(PurePosixPath(rel).name, []).append(rel)
    found_folders: list[Component] = []
    for folder in sorted(folders):
        inside = [r for r in files if r.startswith(folder + "/")]
        kernel_files = [r for r in inside if files[r].kernels]
        if len(kernel_files) < _MIN_KERNEL_FILES or any(
            files[r].marker is None for r in kernel_files
        ):
            continue
        helpers = {r for r in inside if not files[r].kernels and files[r].marker is None}
        if helpers and _included_from_outside(helpers, folder, files, by_name):
            continue
        first = kernel_files[0]
        line, name = files[first].marker or (0, "")
        why = (
            f"{NEWER_HARDWARE_WHAT} ({len(kernel_files)} kernel files; {_name(first)} uses {name})"
        )
        found_folders.append(
            Component(folder, ComponentStatus.NVIDIA_ONLY, (Evidence(first, line, why),))
        )
    return _outermost(found_folders)


def _included_from_outside(
    helpers: set[str], folder: str, files: dict[str, _CudaFile], by_name: dict[str, list[str]]
) -> bool:
    """Does a CUDA file outside ``folder`` include one of ``helpers``?"""
    names = {PurePosixPath(h).name for h in helpers}
    for rel, cuda_file in files.items():
        if rel.startswith(folder + "/"):
            continue
        for include in cuda_file.includes:
            name = PurePosixPath(include.strip()).name
            if name in names and resolve_include(rel, include, by_name[name]) in helpers:
                return True
    return False


def _name_strings(tree: ast.Module) -> dict[str, list[str]]:
    """Every string each name is assigned, over all its assignments (both branches of an if)."""
    out: dict[str, list[str]] = {}
    for node in tree_nodes(tree):
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    out.setdefault(target.id, []).extend(_strings(node.value))
    return out


def extension_folders(call: ast.Call, base: str) -> set[str]:
    """The folders (from the root) of the sources an extension call of a setup.py in ``base``
    compiles."""
    return _extension_folders(call, base)


def _extension_folders(call: ast.Call, base: str) -> set[str]:
    """The folders of the sources an extension call names (its ``sources`` or second argument)."""
    sources = [k.value for k in call.keywords if k.arg == "sources"] or call.args[1:2]
    found: dict[str, int] = {}
    _collect(sources, base, found)
    return set(found)


def _extension_archs(call: ast.Call, strings: dict[str, list[str]]) -> set[int]:
    """The compute capabilities (90 for ``compute_90a``) the call's compile flags name."""
    flags = [k.value for k in call.keywords if k.arg == "extra_compile_args"]
    texts: list[str] = []
    for flag in flags:
        texts.extend(_strings(flag))
        for node in ast.walk(flag):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                texts.extend(strings.get(node.id, []))
    return {int(m) for t in texts for m in _ARCH_RE.findall(t)}


def _nvcc_only_package(
    root: Path, rel: str, text: str, rocm_built: list[str], backends: list[str]
) -> Component | None:
    """A sub-package's own setup.py that builds a CUDA extension with nvcc whatever the build
    (flash-attention's ``csrc/layer_norm/setup.py`` runs ``nvcc -V`` at import and has no ROCm
    branch): a ROCm machine has no nvcc, so the ROCm build never compiles its folder. Only when
    no ROCm branch of another setup.py compiles that folder, and the file names no ROCm at all."""
    folder = rel.rsplit("/", 1)[0]
    if (
        _ROCM_MENTION_RE.search(text)
        or not _is_dir(root, folder)
        or any(_overlaps(folder, r) for r in rocm_built)
        or any(_overlaps(folder, b) for b in backends)
    ):
        return None
    tree = python_tree(text)
    if tree is None:
        return None
    extension = next(
        (
            node.lineno
            for node in tree_nodes(tree)
            if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("CUDAExtension")
        ),
        None,
    )
    nvcc = _unconditional_nvcc(tree)
    if extension is None or nvcc is None:
        return None
    line, how = nvcc
    evidence = (
        Evidence(rel, extension, f"{_name(rel)} builds a CUDA extension and has no ROCm branch"),
        Evidence(rel, line, f"it runs nvcc whatever the build ({how}); a ROCm machine has none"),
    )
    # Not a replacement for this package: the build that runs on ROCm, which leaves it out.
    main = f" ({', '.join(backends)})" if backends else ""
    alternative = f"its main build{main}, which leaves this package out"
    return Component(folder, ComponentStatus.NVIDIA_ONLY, evidence, alternative)


def _unconditional_nvcc(tree: ast.Module) -> tuple[int, str] | None:
    """(line, what) of the first call the module makes outside any ``if``/``try`` that runs
    nvcc: a call naming an ``nvcc`` path, or of a function of the file that does (transitively)."""
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    runs: set[str] = {
        name
        for name, function in functions.items()
        if any(_NVCC_PATH_RE.search(s) for s in _strings(function))
    }
    changed = True
    while changed:  # a function calling one that runs nvcc runs it too
        changed = False
        for name, function in functions.items():
            if name not in runs and any(
                isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in runs
                for n in ast.walk(function)
            ):
                runs.add(name)
                changed = True
    for statement in tree.body:
        if not isinstance(statement, ast.Expr | ast.Assign | ast.AugAssign | ast.AnnAssign):
            continue
        for node in ast.walk(statement):
            if not isinstance(node, ast.Call):
                continue
            if isinstance(node.func, ast.Name) and node.func.id in runs:
                return node.lineno, f"{node.func.id}()"
            if any(_NVCC_PATH_RE.search(s) for a in node.args for s in _strings(a)):
                return node.lineno, "a call naming nvcc's path"
    return None


def _strings(node: ast.AST) -> list[str]:
    return [
        n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    ]


def _outermost(components: list[Component]) -> list[Component]:
    """One component per folder, the outermost kept when one lies inside another."""
    by_path: dict[str, Component] = {}
    for component in components:
        by_path.setdefault(component.path, component)
    paths = list(by_path)
    return [by_path[p] for p in sorted(paths) if not any(p.startswith(o + "/") for o in paths)]


def _name(rel: str) -> str:
    return rel.rsplit("/", 1)[-1]
