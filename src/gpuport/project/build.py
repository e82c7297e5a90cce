"""Building the project model: read a handful of build files (never run them) and conclude.

:func:`build_model` is called once per scan, before any rule runs. It reads inside the root
only, through :mod:`gpuport.read_policy`, a bounded number of bytes; what it cannot work out it
says in ``notes``.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from pathlib import Path

from gpuport.files import ProjectFacts
from gpuport.findings import Tier
from gpuport.project.cmake_components import cmake_cuda_only_macros, optional_cuda_subbuilds
from gpuport.project.components import (
    extension_folders,
    newer_gpu_only_components,
    nvidia_only_components,
)
from gpuport.project.dockerfiles import ci_image_dockerfiles
from gpuport.project.extension_imports import extension_importers
from gpuport.project.header_components import unreached_headers
from gpuport.project.headers import header_facts, include_dirs
from gpuport.project.hipify import (
    cpp_extension_only_evidence,
    native_cuda_dirs,
    torch_hipify_evidence,
)
from gpuport.project.model import Component, ProjectModel, VendorExtras
from gpuport.project.rocm import rocm_archs, rocm_evidence, rocm_macros
from gpuport.project.survey import Survey, survey
from gpuport.project.texts import SOURCE_BUDGET, SOURCE_BYTES, ProjectTexts, python_tree, tree_nodes

_IDENTIFIER_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# Calls that build a compiled module: torch's CUDAExtension / CppExtension, setuptools'
# Extension, pybind11's Pybind11Extension, and projects' own subclasses (CMakeExtension).
_EXTENSION_CALL_RE = re.compile(r"Extension\Z")
_SUBMODULE_PATH_RE = re.compile(r"^\s*path\s*=\s*(\S+)\s*$", re.MULTILINE)


# Given the texts of a project's headers and CUDA/C++ sources, the warp-size constants its
# headers define that every reader uses only as a size (scan/kernels' GP305 judges that; the
# scan passes its judge in, so the project model does not import a rule's module).
HeaderWarpJudge = Callable[[dict[str, str]], frozenset[str]]


def build_model(root: Path, header_warp_judge: HeaderWarpJudge | None = None) -> ProjectModel:
    """What the project at ``root`` is: name, own packages, ROCm path, components and tiers."""
    if not root.is_dir():
        return ProjectModel()
    found = survey(root)
    texts = ProjectTexts(root)
    notes: list[str] = []
    if found.truncated:
        notes.append("the project has too many files to survey whole; the model saw a part")
    name, first_party = _own_names(texts, found, notes)
    tiers = _submodule_tiers(texts, found) + _conda_env_tiers(root, name)
    # A Dockerfile building the image the project's own CI jobs run in is CI tooling.
    ci_images = ci_image_dockerfiles(texts, found.workflows, found.dockerfiles, name)
    tiers += [(rel, Tier.CI) for rel in ci_images]
    product = _product_paths(tiers)
    # A ROCm backend folder that is a git submodule (flash-attention's csrc/composable_kernel)
    # is a dependency of the project's backend, not the backend itself.
    found.backend_dirs = [d for d in found.backend_dirs if product(d + "/x")]
    evidence = rocm_evidence(texts, found)
    supports = bool(evidence)
    macros = rocm_macros(texts, found, supports)
    # Compat headers are the project's own: vendored copies (CUTLASS, CK) are not read.
    headers = header_facts(texts, found, macros, product)
    components: list[Component] = []
    extras: list[VendorExtras] = []
    if supports:
        if found.pyprojects:  # extras.py reads TOML through the knowledge base
            from gpuport.project.extras import vendor_extras

            extras = vendor_extras(texts, found.pyprojects)
        components, component_notes = nvidia_only_components(
            root, texts, found, found.backend_dirs[:4]
        )
        notes.extend(component_notes)
    else:  # no ROCm path: only what the build targets at Hopper and newer alone
        components = newer_gpu_only_components(root, texts, found, "")
        helper_dirs = sorted(
            {rel.split("/", 1)[0] for rel in found.build_helpers if rel.endswith(".py")}
        )
        read = {e.path.split("/", 1)[0] for c in components for e in c.evidence}
        for folder in (f for f in helper_dirs if f not in read):
            notes.append(
                f"{folder}/ works out what each extension compiles in code (build helpers); "
                "the components it builds are not classified"
            )
    own_includes = include_dirs(texts, found, product)
    python_builds = [*found.setup_pys, *found.pyprojects, *found.build_helpers]
    cuda_only = cmake_cuda_only_macros(
        texts, found.cmake_files, python_builds, [*found.headers, *found.sources]
    )
    for rel in filter(product, found.cmake_files):
        if rel.lower().endswith("cmakelists.txt"):
            for sub in optional_cuda_subbuilds(root, texts, rel):
                if not any(c.contains(sub.path) or sub.contains(c.path) for c in components):
                    components.append(sub)
    if supports:
        components.extend(unreached_headers(texts, found, components, macros, cuda_only, product))
        python = list(filter(product, found.python_files))
        components = extension_importers(
            texts, found.setup_pys, python, components, extension_folders
        )
    facts = ProjectFacts(
        rocm_macros=macros,
        cuda_only_macros=cuda_only,
        first_party=frozenset(first_party),
        headers=headers,
        include_dirs=own_includes,
        size_only_warp_constants=(
            _size_only_warp_constants(texts, found, header_warp_judge)
            if header_warp_judge is not None
            else frozenset()
        ),
    )
    hipify = tuple(torch_hipify_evidence(texts, found))
    return ProjectModel(
        name=name,
        facts=facts,
        rocm_support=tuple(evidence),
        rocm_archs=rocm_archs(texts, found),
        components=tuple(components),
        vendor_extras=tuple(extras),
        torch_hipify=hipify,
        native_cuda_dirs=tuple(native_cuda_dirs(texts, found)),
        torch_cpp_only=tuple(cpp_extension_only_evidence(texts, found, bool(hipify))),
        tiers=tuple(tiers),
        notes=tuple(notes),
    )


_WARP_32_HINT_RE = re.compile(r"(?i)warp_?(?:size|sz|width|threads|lanes)|per_?warp")


def _size_only_warp_constants(
    texts: ProjectTexts, found: Survey, judge: HeaderWarpJudge
) -> frozenset[str]:
    """GP305's project-wide fact (``size_only_header_constants``): read only when a header
    names a warp size and holds a 32; nothing when a file cannot be read or the sources pass
    the budget (a read may then be missed, and the constants stay reported)."""
    files: dict[str, str] = {}
    headers = set(found.headers)
    hinted = False
    spent = 0
    for rel in [*found.headers, *found.sources, *found.hip_sources]:
        if rel in files:
            continue
        data = texts.data(rel, SOURCE_BYTES)
        if data is None:
            return frozenset()
        spent += len(data)
        if spent > 2 * SOURCE_BUDGET:
            return frozenset()
        text = data.decode("utf-8", "replace")
        files[rel] = text
        if rel in headers:
            hinted = hinted or ("32" in text and _WARP_32_HINT_RE.search(text) is not None)
        elif not hinted:
            return frozenset()  # no header defines a warp size: no source needs reading
    return judge(files) if hinted else frozenset()


def _product_paths(tiers: list[tuple[str, Tier]]) -> Callable[[str], bool]:
    """Whether a path is product code, with ``tiers`` put ahead of the name table."""
    tier_of = ProjectModel(tiers=tuple(tiers)).tier_of
    return lambda rel: tier_of(rel) is Tier.PRODUCT


def _own_names(texts: ProjectTexts, found: Survey, notes: list[str]) -> tuple[str, set[str]]:
    """The distribution name and the top-level import names the project itself provides."""
    name = ""
    own: set[str] = set(found.packages)
    own.update(m for m in found.modules if _IDENTIFIER_RE.match(m))
    if "pyproject.toml" in found.pyprojects:
        text = texts.text("pyproject.toml")
        if text is not None:
            from gpuport.syntax.pyproject import table, toml_dependency_file

            try:
                _file, data = toml_dependency_file(text, "pyproject.toml")
            except RecursionError:  # nested too deeply for tomllib; its scanner reports it
                data = None
                notes.append("pyproject.toml is nested too deeply to read; its name is not known")
            project_name = table(data, "project").get("name") if data else None
            if isinstance(project_name, str) and project_name:
                name = project_name
                own.add(_import_name(project_name))
    if "setup.py" in found.setup_pys:
        text = texts.text("setup.py")
        if text is not None:
            setup_name = _setup_names(text, own)
            if setup_name is None:
                notes.append("setup.py does not parse; its package names are not known")
            elif setup_name and not name:
                name = setup_name
    if "setup.cfg" not in found.setup_pys:
        text = texts.text("setup.cfg")
        if text:
            cfg_name = _setup_cfg_name(text)
            if cfg_name:
                name = name or cfg_name
                own.add(_import_name(cfg_name))
    return name, {n for n in own if _IDENTIFIER_RE.match(n)}


def _import_name(distribution: str) -> str:
    return distribution.strip().replace("-", "_").replace(".", "_").lower()


def _setup_names(text: str, own: set[str]) -> str | None:
    """setup(name=, packages=, py_modules=) and extension module names, literal or constant."""
    tree = python_tree(text)
    if tree is None:
        return None
    constants = {
        target.id: node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
        for target in node.targets
        if isinstance(target, ast.Name)
    }

    dicts = {
        target.id: _dict_items(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name) and _dict_items(node.value)
    }

    def string(node: ast.expr | None) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name):
            return constants.get(node.id)
        return None

    name = ""
    for node in tree_nodes(tree):
        if not isinstance(node, ast.Call):
            continue
        called = node.func.id if isinstance(node.func, ast.Name) else ""
        if isinstance(node.func, ast.Attribute):
            called = node.func.attr
        keywords = {k.arg: k.value for k in node.keywords if k.arg}
        for unpacked in (k.value for k in node.keywords if k.arg is None):
            # setup(**common_setup_kwargs) with a dict literal assigned to that name (AutoGPTQ)
            if isinstance(unpacked, ast.Name):
                for key, value in dicts.get(unpacked.id, {}).items():
                    keywords.setdefault(key, value)
        if called == "setup":
            setup_name = string(keywords.get("name"))
            if setup_name:
                name = name or setup_name
                own.add(_import_name(setup_name))
            for key in ("packages", "py_modules"):
                listed = keywords.get(key)
                if isinstance(listed, ast.List | ast.Tuple):
                    for element in listed.elts:
                        text_value = string(element)
                        if text_value:
                            own.add(text_value.split(".", 1)[0])
        elif _EXTENSION_CALL_RE.search(called):
            first = node.args[0] if node.args else keywords.get("name")
            module = string(first)
            if module:
                own.add(module.split(".", 1)[0])
    return name


def _dict_items(node: ast.expr) -> dict[str, ast.expr]:
    """The string-keyed items of a ``{...}`` literal or a ``dict(...)`` call, else empty."""
    if isinstance(node, ast.Dict):
        return {
            key.value: value
            for key, value in zip(node.keys, node.values, strict=True)
            if isinstance(key, ast.Constant) and isinstance(key.value, str)
        }
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
        return {k.arg: k.value for k in node.keywords if k.arg}
    return {}


def _setup_cfg_name(text: str) -> str:
    import configparser  # only for a project with a setup.cfg

    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return ""
    return parser.get("metadata", "name", fallback="").strip()


# conda environment files at the root (conda's default name, and its .yaml spelling).
_CONDA_ENV_FILES = ("environment.yml", "environment.yaml")


def _conda_env_tiers(root: Path, name: str) -> list[tuple[str, Tier]]:
    """A conda environment file at the root of a pip-installable package (its setup.py or
    pyproject names the distribution) sets up a developer's machine: users install the package
    with pip (DeepSpeed's environment.yml pins pytorch-cuda and compilers to build it). In an
    application with no package metadata it is how the project is installed, and stays product.
    """
    if not name:
        return []
    return [
        (file, Tier.DEV)
        for file in _CONDA_ENV_FILES
        if (root / file).is_file() and not (root / file).is_symlink()
    ]


def _submodule_tiers(texts: ProjectTexts, found: Survey) -> list[tuple[str, Tier]]:
    """Git submodules are vendored code (flash-attention's csrc/cutlass, csrc/composable_kernel)."""
    if not found.gitmodules:
        return []
    text = texts.text(".gitmodules") or ""
    paths = sorted({m.group(1).strip("\"'/") for m in _SUBMODULE_PATH_RE.finditer(text)})
    return [(p, Tier.VENDORED) for p in sorted(paths, key=len, reverse=True) if p]
