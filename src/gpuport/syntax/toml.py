"""TOML with positions: values come from ``tomllib``, lines and columns from :class:`TomlLocator`.

``tomllib`` gives values but no positions. :class:`TomlLocator` finds where a key or a string
value was written with a light scan of the text (table headers, then ``key =`` inside the
table's range, then the quoted string after it), which is all the dependency readers need to
point a finding at a line and an edit at a column.

Kept hand-written rather than delegated to ``tomlkit``, on measurements
(benchmarks/deps_readers.py, results in benchmarks/results/deps_readers.md): tomlkit 0.15.2
reads the same values as ``tomllib`` on every fixture, but its items carry no line or offset, so
positions would still have to be found in the text, and ``tomlkit.parse`` alone is 6-7x slower
than ``tomllib`` plus this locator on a generated 0.14 MB pyproject.toml (592 ms against 82 ms on
a loaded 2-core machine; 376 ms against 59 ms on a quiet one).
"""

from __future__ import annotations

import re
import tomllib
from typing import Any

from gpuport.findings import SkipKind, Skipped
from gpuport.syntax.text import LineIndex

_TOML_LINE_RE = re.compile(r"at line (\d+), column (\d+)")
_HEADER_RE = re.compile(r"^\s*\[(\[?)\s*(.+?)\s*\]\]?\s*(?:#.*)?$")


def parse_error(path: str, text: str, exc: tomllib.TOMLDecodeError) -> Skipped:
    """A parse error as an input problem on the line ``tomllib`` names."""
    message = str(exc)
    match = _TOML_LINE_RE.search(message)
    if match:
        line = int(match.group(1))
    else:  # "at end of document": the file stops in the middle of something
        line = max(1, len(text.splitlines())) if "end of document" in message else 0
    return Skipped(path, SkipKind.MALFORMED, f"TOML does not parse: {message}", line)


def load_document(text: str, path: str) -> dict[str, Any] | Skipped:
    """The parsed document, or the parse error as an input problem."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        return parse_error(path, text, exc)


def _key_parts(text: str) -> tuple[str, ...]:
    """``tool."uv" . index`` -> ("tool", "uv", "index")."""
    parts = re.findall(r'"((?:[^"\\]|\\.)*)"|\'([^\']*)\'|([A-Za-z0-9_-]+)', text)
    return tuple(a or b or c for a, b, c in parts)


class TomlLocator:
    """Finds the lines where TOML keys and string values were written."""

    def __init__(self, text: str) -> None:
        self.text = text
        # TOML lines end at "\n" only, as tomllib counts them, and so does LineIndex.
        self.lines = LineIndex(text)
        self.line_starts = self.lines.starts
        # (header key parts, is array-of-tables, offset of the header line, offset of the end)
        self.tables: list[tuple[tuple[str, ...], bool, int, int]] = []
        in_multiline: str | None = None
        for number, line in enumerate(text.split("\n")):
            header = _HEADER_RE.match(line) if in_multiline is None else None
            if header:
                start = self.line_starts[number]
                self.tables.append((_key_parts(header.group(2)), bool(header.group(1)), start, 0))
            for quote in ('"""', "'''"):
                if line.count(quote) % 2 == 1:
                    if in_multiline is None:
                        in_multiline = quote
                    elif in_multiline == quote:
                        in_multiline = None
        ends = [t[2] for t in self.tables[1:]] + [len(text)] if self.tables else []
        self.tables = [(k, a, s, e) for (k, a, s, _), e in zip(self.tables, ends, strict=True)]

    def line_of(self, offset: int) -> int:
        """1-based line number of a character offset."""
        return self.lines.position(offset)[0]

    def ranges(self, header: tuple[str, ...]) -> list[tuple[int, int]]:
        """Text ranges of the tables with this header (several for arrays of tables)."""
        if not header:
            end = self.tables[0][2] if self.tables else len(self.text)
            return [(0, end)]
        return [(s, e) for k, _a, s, e in self.tables if k == header]

    def key_offset(self, path: tuple[str, ...], occurrence: int = 0) -> int | None:
        """Offset just after the ``=`` of the key at ``path`` (table header + dotted key)."""
        for split in range(len(path) - 1, -1, -1):
            header, key = path[:split], path[split:]
            ranges = self.ranges(header)
            if not ranges:
                continue
            start, end = ranges[min(occurrence, len(ranges) - 1)]
            pattern = r"\s*\.\s*".join(
                rf"""(?:"{re.escape(part)}"|'{re.escape(part)}'|{re.escape(part)})"""
                for part in key
            )
            match = re.compile(rf"^[ \t]*{pattern}[ \t]*=", re.MULTILINE).search(
                self.text, start, end
            )
            if match:
                return match.end()
        return None

    def header_line(self, header: tuple[str, ...], occurrence: int = 0) -> int:
        ranges = self.ranges(header)
        if not ranges:
            return 1
        return self.line_of(ranges[min(occurrence, len(ranges) - 1)][0])

    def string_after(self, value: str, offset: int) -> int | None:
        """Offset of the quoted string ``value`` at or after ``offset`` (basic or literal)."""
        best: int | None = None
        escaped = value.replace("\\", "\\\\").replace('"', '\\"')
        for quoted in (f'"{escaped}"', f"'{value}'"):
            found = self.text.find(quoted, offset)
            if found >= 0 and (best is None or found < best):
                best = found
        return best
