"""Offsets in a text to 1-based lines and columns and back, for every reader.

:class:`LineIndex` counts lines as compilers and most formats do (``\\n``; a lone ``\\r`` too
for C/C++); :class:`SplitLines` counts them as :meth:`str.splitlines` does, as pip and the
dependency-file readers do.
"""

from __future__ import annotations

import bisect
import re
from itertools import accumulate

_PLUS_ONE = (1).__add__
# What a C/C++ compiler takes for a line break: a lone '\r' (old Mac files) ends a line too.
_ANY_LINE_BREAK_RE = re.compile(r"\r\n|\r|\n")


class LineIndex:
    """Offsets to 1-based (line, column) and back, for one text.

    Lines end at '\\n' (so '\\r\\n' too); with ``lone_cr_breaks`` a lone '\\r' also ends a
    line, as it does for the C/C++ lexer (:mod:`gpuport.syntax.cxx`).
    """

    def __init__(self, text: str, *, lone_cr_breaks: bool = False) -> None:
        self.text = text
        if lone_cr_breaks and "\r" in text:
            self.starts = [0, *(m.end() for m in _ANY_LINE_BREAK_RE.finditer(text))]
        else:
            # Every line but the last is its length plus the '\n': summed in C, not in a
            # Python loop over the characters (13 times faster, measured over 21 MB of C++).
            lines = text.split("\n")
            del lines[-1]
            self.starts = list(accumulate(map(_PLUS_ONE, map(len, lines)), initial=0))

    def position(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.starts, offset) - 1
        return line + 1, offset - self.starts[line] + 1

    def line_start(self, offset: int) -> int:
        return self.starts[bisect.bisect_right(self.starts, offset) - 1]

    def line_end(self, offset: int) -> int:
        """The offset of the line break ending ``offset``'s line (or the end of the text)."""
        end = self.text.find("\n", offset)
        if end < 0:
            return len(self.text)
        return end - 1 if end > offset and self.text[end - 1] == "\r" else end

    def indentation(self, offset: int) -> str:
        start = self.line_start(offset)
        match = re.match(r"[ \t]*", self.text[start:])
        return match.group(0) if match else ""


class SplitLines:
    """A text's lines as :meth:`str.splitlines` counts them, with their offsets.

    The dependency readers count lines this way (as pip does), and so do the scan's hits and the
    port's rewriter of those files: a lone ``\\r``, a form feed and the other Unicode line breaks
    end a line too, where :class:`LineIndex` counts ``\\n`` only.
    """

    def __init__(self, text: str) -> None:
        raw = text.splitlines(keepends=True)
        self.text = text
        self.raw = raw  # each line with its line break
        self.lines = text.splitlines()
        self.starts = [0, *accumulate(len(line) for line in raw)]
        # The line break the file uses, for a line the fix adds (the port's convention).
        self.newline = next(
            (ending for line in raw if (ending := line[len(line.rstrip("\r\n")) :])), "\n"
        )

    def line(self, number: int) -> str:
        return self.lines[number - 1] if 0 < number <= len(self.lines) else ""

    def start(self, number: int) -> int:
        return self.starts[min(max(number, 1), len(self.starts)) - 1]

    def end(self, number: int) -> int:
        """The offset where line ``number``'s text ends (before its line break)."""
        return self.start(number) + len(self.line(number))

    def number(self, offset: int) -> int:
        """The 1-based number of the line ``offset`` is on."""
        return bisect.bisect_right(self.starts, offset)
