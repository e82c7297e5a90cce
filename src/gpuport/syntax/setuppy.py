"""setuptools' dependency lists: ``setup(...)`` keywords of setup.py (read with :mod:`ast`,
never run) and the ``[options]`` of setup.cfg.

A literal list (or a name bound to one, grown with ``+=``, ``append`` or ``extend``) is read
item by item with its line; anything computed is noted as an input problem, not guessed.
"""

from __future__ import annotations

import ast
import re
import warnings

from gpuport.findings import SkipKind, Skipped
from gpuport.syntax.dependencies import (
    ComputedList,
    DependencyFile,
    FileFormat,
    IndexRole,
    IndexSource,
    string_requirement,
)

_SETUP_KEYWORDS = ("install_requires", "extras_require", "setup_requires", "tests_require")


def parse_setup_py(text: str, path: str) -> DependencyFile:
    """Literal dependency lists of ``setup(...)`` calls; computed values are noted, not run."""
    result = DependencyFile(path, FileFormat.PYTHON, text)
    try:
        with warnings.catch_warnings():
            # Odd literals in user code raise SyntaxWarning on stderr; a stage never prints.
            warnings.simplefilter("ignore")
            tree = ast.parse(text, filename=path)
    except SyntaxError as exc:
        line = exc.lineno or 0
        result.problems.append(
            Skipped(path, SkipKind.SYNTAX, f"Python syntax error: {exc.msg}", line)
        )
        return result
    except ValueError as exc:  # NUL bytes and the like
        result.problems.append(Skipped(path, SkipKind.SYNTAX, f"cannot parse: {exc}", 0))
        return result
    assignments = _module_assignments(tree)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not _is_setup_call(node.func):
            continue
        for keyword in node.keywords:
            if keyword.arg in _SETUP_KEYWORDS:
                _setup_value(keyword.arg, keyword.value, assignments, path, result)
            elif (
                keyword.arg == "name"
                and isinstance(keyword.value, ast.Constant)
                and isinstance(keyword.value.value, str)
            ):
                result.project_name = keyword.value.value
            elif keyword.arg == "dependency_links":
                for element, line, column in _literal_strings(keyword.value, assignments) or []:
                    result.indexes.append(
                        IndexSource(
                            element, IndexRole.FIND_LINKS, path, line, column, "dependency_links"
                        )
                    )
    return result


def _is_setup_call(func: ast.expr) -> bool:
    if isinstance(func, ast.Name):
        return func.id == "setup"
    return isinstance(func, ast.Attribute) and func.attr == "setup"


def _module_assignments(tree: ast.Module) -> dict[str, ast.expr]:
    """Module-level ``NAME = <expr>`` as later ``+=``/append/extend leave it; never run."""
    return _block_assignments(tree.body, {}, 0)


def _block_assignments(
    body: list[ast.stmt], found: dict[str, ast.expr], depth: int
) -> dict[str, ast.expr]:
    """``found`` as the statements of ``body`` leave it. A module-level ``if``/``else`` that
    binds a name in its branches (``if ROCM: reqs = [...] else: reqs = [...]``) leaves it as
    ``<body> if <test> else <orelse>``: each branch's list is one the build may take, so
    :func:`_literal_strings` reads them all."""
    for statement in body:
        if isinstance(statement, ast.If) and depth < 3:
            taken = _block_assignments(statement.body, dict(found), depth + 1)
            other = _block_assignments(statement.orelse, dict(found), depth + 1)
            for name in taken.keys() | other.keys():
                then, orelse = taken.get(name), other.get(name)
                if then is orelse:
                    continue  # neither branch changed it
                if then is None or orelse is None:
                    # Bound in one branch only, and never before: the other binds it in a way
                    # not followed here (`reqs, tests = helper()`), so it stays unknown.
                    continue
                found[name] = ast.copy_location(
                    ast.IfExp(test=statement.test, body=then, orelse=orelse), statement
                )
            continue
        if isinstance(statement, ast.Assign):
            for target in statement.targets:
                if isinstance(target, ast.Name):
                    found[target.id] = statement.value
                elif isinstance(target, (ast.Tuple, ast.List)):
                    # `reqs, tests = helper()`: each name gets a part of a computed value
                    for element in target.elts:
                        if isinstance(element, ast.Name):
                            found[element.id] = statement.value
        elif (
            isinstance(statement, ast.AnnAssign)
            and isinstance(statement.target, ast.Name)
            and statement.value is not None
        ):
            found[statement.target.id] = statement.value
        elif (
            isinstance(statement, ast.AugAssign)
            and isinstance(statement.target, ast.Name)
            and statement.target.id in found
        ):
            name = statement.target.id
            found[name] = (
                _extended(found[name], statement.value)
                if isinstance(statement.op, ast.Add)
                else statement.value  # not a list any more: read as computed
            )
        elif (
            isinstance(statement, ast.Expr)
            and isinstance(call := statement.value, ast.Call)
            and isinstance(method := call.func, ast.Attribute)
            and isinstance(method.value, ast.Name)
            and method.value.id in found
        ):
            # REQS.append("x") / REQS.extend([...]) change the list setup() will see.
            name = method.value.id
            if method.attr in ("append", "extend") and len(call.args) == 1 and not call.keywords:
                added = call.args[0]
                if method.attr == "append":
                    added = ast.copy_location(ast.List(elts=[added], ctx=ast.Load()), added)
                found[name] = _extended(found[name], added)
            else:
                found[name] = call  # changed in a way gpuport does not follow: computed
    return found


def _extended(value: ast.expr, added: ast.expr) -> ast.expr:
    """``value + added``, merged into one literal list when both are literal lists."""
    if isinstance(value, (ast.List, ast.Tuple)) and isinstance(added, (ast.List, ast.Tuple)):
        return ast.copy_location(ast.List(elts=[*value.elts, *added.elts], ctx=ast.Load()), value)
    return ast.copy_location(ast.BinOp(left=value, op=ast.Add(), right=added), value)


def _literal_strings(
    node: ast.expr, assignments: dict[str, ast.expr], depth: int = 0
) -> list[tuple[str, int, int]] | None:
    """(string, line, column) for a literal list/tuple/str (or a name bound to one); else None."""
    if depth > 5:
        return None
    if isinstance(node, ast.Name) and node.id in assignments:
        return _literal_strings(assignments[node.id], assignments, depth + 1)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        # A multi-line string of requirements, one per line.
        items = []
        for offset, text in enumerate(node.value.splitlines()):
            if text.strip() and not text.strip().startswith("#"):
                items.append((text.strip(), node.lineno + offset, node.col_offset + 1))
        return items
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        items = []
        for element in node.elts:
            # `"triton" if sys.platform != "win32" else "triton-windows"`: either string
            choices = (
                [element.body, element.orelse] if isinstance(element, ast.IfExp) else [element]
            )
            for choice in choices:
                if isinstance(choice, ast.Constant) and isinstance(choice.value, str):
                    items.append((choice.value, choice.lineno, choice.col_offset + 1))
                else:
                    return None
        return items
    if isinstance(node, ast.IfExp):
        # Either list may be the one setup() gets: read both, each item once.
        then = _literal_strings(node.body, assignments, depth + 1)
        orelse = _literal_strings(node.orelse, assignments, depth + 1)
        if then is None or orelse is None:
            return None
        return list(dict.fromkeys(then + orelse))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left = _literal_strings(node.left, assignments, depth + 1)
        right = _literal_strings(node.right, assignments, depth + 1)
        if left is None or right is None:
            return None
        return left + right
    return None


def _setup_value(
    keyword: str,
    value: ast.expr,
    assignments: dict[str, ast.expr],
    path: str,
    result: DependencyFile,
) -> None:
    if keyword == "extras_require":
        mapping = value
        if isinstance(mapping, ast.Name) and mapping.id in assignments:
            mapping = assignments[mapping.id]
        if isinstance(mapping, ast.Dict):
            for key_node, item in zip(mapping.keys, mapping.values, strict=True):
                if isinstance(key_node, ast.Constant) and isinstance(key_node.value, str):
                    _setup_list(f"extras_require.{key_node.value}", item, assignments, path, result)
                else:
                    _note_computed("an extras_require key", item, path, result)
            return
        _note_computed(keyword, value, path, result, assignments)
        return
    _setup_list(keyword, value, assignments, path, result)


def _setup_list(
    section: str,
    value: ast.expr,
    assignments: dict[str, ast.expr],
    path: str,
    result: DependencyFile,
) -> None:
    items = _literal_strings(value, assignments)
    if items is None:
        _note_computed(section, value, path, result, assignments)
        return
    for text, line, column in items:
        requirement = string_requirement(text, result, line, column, section)
        if requirement is not None:
            result.requirements.append(requirement)


def _note_computed(
    section: str,
    value: ast.expr,
    path: str,
    result: DependencyFile,
    assignments: dict[str, ast.expr] | None = None,
) -> None:
    source = ast.unparse(value)
    shown = source if len(source) <= 60 else source[:57] + "..."
    problem = Skipped(
        path,
        SkipKind.UNREADABLE,
        f"{section} is computed ({shown}); setup.py is never run, so "
        "these dependencies were not checked (list them in pyproject.toml or a "
        "requirements file to have them checked)",
        value.lineno,
        True,
    )
    result.problems.append(problem)
    reads = _files_named(value, assignments)
    result.computed.append(
        ComputedList(section, shown, value.lineno, value.col_offset + 1, reads, problem)
    )


_FILE_NAME_RE = re.compile(r"[\w./-]*(?:requirements|requires|deps)[\w./-]*|[\w./-]+\.(?:txt|in)")


def _files_named(value: ast.expr, assignments: dict[str, ast.expr] | None) -> tuple[str, ...]:
    """File names written in the expression (``fetch_requirements('requirements/base.txt')``),
    or in what a module-level name it uses was bound to."""
    found: list[str] = []
    expressions = [value]
    for node in ast.walk(value):
        if isinstance(node, ast.Name) and assignments and node.id in assignments:
            expressions.append(assignments[node.id])
    for node in (sub for expression in expressions for sub in ast.walk(expression)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value.strip()
            if _FILE_NAME_RE.fullmatch(text) and text not in found:
                found.append(text)
    return tuple(found)


# ---------------------------------------------------------------------------------------------
# setup.cfg


def parse_setup_cfg(text: str, path: str) -> DependencyFile:
    """``[options] install_requires`` and ``[options.extras_require]`` of a setup.cfg."""
    import configparser  # only a setup.cfg needs it: not loaded for every setup.py

    result = DependencyFile(path, FileFormat.INI, text)
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text, source=path)
    except configparser.Error as exc:
        line = int(getattr(exc, "lineno", 0) or 0)
        if not line and isinstance(exc, configparser.ParsingError) and exc.errors:
            line = int(exc.errors[0][0])
        message = " ".join(str(exc).split())
        result.problems.append(
            Skipped(path, SkipKind.MALFORMED, f"INI does not parse: {message}", line)
        )
        return result
    section = ""
    key = ""
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        header = re.match(r"^\[\s*([^\]]+?)\s*\]", raw)
        if header:
            section, key = header.group(1).lower(), ""
            continue
        if not stripped or stripped.startswith(("#", ";")):
            continue
        continuation = raw[:1] in (" ", "\t") and key
        if not continuation:
            name, sep, value = raw.partition("=")
            if not sep:
                name, sep, value = raw.partition(":")
            key = name.strip().lower().replace("-", "_")
            target = _cfg_target(section, key)
            if target is None:
                key = ""
                continue
            if value.strip() and not value.strip().startswith("file:"):
                column = raw.index(value.strip()) + 1
                _cfg_requirement(value.strip(), target, number, column, result)
            elif value.strip().startswith("file:"):
                result.problems.append(
                    Skipped(
                        path,
                        SkipKind.UNREADABLE,
                        f"{key} reads {value.strip()}; scan that file on its own "
                        "(it is not followed)",
                        number,
                        True,
                    )
                )
            continue
        target = _cfg_target(section, key)
        if target is not None:
            _cfg_requirement(stripped, target, number, raw.index(stripped) + 1, result)
    return result


def _cfg_target(section: str, key: str) -> str | None:
    if section == "options" and key in ("install_requires", "setup_requires", "tests_require"):
        return key
    if section == "options.extras_require" and key:
        return f"extras_require.{key}"
    return None


def _cfg_requirement(
    text: str, section: str, line: int, column: int, result: DependencyFile
) -> None:
    text = re.sub(r"\s+[#;].*$", "", text).strip()
    if not text:
        return
    requirement = string_requirement(text, result, line, column, section)
    if requirement is not None:
        result.requirements.append(requirement)
