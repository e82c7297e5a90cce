"""The shape of the code base, as docs/architecture.md draws it, checked.

No import cycles between packages, no `type: ignore`, no module over ~800 lines that does not
say why, and no folder of a developer's machine named in the data that ships.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "gpuport"

# A module over ~800 lines is split, unless its docstring says why it stays long with the words
# "one cohesive".
LONG_MODULE_LINES = 800


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(SRC).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _unit(module: str) -> str:
    """The package a module belongs to: ``gpuport.scan.deps`` -> ``scan``; top modules are own."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "gpuport"


def _imports(module: str, path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names)
    return {name for name in found if name.startswith("gpuport")}


def _package_graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = defaultdict(set)
    for module, path in modules.items():
        for target in _imports(module, path):
            # `from gpuport import kb` names a module; `from gpuport.x import y` may name a symbol
            while target not in modules and "." in target:
                target = target.rpartition(".")[0]
            if target == "gpuport":
                continue
            a, b = _unit(module), _unit(target)
            if (a != b and a != "gpuport") or (a == "gpuport" and b != "gpuport"):
                graph[a].add(b)
    return graph


def _cycles(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    """Pairs of packages that reach each other."""

    def reach(start: str) -> set[str]:
        seen: set[str] = set()
        todo = [start]
        while todo:
            for nxt in graph.get(todo.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    reached = {node: reach(node) for node in list(graph)}
    return {
        (min(a, b), max(a, b))
        for a, targets in reached.items()
        for b in targets
        if a != b and a in reached.get(b, set())
    }


def test_no_import_cycles_between_packages() -> None:
    graph = _package_graph()
    assert {"cli", "scan", "port", "report", "syntax"} <= set(graph), sorted(graph)
    cycles = _cycles(graph)
    assert not cycles, f"import cycles between packages: {sorted(cycles)}"


def test_cycle_finder_sees_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == {("a", "b"), ("a", "c"), ("b", "c")}


def test_no_type_ignores() -> None:
    found = [
        f"{path.relative_to(SRC)}:{number}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"#\s*type:\s*ignore", line)
    ]
    assert not found, f"`type: ignore` in {found}: type the code instead"


def test_long_modules_say_why_they_are_one_cohesive_thing() -> None:
    problems = []
    for module, path in sorted(_modules().items()):
        text = path.read_text(encoding="utf-8")
        lines = text.count("\n")
        doc = ast.get_docstring(ast.parse(text)) or ""
        if lines > LONG_MODULE_LINES and "one cohesive" not in doc:
            problems.append(f"{module}: {lines} lines")
    assert not problems, "modules over the limit: " + ", ".join(problems)


_MACHINE_PATH_RE = re.compile(r"(?<![\w.])(?:/work/|/home/|/root/|/tmp/|/Users/|[A-Z]:\\\\)")


def test_no_machine_paths_in_shipped_files() -> None:
    """Data and templates that ship in the wheel name no folder of the machine they came from."""
    offenders = []
    for path in sorted(PACKAGE.rglob("*")):
        if path.is_file() and path.suffix != ".py" and path.suffix != ".pyc":
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if _MACHINE_PATH_RE.search(line):
                    offenders.append(f"{path.relative_to(SRC)}:{number}: {line.strip()[:80]}")
    assert not offenders, "\n".join(offenders)
