"""Reading a project's build files for the model: inside the root, size-capped, never executed."""

from __future__ import annotations

import ast
import functools
import os
import warnings
from pathlib import Path, PurePosixPath

from gpuport.read_policy import ReadRefused, read_within
from gpuport.syntax.cxx import code_only

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
        # Each file's bytes, read once: the model's readers of headers and sources asked for
        # them 3-4 times each (DeepSpeed: 769 reads of 330 files).
        self._read: dict[str, bytes] = {}
        self._refused: dict[str, int] = {}  # the largest limit a read of each file failed at
        self._code: dict[str, str] = {}

    def data(self, rel: str, limit: int) -> bytes | None:
        """The bytes of ``rel`` (None: missing, outside the root, not regular, or too large)."""
        known = self._read.get(rel)
        if known is not None:  # a read under ``limit`` gives all of a file no larger than it
            if len(known) <= limit:
                return known
        elif limit > self._refused.get(rel, -1):
            try:
                path = self.root.joinpath(*PurePosixPath(rel).parts)
                data = read_within(self.root, path, limit)
            except (OSError, ReadRefused):
                self._refused[rel] = limit
            else:
                self.bytes_read += len(data)
                self._read[rel] = data
                return data
        self.unreadable.append(rel)
        return None

    def code(self, text: str) -> str:
        """``text`` with C/C++ comments and string contents blanked (:func:`code_only`), worked
        out once per text (the model's header readers asked for the same headers' code twice)."""
        code = self._code.get(text)
        if code is None:
            code = self._code[text] = code_only(text)
        return code

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


@functools.lru_cache(maxsize=32)
def tree_nodes(tree: ast.AST) -> tuple[ast.AST, ...]:
    """Every node of a :func:`python_tree`, in :func:`ast.walk`'s order, listed once: the
    model's readers walk the same setup.py 10 times (DeepSpeed's: 8 ms of its 80 ms)."""
    return tuple(ast.walk(tree))


def is_project_file(root: Path, rel: str) -> bool:
    """``rel`` names a regular file (not a link) under ``root``, with no ``..`` in it."""
    parts = PurePosixPath(rel).parts
    if not parts or ".." in parts:
        return False
    # os.path rather than Path: DeepSpeed's op builders ask 328 times (3 ms less)
    path = os.path.join(root, *parts)
    return os.path.isfile(path) and not os.path.islink(path)
