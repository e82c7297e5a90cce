"""Jupyter notebooks: the code cells, each with the .ipynb line of every source line, and IPython syntax.

Rule-neutral: the cells' source is read from the parsed JSON, and the position of each source
string in the file from one pass of a small JSON tokenizer, so that findings point at lines of
the ``.ipynb`` file. IPython magics are blanked out of a cell (keeping its line numbers) and its
shell lines (``!cmd``, ``%%bash`` cells, ``%system``) and ``%env`` settings are collected.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

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
class Cell:
    number: int  # 1-based position among all cells
    source: str
    raw_lines: tuple[int, ...]  # line in the .ipynb file of each line of ``source``


@dataclass(slots=True)
class PreparedCell:
    python: str  # the source with magics and shell lines blanked
    shell: list[tuple[int, str]]  # (cell line, command) for ! lines and shell cells
    env: list[tuple[int, str]]  # (cell line, variable) set by %env
    is_python: bool


class NotebookError(ValueError):
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
    """Offset -> 1-based line number, for offsets visited in increasing order.

    Not :class:`gpuport.syntax.text.LineIndex`, which indexes every line start up front: a
    notebook's JSON is mostly outputs (base64 images), and only the cells' source lines are
    asked for. For a 5 MB notebook of 25 cells, counting line breaks up to each asked offset
    took 1.6 ms; indexing the whole text took 143 ms (x86_64, Python 3.11).
    """

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


def notebook_cells(text: str, notebook: Any) -> list[Cell]:
    """The code cells of a parsed notebook, each with its source and .ipynb line numbers."""
    if not isinstance(notebook, dict):
        raise NotebookError("not a Jupyter notebook (the top level is not a JSON object)")
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
        raise NotebookError("not a Jupyter notebook (no 'cells' list)")
    offsets = _source_offsets(text)
    lines = _LineCounter(text)
    cells: list[Cell] = []
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
        cells.append(Cell(number, "".join(pieces), _line_map(pieces, piece_lines)))
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


def prepare(source: str) -> PreparedCell:
    """Blank IPython syntax out of a cell, keeping line numbers; collect shell commands."""
    lines = source.split("\n")
    prepared = PreparedCell(source, [], [], True)
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
    continued: set[int] = set()  # lines that continue a shell command (after `\\`)
    for number, line in enumerate(lines, start=1):
        if number == 1 and not lines[0]:
            continue
        if number in continued:
            lines[number - 1] = ""
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
            command = shell_match.group(2)
            # `!pip install torch \` goes on over the next lines, as in a shell script.
            following = number
            while command.rstrip().endswith("\\") and following < len(lines):
                command = command.rstrip()[:-1] + " " + lines[following].strip()
                following += 1
                continued.add(following)
            prepared.shell.append((number, command))
            lines[number - 1] = f"{shell_match.group(1)}pass"
            continue
        help_match = _HELP_LINE_RE.match(line)
        if help_match:
            lines[number - 1] = f"{help_match.group(1)}pass"
    prepared.python = "\n".join(lines)
    return prepared


def notebook_language(notebook: dict[str, Any]) -> str:
    metadata = notebook.get("metadata")
    if not isinstance(metadata, dict):
        return ""
    for key, field_name in (("kernelspec", "language"), ("language_info", "name")):
        section = metadata.get(key)
        if isinstance(section, dict) and isinstance(section.get(field_name), str):
            return str(section[field_name]).lower()
    return ""
