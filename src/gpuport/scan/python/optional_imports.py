"""Optional imports whose absence the module checks before use (GP201's exemption).

``try: import pynvml / except ImportError: pynvml = None`` followed by ``if pynvml:``: where
the package is missing the code takes the path it already has. Split from guards.py, whose
questions (is this code on the CUDA side of a ROCm test?) it builds on.
"""

from __future__ import annotations

import ast
import functools

from gpuport.scan.python.guards import (
    IMPORT_ERRORS,
    SCOPE_NODES,
    Parents,
    ancestors,
    carries_on,
    catches,
    in_condition,
    module_index,
    module_of,
    none_compared,
)

# What a handler catches that covers more than the import failing: a package that imports
# where it cannot run (pynvml, a pure-Python NVML binding, imports on ROCm and then fails in
# nvmlInit) is covered only when the same handler catches that failure too.
_BROAD_ERRORS = frozenset({"Exception", "BaseException"})


def _bound_names(statement: ast.AST) -> set[str]:
    """The names an import statement binds: ``import a.b`` -> a, ``import x as y`` -> y,
    ``from x import f`` -> f."""
    if isinstance(statement, ast.Import):
        return {alias.asname or alias.name.split(".", 1)[0] for alias in statement.names}
    if isinstance(statement, ast.ImportFrom):
        return {alias.asname or alias.name for alias in statement.names}
    return set()


def _only_binds(statement: ast.stmt) -> bool:
    """``statement`` imports or assigns without calling anything (``HAS_X = True``)."""
    if isinstance(statement, (ast.Import, ast.ImportFrom, ast.Pass)):
        return True
    if isinstance(statement, (ast.Assign, ast.AnnAssign)):
        return statement.value is None or not any(
            isinstance(sub, ast.Call) for sub in ast.walk(statement.value)
        )
    return False


def _tested(index_parents: Parents, use: ast.AST) -> bool:
    """``use`` (a load of a name) is tested for truth or None: ``if x:``, ``x is None``."""
    if in_condition(index_parents, use):
        return True
    compare = index_parents.get(use)
    return (
        isinstance(compare, ast.Compare)
        and compare.left is use
        and (none_compared(compare, ast.Is) is use or none_compared(compare, ast.IsNot) is use)
    )


def optional_import_checked(parents: Parents, node: ast.AST) -> bool:
    """``node`` (an import statement) is an optional import whose absence the module checks
    before use: it sits in a ``try:`` whose handlers catch the failed import and carry on (no
    ``raise``), the ``try:`` body only imports and binds names (so a call that fails where the
    package imports but cannot run, pynvml's nvmlInit on ROCm, is not left uncaught behind an
    ``except ImportError``, unless a handler catches ``Exception``), and the module tests the
    imported name, or a name a handler binds, for truth or None somewhere (``if pynvml:``,
    ``if HAS_TRT:``, ``if trt is None: return``). Where the package is missing the code takes
    the path it already has for that."""
    statement = node if isinstance(node, ast.stmt) else None
    for child, parent in ancestors(parents, node):
        if isinstance(parent, ast.Try) and child in parent.body:
            handlers = [h for h in parent.handlers if catches(h, IMPORT_ERRORS)]
            if not handlers or not all(carries_on(h) for h in handlers):
                return False
            broad = any(catches(h, _BROAD_ERRORS) for h in handlers)
            if not broad and not all(_only_binds(s) for s in parent.body):
                return False
            bound = _bound_names(statement) if statement is not None else set()
            names = set(bound)
            for handler in handlers:
                for inner in handler.body:
                    for sub in ast.walk(inner):
                        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                            names.add(sub.id)
            module = module_of(parents, node)
            if module is None or not names:
                return False
            # A package that imports where it cannot run (pynvml, a pure-Python NVML binding,
            # imports on a ROCm machine that has it installed and raises NVMLError_LibraryNotFound
            # in nvmlInit: https://github.com/guilbaults/slurm-job-exporter/pull/10) passes `if
            # pynvml:`; the check covers ROCm only where the module also copes with a call into
            # the package failing: in the import's own try under a broad handler, or in another
            # try whose handler carries on after `except pynvml.NVMLError` or `except Exception`.
            # That half first: it reads statements only, the test of the names needs the index.
            in_own_try = broad and not all(_only_binds(s) for s in parent.body)
            if not in_own_try and not _copes_with_failed_call(module, bound):
                return False
            index = module_index(module)
            return any(
                _tested(index.parents, use) for name in names for use in index.loads.get(name, [])
            )
        if isinstance(parent, SCOPE_NODES):
            return False
    return False


@functools.lru_cache(maxsize=1)
def _tries(module: ast.Module) -> tuple[ast.Try, ...]:
    """The module's ``try:`` statements, in order, found once per module: each optional import
    asks (DeepSpeed: 29 questions walked 42,000 statements). One module kept: its questions
    come together, and a cache of 16 kept 16 whole trees alive to the end of the process
    (DeepSpeed: 0.1 s more CPU per `gpuport scan`, most of it at exit)."""
    tries: list[ast.Try] = []
    # every statement of the module and of the blocks nested in it, expressions not entered
    # (a tenth of a module's nodes), in source order; one list, not a generator per block
    pending: list[ast.stmt] = module.body[::-1]
    while pending:
        statement = pending.pop()
        blocks: list[ast.stmt] = []
        for field in ("body", "orelse", "finalbody"):
            blocks += getattr(statement, field, [])
        if isinstance(statement, ast.Try):
            tries.append(statement)
            for handler in statement.handlers:
                blocks += handler.body
        elif isinstance(statement, ast.Match):
            for case in statement.cases:
                blocks += case.body
        pending += reversed(blocks)
    return tuple(tries)


def _copes_with_failed_call(module: ast.Module, names: set[str]) -> bool:
    """Some ``try:`` of the module calls into one of ``names`` (an imported package) and a
    handler that carries on catches what the call raises: a bare ``except:``, ``Exception``,
    or an error class of the package itself (``except pynvml.NVMLError:``)."""
    for node in _tries(module):
        calls = any(
            isinstance(sub, ast.Call)
            and any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(sub.func))
            for statement in node.body
            for sub in ast.walk(statement)
        )
        if not calls:
            continue
        for handler in node.handlers:
            if not carries_on(handler):
                continue
            caught = handler.type
            listed = caught.elts if isinstance(caught, ast.Tuple) else [caught]
            if caught is None or catches(handler, _BROAD_ERRORS):
                return True
            if any(
                isinstance(item, ast.Attribute)
                and isinstance(item.value, ast.Name)
                and item.value.id in names
                for item in listed
            ):
                return True
    return False
