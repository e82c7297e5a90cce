"""The unified diff of a port, as ``git apply`` and ``patch -p1`` read it."""

from __future__ import annotations

import difflib
from collections.abc import Iterator

from gpuport.port.model import FileResult, PortResult

NO_NEWLINE = "\\ No newline at end of file\n"


def unified_diff(result: PortResult, context: int = 3) -> str:
    """Every changed file's diff, in path order (``a/`` and ``b/`` prefixes)."""
    return "".join(chunk for f in result.files for chunk in file_diff(f, context))


def file_diff(file: FileResult, context: int = 3) -> Iterator[str]:
    """The diff of one file; nothing when it did not change."""
    if not file.changed or file.translated is None:
        return
    before = file.original.splitlines(keepends=True)
    after = file.translated.splitlines(keepends=True)
    lines = difflib.unified_diff(
        before, after, fromfile=f"a/{file.path}", tofile=f"b/{file.new_path}", n=context
    )
    for line in lines:
        if line.endswith(("\n", "\r")):
            yield line
        else:
            # the last line of a file without a final newline, marked as diff(1) does
            yield line + "\n"
            yield NO_NEWLINE
