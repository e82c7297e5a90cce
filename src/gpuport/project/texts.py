"""Reading a project's build files for the model: inside the root, size-capped, never executed."""

from __future__ import annotations

import ast
import functools
import warnings
from pathlib import Path, PurePosixPath

from gpuport.read_policy import ReadRefused, read_within

BUILD_FILE_BYTES = 1 << 20  # a setup.py, CMakeLists.txt or workflow larger than this is skipped
HEADER_BYTES = 256 << 10  # a compat header larger than this is not read for aliases
HEADER_BUDGET = 16 << 20  # the most header bytes one model reads in all
SOURCE_BYTES = 1 << 20  # a C++/CUDA source larger than this is not read for its includes
SOURCE_BUDGET = 16 << 20  # the most source bytes one model reads for includes in all


class ProjectTexts:
    """The project's files as text, each read at most once, with the bytes read counted."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.bytes_read = 0
        self.unreadable: list[str] = []
        self._cache: dict[str, str | None] = {}

    def data(self, rel: str, limit: int) -> bytes | None:
        """The bytes of ``rel`` (None: missing, outside the root, not regular, or too large)."""
        try:
            data = read_within(self.root, self.root.joinpath(*PurePosixPath(rel).parts), limit)
        except (OSError, ReadRefused):
            self.unreadable.append(rel)
            return None
        self.bytes_read += len(data)
        return data

    def text(self, rel: str, limit: int = BUILD_FILE_BYTES) -> str | None:
        if rel not in self._cache:
            data = self.data(rel, limit)
            self._cache[rel] = None if data is None else data.decode("utf-8", "replace")
        return self._cache[rel]


@functools.lru_cache(maxsize=32)
def python_tree(text: str) -> ast.Module | None:
    """A build script's syntax tree, or None when it does not parse (never run, never printed:
    odd literals raise SyntaxWarning, which a stage must not print).

    Kept for the next caller with the same text: the model's readers of setup.py (names,
    branches, extensions, extras, importers) each asked for it, and flash-attention's was
    parsed 14 times for 4 texts (33 of the model's 280 ms). Callers only read the tree."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def is_project_file(root: Path, rel: str) -> bool:
    """``rel`` names a regular file (not a link) under ``root``, with no ``..`` in it."""
    parts = PurePosixPath(rel).parts
    if not parts or ".." in parts:
        return False
    path = root.joinpath(*parts)
    return path.is_file() and not path.is_symlink()
