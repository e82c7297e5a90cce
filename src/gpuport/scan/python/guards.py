"""What the code around a node already tests: a ROCm check, ``TYPE_CHECKING``, a caught ImportError.

Rule-neutral questions about a node's place in the tree, answered from the child -> parent map
the walk records (:attr:`PythonContext.parents <gpuport.scan.python.context.PythonContext>`).
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable, Iterator, Mapping

from gpuport.kb import python_code
from gpuport.scan.python.nodes import CHILD_FIELDS, child_fields, last_name, walk_parents

Parents = Mapping[ast.AST, ast.AST]

# How ROCm-aware code names the platform: torch.version.hip, is_rocm, "gfx942", "AMD Instinct"
# (AMD's GPU names come from the knowledge base).
AMD_NAME_RE = python_code.amd_gpu_name_re()
_ROCM_WORD_RE = re.compile(r"(?i)\b(?:rocm|hip|amd|gfx\d*)\b")
_ROCM_IDENTIFIER_PARTS = frozenset({"hip", "rocm", "amd", "hipcc", "gcn"})
_IDENTIFIER_SPLIT = re.compile(r"_+|(?<=[a-z0-9])(?=[A-Z])")
# Exceptions an `except` catches a failed import with.
IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})
SCOPE_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_BLOCK_ENDS = (ast.Return, ast.Raise, ast.Continue, ast.Break)


def ancestors(parents: Parents, node: ast.AST) -> Iterator[tuple[ast.AST, ast.AST]]:
    """(child, parent) pairs from ``node`` up to the root."""
    parent = parents.get(node)
    while parent is not None:
        yield node, parent
        node, parent = parent, parents.get(parent)


def under_type_checking(parents: Parents, node: ast.AST) -> bool:
    """``node`` sits in the body of ``if TYPE_CHECKING:``: it never runs."""
    for child, parent in ancestors(parents, node):
        if (
            isinstance(parent, ast.If)
            and child in parent.body
            and last_name(parent.test) == "TYPE_CHECKING"
        ):
            return True
    return False


def import_guarded(parents: Parents, node: ast.AST) -> bool:
    """``node`` sits in a ``try:`` whose handlers catch a failed import."""
    for child, parent in ancestors(parents, node):
        if (
            isinstance(parent, ast.Try)
            and child in parent.body
            and any(catches(handler, IMPORT_ERRORS) for handler in parent.handlers)
        ):
            return True
    return False


def catches(handler: ast.ExceptHandler, names: frozenset[str] | set[str]) -> bool:
    """A bare ``except:``, or one that names any of ``names`` (alone or in a tuple)."""
    caught = handler.type
    if caught is None:
        return True
    listed = caught.elts if isinstance(caught, ast.Tuple) else [caught]
    return any(last_name(name) in names for name in listed)


# An optional package's availability check: HAS_FLASH_ATTENTION, _cutedsl_runtime_available(),
# is_flash_attn_installed, FA3_AVAILABLE. Not a device's (torch.cuda.is_available(), HAS_CUDA,
# GPU_AVAILABLE), which holds on ROCm too.
_AVAILABILITY_RE = re.compile(r"(?i)^_*(?:has|have)_\w|\w_(?:available|installed)$")
_DEVICE_WORD_RE = re.compile(r"(?i)cuda|gpu|device|rocm|hip|torch|^_*is_(?:available|installed)$")


def availability_check(test: ast.AST) -> bool:
    """``test`` asks whether an optional package is there: a name, attribute or call named for
    it (``HAS_X``, ``x_available``, ``is_x_installed()``), or an ``and`` holding one."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(availability_check(part) for part in test.values)
    if isinstance(test, ast.Call):
        test = test.func
    name = last_name(test)
    return (
        bool(name)
        and _AVAILABILITY_RE.search(name) is not None
        and _DEVICE_WORD_RE.search(name) is None
    )


def carries_on(handler: ast.ExceptHandler) -> bool:
    return not any(
        isinstance(inner, ast.Raise) for statement in handler.body for inner in ast.walk(statement)
    )


def import_has_fallback(parents: Parents, node: ast.AST) -> bool:
    """``node`` runs only where the module may be missing and the code copes: in a ``try:``
    whose handler catches a failed import and carries on (no ``raise`` in it); in the ``else:``
    of a ``try:`` that probes for the package and carries on without it (``try:
    version("flash-attn-3") except PackageNotFoundError: … else: from flash_attn_interface
    import …``); or under an availability check (``if HAS_FLASH_ATTENTION:``)."""
    for child, parent in ancestors(parents, node):
        if isinstance(parent, ast.If) and child in parent.body and availability_check(parent.test):
            return True
        if (
            isinstance(parent, ast.Try)
            and child in parent.orelse
            and parent.handlers
            and all(carries_on(handler) for handler in parent.handlers)
        ):
            return True
        if isinstance(parent, ast.Try) and child in parent.body:
            for handler in parent.handlers:
                if catches(handler, IMPORT_ERRORS) and not any(
                    isinstance(inner, ast.Raise)
                    for statement in handler.body
                    for inner in ast.walk(statement)
                ):
                    return True
    return False


def in_condition(parents: Parents, node: ast.AST) -> bool:
    """``node`` is tested for truth: an if/while/assert test, a comprehension filter, ``bool()``,
    through ``and``/``or``/``not``."""
    child, parent = node, parents.get(node)
    while isinstance(parent, ast.BoolOp) or (
        isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not)
    ):
        child, parent = parent, parents.get(parent)
    if isinstance(parent, (ast.If, ast.While, ast.IfExp, ast.Assert)):
        return parent.test is child
    if isinstance(parent, ast.comprehension):
        return child in parent.ifs
    if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name):
        return parent.func.id == "bool"
    return False


def rocm_guarded(parents: Parents, node: ast.AST) -> bool:
    """True when the code around ``node`` already tells ROCm apart (tests torch.version.hip,
    an is_rocm flag, a gfx name…): in the same condition or statement, the same if/elif
    chain, an enclosing if, or an earlier if in the same block; or ``node`` sits in a helper
    that only code telling ROCm apart calls (:func:`_called_only_where_guarded`)."""
    return _rocm_guarded(parents, node, frozenset())


def _rocm_guarded(parents: Parents, node: ast.AST, seen: frozenset[ast.AST]) -> bool:
    for child, parent in ancestors(parents, node):
        if isinstance(parent, ast.If):
            if mentions_rocm(parent.test):
                return True
            if child in parent.body and _cuda_only(parents, parent.test):
                return True  # if torch.version.cuda: … never runs on ROCm
            chain = parent
            while len(chain.orelse) == 1 and isinstance(chain.orelse[0], ast.If):
                chain = chain.orelse[0]
                if mentions_rocm(chain.test):
                    return True
        elif isinstance(parent, (ast.While, ast.IfExp)):
            if mentions_rocm(parent.test):
                return True
            if parent.body is child and _cuda_only(parents, parent.test):
                return True
        elif isinstance(parent, ast.BoolOp):
            if any(mentions_rocm(value) for value in parent.values if value is not child):
                return True
            if (
                isinstance(parent.op, ast.And)
                and child in parent.values
                and any(
                    _cuda_only(parents, value)
                    for value in parent.values[: parent.values.index(child)]
                )
            ):
                return True  # torch.version.cuda and get_device_capability() >= (10, 0)
        elif isinstance(
            parent, (ast.Assign, ast.AnnAssign, ast.Return, ast.Expr, ast.Assert)
        ) and mentions_rocm(parent):
            return True
        for name in ("body", "orelse", "finalbody"):
            block = getattr(parent, name, None)
            if isinstance(block, list) and child in block:
                earlier = block[: block.index(child)]
                if any(rocm_early_exit(statement) for statement in earlier):
                    return True
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return _called_only_where_guarded(parents, parent, seen)
        if isinstance(parent, SCOPE_NODES):
            return False
    return False


def beside_rocm_test(parents: Parents, node: ast.AST) -> bool:
    """The statement holding ``node`` has, right before or after it in the same block, one
    that tests ROCm: ``if ROCM_HOME is None and torch.version.hip:`` after ``if CUDA_HOME is
    None and torch.version.cuda:``, ``is_not_hip = torch.version.hip is None`` before
    ``is_cuda = torch.version.cuda is not None``. The two statements split the platforms as
    an if/elif chain would."""
    for child, parent in ancestors(parents, node):
        for name in ("body", "orelse", "finalbody"):
            block = getattr(parent, name, None)
            if isinstance(block, list) and child in block:
                at = block.index(child)
                return any(_tests_rocm(statement) for statement in block[max(at - 1, 0) : at + 2])
        if isinstance(parent, SCOPE_NODES):
            return False
    return False


def _tests_rocm(statement: ast.AST) -> bool:
    if isinstance(statement, (ast.If, ast.While)):
        return mentions_rocm(statement.test)
    if isinstance(statement, (ast.Assign, ast.AnnAssign)) and statement.value is not None:
        return mentions_rocm(statement.value)
    return False


_TORCH_CUDA_VERSION = ast.parse("torch.version.cuda", mode="eval").body
_TORCH_XPU_VERSION = ast.parse("torch.version.xpu", mode="eval").body
# Devices a ROCm PyTorch never has: only an Intel XPU build has an XPU, only a macOS build MPS.
_OTHER_DEVICE_CHECKS = tuple(
    ast.parse(name, mode="eval").body
    for name in ("torch.xpu.is_available", "torch.backends.mps.is_available")
)


def _off_rocm(test: ast.AST) -> bool:
    """``test`` is one a ROCm PyTorch never passes: ``torch.version.cuda`` or
    ``torch.version.xpu`` set (both None on ROCm), ``torch.xpu.is_available()`` or
    ``torch.backends.mps.is_available()``."""
    if tests_set(test, _TORCH_CUDA_VERSION) or tests_set(test, _TORCH_XPU_VERSION):
        return True
    return (
        isinstance(test, ast.Call)
        and not test.args
        and any(same_value(test.func, check) for check in _OTHER_DEVICE_CHECKS)
    )


def _cuda_only(parents: Parents, test: ast.AST) -> bool:
    """``test`` is never true on ROCm: one :func:`_off_rocm` names (``torch.version.cuda``,
    ``torch.version.cuda is not None``, ``torch.xpu.is_available()``…), an ``and`` holding
    one, or a name every assignment of which is such a test or a false constant, at least one
    a test (``use_cuda = torch.version.cuda and CUDA_HOME is not None``; ``xpu_ok =
    torch.xpu.is_available()`` in a ``try:`` whose ``except`` sets ``xpu_ok = False``)."""
    if _off_rocm(test):
        return True
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(_cuda_only(parents, part) for part in test.values)
    if not isinstance(test, ast.Name):
        return False
    top: ast.AST | None = test
    while top is not None and parents.get(top) is not None:
        top = parents.get(top)
    return isinstance(top, ast.Module) and test.id in module_index(top).cuda_flags


# The node types a module's index reads besides names and attributes.
_INDEXED = frozenset(
    {ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr, ast.Import, ast.ImportFrom}
)


class _ModuleIndex:
    """A whole module's child -> parent map and the names it loads, for asking where a helper
    is called (the walk's own map only holds what it has visited so far)."""

    def __init__(self, module: ast.AST) -> None:
        self.loads: dict[str, list[ast.AST]] = {}
        self.imported: set[str] = set()  # top-level modules imported anywhere in it
        self.strings: dict[str, str] = {}  # module-level NAME = "text", assigned once
        assigned: dict[str, list[ast.AST | None]] = {}  # None: not a plain `name = value`
        statements: dict[str, list[ast.AST]] = {}  # the assignments, in the same order
        order, self.parents = walk_parents(module)
        loads = self.loads
        # Names and attributes first, then one test of the exact type of the rest (parsed trees
        # hold no subclasses), not up to nine isinstance tests per node: indexing DeepSpeed's 93 largest
        # files took 0.32 s of CPU before, 0.22 s after (with nodes.child_fields' leaf fields).
        for node in order:
            if isinstance(node, ast.Name):
                if isinstance(node.ctx, ast.Load):
                    loads.setdefault(node.id, []).append(node)
                continue
            if isinstance(node, ast.Attribute):
                if isinstance(node.ctx, ast.Load):
                    loads.setdefault("." + node.attr, []).append(node)
                continue
            if type(node) not in _INDEXED:
                continue
            if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                plain = isinstance(node, (ast.Assign, ast.NamedExpr)) and len(targets) == 1
                for target in targets:
                    for sub in ast.walk(target):
                        if isinstance(sub, ast.Name):
                            value = node.value if plain and sub is target else None
                            assigned.setdefault(sub.id, []).append(value)
                            statements.setdefault(sub.id, []).append(node)
            if isinstance(node, ast.Import):
                self.imported.update(alias.name.split(".", 1)[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                self.imported.add(node.module.split(".", 1)[0])
        # names assigned only from tests never true on ROCm, or false constants (checked
        # without names, so a flag built from another flag is not followed)
        once = frozenset(
            name
            for name, values in assigned.items()
            if all(
                value is not None and (_falsy_constant(value) or _cuda_only({}, value))
                for value in values
            )
            and any(value is not None and _cuda_only({}, value) for value in values)
        )
        # then flags set to something true only where one of those holds (`use_cutlass =
        # False` … `if use_cuda and not IS_WINDOWS: use_cutlass = True`, torchao's setup.py)
        self.cuda_flags = once | frozenset(
            name
            for name, values in assigned.items()
            if len(values) > 1
            and name not in once
            and _set_only_on_cuda(self.parents, statements[name], values, once)
        )
        for statement in getattr(module, "body", []):
            if (
                isinstance(statement, ast.Assign)
                and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name)
                and len(assigned.get(statement.targets[0].id, ())) == 1
                and isinstance(statement.value, ast.Constant)
                and isinstance(statement.value.value, str)
            ):
                self.strings[statement.targets[0].id] = statement.value.value
        self.script = _is_script(module)


def _falsy_constant(value: ast.AST | None) -> bool:
    return isinstance(value, ast.Constant) and not value.value


def _set_only_on_cuda(
    parents: Parents,
    statements: list[ast.AST],
    values: list[ast.AST | None],
    flags: frozenset[str],
) -> bool:
    """Every assignment of a name is a false constant (``False``, ``None``, ``0``) or sits in
    the body of an ``if`` true only on CUDA (``torch.version.cuda``, or one of ``flags``,
    names assigned once from such a test): the name is true only on CUDA. At least one
    assignment is of each kind."""
    on_cuda = 0
    for statement, value in zip(statements, values, strict=True):
        if _falsy_constant(value):
            continue
        if value is None or not _in_cuda_branch(parents, statement, flags):
            return False
        on_cuda += 1
    return 0 < on_cuda < len(statements)


def _cuda_test(test: ast.AST, flags: frozenset[str]) -> bool:
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(_cuda_test(part, flags) for part in test.values)
    return _off_rocm(test) or (isinstance(test, ast.Name) and test.id in flags)


def _in_cuda_branch(parents: Parents, node: ast.AST, flags: frozenset[str]) -> bool:
    for child, parent in ancestors(parents, node):
        if isinstance(parent, ast.If) and child in parent.body and _cuda_test(parent.test, flags):
            return True
        if isinstance(parent, SCOPE_NODES):
            return False
    return False


_MAIN_RE = re.compile(r"""__name__\s*==\s*['"]__main__['"]""")


@functools.lru_cache(maxsize=4)
def _is_script(module: ast.AST) -> bool:
    """The module runs as a script: ``if __name__ == "__main__":`` or a setup.py's
    ``setup(...)`` at module level (its helpers have no callers outside it). Apart from the
    module index, which costs a walk of the whole module, so that a public helper of an
    imported module is turned down without one."""
    for statement in getattr(module, "body", []):
        if isinstance(statement, ast.If) and _MAIN_RE.search(ast.unparse(statement.test)):
            return True  # if __name__ == "__main__":
        if (
            isinstance(statement, ast.Expr)
            and isinstance(statement.value, ast.Call)
            and last_name(statement.value.func) == "setup"
        ):
            return True  # a setup.py: setup(...) at module level
    return False


@functools.lru_cache(maxsize=4)
def module_index(module: ast.AST) -> _ModuleIndex:
    return _ModuleIndex(module)


def module_parents(module: ast.Module) -> dict[ast.AST, ast.AST]:
    """Each node's parent in the whole ``module`` (``ctx``/``op`` leaves left out)."""
    return module_index(module).parents


def module_of(parents: Parents, node: ast.AST) -> ast.Module | None:
    top: ast.AST | None = node
    while top is not None and parents.get(top) is not None:
        top = parents.get(top)
    return top if isinstance(top, ast.Module) else None


def module_string(parents: Parents, node: ast.AST | None, at: ast.AST) -> str | None:
    """The text of ``node`` (an expression in the statement or call ``at``): a string literal,
    or a name the module assigns one string to once (anywhere in the file, so also where the
    walk stepped over the assignment)."""
    if node is None:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    module = module_of(parents, at)
    if not isinstance(node, ast.Name) or module is None:
        return None
    return module_index(module).strings.get(node.id)


def module_imports(parents: Parents, node: ast.AST) -> frozenset[str]:
    """The top-level modules the module holding ``node`` imports anywhere (also below it)."""
    module = module_of(parents, node)
    return frozenset(module_index(module).imported) if module is not None else frozenset()


def _called_only_where_guarded(
    parents: Parents, function: ast.FunctionDef | ast.AsyncFunctionDef, seen: frozenset[ast.AST]
) -> bool:
    """``function`` is a module-level helper or a method that nothing outside its module can
    call (a private name, or a module run as a script: a setup.py, an ``if __name__ ==
    "__main__":`` module), and every use of it in the module is code that already tells ROCm
    apart (``None if hip_version else nvcc_version()``, the ``else`` of ``if HIP_BUILD:``):
    it only runs on the CUDA side. Uses inside the helper itself (recursion) do not count."""
    if function in seen:
        return False
    owner = parents.get(function)
    top: ast.AST | None = function
    while top is not None and parents.get(top) is not None:
        top = parents.get(top)
    if top is None or not isinstance(top, ast.Module):
        return False
    if isinstance(owner, ast.ClassDef):
        key = "." + function.name  # self.helper(...), cls.helper(...)
    elif scope_of(parents, function) is top:
        key = function.name
    else:
        return False  # a nested function: its callers are in the enclosing one
    private = function.name.startswith("_") and not function.name.endswith("__")
    if not (private or _is_script(top)):
        return False
    index = module_index(top)
    uses = [
        use
        for use in index.loads.get(key, [])
        if not any(up is function for _, up in ancestors(index.parents, use))
    ]
    inner = seen | {function}
    return bool(uses) and all(_rocm_guarded(index.parents, use, inner) for use in uses)


def rocm_early_exit(statement: ast.stmt) -> bool:
    """``if torch.version.hip: return …`` — the code after it never runs on ROCm."""
    return (
        isinstance(statement, ast.If)
        and mentions_rocm(statement.test)
        and bool(statement.body)
        and isinstance(statement.body[-1], _BLOCK_ENDS)
    )


@functools.lru_cache(maxsize=8192)
def rocm_identifier(ident: str) -> bool:
    return any(part.lower() in _ROCM_IDENTIFIER_PARTS for part in _IDENTIFIER_SPLIT.split(ident))


def may_name_rocm(text: str) -> bool:
    """Whether a name in Python source ``text`` can be a :func:`rocm_identifier`: each such name
    holds one of its words, lowercased, so an ASCII text whose lowercase holds none names none
    (a non-ASCII one may: identifiers are NFKC-normalised, fullwidth ``hip`` is ``hip``)."""
    if not text.isascii():
        return True
    lowered = text.lower()
    return any(word in lowered for word in _ROCM_IDENTIFIER_PARTS)


def mentions_rocm(node: ast.AST) -> bool:
    """Some name or string under ``node`` names ROCm, HIP, AMD or a gfx target."""
    # Every node under ``node`` in any order: ast.walk's generators are the slow part of this
    # test, which guards run often.
    pending = [node]
    while pending:
        sub = pending.pop()
        if isinstance(sub, ast.Name):
            if rocm_identifier(sub.id):
                return True
        elif isinstance(sub, ast.Attribute):
            if rocm_identifier(sub.attr):
                return True
        elif isinstance(sub, ast.Constant):
            value = sub.value
            if isinstance(value, str) and (
                _ROCM_WORD_RE.search(value) or AMD_NAME_RE.search(value)
            ):
                return True
        fields = CHILD_FIELDS.get(type(sub))
        if fields is None:
            fields = child_fields(type(sub))
        for name in fields:
            value = getattr(sub, name, None)
            if type(value) is list:
                pending.extend(item for item in value if isinstance(item, ast.AST))
            elif isinstance(value, ast.AST):
                pending.append(value)
    return False


# -- None checks: `x is not None`, `if x:`, `assert x`, `if x is None: return` ---------------


def same_value(a: ast.AST, b: ast.AST) -> bool:
    """``a`` and ``b`` spell the same name or attribute chain (``torch.version.cuda``)."""
    while isinstance(a, ast.Attribute) and isinstance(b, ast.Attribute):
        if a.attr != b.attr:
            return False
        a, b = a.value, b.value
    return isinstance(a, ast.Name) and isinstance(b, ast.Name) and a.id == b.id


def none_compared(test: ast.AST, op: type[ast.Is] | type[ast.IsNot]) -> ast.expr | None:
    """``X`` of a test ``X is None`` (``op`` ast.Is) or ``X is not None`` (ast.IsNot); None for
    any other test."""
    if (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], op)
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is None
    ):
        return test.left
    return None


def _none_compare(test: ast.AST, value: ast.AST, op: type[ast.Is] | type[ast.IsNot]) -> bool:
    compared = none_compared(test, op)
    return compared is not None and same_value(compared, value)


def tests_set(test: ast.AST, value: ast.AST) -> bool:
    """``test`` is true only when ``value`` is set: ``value``, ``value is not None``, or an
    ``and`` holding one of them."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(tests_set(part, value) for part in test.values)
    return same_value(test, value) or _none_compare(test, value, ast.IsNot)


def tests_unset(test: ast.AST, value: ast.AST) -> bool:
    """``test`` is true whenever ``value`` is None: ``not value``, ``value is None``, or an
    ``or`` holding one of them."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        return any(tests_unset(part, value) for part in test.values)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return same_value(test.operand, value)
    return _none_compare(test, value, ast.Is)


def none_guard(parents: Parents, node: ast.AST) -> ast.AST | None:
    """What lets ``node`` (a value that is None on ROCm, such as ``torch.version.cuda``) be
    reached only once it is set: the test of ``value and …``, ``value is None or …`` or
    ``if value:``, or the statement ``if value is None: return`` / ``assert value`` before it;
    None when nothing does."""
    for child, parent in ancestors(parents, node):
        if isinstance(parent, ast.BoolOp) and child in parent.values:
            check = tests_set if isinstance(parent.op, ast.And) else tests_unset
            for value in parent.values[: parent.values.index(child)]:
                if check(value, node):
                    return value
        elif isinstance(parent, (ast.If, ast.IfExp, ast.While)) and parent.test is not child:
            body = parent.body
            in_body = child in body if isinstance(body, list) else child is body
            if (tests_set if in_body else tests_unset)(parent.test, node):
                return parent.test
        for name in ("body", "orelse", "finalbody"):
            block = getattr(parent, name, None)
            if isinstance(block, list) and child in block:
                for statement in reversed(block[: block.index(child)]):
                    if isinstance(statement, ast.Assert) and tests_set(statement.test, node):
                        return statement
                    if (
                        isinstance(statement, ast.If)
                        and tests_unset(statement.test, node)
                        and statement.body
                        and isinstance(statement.body[-1], _BLOCK_ENDS)
                    ):
                        return statement  # the early exit, whose body says how it leaves
        if isinstance(parent, SCOPE_NODES):
            return None
    return None


def scope_of(parents: Parents, node: ast.AST) -> ast.AST:
    """The function, lambda or class ``node`` sits in, or the module."""
    top = node
    for _, parent in ancestors(parents, node):
        if isinstance(parent, SCOPE_NODES):
            return parent
        top = parent
    return top


def stops_the_run(guard: ast.AST) -> bool:
    """``guard`` (from :func:`none_guard`) ends the program rather than taking another path:
    ``assert value``, or ``if value is None: raise …`` / ``sys.exit(…)``."""
    if isinstance(guard, ast.Assert):
        return True
    if not isinstance(guard, ast.If) or not guard.body:
        return False
    last = guard.body[-1]
    if isinstance(last, ast.Raise):
        return True
    return (
        isinstance(last, ast.Expr)
        and isinstance(last.value, ast.Call)
        and last_name(last.value.func) in ("exit", "quit", "_exit")
    )


# A test of one part of an ``and`` that the caller knows is never true on ROCm (beyond
# :func:`_cuda_only`): the part, and the parents to read it with (the whole module's, for a
# helper's callers).
OffRocm = Callable[[Parents, ast.AST], bool]


def decided_off_rocm(parents: Parents, node: ast.AST, off_rocm: OffRocm) -> bool:
    """``node`` (a test) changes nothing on ROCm, because the ``and`` it is a part of holds
    another part never true there (:func:`_cuda_only`, or what ``off_rocm`` recognises):
    ``major == 10 and is_cuda_version_at_least(12, 8)`` is False on every ROCm GPU whatever the
    capability says. Also when ``node`` is (a part of an ``and`` that is) what a helper
    returns, the helper is private to its module (as :func:`_called_only_where_guarded` asks),
    and every use of it is such a part or already tells ROCm apart: ``def _is_sm_10x(): return
    cap[0] == 10`` used only as ``_is_sm_10x() and is_cuda_version_at_least(12, 8)``."""
    return _decided_off_rocm(parents, node, off_rocm, frozenset())


def _decided_off_rocm(
    parents: Parents, node: ast.AST, off_rocm: OffRocm, seen: frozenset[ast.AST]
) -> bool:
    child, parent = node, parents.get(node)
    while isinstance(parent, (ast.BoolOp, ast.UnaryOp)):
        if isinstance(parent, ast.BoolOp) and isinstance(parent.op, ast.And):
            for value in parent.values:
                if value is not child and (_cuda_only(parents, value) or off_rocm(parents, value)):
                    return True
        child, parent = parent, parents.get(parent)
    if not isinstance(parent, ast.Return):
        return False
    function = scope_of(parents, parent)
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or function in seen:
        return False
    top = module_of(parents, function)
    if top is None:
        return False
    index = module_index(top)
    owner = index.parents.get(function)
    if isinstance(owner, ast.ClassDef):
        key = "." + function.name
    elif owner is top:
        key = function.name
    else:
        return False
    if (
        not (function.name.startswith("_") and not function.name.endswith("__"))
        and not index.script
    ):
        return False  # another module may call it
    inner = seen | {function}
    uses = [
        use
        for use in index.loads.get(key, [])
        if not any(up is function for _, up in ancestors(index.parents, use))
    ]
    for use in uses:
        call = index.parents.get(use)
        if not (isinstance(call, ast.Call) and call.func is use):
            return False  # passed on as a value: its callers are elsewhere
        if not (
            _decided_off_rocm(index.parents, call, off_rocm, inner)
            or _rocm_guarded(index.parents, call, frozenset())
        ):
            return False
    return bool(uses)
