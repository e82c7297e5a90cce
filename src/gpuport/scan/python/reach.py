"""Where a Python statement runs: only with CUDA, after a package probe, under a per-platform flag.

Also whether a program it starts may be missing (a ``try`` that carries on without it) and
whether its module names AMD tools. Each answers "does this code already take another way on a
ROCm machine?", from the child -> parent map the walk records, with the tests of
:mod:`gpuport.scan.python.guards` as building blocks.
"""

from __future__ import annotations

import ast
import functools
import re

from gpuport.scan.python.guards import (
    _BLOCK_ENDS,
    _TORCH_CUDA_VERSION,
    SCOPE_NODES,
    Parents,
    _ModuleIndex,
    _off_rocm,
    ancestors,
    availability_check,
    catches,
    mentions_rocm,
    module_index,
    module_of,
    none_compared,
    scope_of,
    tests_set,
    tests_unset,
)
from gpuport.scan.python.nodes import last_name
from gpuport.scan.python.nodes import walk as walk_nodes

# What starting a program that is not installed raises (FileNotFoundError, an OSError), or a
# handler broad enough to catch it.
_START_FAILURES = frozenset(
    {"FileNotFoundError", "OSError", "EnvironmentError", "IOError", "Exception", "BaseException"}
)


def _ends_the_run(handler: ast.ExceptHandler) -> bool:
    """The handler raises, or calls ``sys.exit()``/``exit()``/``os._exit()``."""
    for statement in handler.body:
        for inner in ast.walk(statement):
            if isinstance(inner, ast.Raise):
                return True
            if isinstance(inner, ast.Call) and last_name(inner.func) in ("exit", "quit", "_exit"):
                return True
    return False


def missing_program_handled(parents: Parents, node: ast.AST) -> bool:
    """``node`` (a call that starts a program) sits, within its own function, in the body of a
    ``try:`` whose handler catches a program that is not installed (a bare ``except:``,
    ``Exception``, ``OSError``, ``FileNotFoundError``) and carries on without raising or
    exiting: the code was written for machines without the program."""
    for child, parent in ancestors(parents, node):
        if isinstance(parent, SCOPE_NODES):
            return False
        if isinstance(parent, (ast.Try, ast.TryStar)) and child in parent.body:
            for handler in parent.handlers:
                if catches(handler, _START_FAILURES) and not _ends_the_run(handler):
                    return True
    return False


@functools.lru_cache(maxsize=8)
def _module_strings_matching(module: ast.AST, pattern: re.Pattern[str]) -> bool:
    return any(
        isinstance(sub, ast.Constant)
        and isinstance(sub.value, str)
        and pattern.fullmatch(sub.value) is not None
        for sub in walk_nodes(module)
    )


def module_has_string(parents: Parents, node: ast.AST, pattern: re.Pattern[str]) -> bool:
    """Some string literal anywhere in the module holding ``node`` matches ``pattern`` whole
    (computed once per module and pattern)."""
    module = module_of(parents, node)
    return module is not None and _module_strings_matching(module, pattern)


# -- CUDA-only branches: `if CUDA_HOME is not None:`, `if not torch.version.cuda: return` ----

# Where a CUDA toolkit lives: torch.utils.cpp_extension.CUDA_HOME is None on a machine without
# nvcc (a ROCm machine), and the environment variables are unset there.
# https://github.com/pytorch/pytorch/blob/main/torch/utils/cpp_extension.py (_find_cuda_home)
_CUDA_TOOLKIT_NAMES = frozenset({"CUDA_HOME", "CUDA_PATH"})
_TORCH_HIP_VERSION = ast.parse("torch.version.hip", mode="eval").body
_ENV_READS = frozenset({"get", "getenv"})


def _toolkit_value(node: ast.AST) -> bool:
    """``node`` is a CUDA toolkit location: the name ``CUDA_HOME`` (``cpp_extension.CUDA_HOME``)
    or a read of the variable (``os.environ.get("CUDA_HOME")``, ``os.getenv("CUDA_PATH")``)."""
    if isinstance(node, (ast.Name, ast.Attribute)):
        return last_name(node) in _CUDA_TOOLKIT_NAMES
    return (
        isinstance(node, ast.Call)
        and last_name(node.func) in _ENV_READS
        and bool(node.args)
        and isinstance(node.args[0], ast.Constant)
        and node.args[0].value in _CUDA_TOOLKIT_NAMES
    )


def _toolkit_set(test: ast.AST) -> bool:
    """``CUDA_HOME``, ``CUDA_HOME is not None``, ``os.getenv("CUDA_HOME")``, ``"CUDA_HOME" in
    os.environ``: true only where a CUDA toolkit is installed."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        if isinstance(test.ops[0], ast.In):
            return isinstance(test.left, ast.Constant) and test.left.value in _CUDA_TOOLKIT_NAMES
        compared = none_compared(test, ast.IsNot)
        return compared is not None and _toolkit_value(compared)
    return _toolkit_value(test)


def _toolkit_unset(test: ast.AST) -> bool:
    """``not CUDA_HOME``, ``CUDA_HOME is None``, ``not os.getenv("CUDA_HOME")``."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _toolkit_set(test.operand)
    tested = none_compared(test, ast.Is)
    return tested is not None and _toolkit_value(tested)


def cuda_present_test(test: ast.AST, toolkit: bool = True) -> bool:
    """``test`` holds only where CUDA is: ``torch.version.cuda`` set (None on a ROCm PyTorch),
    a CUDA toolkit found (``CUDA_HOME is not None``, ``os.getenv("CUDA_HOME")``, unset on a
    ROCm machine; only when ``toolkit``), or an ``and`` holding one of them."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(cuda_present_test(part, toolkit) for part in test.values)
    return _off_rocm(test) or (toolkit and _toolkit_set(test))


def cuda_absent_test(test: ast.AST) -> bool:
    """``test`` holds wherever CUDA is not: ``not torch.version.cuda``, ``torch.version.cuda is
    None``, ``torch.version.hip``, ``CUDA_HOME is None``, or an ``or`` holding one of them."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        return any(cuda_absent_test(part) for part in test.values)
    return (
        tests_unset(test, _TORCH_CUDA_VERSION)
        or tests_set(test, _TORCH_HIP_VERSION)
        or _toolkit_unset(test)
    )


def _leaves_quietly(statement: ast.stmt) -> bool:
    """``if <test>: return`` (or ``continue``/``break``): the code after it is skipped, the
    program goes on. Not a ``raise``: refusing to run is itself what a port must change."""
    return (
        isinstance(statement, ast.If)
        and bool(statement.body)
        and isinstance(statement.body[-1], (ast.Return, ast.Continue, ast.Break))
        and cuda_absent_test(statement.test)
    )


def _bare_exit(statement: ast.stmt) -> bool:
    """``if <test>: return`` with no value and no ``else``."""
    return (
        isinstance(statement, ast.If)
        and not statement.orelse
        and len(statement.body) == 1
        and isinstance(statement.body[0], ast.Return)
        and statement.body[0].value is None
    )


def _exits_like_the_next(block: list[ast.stmt], at: int, node: ast.AST) -> bool:
    """``block[at]`` is ``if <test holding node>: return``, and right after it come more such
    exits, one of them leaving wherever CUDA is not (``if os.environ.get("X"): return`` then
    ``if not torch.version.cuda: return``): on ROCm every way out returns the same nothing,
    so the test's answer does not count there."""
    statement = block[at]
    if not _bare_exit(statement) or not isinstance(statement, ast.If):
        return False
    if not any(sub is node for sub in ast.walk(statement.test)):
        return False
    for later in block[at + 1 :]:
        if not _bare_exit(later):
            return False
        if _leaves_quietly(later):
            return True
    return False


def runs_only_with_cuda(parents: Parents, node: ast.AST, toolkit: bool = True) -> bool:
    """``node`` runs, or its value counts, only where CUDA is, within its function: in the body
    of ``if CUDA_HOME is not None:`` / ``if torch.version.cuda:``, beside such a test in one
    ``and`` (``os.environ.get("TORCH_CUDA_ARCH_LIST") is None and CUDA_HOME is not None``),
    after ``if not torch.version.cuda: return`` in the same or an enclosing block, or in the
    test of a bare ``return`` that the next such exit makes moot. Such code is the CUDA side
    of a split the project already makes. With ``toolkit`` False, a CUDA toolkit test
    (``CUDA_HOME is not None``) does not count: for code that itself looks for the toolkit."""
    for child, parent in ancestors(parents, node):
        if isinstance(parent, (ast.If, ast.IfExp, ast.While)):
            body = parent.body
            in_body = child in body if isinstance(body, list) else child is body
            if in_body and cuda_present_test(parent.test, toolkit):
                return True
        elif (
            isinstance(parent, ast.BoolOp)
            and isinstance(parent.op, ast.And)
            and any(cuda_present_test(part, toolkit) for part in parent.values if part is not child)
        ):
            return True
        for name in ("body", "orelse", "finalbody"):
            block = getattr(parent, name, None)
            if not (isinstance(block, list) and child in block):
                continue
            at = block.index(child)
            if any(
                _leaves_quietly(s) and (toolkit or not _toolkit_unset(s.test)) for s in block[:at]
            ) or _exits_like_the_next(block, at, node):
                return True
        if isinstance(parent, SCOPE_NODES):
            return False
    return False


# -- An import reached only once the package is known to be there ---------------------------

_FIND_SPEC_CALLS = frozenset({"find_spec", "find_loader"})


def _probed_name(node: ast.AST) -> str | None:
    """The package ``node`` asks for: ``importlib.util.find_spec("vllm")`` gives ``vllm``; an
    availability check (``is_vllm_available()``, ``HAS_VLLM``) gives its lower-case name."""
    if (
        isinstance(node, ast.Call)
        and last_name(node.func) in _FIND_SPEC_CALLS
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        return node.args[0].value.split(".", 1)[0]
    if availability_check(node) and not isinstance(node, ast.BoolOp):
        return last_name(node.func if isinstance(node, ast.Call) else node).lower()
    return None


def _names_package(probed: str | None, package: str) -> bool:
    if probed is None:
        return False
    squashed = package.replace("_", "").lower()
    return probed == package or squashed in probed.replace("_", "")


def _tests_missing(test: ast.AST, package: str) -> bool:
    """``find_spec("x") is None``, ``not find_spec("x")``, ``not is_x_available()``, or an
    ``or`` holding one: true when package ``x`` is not installed."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        return any(_tests_missing(part, package) for part in test.values)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _names_package(_probed_name(test.operand), package)
    tested = none_compared(test, ast.Is)
    return tested is not None and _names_package(_probed_name(tested), package)


def _tests_present(test: ast.AST, package: str) -> bool:
    """``find_spec("x") is not None``, ``find_spec("x")``, ``is_x_available()``, or an ``and``
    holding one: true only when package ``x`` is installed."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(_tests_present(part, package) for part in test.values)
    compared = none_compared(test, ast.IsNot)
    return _names_package(_probed_name(test if compared is None else compared), package)


def import_probed(parents: Parents, node: ast.AST, package: str) -> bool:
    """The import ``node`` of top-level module ``package`` runs only once the package is
    known to be installed: in the body of ``if importlib.util.find_spec("x") is not None:`` /
    ``if is_x_available():``, or after ``if find_spec("x") is None: return`` in the same or an
    enclosing block of its function (there also ``… : raise``, a feature refusing with its
    own message; at module level a ``raise`` stops the whole module). Where the package is
    missing (a ROCm machine without its build) the code takes the other way, as with a
    ``try/except ImportError`` fallback."""
    function = isinstance(scope_of(parents, node), (ast.FunctionDef, ast.AsyncFunctionDef))
    for child, parent in ancestors(parents, node):
        if isinstance(parent, (ast.If, ast.IfExp)):
            body = parent.body
            in_body = child in body if isinstance(body, list) else child is body
            if in_body and _tests_present(parent.test, package):
                return True
        for name in ("body", "orelse", "finalbody"):
            block = getattr(parent, name, None)
            if not (isinstance(block, list) and child in block):
                continue
            for statement in block[: block.index(child)]:
                if (
                    isinstance(statement, ast.If)
                    and statement.body
                    and _tests_missing(statement.test, package)
                    and isinstance(statement.body[-1], _BLOCK_ENDS)
                    and (function or not isinstance(statement.body[-1], ast.Raise))
                ):
                    return True
        if isinstance(parent, SCOPE_NODES):
            return False
    return False


def _flag_tested(test: ast.AST) -> str | None:
    """The name ``test`` requires to be true: ``FLAG``, or one part of ``FLAG and …``."""
    if isinstance(test, ast.Name):
        return test.id
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        for part in test.values:
            if isinstance(part, ast.Name):
                return part.id
    return None


def _argument_passed(
    call: ast.Call, function: ast.FunctionDef | ast.AsyncFunctionDef, name: str
) -> ast.AST | None:
    """What ``call`` passes for ``function``'s parameter ``name`` (the default when it passes
    nothing); None when that cannot be told (``*args``, ``**kwargs``)."""
    for keyword in call.keywords:
        if keyword.arg == name:
            return keyword.value
        if keyword.arg is None:
            return None
    positional = [*function.args.posonlyargs, *function.args.args]
    names = [arg.arg for arg in positional]
    if name in names:
        at = names.index(name)
        if any(isinstance(arg, ast.Starred) for arg in call.args[: at + 1]):
            return None
        if at < len(call.args):
            return call.args[at]
        defaults = function.args.defaults
        first_default = len(positional) - len(defaults)
        return defaults[at - first_default] if at >= first_default else None
    kwonly = [arg.arg for arg in function.args.kwonlyargs]
    if name in kwonly:
        return function.args.kw_defaults[kwonly.index(name)]
    return None


def _flag_set_per_platform(
    index: _ModuleIndex,
    function: ast.FunctionDef | ast.AsyncFunctionDef,
    name: str,
    depth: int,
) -> bool:
    """Every call of the private helper ``function`` in its module passes for parameter
    ``name`` a value that tells ROCm apart (``USE_PTX=not IS_ROCM``), or hands on a flag of
    its own caller that every call of that one sets so (``scale(x, USE_PTX)``)."""
    private = function.name.startswith("_") and not function.name.endswith("__")
    if depth > 3 or not (private or index.script):
        return False
    key = "." + function.name if isinstance(index.parents.get(function), ast.ClassDef) else None
    calls = [
        call for use in index.loads.get(key or function.name, []) if (call := _called(index, use))
    ]
    if not calls:
        return False
    for call in calls:
        value = _argument_passed(call, function, name)
        if value is None:
            return False
        if mentions_rocm(value):
            continue
        caller = scope_of(index.parents, call)
        if not (
            isinstance(value, ast.Name)
            and isinstance(caller, (ast.FunctionDef, ast.AsyncFunctionDef))
            and caller is not function
            and value.id in _parameter_names(caller)
            and _flag_set_per_platform(index, caller, value.id, depth + 1)
        ):
            return False
    return True


def _called(index: _ModuleIndex, use: ast.AST) -> ast.Call | None:
    """The call ``use`` is the callee of: ``helper(…)``, or a Triton launch ``kernel[grid](…)``."""
    callee = use
    parent = index.parents.get(use)
    if isinstance(parent, ast.Subscript) and parent.value is use:
        callee, parent = parent, index.parents.get(parent)
    return parent if isinstance(parent, ast.Call) and parent.func is callee else None


def _parameter_names(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    arguments = function.args
    return {arg.arg for arg in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)}


def under_flag_set_per_platform(parents: Parents, node: ast.AST) -> bool:
    """``node`` runs only under ``if FLAG:`` where ``FLAG`` is a parameter of the enclosing
    private helper and every call of that helper in the module passes a value that tells ROCm
    apart (``USE_PTX=not IS_ROCM``, a Triton ``constexpr``), directly or through its caller's
    own parameter. The callers already choose the other way on ROCm, as an ``if not IS_ROCM:``
    around the code would."""
    module = module_of(parents, node)
    if module is None:
        return False
    index = module_index(module)
    for child, parent in ancestors(index.parents, node):
        if isinstance(parent, ast.If) and child in parent.body:
            flag = _flag_tested(parent.test)
            function = scope_of(index.parents, parent)
            if (
                flag is not None
                and isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
                and flag in _parameter_names(function)
                and _flag_set_per_platform(index, function, flag, 0)
            ):
                return True
        if isinstance(parent, SCOPE_NODES):
            return False
    return False
