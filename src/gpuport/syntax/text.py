"""Offsets in a text to 1-based lines and columns and back: the one implementation every reader uses."""

from __future__ import annotations

import bisect
import re


class LineIndex:
    """Offsets to 1-based (line, column) and back, for one text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0]
        for index, char in enumerate(text):
            if char == "\n":
                self.starts.append(index + 1)

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
