"""Who calls a function: a public helper whose every call sits on the CUDA side of a ROCm test.

:func:`gpuport.scan.python.guards.rocm_guarded` follows a *private* helper (or one of a script)
to its callers in the module. A public one may also be called from other modules, so it is
followed only here, and only where it is cheap: the module holding the finding tests ROCm
somewhere (``if not self.is_rocm_pytorch(): assert_no_cuda_mismatch()``), and the helper's
name is looked up, as text, in the project's other Python files; every file that names it is
parsed and each use there must sit on the CUDA side too. An import that re-exports the name
without using it, a use in a string (``getattr(obj, "name")``), a file that cannot be read or
parsed: each keeps the finding (the helper may run on ROCm after all).
"""

from __future__ import annotations

import ast
import functools
import os
import re
import stat
import warnings
from collections.abc import Iterator
from pathlib import Path

from gpuport.scan.python import guards

_root: Path | None = None
_rel = ""  # the file being scanned, relative to _root
# False when the file's text cannot name ROCm: then no module index is built to ask
_may_name_rocm = True
_FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef
# Project folders no scan reads code from (the walk's own skips are wider; these only keep the
# text search small).
_SKIPPED_DIRS = frozenset({"node_modules", "__pycache__", "site-packages", "build", "dist"})
_MAX_FILES = 20_000
_MAX_BYTES = 2_000_000
_DEPTH = 3  # public callers of public callers…


def scanning(root: Path | None, rel: str = "", text: str | None = None) -> None:
    """The project root and path of the file about to be scanned (root None: no other files
    are looked at), and its text when known."""
    global _root, _rel, _may_name_rocm
    _root, _rel = root, rel  # its real path only when a helper is followed (per file: a cost)
    _may_name_rocm = text is None or guards.may_name_rocm(text)


@functools.lru_cache(maxsize=2)
def _project_files(root: Path) -> tuple[tuple[str, bytes], ...]:
    """(path, bytes) of the project's Python files, read once per process. Bytes, and the path
    as walked: only the few files that name a followed helper are decoded and have their real
    path resolved (:func:`_naming`). Decoding and resolving all of DeepSpeed's 836 took
    25 ms of the 41 ms this read cost."""
    found: list[tuple[str, bytes]] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in _SKIPPED_DIRS]
        for name in files:
            if not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            try:
                # a link may lead outside the project root, which gpuport never reads
                info = os.lstat(path)
                if stat.S_ISLNK(info.st_mode) or info.st_size > _MAX_BYTES:
                    continue
                with open(path, "rb") as handle:
                    found.append((path, handle.read()))
            except OSError:
                continue
            if len(found) > _MAX_FILES:
                return ()
    return tuple(found)


def _naming(root: Path, name: str) -> Iterator[tuple[str, str]]:
    """(real path, text) of the project's Python files whose text holds ``name``. A text
    (decoded with replacement characters) can hold the name only where its bytes hold the
    name's UTF-8 bytes: the name is an identifier, so it holds no replacement character."""
    encoded = name.encode("utf-8", "surrogatepass")
    for path, data in _project_files(root):
        if encoded in data:
            text = data.decode("utf-8", errors="replace")
            # as a file opened as text reads it (universal newlines)
            yield os.path.realpath(path), text.replace("\r\n", "\n").replace("\r", "\n")


@functools.lru_cache(maxsize=64)
def _parsed(path: str, text: str) -> ast.Module | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text, filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


@functools.lru_cache(maxsize=16)
def _tests_rocm(module: ast.Module) -> bool:
    """Some name the module loads names ROCm (``is_rocm_pytorch``, ``torch.version.hip``)."""
    return any(guards.rocm_identifier(key.lstrip(".")) for key in guards.module_index(module).loads)


def _enclosing_function(parents: guards.Parents, node: ast.AST) -> _FunctionNode | None:
    for _, parent in guards.ancestors(parents, node):
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return parent
        if isinstance(parent, (ast.Lambda, ast.ClassDef)):
            return None
    return None


def only_called_on_cuda_side(parents: guards.Parents, node: ast.AST) -> bool:
    """``node`` sits in a public module-level function or method of a module that tests ROCm,
    and every use of that function, in the module and in the project's other Python files,
    is code that already tells ROCm apart on its CUDA side (``if not self.is_rocm_pytorch():
    assert_no_cuda_mismatch()``, the ``else:`` of ``if is_rocm:``), directly or through
    other such helpers: the function is CUDA-path code, what it does there is no porting
    work. Private helpers are :func:`guards.rocm_guarded`'s own."""
    if not _may_name_rocm:  # the module index would be built for nothing (1 ms a file)
        return False
    module = guards.module_of(parents, node)
    if module is None or not _tests_rocm(module):
        return False
    index = guards.module_index(module)
    function = _enclosing_function(index.parents, node)
    if function is None:
        return False
    own = os.path.realpath(_root / _rel) if _root is not None else None
    return _cuda_side(module, own, function, frozenset(), 0)


def _cuda_side(
    module: ast.Module,
    own: str | None,
    function: _FunctionNode,
    seen: frozenset[ast.AST],
    depth: int,
) -> bool:
    name = function.name
    if function in seen or depth > _DEPTH or name.startswith("__"):
        return False
    index = guards.module_index(module)
    owner = index.parents.get(function)
    method = isinstance(owner, ast.ClassDef)
    if not (method or owner is module):
        return False  # a nested function: its callers are in the enclosing one
    key = "." + name if method else name
    inner = seen | {function}
    uses = [
        use
        for use in index.loads.get(key, [])
        if not any(up is function for _, up in guards.ancestors(index.parents, use))
    ]
    if not all(_use_on_cuda_side(module, own, use, inner, depth) for use in uses):
        return False
    if _root is None or own is None:
        return False
    word = re.compile(rf"\b{re.escape(name)}\b")
    elsewhere = 0
    for path, text in _naming(_root, name):
        # `in` first: a substring test is a C scan, the word regex tries every offset
        if path == own or name not in text or not word.search(text):
            continue
        other = _parsed(path, text)
        if other is None:
            return False
        counted = _uses_elsewhere(other, path, name, method, inner, depth)
        if counted is None:
            return False
        elsewhere += counted
    return bool(uses) or elsewhere > 0


def _use_on_cuda_side(
    module: ast.Module, own: str | None, use: ast.AST, seen: frozenset[ast.AST], depth: int
) -> bool:
    index = guards.module_index(module)
    if _on_cuda_side(index.parents, use):
        return True
    caller = _enclosing_function(index.parents, use)
    return caller is not None and _cuda_side(module, own, caller, seen, depth + 1)


def _uses_elsewhere(
    module: ast.Module,
    own: str,
    name: str,
    method: bool,
    seen: frozenset[ast.AST],
    depth: int,
) -> int | None:
    """How many uses of ``name`` another module makes, all on the CUDA side; None when one is
    not (or the name is re-exported, or named in a string)."""
    index = guards.module_index(module)
    bound = {name}
    for node in index.parents:
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name == name:
                    if not index.loads.get(alias.asname or name):
                        return None  # re-exported: callers beyond the project may use it
                    bound.add(alias.asname or name)
        elif isinstance(node, ast.Constant) and node.value == name:
            return None  # getattr(obj, "name"), __all__ = ["name"]
    keys = ["." + name] + ([] if method else sorted(bound))
    uses = [use for key in keys for use in index.loads.get(key, [])]
    if not all(_use_on_cuda_side(module, own, use, seen, depth + 1) for use in uses):
        return None
    return len(uses)


def _rocm_polarity(test: ast.AST) -> bool | None:
    """True: ``test`` holds wherever ROCm does (``torch.version.hip``, ``is_rocm()``), so its
    ``else`` runs only off ROCm; False: it holds only off ROCm (``not is_rocm()``,
    ``torch.version.hip is None``), so its body runs only there; None: it does not say. An
    ``and`` holds wherever ROCm does only when each part does (``is_rocm() and use_ck`` is
    False on ROCm without CK: its ``else`` runs there too), and only off ROCm when one part
    does; an ``or`` the other way round (review24)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _rocm_polarity(test.operand)
        return None if inner is None else not inner
    if isinstance(test, ast.BoolOp):
        parts = [_rocm_polarity(value) for value in test.values]
        one, every = (False, True) if isinstance(test.op, ast.And) else (True, False)
        if one in parts:
            return one
        return every if all(part is every for part in parts) else None
    if isinstance(test, ast.Compare):
        if len(test.ops) != 1 or not guards.mentions_rocm(test):
            return None
        op, right = test.ops[0], test.comparators[0]
        if isinstance(right, ast.Constant) and right.value is None:
            side = _rocm_polarity(test.left)
            if side is None:
                return None
            return side if isinstance(op, ast.IsNot) else not side
        if (
            isinstance(op, (ast.Eq, ast.NotEq))
            and isinstance(right, ast.Constant)
            and guards.mentions_rocm(right)
        ):
            # platform == "rocm"; not rocm_version == "6.0", False on other ROCm releases
            return isinstance(op, ast.Eq)
        return None
    if isinstance(test, (ast.Name, ast.Attribute, ast.Call)):
        return True if guards.mentions_rocm(test) else None
    return None


def _on_cuda_side(parents: guards.Parents, node: ast.AST) -> bool:
    """``node`` runs only where ROCm does not, within its function: in the body of an ``if``
    true only off ROCm (``if not is_rocm():``, ``if torch.version.cuda:``), the ``else`` of one
    true only on ROCm, after ``if is_rocm(): return``, or after such a test in an ``and``.
    Code in a ROCm branch, or under a test that does not say, is not."""
    for child, parent in guards.ancestors(parents, node):
        if isinstance(parent, (ast.If, ast.IfExp, ast.While)):
            body, orelse = parent.body, parent.orelse
            in_body = child in body if isinstance(body, list) else child is body
            in_else = child in orelse if isinstance(orelse, list) else child is orelse
            polarity = _rocm_polarity(parent.test)
            if in_body and (polarity is False or guards._cuda_only(parents, parent.test)):
                return True
            if in_else and polarity is True:
                return True
        elif (
            isinstance(parent, ast.BoolOp)
            and isinstance(parent.op, ast.And)
            and child in parent.values
            and any(
                _rocm_polarity(value) is False
                for value in parent.values[: parent.values.index(child)]
            )
        ):
            return True
        for name in ("body", "orelse", "finalbody"):
            block = getattr(parent, name, None)
            if (
                isinstance(block, list)
                and child in block
                and any(
                    isinstance(statement, ast.If)
                    and _rocm_polarity(statement.test) is True
                    and guards.rocm_early_exit(statement)
                    for statement in block[: block.index(child)]
                )
            ):
                return True
        if isinstance(parent, guards.SCOPE_NODES):
            return False
    return False
