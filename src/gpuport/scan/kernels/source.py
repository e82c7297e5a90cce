"""One CUDA/C++ file as the kernel rules read it: its text, its code-only twin, and indexes built on demand."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import TypeVar

from gpuport.findings import Confidence, Finding, Fix
from gpuport.rules import Rule, needles_of
from gpuport.scan.kernels.constants import Constants
from gpuport.scan.kernels.names import Names, tracked_names
from gpuport.scan.kernels.ptx import AsmStatement, asm_statements
from gpuport.syntax.brackets import Brackets
from gpuport.syntax.text import LineIndex

# Starts at the '#' rather than at ``^`` (which Python's regex engine tries at every offset);
# that the '#' opens its line is checked with ``directive_line_start``.
_INCLUDE_RE = re.compile(r"#[ \t]*include(?:_next)?[ \t]*[<\"]([^>\"\r\n]+)[>\"]")

_Hit = TypeVar("_Hit", re.Match[str], tuple[int, int, str])


def directive_line_start(text: str, pos: int) -> int:
    """Where a ``re.M`` ``^`` before ``pos`` would match, past spaces and tabs only; or -1."""
    while pos > 0 and text[pos - 1] in " \t":
        pos -= 1
    return pos if pos == 0 or text[pos - 1] == "\n" else -1


class KernelSource:
    """One file's text, its code-only twin, and per-file indexes built once, on demand.

    ``code`` is the text with comments and the insides of string literals blanked
    (:func:`gpuport.syntax.cxx.code_only`), at the same offsets.
    """

    __slots__ = (
        "_asm",
        "_body",
        "_brackets",
        "_constants",
        "_include_spans",
        "_includes",
        "_lines",
        "_mentioned",
        "_names",
        "code",
        "rel",
        "text",
    )

    def __init__(self, rel: str, text: str, code: str) -> None:
        self.rel = rel
        self.text = text
        self.code = code
        self._lines: LineIndex | None = None
        self._includes: list[tuple[str, int]] | None = None
        self._include_spans: list[tuple[int, int]] = []
        self._body: str | None = None
        self._brackets: Brackets | None = None
        self._names: Names | None = None
        self._constants: Constants | None = None
        self._asm: list[AsmStatement] | None = None
        self._mentioned: dict[str, bool] = {}

    def position(self, offset: int) -> tuple[int, int]:
        lines = self._lines
        if lines is None:
            lines = self._lines = LineIndex(self.text, lone_cr_breaks=True)
        return lines.position(offset)

    def mentions(self, rule: Rule) -> bool:
        """Whether the code holds one of ``rule``'s needles: else that rule cannot fire.

        Looked for once per rule and file: the pass tests a rule's needles before its check
        does."""
        found = self._mentioned.get(rule.id)
        if found is None:
            found = self._mentioned[rule.id] = needles_of(rule).found_in(self.code)
        return found

    def line_of(self, offset: int) -> int:
        return self.position(offset)[0]

    def finding(
        self,
        rule: Rule,
        start: int,
        end: int | None = None,
        *,
        message: str | None = None,
        fix: Fix | None = None,
        confidence: Confidence | None = None,
    ) -> Finding:
        line, column = self.position(start)
        end_line, end_column = self.position(end) if end is not None else (line, 0)
        return rule.finding(
            self.rel,
            line,
            column,
            message=message,
            fix=fix,
            end_line=end_line,
            end_column=end_column,
            confidence=confidence,
        )

    def once_per_line(self, hits: Iterable[_Hit]) -> Iterator[_Hit]:
        """The first of ``hits`` (matches, or tuples starting with an offset) on each line."""
        seen: set[int] = set()
        for hit in hits:
            line = self.line_of(hit.start() if isinstance(hit, re.Match) else hit[0])
            if line not in seen:
                seen.add(line)
                yield hit

    def _index_includes(self) -> list[tuple[str, int]]:
        code = self.code
        includes: list[tuple[str, int]] = []
        if "include" in code:
            for m in _INCLUDE_RE.finditer(code):
                start = directive_line_start(code, m.start())
                if start >= 0:
                    includes.append((m.group(1).strip(), start))
                    self._include_spans.append((start, m.end()))
        self._includes = includes
        return includes

    @property
    def includes(self) -> list[tuple[str, int]]:
        """(header as written, offset of the directive) for every ``#include``."""
        if self._includes is None:
            return self._index_includes()
        return self._includes

    @property
    def body(self) -> str:
        """The code with ``#include`` lines blanked, so header names do not look like calls."""
        if self._body is None:
            if self._includes is None:
                self._index_includes()
            code = self.code
            pieces: list[str] = []
            done = 0
            for start, end in self._include_spans:
                pieces.append(code[done:start])
                pieces.append(" " * (end - start))
                done = end
            self._body = "".join(pieces) + code[done:] if pieces else code
        return self._body

    @property
    def brackets(self) -> Brackets:
        """The code's brackets, paired in one pass that the rules' questions share."""
        if self._brackets is None:
            self._brackets = Brackets(self.code, header_names=False)
            # read the whole file now: the rules ask in file order one after another, and a
            # pass that started at one rule's first bracket would start again at the next's
            self._brackets.closing(0, len(self.code))
        return self._brackets

    @property
    def names(self) -> Names:
        """The variables holding thread indices and lane numbers."""
        if self._names is None:
            self._names = tracked_names(self.code)
        return self._names

    @property
    def constants(self) -> Constants:
        """The file's named constants, looked up on demand."""
        if self._constants is None:
            self._constants = Constants(self.code)
        return self._constants

    @property
    def asm(self) -> list[AsmStatement]:
        """Every inline-assembly statement, with its PTX read."""
        if self._asm is None:
            self._asm = asm_statements(self.text, self.code, self.brackets)
        return self._asm
