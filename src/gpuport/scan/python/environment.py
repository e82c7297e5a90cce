"""Where Python code reads or sets environment variables, named by a literal.

Rule-neutral: finds the accesses (``os.environ[...]``, ``os.environ.get/setdefault/pop/update``,
``os.getenv/putenv/unsetenv``, ``name in os.environ``, ``env=`` mappings given to calls, copies
of ``os.environ``); what a variable means on ROCm is for the rules that look at them.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from gpuport.scan.python.checks import EnvAccess
from gpuport.scan.python.context import PythonContext
from gpuport.scan.python.nodes import argument, literal

_ENV_FUNCTIONS = frozenset({"os.getenv", "os.putenv", "os.unsetenv"})
_ENVIRON_METHODS = frozenset({"get", "setdefault", "pop"})


def in_call(ctx: PythonContext, node: ast.Call, qual: str | None) -> Iterator[EnvAccess]:
    """Accesses made by a call (``qual``: the called function's qualified name, if known)."""
    if qual in _ENV_FUNCTIONS:
        name = literal(argument(node, 0, "key"))
        if name:
            yield EnvAccess(name, node.lineno, node.col_offset + 1, qual != "os.getenv", node)
    func = node.func
    if isinstance(func, ast.Attribute):
        if func.attr in _ENVIRON_METHODS and ctx.is_environ(func.value):
            name = literal(argument(node, 0, "key"))
            if name:
                yield EnvAccess(name, node.lineno, node.col_offset + 1, func.attr != "get", node)
        elif func.attr == "update" and ctx.is_environ(func.value):
            for arg in node.args:
                yield from in_mapping(arg)
            for kw in node.keywords:
                if kw.arg:
                    yield EnvAccess(
                        kw.arg, kw.value.lineno, kw.value.col_offset + 1, True, kw.value
                    )
    for kw in node.keywords:
        if kw.arg == "env":
            yield from in_mapping(kw.value)


def in_mapping(node: ast.AST) -> Iterator[EnvAccess]:
    """Variables set through a mapping: ``{"X": ...}``, ``dict(os.environ, X=...)``."""
    if isinstance(node, ast.Dict):
        for key in node.keys:
            name = literal(key)
            if name and key is not None:
                yield EnvAccess(name, key.lineno, key.col_offset + 1, True, key)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
        for kw in node.keywords:
            if kw.arg:
                yield EnvAccess(kw.arg, kw.value.lineno, kw.value.col_offset + 1, True, kw.value)
        for arg in node.args:
            yield from in_mapping(arg)


def in_subscript(ctx: PythonContext, node: ast.Subscript) -> EnvAccess | None:
    """``os.environ["X"]``: read, set or deleted."""
    if ctx.is_environ(node.value):
        name = literal(node.slice)
        if name:
            write = not isinstance(node.ctx, ast.Load)
            return EnvAccess(name, node.lineno, node.col_offset + 1, write, node)
    return None


def in_compare(ctx: PythonContext, node: ast.Compare) -> EnvAccess | None:
    """``"X" in os.environ``."""
    if (
        len(node.ops) == 1
        and isinstance(node.ops[0], (ast.In, ast.NotIn))
        and ctx.is_environ(node.comparators[0])
    ):
        name = literal(node.left)
        if name:
            return EnvAccess(name, node.lineno, node.col_offset + 1, False, node)
    return None
