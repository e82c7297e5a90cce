"""Components from op-builder classes: one class per compiled op, saying its sources and whether
it builds on ROCm (DeepSpeed's ``op_builder/``).

Read with :mod:`ast`, never run. A class is an op builder when it has a ``sources`` method that
returns source paths (literals, or f-strings over a local folder name). Its sources' folders are
**NVIDIA-only** when ``is_compatible`` returns False in a ROCm branch (``if
self.is_rocm_pytorch(): return False``: DeepSpeed's gds, sparse_attn) or when the class needs
CUTLASS (``cutlass_path``, ``import cutlass``, DeepSpeed's prebuilt ``dskernels``), which has no
AMD backend; the folders of the other GPU op builders (a base class named ``CUDA…``) are
**built for ROCm** (the project hipifies them). A folder that both kinds of op name is neither.
Paths that do not exist from the root are looked for under the project's own packages
(DeepSpeed's ``get_prefix()`` joins ``deepspeed/``). The requirements file of a setup.py extra
named like an op that refuses ROCm (DeepSpeed's ``extras_require['sparse_attn'] =
fetch_requirements('requirements/requirements-sparse_attn.txt')``) installs what only that op
uses: it joins the op's component, so its pins fold into the op's one line.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from gpuport.project.model import Component, ComponentStatus, Evidence
from gpuport.project.texts import ProjectTexts, is_project_file, python_tree, tree_nodes

_SOURCE_SUFFIXES = (".cu", ".cpp", ".cc", ".c", ".cxx", ".hip")
_CUTLASS_NAMES = frozenset({"cutlass", "cutlass_path", "dskernels"})


@dataclass(frozen=True, slots=True)
class _Op:
    file: str
    name: str
    line: int
    folders: tuple[str, ...]
    refusal: Evidence | None  # why ROCm does not build it; None: it does
    gpu: bool


def op_builder_components(
    root: Path,
    texts: ProjectTexts,
    helpers: list[str],
    packages: list[str],
    setup_pys: tuple[str, ...] = (),
) -> list[Component]:
    """NVIDIA-only and built-for-ROCm components read from the op-builder classes (an op that
    refuses ROCm with the requirements file of ``setup_pys``' extra of its name joined)."""
    ops: list[_Op] = []
    for rel in helpers:
        if not rel.endswith(".py"):
            continue
        text = texts.text(rel)
        if text is None or "def sources" not in text:
            continue
        tree = python_tree(text)
        if tree is None:
            continue
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                op = _read_class(rel, node, root, packages)
                if op is not None:
                    ops.append(op)
    refused = [op for op in ops if op.refusal is not None]
    built = [op for op in ops if op.refusal is None and op.gpu]
    built_folders = {f for op in built for f in op.folders}
    refused_folders = {f for op in refused for f in op.folders}
    out: list[Component] = []
    extras = _extra_requirements(root, texts, setup_pys) if refused else {}
    for op in refused:
        assert op.refusal is not None
        joined = extras.get(op.name)
        for folder in op.folders:
            if not any(_overlaps(folder, other) for other in built_folders):
                instead = f"the ops its ROCm build compiles ({op.name} is not offered on ROCm)"
                evidence: tuple[Evidence, ...] = (op.refusal,)
                files: tuple[str, ...] = ()
                if joined is not None:
                    evidence, files = (op.refusal, joined[1]), (joined[0],)
                    joined = None  # one component of the op takes the file
                out.append(
                    Component(folder, ComponentStatus.NVIDIA_ONLY, evidence, instead, files=files)
                )
    for op in built:
        why = Evidence(op.file, op.line, f"the {op.name} op is built on ROCm (hipified)")
        for folder in op.folders:
            if not any(_overlaps(folder, other) for other in refused_folders):
                out.append(Component(folder, ComponentStatus.ROCM, (why,)))
    return out


def _read_class(rel: str, node: ast.ClassDef, root: Path, packages: list[str]) -> _Op | None:
    methods = {m.name: m for m in node.body if isinstance(m, ast.FunctionDef)}
    sources = methods.get("sources")
    if sources is None:
        return None
    folders = _folders(_source_paths(sources), root, packages)
    if not folders:
        return None
    name = node.name
    for statement in node.body:
        if (
            isinstance(statement, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "NAME" for t in statement.targets)
            and isinstance(statement.value, ast.Constant)
            and isinstance(statement.value.value, str)
        ):
            name = statement.value.value
    refusal = _rocm_refusal(rel, methods.get("is_compatible"), name)
    if refusal is None:
        refusal = _needs_cutlass(rel, node, name)
    gpu = any("CUDA" in ast.unparse(base) for base in node.bases)
    return _Op(rel, name, node.lineno, tuple(folders), refusal, gpu)


def _source_paths(function: ast.FunctionDef) -> list[str]:
    """Source paths a ``sources`` method names: literals, and f-strings over a local literal."""
    local: dict[str, str] = {}
    for node in ast.walk(function):
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    local[target.id] = node.value.value
    paths: list[str] = []
    for node in ast.walk(function):
        text: str | None = None
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
        elif isinstance(node, ast.JoinedStr):
            pieces: list[str] = []
            for value in node.values:
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    pieces.append(value.value)
                elif (
                    isinstance(value, ast.FormattedValue)
                    and isinstance(value.value, ast.Name)
                    and value.value.id in local
                ):
                    pieces.append(local[value.value.id])
                else:
                    pieces = []
                    break
            text = "".join(pieces) or None
        if text and text.lower().endswith(_SOURCE_SUFFIXES) and " " not in text:
            paths.append(text.strip().removeprefix("./"))
    return paths


def _folders(paths: list[str], root: Path, packages: list[str]) -> list[str]:
    """The folders of ``paths`` that exist, outermost only (a path not found from the root is
    looked for under the project's packages)."""
    found: set[str] = set()
    for path in paths:
        if "/" not in path or path.startswith(("/", "..")):
            continue
        folder = path.rsplit("/", 1)[0]
        for candidate in (folder, *(f"{p}/{folder}" for p in packages)):
            if is_project_file(root, f"{candidate}/{path.rsplit('/', 1)[1]}"):
                found.add(candidate)
                break
    return sorted(f for f in found if not any(f.startswith(o + "/") for o in found))


def _rocm_refusal(rel: str, function: ast.FunctionDef | None, name: str) -> Evidence | None:
    """``if self.is_rocm_pytorch(): ... return False`` in ``is_compatible``."""
    if function is None:
        return None
    for node in ast.walk(function):
        if not isinstance(node, ast.If) or "rocm" not in ast.unparse(node.test).lower():
            continue
        if isinstance(node.test, ast.UnaryOp):  # `if not self.is_rocm_pytorch()`: CUDA's branch
            continue
        for statement in node.body:
            if (
                isinstance(statement, ast.Return)
                and isinstance(statement.value, ast.Constant)
                and statement.value.value is False
            ):
                why = f"the {name} op's is_compatible returns False on ROCm"
                return Evidence(rel, node.lineno, why)
    return None


def _needs_cutlass(rel: str, node: ast.ClassDef, name: str) -> Evidence | None:
    for inner in ast.walk(node):
        names: list[str] = []
        if isinstance(inner, ast.Import | ast.ImportFrom):
            names = [a.name.split(".", 1)[0] for a in inner.names]
            if isinstance(inner, ast.ImportFrom) and inner.module:
                names.append(inner.module.split(".", 1)[0])
        elif isinstance(inner, ast.Attribute):
            names = [inner.attr]
        if _CUTLASS_NAMES.intersection(n.lower() for n in names):
            if "dskernels" in names:
                why = (
                    f"the {name} op links DeepSpeed-Kernels' prebuilt CUDA library (dskernels), "
                    "which has no ROCm build"
                )
            else:
                why = f"the {name} op needs CUTLASS ({names[0]}), which has no AMD backend"
            return Evidence(rel, getattr(inner, "lineno", node.lineno), why)
    return None


def _overlaps(a: str, b: str) -> bool:
    return a == b or a.startswith(b + "/") or b.startswith(a + "/")


def _extra_requirements(
    root: Path, texts: ProjectTexts, setup_pys: tuple[str, ...]
) -> dict[str, tuple[str, Evidence]]:
    """extra name -> (the one requirements file it installs, where setup.py says so), from
    ``extras_require`` dicts and ``extras_require['name'] = ...`` assignments of ``setup_pys``."""
    found: dict[str, tuple[str, Evidence]] = {}
    for rel in setup_pys:
        text = texts.text(rel)
        if text is None or "extras_require" not in text:
            continue
        tree = python_tree(text)
        if tree is None:
            continue
        pairs: list[tuple[ast.expr | None, ast.expr]] = []
        for node in tree_nodes(tree):
            if isinstance(node, ast.Dict):
                pairs.extend(zip(node.keys, node.values, strict=True))
            elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Subscript):
                pairs.append((node.targets[0].slice, node.value))
        base = rel.rpartition("/")[0]
        for key, value in pairs:
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                continue
            names = {
                n.value
                for n in ast.walk(value)
                if isinstance(n, ast.Constant)
                and isinstance(n.value, str)
                and n.value.endswith(".txt")
            }
            paths = {f"{base}/{n}" if base else n for n in names}
            paths = {p for p in paths if is_project_file(root, p)}
            if len(paths) == 1:
                (path,) = paths
                why = f"{rel}'s extra '{key.value}' installs {path} for it"
                found.setdefault(key.value, (path, Evidence(rel, key.lineno, why)))
    return found
