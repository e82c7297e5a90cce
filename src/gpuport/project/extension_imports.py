"""Python modules that import, at their top, an extension only the project's CUDA build compiles.

flash-attention's ``flash_attn/ops/fused_dense.py`` starts with ``import fused_dense_lib``, the
extension ``csrc/fused_dense_lib/setup.py`` builds with nvcc and no ROCm branch. The ROCm build
never compiles that extension, so on ROCm the module fails at its first line: every finding
later in it is unreachable there, and the module is one decision with its extension. Such a
module joins the extension's NVIDIA-only component (its findings fold into that one line).

An extension name counts only when every ``*Extension(name=...)`` call of the project's setup.py
files that builds it compiles sources inside NVIDIA-only components: a name the ROCm branch also
builds (flash-attention's ``flash_attn_2_cuda``, from CK sources there) never does. Only an import
at column 0 counts (never one inside ``try``/``if``, which the module survives without), and
only modules outside the component and not in it already. Files are searched as bytes, not
parsed, and only when such an extension exists.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import replace

from gpuport.project.model import Component, ComponentStatus, Evidence
from gpuport.project.texts import BUILD_FILE_BYTES, ProjectTexts, python_tree, tree_nodes

_MAX_JOINED = 8  # modules joined to one component at most (each is a line of its evidence)


def extension_importers(
    texts: ProjectTexts,
    setup_pys: list[str],
    python_files: list[str],
    components: list[Component],
    folders_of: Callable[[ast.Call, str], set[str]],
) -> list[Component]:
    """``components`` with each NVIDIA-only one that builds an extension joined by the product
    modules importing it at their top (``folders_of``: the source folders an extension call
    compiles, relative to the root)."""
    nvidia = [c for c in components if c.status is ComponentStatus.NVIDIA_ONLY]
    if not nvidia:
        return components
    owners: dict[str, Component] = {}
    elsewhere: set[str] = set()
    for rel in setup_pys:
        text = texts.text(rel)
        if text is None or "Extension" not in text:
            continue
        tree = python_tree(text)
        if tree is None:
            continue
        base = rel.rpartition("/")[0]
        for node in tree_nodes(tree):
            if not (isinstance(node, ast.Call) and ast.unparse(node.func).endswith("Extension")):
                continue
            name = _extension_name(node)
            if name is None:
                continue
            folders = folders_of(node, base)
            owner = next(
                (c for c in nvidia if folders and all(c.contains(f) for f in folders)), None
            )
            if owner is None:
                elsewhere.add(name)
            else:
                owners.setdefault(name, owner)
    names = {n: c for n, c in owners.items() if n not in elsewhere}
    if not names:
        return components
    alternation = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    pattern = re.compile(
        rb"^(?:import|from)[ \t]+(" + alternation.encode() + rb")(?![\w.])", re.MULTILINE
    )
    needles = [n.encode() for n in names]
    joined: dict[str, list[tuple[str, Evidence]]] = {}
    for rel in python_files:
        if any(c.contains(rel) for c in nvidia):
            continue
        data = texts.data(rel, BUILD_FILE_BYTES)
        if data is None or not any(n in data for n in needles):
            continue
        m = pattern.search(data)
        if m is None:
            continue
        name = m.group(1).decode()
        line = data.count(b"\n", 0, m.start()) + 1
        owner = names[name]
        why = f"imports {name} at its top, an extension only this CUDA build compiles"
        joined.setdefault(owner.path, []).append((rel, Evidence(rel, line, why)))
    out: list[Component] = []
    for component in components:
        found = joined.get(component.path, [])[:_MAX_JOINED]
        if found and component.status is ComponentStatus.NVIDIA_ONLY:
            component = replace(
                component,
                files=(*component.files, *(rel for rel, _ in found)),
                evidence=(*component.evidence, *(e for _, e in found)),
            )
        out.append(component)
    return out


def _extension_name(call: ast.Call) -> str | None:
    """The literal module name an extension call builds (``name=`` or its first argument)."""
    values = [k.value for k in call.keywords if k.arg == "name"] or call.args[:1]
    if values and isinstance(values[0], ast.Constant) and isinstance(values[0].value, str):
        return values[0].value
    return None
