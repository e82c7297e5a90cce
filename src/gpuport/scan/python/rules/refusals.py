"""GP203's refusals: a capability gate whose branch only stops the run.

``assert cap >= (9, 0), "needs Hopper"`` or ``if major < 10: raise …`` selects no code: every
GPU that passes runs the same code after it. Such a gate is reported only where it misleads an
AMD GPU (:func:`refuses_amd`, and capabilities.blackwell_for_amd). Split from device_checks.py,
with the scope helpers both use.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable, Mapping

from gpuport.scan.python import guards
from gpuport.scan.python.nodes import called_name, walk_parents
from gpuport.scan.python.rules.capabilities import Capability, amd_capabilities

# Calls that only tell the user something.
NOTICE_CALLS = frozenset({"print", "warn", "warning", "info", "debug", "log", "warning_once"})


@functools.lru_cache(maxsize=8)
def scope_parents(scope: ast.AST) -> dict[ast.AST, ast.AST]:
    """Each node's parent within ``scope`` (the scope itself has none), built once a scope."""
    if isinstance(scope, ast.Module):
        return guards.module_parents(scope)  # the module's index has it already
    return walk_parents(scope)[1]


def function_local(
    parents: Mapping[ast.AST, ast.AST], value: ast.AST
) -> tuple[str, ast.FunctionDef | ast.AsyncFunctionDef] | None:
    """(name, function) when ``value`` is the whole value of ``name = value`` in a function;
    None elsewhere (a module's name may be imported elsewhere, a tuple target)."""
    statement = parents.get(value)
    if not (
        isinstance(statement, ast.Assign)
        and statement.value is value
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
    ):
        return None
    function = guards.scope_of(parents, statement)
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    return statement.targets[0].id, function


# Calls that stop the run: a refusal (``sys.exit``), not a path the code takes.
_EXIT_CALLS = frozenset({"exit", "quit", "_exit"})


def _stops(statement: ast.stmt) -> bool:
    if isinstance(statement, ast.Raise):
        return True
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Call)
        and called_name(statement.value) in _EXIT_CALLS
    )


def only_refuses(parents: Mapping[ast.AST, ast.AST], node: ast.Compare) -> bool:
    """The gate only refuses to go on: ``assert cap >= (9, 0), "needs Hopper"`` or ``if
    recipe == "mxfp8" and major < 10: raise ValueError(...)`` (a notice before the ``raise`` or
    ``sys.exit`` allowed, no ``else``). It selects no code: on every GPU that passes, the same
    code runs after it, and what that code needs on ROCm is reported where it is written (the
    kernels, the imports, the dtypes). At worst an AMD GPU gets past a check that would have
    stopped it with a clearer message, or is stopped by one meant for old NVIDIA GPUs."""
    return _refusal_test(parents, node) or _flag_only_refuses(parents, node)


def _refusal_test(parents: Mapping[ast.AST, ast.AST], node: ast.AST) -> bool:
    """``node`` is (a part of) the test of an ``assert`` or of an ``if`` that only refuses."""
    child: ast.AST = node
    parent = parents.get(node)
    while isinstance(parent, (ast.BoolOp, ast.UnaryOp)):
        child, parent = parent, parents.get(parent)
    if isinstance(parent, ast.Assert):
        return parent.test is child
    if not isinstance(parent, ast.If) or parent.test is not child or parent.orelse:
        return False
    *before, last = parent.body
    return _stops(last) and all(
        isinstance(s, ast.Expr)
        and isinstance(s.value, ast.Call)
        and called_name(s.value) in NOTICE_CALLS
        for s in before
    )


def _fires_when_true(parents: Mapping[ast.AST, ast.AST], node: ast.AST) -> bool | None:
    """Whether the refusal holding ``node`` (as :func:`_refusal_test` reads it) stops the run
    when ``node`` is true (``if cap[0] >= 9: raise``) or when it is false (``assert …``, ``if
    not …: raise``), counting the ``not``s on the way up; None when ``node`` is no refusal."""
    flips = 0
    parent = parents.get(node)
    while isinstance(parent, (ast.BoolOp, ast.UnaryOp)):
        if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not):
            flips += 1
        parent = parents.get(parent)
    if isinstance(parent, ast.Assert):
        flips += 1
    elif not isinstance(parent, ast.If):
        return None
    return flips % 2 == 0


# NVIDIA GPUs up to Hopper, by compute capability: a refusal that stops an AMD GPU while it
# lets one of these with a smaller or equal number through is no "needs at least X" test.
_NVIDIA_TO_HOPPER = ((7, 0), (7, 5), (8, 0), (8, 6), (8, 9), (9, 0))


def refuses_amd(
    parents: Mapping[ast.AST, ast.AST], node: ast.Compare, answer: Callable[[Capability], bool]
) -> bool:
    """The refusal stops some AMD GPU while an NVIDIA GPU of a smaller or equal capability gets
    through (``if cap[0] >= 9: raise "Hopper not supported yet"``, ``assert major == 8``): the
    gfx numbers ROCm reports ((9, 0) for MI200, (9, 4) for MI300, (11, 0) for RDNA3) are no
    NVIDIA generation, so the test turns AMD GPUs away from code an older NVIDIA GPU runs.
    That is porting work on the refusal's own line (review24)."""
    tests: list[tuple[Mapping[ast.AST, ast.AST], ast.AST]] = [(parents, node)]
    stored = function_local(parents, node)  # a refusal through a flag (_flag_only_refuses)
    if stored is not None:
        name, function = stored
        local = scope_parents(function)
        tests = [
            (local, sub)
            for sub in local
            if isinstance(sub, ast.Name) and sub.id == name and isinstance(sub.ctx, ast.Load)
        ]
    for where, test in tests:
        when = _fires_when_true(where, test)
        if when is None:
            continue
        for amd in amd_capabilities():
            if answer(amd) is not when:
                continue
            if any(n <= amd and answer(n) is not when for n in _NVIDIA_TO_HOPPER):
                return True
    return False


def _flag_only_refuses(parents: Mapping[ast.AST, ast.AST], node: ast.Compare) -> bool:
    """``blackwell = cap >= (10, 0)`` in a function whose every read of ``blackwell`` is the
    test of a refusal (``if not blackwell: raise …``): the same refusal, through a local."""
    stored = function_local(parents, node)
    if stored is None:
        return False
    name, function = stored
    local = scope_parents(function)
    reads = [
        sub
        for sub in local
        if isinstance(sub, ast.Name) and sub.id == name and not isinstance(sub.ctx, ast.Store)
    ]
    return bool(reads) and all(_refusal_test(local, read) for read in reads)
