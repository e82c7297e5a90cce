"""Atomic file writes: a file is either its old self or its whole new self, never half."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path


def write_atomic(
    path: Path, data: str | bytes | Iterable[str], *, backup_suffix: str | None = None
) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename.

    With ``backup_suffix``, an existing file is first copied to ``path + suffix``. Text is
    encoded as UTF-8 with ``surrogateescape`` so that undecodable bytes read earlier
    round-trip unchanged; text in pieces (a big report) is written piece by piece, never
    held whole. File mode is kept when the file existed.
    """
    path = Path(path)
    pieces: Iterable[str | bytes] = [data] if isinstance(data, str | bytes) else data
    mode: int | None = None
    if path.exists():
        mode = path.stat().st_mode & 0o7777
        if backup_suffix:
            shutil.copy2(path, path.with_name(path.name + backup_suffix))
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            for piece in pieces:
                handle.write(
                    piece.encode("utf-8", "surrogateescape") if isinstance(piece, str) else piece
                )
            handle.flush()
            os.fsync(handle.fileno())
        if mode is None:  # a new file gets what open() would give it: 0666 less the umask
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
