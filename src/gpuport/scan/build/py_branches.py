"""Where a setup.py already keeps code off its ROCm build: the CUDA side of a ROCm test.

``if ROCM_VERSION: … else: arch_list = detect_local_sm_architectures()`` queries the GPU only
when the build is for CUDA; on a ROCm machine the ROCm branch runs. A line there is no ROCm
porting work, as the CUDA branch of CMake's ``if(BUILD_CUDA) … elseif(BUILD_HIP)`` is not
(:mod:`gpuport.scan.build.branches`). The CUDA side is the ``else`` (and every ``elif``) of an
``if`` whose test names ROCm, HIP or AMD (``if ROCM_VERSION:``, ``if torch.version.hip:``), or
the body of a negated one (``if not IS_ROCM:``, ``if torch.version.hip is None:``); a helper
function counts when every call of it in the file is on that side. Tests combining a ROCm
name with anything else (``and``, ``or``) decide nothing here.
"""

from __future__ import annotations

import ast

from gpuport.scan.python.guards import mentions_rocm

# How deep helper calls are followed (a helper called only from a helper on the CUDA side).
_MAX_HELPERS = 3


def _rocm_polarity(test: ast.expr) -> int:
    """1 when ``test`` is true on a ROCm build (``ROCM_VERSION``, ``torch.version.hip is not
    None``), -1 when it is false there (``not IS_ROCM``, ``torch.version.hip is None``), 0 when
    it says nothing sure about ROCm."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return -_rocm_polarity(test.operand)
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        left, op, right = test.left, test.ops[0], test.comparators[0]
        none_side = isinstance(right, ast.Constant) and right.value is None
        if none_side and mentions_rocm(left):
            if isinstance(op, (ast.Is, ast.Eq)):
                return -1
            if isinstance(op, (ast.IsNot, ast.NotEq)):
                return 1
        if isinstance(op, (ast.Eq, ast.NotEq)) and mentions_rocm(test):
            # BACKEND == "rocm" is true on ROCm; IS_HIP == False or USE_HIP == "0" is not
            flip = -1 if _falsy(left) or _falsy(right) else 1
            return flip if isinstance(op, ast.Eq) else -flip
        return 0
    if isinstance(test, (ast.Name, ast.Attribute, ast.Call)) and mentions_rocm(test):
        return 1
    return 0


# Constants a flag is compared with to say "off".
_FALSY = frozenset({"0", "", "false", "off", "no", "n"})


def _falsy(node: ast.expr) -> bool:
    """``False``, ``0``, ``None``, ``"0"``, ``"false"``, ``"OFF"``: the value of a switch that
    is off."""
    if not isinstance(node, ast.Constant):
        return False
    value = node.value
    return (isinstance(value, str) and value.strip().lower() in _FALSY) or (
        not isinstance(value, str) and not value
    )


def cuda_side_only(tree: ast.Module, line: int) -> bool:
    """The call on ``line`` of the module runs only on the CUDA side of a ROCm test."""
    parents = {child: parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and n.lineno == line]
    return bool(calls) and all(_on_cuda_side(tree, parents, c, 0) for c in calls)


def _on_cuda_side(
    tree: ast.Module, parents: dict[ast.AST, ast.AST], node: ast.AST, depth: int
) -> bool:
    child, parent = node, parents.get(node)
    while parent is not None:
        if isinstance(parent, (ast.If, ast.IfExp)):
            polarity = _rocm_polarity(parent.test)
            in_body = child is parent.body or (
                isinstance(parent.body, list) and child in parent.body
            )
            in_else = child is parent.orelse or (
                isinstance(parent.orelse, list) and child in parent.orelse
            )
            if (in_else and polarity > 0) or (in_body and polarity < 0):
                return True
        elif isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if parents.get(parent) is not tree or depth >= _MAX_HELPERS:
                return False  # a method or a nested function: its callers are not followed
            # Every use of the helper outside itself (recursion does not count).
            uses = [
                n
                for n in ast.walk(tree)
                if isinstance(n, ast.Name)
                and n.id == parent.name
                and not _inside(parents, n, parent)
            ]
            return bool(uses) and all(_on_cuda_side(tree, parents, use, depth + 1) for use in uses)
        elif isinstance(parent, (ast.ClassDef, ast.Lambda)):
            return False
        child, parent = parent, parents.get(parent)
    return False


def _inside(parents: dict[ast.AST, ast.AST], node: ast.AST, scope: ast.AST) -> bool:
    up = parents.get(node)
    while up is not None:
        if up is scope:
            return True
        up = parents.get(up)
    return False
