"""The ``python`` and ``notebook`` scanners: parse with ``ast`` and walk for the enabled GP2xx rules.

Nothing is imported or executed. A file that holds none of the enabled rules' needles is not
parsed at all: no rule could fire in it, so its syntax is not checked either. A notebook's code
cells are parsed one by one (IPython magics blanked out, ``!`` shell lines read for NVIDIA
tools and, with the container rules, for pip installs; ``\\`` continues one onto the next
line) and findings point at the line of the ``.ipynb`` file that holds the source line.
"""

from __future__ import annotations

import ast
import functools
import json
import warnings
from collections.abc import Iterator
from dataclasses import replace

from gpuport.files import FileKind, SourceText
from gpuport.findings import Finding, Location, SkipKind, Skipped
from gpuport.scan.base import scanner
from gpuport.scan.python import callers
from gpuport.scan.python.checks import dispatch_for
from gpuport.scan.python.notebook import (
    Cell,
    NotebookError,
    notebook_cells,
    notebook_language,
    prepare,
)
from gpuport.scan.python.prefilter import file_prefilter
from gpuport.scan.python.walker import PythonWalker

_CONTAINER_COMMAND_WORDS = ("pip", "apt", "docker", "yum", "dnf")


@functools.cache
def _container_command_ids() -> frozenset[str]:
    """The container rules that read shell commands, which a notebook's `!` lines are too.
    Imported on first use: only notebooks need them, and the container scanner's import
    costs a scan of Python files alone ~34 ms (python -X importtime)."""
    from gpuport.scan.containers.analyze import CONTAINER_RULES

    return frozenset(r.id for r in CONTAINER_RULES)


def _parse(text: str, filename: str) -> ast.Module:
    """``ast.parse`` without the SyntaxWarnings (invalid escapes…) it would print."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(text, filename=filename)


def _syntax_reason(exc: SyntaxError) -> str:
    where = f"line {exc.lineno}" + (f", column {exc.offset}" if exc.offset else "")
    reason = f"Python syntax error: {exc.msg} ({where})"
    if "Missing parentheses in call to 'print'" in exc.msg:
        reason += "; this looks like Python 2 code"
    return reason


def _parsable(source: SourceText) -> str:
    """The text to parse: bytes that were not UTF-8 (kept as surrogates) become '?'."""
    if source.problem is None:
        return source.text
    return source.text.encode("utf-8", "replace").decode("utf-8")


def prime(enabled: frozenset[str], first_party: frozenset[str]) -> None:
    """Build the tables every file's scan looks up (the dispatch, the file pre-filter: about
    60 ms of needle sets) before the engine forks its workers, which then share them instead
    of each building its own. Asked once, so that what it builds on first use is built too."""
    file_prefilter(dispatch_for(enabled), first_party)("")


@scanner(FileKind.PYTHON, FileKind.SETUP_PY, name="python")
def scan_python(source: SourceText, enabled: frozenset[str]) -> Iterator[Finding | Skipped]:
    """GP2xx findings for one Python file (setup.py included)."""
    dispatch = dispatch_for(enabled)
    if not file_prefilter(dispatch, source.facts.first_party)(source.text):
        return
    text = _parsable(source)
    callers.scanning(source.file.root, source.file.rel, text)  # where its helpers' callers are
    try:
        tree = _parse(text, source.file.rel)
    except SyntaxError as exc:
        yield Skipped(source.file.rel, SkipKind.SYNTAX, _syntax_reason(exc), exc.lineno or 0)
        return
    except (ValueError, RecursionError, MemoryError) as exc:
        reason = f"Python code could not be parsed ({type(exc).__name__}: {exc})"
        yield Skipped(source.file.rel, SkipKind.SYNTAX, reason)
        return
    yield from PythonWalker(source.file.rel, dispatch, source.facts.first_party).walk(tree, text)


@scanner(FileKind.NOTEBOOK, name="notebook")
def scan_notebook(source: SourceText, enabled: frozenset[str]) -> Iterator[Finding | Skipped]:
    """GP2xx findings for a Jupyter notebook's code cells, at lines of the .ipynb file."""
    rel = source.file.rel
    text = source.text
    try:
        notebook = json.loads(text)
    except json.JSONDecodeError as exc:
        reason = f"notebook is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        yield Skipped(rel, SkipKind.MALFORMED, reason, exc.lineno)
        return
    except RecursionError:
        yield Skipped(rel, SkipKind.MALFORMED, "notebook JSON is nested too deeply to read")
        return
    dispatch = dispatch_for(enabled)
    shell_rules_may_fire = bool(enabled & _container_command_ids()) and any(
        word in text for word in _CONTAINER_COMMAND_WORDS
    )
    may_fire_in = file_prefilter(dispatch, source.facts.first_party, notebook=True)
    if not may_fire_in(text) and not shell_rules_may_fire:
        if not isinstance(notebook, dict) or not (
            isinstance(notebook.get("cells"), list) or isinstance(notebook.get("worksheets"), list)
        ):
            yield Skipped(rel, SkipKind.MALFORMED, "not a Jupyter notebook (no 'cells' list)")
        return
    try:
        cells = notebook_cells(text, notebook)
    except NotebookError as exc:
        yield Skipped(rel, SkipKind.MALFORMED, str(exc))
        return
    language = notebook_language(notebook)
    if language and language not in ("python", "python3", "ipython", "ipython3"):
        reason = f"notebook kernel language is {language!r}; gpuport reads Python notebooks only"
        yield Skipped(rel, SkipKind.SYNTAX, reason)
        return
    callers.scanning(None)  # a notebook's functions are not called from other files
    walker = PythonWalker(rel, dispatch, source.facts.first_party)
    for cell in cells:
        yield from _scan_cell(rel, walker, cell, enabled)


def _shell_findings(command: str, line: int, enabled: frozenset[str]) -> list[Finding]:
    """The container rules (GP403 CUDA wheels, GP411 build isolation…) on one `!` command, at
    its line of the cell: a notebook's `!pip install` is an install step like a RUN line."""
    if not enabled & _container_command_ids():
        return []
    from gpuport.edits import hits_to_findings
    from gpuport.scan.containers.analyze import analyze_commands
    from gpuport.syntax.shell import shell_commands

    hits = analyze_commands(command, shell_commands(command), enabled=enabled)
    return [
        replace(f, location=replace(f.location, line=line, end_line=line))
        for f in hits_to_findings("", command, hits)
    ]


def _scan_cell(
    rel: str, walker: PythonWalker, cell: Cell, enabled: frozenset[str]
) -> Iterator[Finding | Skipped]:
    def raw_line(cell_line: int) -> int:
        if 0 < cell_line <= len(cell.raw_lines):
            return cell.raw_lines[cell_line - 1]
        return cell.raw_lines[-1] if cell.raw_lines else 0

    def place(finding: Finding) -> Finding:
        """A finding at a line of the cell, moved to its line of the .ipynb file."""
        line = finding.location.line
        return replace(
            finding,
            message=f"cell {cell.number}, line {line}: {finding.message}",
            location=Location(rel, raw_line(line), 0, raw_line(line), 0),
        )

    prepared = prepare(cell.source)
    findings: list[Finding] = []
    for line, command in prepared.shell:
        findings += walker.shell_command(command, line)
        findings += _shell_findings(command, line, enabled)
    for line, name in prepared.env:
        findings += walker.environment(name, line)
    if prepared.is_python:  # every cell: an import in one resolves names in the next
        try:
            tree = _parse(prepared.python, f"{rel}#cell{cell.number}")
        except SyntaxError as exc:
            reason = (
                f"cell {cell.number}, line {exc.lineno}: {_syntax_reason(exc)}; "
                "the other cells were analysed"
            )
            yield Skipped(rel, SkipKind.SYNTAX, reason, raw_line(exc.lineno or 0), partial=True)
        except (ValueError, RecursionError, MemoryError) as exc:
            reason = f"cell {cell.number} could not be parsed ({type(exc).__name__})"
            yield Skipped(rel, SkipKind.SYNTAX, reason, raw_line(1), partial=True)
        else:
            findings += walker.walk(tree, prepared.python)
    for finding in sorted(findings, key=lambda f: (f.location.line, f.location.column)):
        yield place(finding)
