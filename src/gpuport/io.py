"""Safe file writes: atomic, never through a symbolic link, never over a non-regular file.

Every file gpuport writes goes through :func:`write_atomic`: the bytes go to a new temporary
file ``.NAME.XXXXXXXX.tmp`` beside NAME (created with ``O_EXCL|O_NOFOLLOW``), are fsync'd,
and the temporary file is renamed over NAME, so NAME is its old self or its whole new self.
A rename replaces the directory entry and never writes through a link; gpuport still refuses
to replace a symbolic link (``-o /dev/stdout``) or a device, FIFO or socket (``-o /dev/null``
as root), since the user asked for the thing behind it, not for a new file. Below an output
root (``port --out DIR``, ``port --in-place``) every folder is opened with ``O_NOFOLLOW``
from the root down, so a symlinked folder in the tree cannot send a write elsewhere.
:func:`write_backup` makes ``port --in-place``'s backups the same way, verified before use.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from gpuport.files import classify

_READ_CHUNK = 1 << 20
# What a temporary file of `NAME` looks like: `.NAME.` + random letters + `.tmp`; earlier
# gpuport releases used tempfile.mkstemp's 8 characters [a-z0-9_].
_TEMP_RANDOM = r"[A-Za-z0-9_]{6,}"


class UnsafeWrite(OSError):
    """gpuport will not write here; ``strerror`` says why, ``filename`` names the path.

    An :class:`OSError`, so that callers that report a file that cannot be written (the CLI's
    error handler, ``port``'s problem list) report this one the same way.
    """

    def __init__(self, path: str | os.PathLike[str], reason: str) -> None:
        super().__init__(errno.EPERM, reason, os.fspath(path))


def temp_name(name: str) -> str:
    """A fresh name for a temporary file of ``name``: ``.NAME.<8 hex>.tmp``."""
    return f".{name}.{secrets.token_hex(4)}.tmp"


def is_temp_of(candidate: str, name: str) -> bool:
    """Is ``candidate`` a temporary file that a write of ``name`` left behind?"""
    return re.fullmatch(rf"\.{re.escape(name)}\.{_TEMP_RANDOM}\.tmp", candidate) is not None


def lstat_in(dir_fd: int, name: str) -> os.stat_result | None:
    """``name``'s own status in the open folder ``dir_fd`` (a link's, not its target's), or
    None when there is no such entry."""
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def refuse_unless_regular(st: os.stat_result, shown: str | os.PathLike[str]) -> None:
    """Raise :class:`UnsafeWrite` unless ``st`` (an lstat) is a regular file."""
    if stat.S_ISLNK(st.st_mode):
        raise UnsafeWrite(
            shown, "is a symbolic link: gpuport does not write through or replace links"
        )
    if stat.S_ISDIR(st.st_mode):
        raise UnsafeWrite(shown, "is a folder")
    if not stat.S_ISREG(st.st_mode):
        raise UnsafeWrite(
            shown,
            "is not a regular file (a device, FIFO or socket): gpuport replaces only regular files",
        )


@contextlib.contextmanager
def open_dir(folder: Path, root: Path | None = None, *, create: bool = False) -> Iterator[int]:
    """A file descriptor of ``folder``, created first when ``create``.

    With ``root``, ``folder`` must be ``root`` or below it (as written, not resolved): every
    folder below ``root`` is opened with ``O_NOFOLLOW``, so a symbolic link on the way is
    refused (:class:`UnsafeWrite`) instead of followed. ``root`` itself is the user's choice.
    """
    if root is None:
        if create:
            folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            yield fd
        finally:
            os.close(fd)
        return
    parts = folder.relative_to(root).parts
    if create:
        root.mkdir(parents=True, exist_ok=True)
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        shown = root
        for part in parts:
            shown = shown / part
            if part in (".", ".."):
                raise UnsafeWrite(shown, "leads out of the output folder")
            child = _open_child_dir(fd, part, shown, create)
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


def _open_child_dir(parent_fd: int, name: str, shown: Path, create: bool) -> int:
    """Open folder ``name`` in ``parent_fd`` without following a link."""
    if create and lstat_in(parent_fd, name) is None:
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, 0o777, dir_fd=parent_fd)
    try:
        return os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=parent_fd)
    except OSError as exc:
        if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
            raise
        st = lstat_in(parent_fd, name)
        if st is not None:
            refuse_unless_regular(st, shown)
        raise UnsafeWrite(shown, "is not a folder") from None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, _READ_CHUNK):
        chunks.append(chunk)
    return b"".join(chunks)


def _new_file_mode() -> int:
    """What open() would give a new file: 0666 less the umask."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _keep_owner_and_mode(fd: int, like: os.stat_result | None, mode: int) -> None:
    if like is not None and hasattr(os, "fchown"):
        # Keeps a file owned by another user theirs when gpuport runs as root; a user who
        # may not give the file away (not root) keeps what the system allows.
        with contextlib.suppress(PermissionError):
            os.fchown(fd, like.st_uid, like.st_gid)
    os.fchmod(fd, mode)  # after chown, which may clear set-id bits


@dataclass(frozen=True, slots=True)
class _NewFile:
    """What a new file gets: its bytes (``fill`` writes them), owner, mode, and an fsync."""

    fill: Callable[[int], None]
    like: os.stat_result | None  # whose owner it takes (None: gpuport's own)
    mode: int
    durable: bool = True


def _create_exclusive(dir_fd: int, name: str, new: _NewFile) -> None:
    """Create ``name`` (never an existing file, never through a link) and fill it."""
    fd = os.open(
        name,
        os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
        0o600,
        dir_fd=dir_fd,
    )
    try:
        new.fill(fd)
        _keep_owner_and_mode(fd, new.like, new.mode)
        if new.durable:
            os.fsync(fd)
    finally:
        os.close(fd)


def _create_temp(dir_fd: int, name: str, new: _NewFile) -> str:
    """A new temporary file of ``name``, filled as ``new`` says; its name."""
    for _ in range(100):
        tmp = temp_name(name)
        try:
            _create_exclusive(dir_fd, tmp, new)
        except FileExistsError:
            continue
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dir_fd)
            raise
        return tmp
    raise FileExistsError(errno.EEXIST, "no free temporary name", name)


def _writer(data: bytes | Iterable[str]) -> Callable[[int], None]:
    """What fills a new file: bytes, or text in pieces (a big report), never held whole."""
    if isinstance(data, bytes):
        return lambda fd: _write_all(fd, data)

    def fill(fd: int) -> None:
        buffered: list[bytes] = []
        size = 0
        for piece in data:
            encoded = piece.encode("utf-8", "surrogateescape")
            buffered.append(encoded)
            size += len(encoded)
            if size >= _READ_CHUNK:  # a few large writes rather than one per piece
                _write_all(fd, b"".join(buffered))
                buffered, size = [], 0
        _write_all(fd, b"".join(buffered))

    return fill


def write_atomic(
    path: Path,
    data: str | bytes | Iterable[str],
    *,
    root: Path | None = None,
    backup_suffix: str | None = None,
    sync_dir: bool = True,
) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename.

    Text is encoded as UTF-8 with ``surrogateescape``, so undecodable bytes read earlier
    round-trip unchanged; text in pieces is written as it comes. An existing file keeps its mode and (where the system allows) its
    owner; a new one gets 0666 less the umask. Missing folders are created. With ``root``,
    no folder between ``root`` and ``path`` may be a symbolic link. With ``backup_suffix``,
    an existing file is first kept as ``path + suffix`` (see :func:`write_backup`). Raises
    :class:`UnsafeWrite` when ``path`` is a link or not a regular file, OSError otherwise.
    The file is fsync'd before the rename, and its folder after it unless not ``sync_dir``.
    """
    path = Path(path)
    payload = data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data
    with open_dir(path.parent, root, create=True) as dir_fd:
        old = lstat_in(dir_fd, path.name)
        if old is not None:
            refuse_unless_regular(old, path)
            if backup_suffix:
                write_backup(dir_fd, path.name, path.name + backup_suffix, shown=path)
        replace_in(dir_fd, path.name, payload, shown=path, sync_dir=sync_dir)


def replace_in(
    dir_fd: int,
    name: str,
    payload: bytes | Iterable[str],
    *,
    shown: str | os.PathLike[str],
    sync_dir: bool = True,
) -> None:
    """:func:`write_atomic` of ``name`` in the open folder ``dir_fd``.

    Without ``sync_dir`` the caller fsyncs the folder itself (once for many files).
    """
    old = lstat_in(dir_fd, name)
    if old is not None:
        refuse_unless_regular(old, shown)
    mode = stat.S_IMODE(old.st_mode) if old is not None else _new_file_mode()
    tmp = _create_temp(dir_fd, name, _NewFile(_writer(payload), old, mode))
    try:
        now = lstat_in(dir_fd, name)  # swapped for a link or a device meanwhile?
        if now is not None:
            refuse_unless_regular(now, shown)
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise
    if sync_dir:
        os.fsync(dir_fd)  # the rename itself survives a power cut


def read_regular(dir_fd: int, name: str, shown: str | os.PathLike[str]) -> bytes:
    """The bytes of the regular file ``name`` in ``dir_fd``, read without following a link."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafeWrite(shown, "is a symbolic link: not followed") from None
        raise
    try:
        refuse_unless_regular(os.fstat(fd), shown)
        return _read_all(fd)
    finally:
        os.close(fd)


def write_backup(
    dir_fd: int,
    name: str,
    backup_name: str,
    *,
    replace: bool = False,
    shown: str | os.PathLike[str] = "",
    sync_dir: bool = True,
) -> bytes:
    """Keep the regular file ``name`` as ``backup_name`` (same folder); return its bytes.

    The copy is a new file (``O_CREAT|O_EXCL|O_NOFOLLOW``, never an existing file or a
    link's target), written whole, fsync'd and read back and compared before it takes the
    backup's name with ``link()``, which never replaces an existing name. So a backup name
    holds a complete backup or nothing. An existing backup is an error (``FileExistsError``),
    unless ``replace`` and it is a regular file; a link or device there is never replaced.
    Without ``sync_dir`` the caller fsyncs the folder before relying on the backup.
    """
    shown = shown or name
    shown_backup = Path(os.fspath(shown)).with_name(backup_name)
    existing = lstat_in(dir_fd, backup_name)
    if existing is not None:
        refuse_unless_regular(existing, shown_backup)
        if not replace:
            raise FileExistsError(errno.EEXIST, "the backup already exists", str(shown_backup))
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
    try:
        like = os.fstat(fd)
        refuse_unless_regular(like, shown)
        original = _read_all(fd)
    finally:
        os.close(fd)
    tmp = _create_temp(
        dir_fd, backup_name, _NewFile(_writer(original), like, stat.S_IMODE(like.st_mode))
    )
    try:
        if read_regular(dir_fd, tmp, shown_backup) != original:
            raise OSError(errno.EIO, "the backup did not read back as written", str(shown_backup))
        if replace and existing is not None:
            os.replace(tmp, backup_name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        else:
            _publish(dir_fd, tmp, backup_name, original, like)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp, dir_fd=dir_fd)
    if sync_dir:
        os.fsync(dir_fd)
    return original


def _publish(dir_fd: int, tmp: str, name: str, data: bytes, like: os.stat_result) -> None:
    """Give the complete file ``tmp`` the new name ``name``, never replacing what is there."""
    try:
        os.link(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK):
            raise
        # a file system without hard links: create the name itself, exclusively
        _create_exclusive(dir_fd, name, _NewFile(_writer(data), like, stat.S_IMODE(like.st_mode)))
        if read_regular(dir_fd, name, name) != data:
            raise OSError(errno.EIO, "the backup did not read back as written", name) from None


def copy_file(
    src_dir_fd: int,
    name: str,
    dst_dir_fd: int,
    *,
    shown: str | os.PathLike[str],
    dst_name: str | None = None,
) -> None:
    """Copy the regular file ``name`` from one open folder to another (mode and times kept).

    The source is opened without following a link and must be a regular file (a FIFO would
    block, a device would never end); the copy (named ``dst_name``, by default ``name``) is a
    new file, or replaces a regular file atomically. Not fsync'd: a copied tree is a new
    tree, not a user's only copy.
    """
    dst_name = dst_name or name
    src = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=src_dir_fd)
    try:
        st = os.fstat(src)
        refuse_unless_regular(st, shown)

        def fill(dst: int) -> None:
            while chunk := os.read(src, _READ_CHUNK):
                _write_all(dst, chunk)
            os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns))

        copy = _NewFile(fill, None, stat.S_IMODE(st.st_mode), durable=False)
        old = lstat_in(dst_dir_fd, dst_name)
        if old is None:
            _create_exclusive(dst_dir_fd, dst_name, copy)
            return
        refuse_unless_regular(old, shown)
        tmp = _create_temp(dst_dir_fd, dst_name, copy)
        try:
            os.replace(tmp, dst_name, src_dir_fd=dst_dir_fd, dst_dir_fd=dst_dir_fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dst_dir_fd)
            raise
    finally:
        os.close(src)


def refuse_output(output: Path, project: Path) -> None:
    """Refuse (:class:`UnsafeWrite`) a report file that would replace what it must not.

    A symbolic link (``-o /dev/stdout``), a device, FIFO or socket (``-o /dev/null``), ``-``
    (no file, and not standard output either), or a file of the project that gpuport reads
    (its sources, requirements, pyproject.toml...). A new file, or one gpuport does not read
    (an older report), may be written anywhere.
    """
    if str(output) == "-":
        raise UnsafeWrite(output, "is not a file: leave out the option to write to standard output")
    try:
        st = output.lstat()
    except FileNotFoundError:
        return
    refuse_unless_regular(st, output)
    try:
        same_as_project = os.path.samefile(output, project)
        project_dir = project.resolve()
        inside = project_dir in output.resolve().parents
    except OSError:
        return
    if same_as_project or (
        inside and classify(output.name, output.resolve().parent.name) is not None
    ):
        raise UnsafeWrite(
            output, f"is one of the files gpuport reads in {project}: choose another file name"
        )


def refuse_outputs(project: Path, *outputs: Path | None) -> None:
    """:func:`refuse_output` for each output file given (None: not asked for)."""
    for output in outputs:
        if output is not None:
            refuse_output(output, project)
