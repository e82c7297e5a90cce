"""Scanner for Python files and Jupyter notebooks: parses each with ``ast`` and runs GP2xx.

Nothing is imported or executed. A file that mentions none of the words the rules look for
(``cuda``, ``nccl``, a CUDA-only package's name…) is not parsed at all: it cannot produce a
finding, so its syntax is not checked either. A notebook's code cells are parsed one by one
(IPython magics blanked out, ``!`` shell lines read for NVIDIA tools) and findings point at
the line of the ``.ipynb`` file that holds the source line.
"""

from __future__ import annotations

import ast
import functools
import json
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from gpuport import kb
from gpuport.files import FileKind, SourceText
from gpuport.findings import Finding, SkipKind, Skipped
from gpuport.scan.base import scanner
from gpuport.scan.python_rules import Hit, PythonChecker

# Words at least one rule needs to see before it can fire (matched case-insensitively).
# Package import names come from the knowledge base on top of these. Notebook shell lines
# such as `!ncu` are covered too: the cell text sits in a JSON string after a quote.
_RULE_WORDS = (
    "cuda",
    "nvidia",
    "nvcc",
    "nvprof",
    "nsys",
    "ncu ",
    "ncu'",
    'ncu"',
    "sanitizer",
    "cuobjdump",
    "nvdisasm",
    "dcgmi",
    "devicequery",
    "nccl",
    "nvtx",
    "cudnn",
    "tf32",
    "reduced_precision",
    "warp",
    "sdp",
    "inline_asm",
    "asm(",
    "asm (",
    "asm volatile",
    "asm __volatile",
    "device_name",
    "device_propert",
    "capability",
    "cpp_extension",
)


@functools.cache
def _relevant_words() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(word, the forms it must take) for the pre-check, lower case, most frequent first.

    A rule word counts anywhere; a package's import name only after a space or a quote, as
    in ``import x`` / ``from x`` / ``import_module("x")``, so that ``verl`` (a package) does
    not make every file mentioning "overlap" relevant. Words containing another are dropped.
    """
    forms: dict[str, tuple[str, ...]] = {word: (word,) for word in _RULE_WORDS}
    for package in kb.packages().values():
        if package.status is kb.PackageStatus.WORKS or (
            package.status is kb.PackageStatus.NEEDS_ROCM_BUILD and package.category == "framework"
        ):
            continue  # GP201 never reports these
        for name in package.import_names:
            top = name.split(".", 1)[0].lower()
            forms.setdefault(top, (f" {top}", f"'{top}", f'"{top}'))

    def implied(word: str, other: str) -> bool:
        """Whenever ``word`` is present in its forms, ``other`` is too: ``word`` is redundant."""
        if other == word:
            return False
        if other in _RULE_WORDS:
            return other in word
        return word not in _RULE_WORDS and word.startswith(other)

    kept = [
        (word, variants)
        for word, variants in forms.items()
        if not any(implied(word, other) for other in forms)
    ]
    return tuple(sorted(kept, key=lambda item: (item[0] != "cuda", item[0])))


def _relevant(text: str) -> bool:
    # Substring search on lower-cased text: far faster than one big regex alternation.
    lowered = text.lower()
    return any(
        word in lowered and any(form in lowered for form in forms)
        for word, forms in _relevant_words()
    )


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


def _finding(source: SourceText, hit: Hit, line: int, column: int, message: str) -> Finding:
    finding = hit.rule.finding(
        source.file.rel,
        line,
        column,
        message=message,
        fix=hit.fix,
        severity=hit.severity,
        confidence=hit.confidence,
    )
    extra = tuple(r for r in hit.references if r not in finding.references)
    return replace(finding, references=finding.references + extra) if extra else finding


def _parsable(source: SourceText) -> str:
    """The text to parse: bytes that were not UTF-8 (kept as surrogates) become '?'."""
    if source.problem is None:
        return source.text
    return source.text.encode("utf-8", "replace").decode("utf-8")


@scanner(FileKind.PYTHON, FileKind.SETUP_PY, name="python")
def scan_python(source: SourceText, enabled: frozenset[str]) -> Iterator[Finding | Skipped]:
    """GP2xx findings for one Python file (setup.py included)."""
    if not _relevant(source.text):
        return
    text = _parsable(source)
    try:
        tree = _parse(text, source.file.rel)
    except SyntaxError as exc:
        yield Skipped(source.file.rel, SkipKind.SYNTAX, _syntax_reason(exc), exc.lineno or 0)
        return
    except (ValueError, RecursionError, MemoryError) as exc:
        reason = f"Python code could not be parsed ({type(exc).__name__}: {exc})"
        yield Skipped(source.file.rel, SkipKind.SYNTAX, reason)
        return
    for hit in PythonChecker().check(tree, text):
        yield _finding(source, hit, hit.line, hit.column, hit.message)


# --------------------------------------------------------------------------------------------
# Notebooks
# --------------------------------------------------------------------------------------------

# Cell magics whose body is still Python, and those whose body is shell.
_PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug", "px", "record"})
_SHELL_CELL_MAGICS = frozenset({"bash", "sh", "script", "system"})
_LINE_MAGIC_RE = re.compile(r"^(\s*)%{1,2}([A-Za-z_][\w.]*)\s*(.*)$")
_SHELL_LINE_RE = re.compile(r"^(\s*)(?:[\w.,\s\[\]]+=\s*)?!(?!=)(.*)$")
_HELP_LINE_RE = re.compile(r"^(\s*)(?:\?\??[\w.]+|[\w.]+\?\??)\s*$")
_ENV_MAGIC_RE = re.compile(r"^([A-Za-z_]\w*)(?:\s*=\s*|\s+)\S")

# A JSON token: a whole string, or a structural character. Unrolled so that long strings
# (base64 images in outputs) are matched in one fast step.
_JSON_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[{}\[\]:,]')


@dataclass(frozen=True, slots=True)
class _Cell:
    number: int  # 1-based position among all cells
    source: str
    raw_lines: tuple[int, ...]  # line in the .ipynb file of each line of ``source``


@dataclass(slots=True)
class _PreparedCell:
    python: str  # the source with magics and shell lines blanked
    shell: list[tuple[int, str]]  # (cell line, command) for ! lines and shell cells
    env: list[tuple[int, str]]  # (cell line, variable) set by %env
    is_python: bool


class _NotebookError(ValueError):
    """The JSON is valid but is not a notebook gpuport can read."""


def _source_offsets(text: str) -> dict[tuple[int, ...], list[int]]:
    """Cell -> offsets in ``text`` of each string making up that cell's source.

    Cells are keyed ``(i,)`` for nbformat 4 (``cells[i].source``) and ``(w, i)`` for
    nbformat 3 (``worksheets[w].cells[i].input``).
    """
    offsets: dict[tuple[int, ...], list[int]] = {}
    # One frame per open container: [is_object, key or index, expecting a key]
    frames: list[list[Any]] = []
    for match in _JSON_TOKEN.finditer(text):
        token = match.group()
        char = token[0]
        if char == "{":
            frames.append([True, None, True])
        elif char == "[":
            frames.append([False, 0, False])
        elif char in "}]":
            if frames:
                frames.pop()
        elif char == ",":
            if frames:
                top = frames[-1]
                if top[0]:
                    top[2] = True
                else:
                    top[1] += 1
        elif char == ":":
            if frames:
                frames[-1][2] = False
        elif frames and frames[-1][0] and frames[-1][2]:
            frames[-1][1] = json.loads(token)  # an object key
        else:
            cell = _cell_of_string(frames)
            if cell is not None:
                offsets.setdefault(cell, []).append(match.start())
    return offsets


def _cell_of_string(frames: list[list[Any]]) -> tuple[int, ...] | None:
    """The cell whose source this string value belongs to, if it does."""
    depth = len(frames)
    if depth in (3, 4) and frames[0][1] == "cells" and frames[2][0] and frames[2][1] == "source":
        if depth == 4 and frames[3][0]:
            return None
        return (int(frames[1][1]),)
    if (
        depth in (5, 6)
        and frames[0][1] == "worksheets"
        and frames[2][1] == "cells"
        and frames[4][0]
        and frames[4][1] == "input"
    ):
        if depth == 6 and frames[5][0]:
            return None
        return (int(frames[1][1]), int(frames[3][1]))
    return None


class _LineCounter:
    """Offset -> 1-based line number, for offsets visited in increasing order."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._offset = 0
        self._line = 1

    def line_at(self, offset: int) -> int:
        if offset < self._offset:
            self._offset, self._line = 0, 1
        self._line += self._text.count("\n", self._offset, offset)
        self._offset = offset
        return self._line


def _notebook_cells(text: str, notebook: Any) -> list[_Cell]:
    """The code cells of a parsed notebook, each with its source and .ipynb line numbers."""
    if not isinstance(notebook, dict):
        raise _NotebookError("not a Jupyter notebook (the top level is not a JSON object)")
    raw_cells: list[tuple[tuple[int, ...], Any]]
    if isinstance(notebook.get("cells"), list):
        raw_cells = [((i,), cell) for i, cell in enumerate(notebook["cells"])]
        source_key = "source"
    elif isinstance(notebook.get("worksheets"), list):
        raw_cells = [
            ((w, i), cell)
            for w, sheet in enumerate(notebook["worksheets"])
            if isinstance(sheet, dict) and isinstance(sheet.get("cells"), list)
            for i, cell in enumerate(sheet["cells"])
        ]
        source_key = "input"
    else:
        raise _NotebookError("not a Jupyter notebook (no 'cells' list)")
    offsets = _source_offsets(text)
    lines = _LineCounter(text)
    cells: list[_Cell] = []
    for number, (key, cell) in enumerate(raw_cells, start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        pieces = cell.get(source_key, "")
        if isinstance(pieces, str):
            pieces = [pieces]
        if not isinstance(pieces, list) or not all(isinstance(p, str) for p in pieces):
            continue
        found = offsets.get(key, [])
        if len(found) == len(pieces):
            piece_lines = [lines.line_at(offset) for offset in found]
        else:  # unexpected layout: point every line at the cell's first string
            first = lines.line_at(found[0]) if found else 0
            piece_lines = [first] * len(pieces)
        cells.append(_Cell(number, "".join(pieces), _line_map(pieces, piece_lines)))
    return cells


def _line_map(pieces: list[str], piece_lines: list[int]) -> tuple[int, ...]:
    """The .ipynb line of each source line; a line takes the line of the piece it starts in."""
    result: list[int] = []
    at_line_start = True
    for piece, raw_line in zip(pieces, piece_lines, strict=True):
        parts = piece.split("\n")
        for k, part in enumerate(parts):
            last = k == len(parts) - 1
            if at_line_start and (part or not last):
                result.append(raw_line)
                at_line_start = False
            if not last:
                at_line_start = True
    return tuple(result)


def _prepare(source: str) -> _PreparedCell:
    """Blank IPython syntax out of a cell, keeping line numbers; collect shell commands."""
    lines = source.split("\n")
    prepared = _PreparedCell(source, [], [], True)
    first = _LINE_MAGIC_RE.match(lines[0]) if lines else None
    if first and lines[0].lstrip().startswith("%%"):
        magic, argument = first.group(2), first.group(3)
        shell_script = magic == "script" and argument.split()[:1] in (["bash"], ["sh"])
        if magic in _SHELL_CELL_MAGICS and (magic != "script" or shell_script):
            prepared.shell = [(n, line) for n, line in enumerate(lines[1:], start=2)]
            prepared.is_python = False
            return prepared
        writes_python = magic in ("writefile", "file") and argument.strip().endswith(".py")
        if magic not in _PYTHON_CELL_MAGICS and not writes_python:
            prepared.is_python = False
            return prepared
        lines[0] = ""
    for number, line in enumerate(lines, start=1):
        if number == 1 and not lines[0]:
            continue
        magic_match = _LINE_MAGIC_RE.match(line)
        if magic_match:
            indent, magic, argument = magic_match.groups()
            if magic in ("system", "sx"):
                prepared.shell.append((number, argument))
            elif magic in ("env", "set_env"):
                env = _ENV_MAGIC_RE.match(argument)
                if env:
                    prepared.env.append((number, env.group(1)))
            lines[number - 1] = f"{indent}pass"
            continue
        shell_match = _SHELL_LINE_RE.match(line)
        if shell_match and not line.lstrip().startswith("#"):
            prepared.shell.append((number, shell_match.group(2)))
            lines[number - 1] = f"{shell_match.group(1)}pass"
            continue
        help_match = _HELP_LINE_RE.match(line)
        if help_match:
            lines[number - 1] = f"{help_match.group(1)}pass"
    prepared.python = "\n".join(lines)
    return prepared


def _notebook_language(notebook: dict[str, Any]) -> str:
    metadata = notebook.get("metadata")
    if not isinstance(metadata, dict):
        return ""
    for key, field_name in (("kernelspec", "language"), ("language_info", "name")):
        section = metadata.get(key)
        if isinstance(section, dict) and isinstance(section.get(field_name), str):
            return str(section[field_name]).lower()
    return ""


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
    if not _relevant(text):
        if not isinstance(notebook, dict) or not (
            isinstance(notebook.get("cells"), list) or isinstance(notebook.get("worksheets"), list)
        ):
            yield Skipped(rel, SkipKind.MALFORMED, "not a Jupyter notebook (no 'cells' list)")
        return
    try:
        cells = _notebook_cells(text, notebook)
    except _NotebookError as exc:
        yield Skipped(rel, SkipKind.MALFORMED, str(exc))
        return
    language = _notebook_language(notebook)
    if language and language not in ("python", "python3", "ipython", "ipython3"):
        reason = f"notebook kernel language is {language!r}; gpuport reads Python notebooks only"
        yield Skipped(rel, SkipKind.SYNTAX, reason)
        return
    checker = PythonChecker()
    for cell in cells:
        yield from _scan_cell(source, checker, cell)


def _scan_cell(
    source: SourceText, checker: PythonChecker, cell: _Cell
) -> Iterator[Finding | Skipped]:
    def raw_line(cell_line: int) -> int:
        if 0 < cell_line <= len(cell.raw_lines):
            return cell.raw_lines[cell_line - 1]
        return cell.raw_lines[-1] if cell.raw_lines else 0

    def place(hit: Hit) -> Finding:
        message = f"cell {cell.number}, line {hit.line}: {hit.message}"
        return _finding(source, hit, raw_line(hit.line), 0, message)

    prepared = _prepare(cell.source)
    hits: list[Hit] = []
    for line, command in prepared.shell:
        hits += checker.shell_command(command, line)
    for line, name in prepared.env:
        hits += checker.environment(name, line, write=True)
    if prepared.is_python:  # every cell: an import in one resolves names in the next
        try:
            tree = _parse(prepared.python, f"{source.file.rel}#cell{cell.number}")
        except SyntaxError as exc:
            reason = (
                f"cell {cell.number}, line {exc.lineno}: {_syntax_reason(exc)}; "
                "the other cells were analysed"
            )
            yield Skipped(
                source.file.rel, SkipKind.SYNTAX, reason, raw_line(exc.lineno or 0), partial=True
            )
        except (ValueError, RecursionError, MemoryError) as exc:
            reason = f"cell {cell.number} could not be parsed ({type(exc).__name__})"
            yield Skipped(source.file.rel, SkipKind.SYNTAX, reason, raw_line(1), partial=True)
        else:
            hits += checker.check(tree, prepared.python)
    for hit in sorted(hits, key=lambda h: (h.line, h.column)):
        yield place(hit)
