"""What gpuport may read: paths kept inside their root, and only regular files of bounded size.

Every read of a path a project controls goes through here: files found by the walk, ``-r``/``-c``
includes, and files named in ``[tool.gpuport]``. A path is resolved (symbolic links and ``..``
included) and must stay inside its root; the file is opened without following a link in its last
component and without blocking (``O_NOFOLLOW | O_NONBLOCK``), and the opened descriptor must be a
regular file, so a FIFO, a socket, a device node or a link swapped in after the check is refused
rather than read (``open(2)``: https://man7.org/linux/man-pages/man2/open.2.html). Reads stop one
byte past the limit, so a file that grows, or a ``/proc`` file that reports size 0, is still
bounded.
"""

from __future__ import annotations

import errno
import functools
import os
import stat
from pathlib import Path

from gpuport.findings import SkipKind

# Not every platform has these flags (O_NOFOLLOW and O_NONBLOCK are POSIX; Windows lacks them).
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)
_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CHUNK = 1024 * 1024
# Linux names the file behind each open descriptor here; elsewhere the name is resolved instead.
_FD_PATHS = "/proc/self/fd"
_HAS_FD_PATHS = os.path.isdir(_FD_PATHS)


class ReadRefused(Exception):
    """A path gpuport will not read: ``kind`` says which rule refused it, ``reason`` says why."""

    def __init__(self, kind: SkipKind, reason: str) -> None:
        super().__init__(reason)
        self.kind = kind
        self.reason = reason


# What each kind of file that is not a regular one is called, by its stat test.
_NOT_REGULAR_NAMES = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISLNK, "a symbolic link"),
)


def what_is(mode: int) -> str:
    """What a non-regular file is, in words: 'a FIFO (named pipe)', 'a socket'..."""
    return next((name for test, name in _NOT_REGULAR_NAMES if test(mode)), "not a regular file")


def is_within(real_root: str, path: str) -> bool:
    """Is ``path``, resolved, ``real_root`` itself or below it? (``real_root`` already resolved.)"""
    return _below(real_root, os.path.realpath(path))


def _below(real_root: str, real: str) -> bool:
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


@functools.lru_cache(maxsize=64)
def _real_root(root: str) -> str:
    """A root's real path, worked out once: every file of a scan is checked against it."""
    return os.path.realpath(root)


def resolve_within(root: Path | str, path: Path | str) -> str:
    """The real path of ``path``, which must stay inside ``root``.

    Raises :class:`ReadRefused` (``OUTSIDE_ROOT``) when links or ``..`` lead out of ``root``.
    """
    _named(path)
    real = os.path.realpath(path)
    if not _below(_real_root(os.fspath(root)), real):
        raise _outside(real)
    return real


def read_regular(path: Path | str, max_bytes: int) -> bytes:
    """The bytes of ``path`` (links followed) if it is a regular file of at most ``max_bytes``.

    For files the user named (``--baseline FILE``) or found by walking up (``pyproject.toml``).
    Raises :class:`ReadRefused` (``NOT_REGULAR``, ``TOO_LARGE``) or ``OSError``.
    """
    _named(path)
    fd = _open_regular(path, max_bytes, follow_links=True)
    try:
        return _read_fd(fd, max_bytes)
    finally:
        os.close(fd)


def read_within(root: Path | str, path: Path | str, max_bytes: int) -> bytes:
    """The bytes of ``path``, a regular file of at most ``max_bytes`` that is inside ``root``.

    Raises :class:`ReadRefused` (``OUTSIDE_ROOT``, ``NOT_REGULAR``, ``TOO_LARGE``) or
    ``OSError``. The file opened is checked, not only its name: on Linux its real path comes
    from the descriptor (``/proc/self/fd``, https://man7.org/linux/man-pages/man5/proc.5.html),
    so a folder swapped for a link after the check cannot lead the read elsewhere.
    """
    _named(path)
    real_root = _real_root(os.fspath(root))
    try:
        fd = _open_regular(path, max_bytes, follow_links=False)
    except _LastIsLink:  # a link inside the project is fine; resolve it and check where it leads
        path = resolve_within(real_root, path)
        try:
            fd = _open_regular(path, max_bytes, follow_links=False)
        except _LastIsLink:
            raise ReadRefused(
                SkipKind.OUTSIDE_ROOT, "a symbolic link appeared in its place; not followed"
            ) from None
    try:
        opened = _opened_path(fd) or os.path.realpath(path)
        if not _below(real_root, opened):
            raise _outside(opened)
        return _read_fd(fd, max_bytes)
    finally:
        os.close(fd)


def _named(path: Path | str) -> None:
    """Refuse a name no file can have (a NUL byte in it, from a project's text)."""
    if "\0" in os.fspath(path):
        raise ReadRefused(SkipKind.MISSING, "a file name cannot hold a NUL byte; not read")


class _LastIsLink(Exception):
    """The last component of a path is a symbolic link (and links were not to be followed)."""


def _outside(real: str) -> ReadRefused:
    return ReadRefused(SkipKind.OUTSIDE_ROOT, f"leads out of the project (to {real}); not read")


def _opened_path(fd: int) -> str | None:
    """The real path of the file open on ``fd``, where the system tells (Linux), else None."""
    if not _HAS_FD_PATHS:
        return None
    try:
        return os.readlink(f"{_FD_PATHS}/{fd}")
    except OSError:
        return None


def _open_regular(path: Path | str, max_bytes: int, *, follow_links: bool) -> int:
    """A descriptor on ``path``, refused unless it is a regular file of at most ``max_bytes``.

    Checked with ``stat`` before opening (a device node is never opened) and with ``fstat``
    after (the file may have been swapped since).
    """
    try:
        before = os.stat(path, follow_symlinks=follow_links)
    except OSError:
        before = None  # let open() give the system's reason
    if before is not None:
        if stat.S_ISLNK(before.st_mode):
            raise _LastIsLink
        _check(before, max_bytes)
    try:
        fd = os.open(path, _OPEN_FLAGS | (0 if follow_links else _NO_FOLLOW))
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow_links:
            raise _LastIsLink from None
        raise
    try:
        _check(os.fstat(fd), max_bytes)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _read_fd(fd: int, max_bytes: int) -> bytes:
    """At most ``max_bytes`` from ``fd``: one byte more means the file grew past the limit."""
    chunks: list[bytes] = []
    total = 0
    while total <= max_bytes:
        chunk = os.read(fd, min(_CHUNK, max_bytes + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    if total > max_bytes:
        raise ReadRefused(SkipKind.TOO_LARGE, _too_large(total, max_bytes, more=True))
    return b"".join(chunks)


def _check(st: os.stat_result, max_bytes: int) -> None:
    if not stat.S_ISREG(st.st_mode):
        raise ReadRefused(
            SkipKind.NOT_REGULAR, f"{what_is(st.st_mode)}, not a regular file; not read"
        )
    if st.st_size > max_bytes:
        raise ReadRefused(SkipKind.TOO_LARGE, _too_large(st.st_size, max_bytes))


def _too_large(size: int, max_bytes: int, *, more: bool = False) -> str:
    at_least = "at least " if more else ""
    return f"{at_least}{size:,} bytes is over the {max_bytes:,}-byte limit"
