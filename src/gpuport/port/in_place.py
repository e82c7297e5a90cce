"""``port --in-place`` as a transaction: a plan in a journal, verified backups, recovery.

Before any file is touched, the plan goes to ``files.PORT_JOURNAL_NAME`` in the project root
(each file, its backup's name and the SHA-256 of its original and of its translation). Then,
file by file: the backup is written whole, fsync'd, read back and compared, and only then is
the file replaced atomically (:mod:`gpuport.io`); the journal goes when all are done. A run
killed at any point leaves every file either as it was or translated with its complete
backup beside it. The next ``port --in-place`` finds the journal and recovers first: a
translated file keeps its verified backup, an untranslated one loses the backup the killed
run had begun (so the file is ported again), the killed run's temporary files go, and the
port proceeds as usual. Nothing is followed out of the project: a file reached through a
symbolic link that leaves it, or a file that is itself a link, is reported and left alone.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from gpuport.files import PORT_JOURNAL_NAME
from gpuport.io import (
    UnsafeWrite,
    is_temp_of,
    lstat_in,
    open_dir,
    read_regular,
    refuse_unless_regular,
    replace_in,
    write_atomic,
    write_backup,
)
from gpuport.port.model import FileResult, PortResult
from gpuport.port.write import UTF8_BOM, real_rel, reason

JOURNAL_VERSION = 1
MAX_JOURNAL_BYTES = 16 * 1024 * 1024


class JournalError(Exception):
    """The journal of an interrupted run cannot be read: one sentence saying what to do."""


@dataclass(frozen=True, slots=True)
class JournalEntry:
    """One file of the plan; ``path`` is relative to the project root, ``backup`` a name."""

    path: str
    backup: str
    original_sha256: str
    translated_sha256: str
    backup_existed: bool  # a backup was there before (replaced with --force): never removed


@dataclass(slots=True)
class Recovery:
    """What recovering from an interrupted run did."""

    kept: int = 0  # translated files kept, with their verified backups
    rolled_back: int = 0  # files the killed run had not replaced: its backup removed
    temporaries: int = 0  # temporary files of the killed run removed
    problems: list[str] = field(default_factory=list)

    @property
    def found(self) -> bool:
        return bool(self.kept or self.rolled_back or self.problems)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def project_base(root: Path) -> Path:
    """The folder of the journal and of the paths in it: the project, or a file's folder."""
    return root if root.is_dir() else root.parent


def write_in_place(root: Path, result: PortResult, backup_suffix: str, force: bool) -> list[str]:
    """Replace each changed file, keeping its original as FILE + suffix; the problems."""
    # Not streamed like the diff and --out (issue 10): the journal names every edit, with the
    # hashes of both texts, before the first file is touched, so every translation is held here.
    problems: list[str] = []
    base = project_base(root)
    planned = _plan(root, base, result, backup_suffix, force, problems)
    if not planned:
        return problems
    journal = {
        "tool": "gpuport",
        "journal": "port --in-place",
        "version": JOURNAL_VERSION,
        "files": [asdict(entry) for entry, _, _ in planned],
    }
    try:
        write_atomic(base / PORT_JOURNAL_NAME, json.dumps(journal, indent=1) + "\n", root=base)
    except OSError as exc:
        problems.append(f"{PORT_JOURNAL_NAME}: nothing edited: could not write: {reason(exc)}")
        return problems
    # Two passes, so that each folder is fsync'd twice in all rather than twice per file:
    # four fsyncs per file made porting 300 files in place twice as slow as before.
    backed_up = []
    for entry, shown, data in planned:
        try:
            _back_up(base, entry, force)
        except OSError as exc:
            problems.append(f"{shown}: not edited: {reason(exc)}")
        else:
            backed_up.append((entry, shown, data))
    _sync_folders(base, [entry for entry, _, _ in backed_up])  # every backup is on disk
    for entry, shown, data in backed_up:
        try:
            _replace(base, entry, data)
        except OSError as exc:
            problems.append(f"{shown}: not edited: {reason(exc)}")
    _sync_folders(base, [entry for entry, _, _ in backed_up])
    with open_dir(base) as dir_fd:
        os.unlink(PORT_JOURNAL_NAME, dir_fd=dir_fd)
        os.fsync(dir_fd)
    return problems


def _plan(
    root: Path,
    base: Path,
    result: PortResult,
    backup_suffix: str,
    force: bool,
    problems: list[str],
) -> list[tuple[JournalEntry, str, bytes]]:
    """Each changed file that may be edited: its entry, its name as shown, its new bytes."""
    planned: list[tuple[JournalEntry, str, bytes]] = []
    seen: set[str] = set()
    for file in result.files:
        if not file.changed:
            continue
        try:
            entry = _plan_one(root, base, file, backup_suffix, force)
        except OSError as exc:
            problems.append(f"{file.path}: not edited: {reason(exc)}")
            continue
        if isinstance(entry, str):
            problems.append(f"{file.path}: not edited: {entry}")
        elif entry[0].path not in seen:  # one file reached twice through a link in the project
            seen.add(entry[0].path)
            planned.append((entry[0], file.path, entry[1]))
    return planned


def _plan_one(
    root: Path, base: Path, file: FileResult, backup_suffix: str, force: bool
) -> tuple[JournalEntry, bytes] | str:
    """The entry and new bytes of one file, or why it is not edited."""
    path = root / file.path if root.is_dir() else root
    if path.is_symlink():
        return (
            f"it is a symbolic link (to {os.readlink(path)}); gpuport does not turn links into "
            "files: port the file it points to"
        )
    rel = real_rel(root, file.path) if root.is_dir() else root.name
    if rel is None or rel == ".":
        return "it is reached through a symbolic link that leads out of the project"
    name = PurePosixPath(rel).name
    backup = name + backup_suffix
    with open_dir((base / rel).parent, base) as dir_fd:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        refuse_unless_regular(st, path)
        if not force and (st.st_mode & 0o222 == 0 or not os.access(name, os.W_OK, dir_fd=dir_fd)):
            return "it is read-only (use --force to edit it anyway; its mode is kept)"
        backup_st = lstat_in(dir_fd, backup)
        if backup_st is not None:
            if not stat.S_ISREG(backup_st.st_mode):
                return (
                    f"its backup name {backup} is taken by a symbolic link or a file that is "
                    "not regular, which gpuport never replaces, even with --force: move it away"
                )
            if not force:
                return (
                    f"its backup {backup} already exists "
                    "(move it away, or use --force to replace it)"
                )
        original = read_regular(dir_fd, name, path)
    text = original.removeprefix(UTF8_BOM).decode("utf-8", "surrogateescape")
    if text != file.original:
        return "it changed while gpuport was porting it (run the port again)"
    assert file.translated is not None
    bom = UTF8_BOM if original.startswith(UTF8_BOM) else b""
    data = bom + file.translated.encode("utf-8", "surrogateescape")
    entry = JournalEntry(rel, backup, _sha256(original), _sha256(data), backup_st is not None)
    return entry, data


def _back_up(base: Path, entry: JournalEntry, force: bool) -> None:
    """Keep ``entry``'s file as its backup (verified), and check it is what was ported."""
    name = PurePosixPath(entry.path).name
    shown = base / entry.path
    with open_dir(shown.parent, base) as dir_fd:
        original = write_backup(
            dir_fd, name, entry.backup, replace=force, shown=shown, sync_dir=False
        )
        if _sha256(original) != entry.original_sha256:
            if not entry.backup_existed:
                os.unlink(entry.backup, dir_fd=dir_fd)
            raise UnsafeWrite(shown, "it changed while gpuport was porting it")


def _replace(base: Path, entry: JournalEntry, data: bytes) -> None:
    """Replace ``entry``'s file by its translation; on failure, drop the unneeded backup."""
    name = PurePosixPath(entry.path).name
    shown = base / entry.path
    with open_dir(shown.parent, base) as dir_fd:
        try:
            replace_in(dir_fd, name, data, shown=shown, sync_dir=False)
        except BaseException:
            # the file is still the original: left there, the backup would stop the next run
            still_original = _sha256(read_regular(dir_fd, name, shown)) == entry.original_sha256
            if still_original and not entry.backup_existed:
                with contextlib.suppress(OSError):
                    os.unlink(entry.backup, dir_fd=dir_fd)
            raise


def _sync_folders(base: Path, entries: list[JournalEntry]) -> None:
    """fsync each folder that holds one of ``entries`` (its new names survive a power cut)."""
    for folder in sorted({PurePosixPath(entry.path).parent for entry in entries}):
        with open_dir(base / folder, base) as dir_fd:
            os.fsync(dir_fd)


def recover(root: Path) -> Recovery:
    """Bring the files of an interrupted ``port --in-place`` to a clean state (module doc).

    Raises :class:`JournalError` when a journal is there but cannot be read.
    """
    base = project_base(root)
    recovery = Recovery()
    journal_path = base / PORT_JOURNAL_NAME
    with open_dir(base) as dir_fd:
        recovery.temporaries += _remove_temporaries(dir_fd, (PORT_JOURNAL_NAME,))
        st = lstat_in(dir_fd, PORT_JOURNAL_NAME)
        if st is None:
            return recovery
        try:
            refuse_unless_regular(st, journal_path)
            if st.st_size > MAX_JOURNAL_BYTES:
                raise ValueError(f"over {MAX_JOURNAL_BYTES:,} bytes")
            entries = _entries(json.loads(read_regular(dir_fd, PORT_JOURNAL_NAME, journal_path)))
        except (OSError, ValueError) as exc:
            detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise JournalError(
                f"{journal_path}: the journal of an interrupted port --in-place cannot be read "
                f"({detail}); check the files and their backups, then move it away"
            ) from None
    for entry in entries:
        try:
            _recover_one(base, entry, recovery)
        except OSError as exc:
            recovery.problems.append(f"{entry.path}: not recovered: {reason(exc)}")
    with open_dir(base) as dir_fd:
        os.unlink(PORT_JOURNAL_NAME, dir_fd=dir_fd)
        os.fsync(dir_fd)
    return recovery


def _entries(data: Any) -> list[JournalEntry]:
    """The journal's entries, each checked to name a file below the root; ValueError if not."""
    if not isinstance(data, dict) or data.get("version") != JOURNAL_VERSION:
        raise ValueError("not a gpuport journal of this version")
    files = data.get("files")
    if not isinstance(files, list):
        raise ValueError("no list of files")
    entries = []
    for item in files:
        try:
            entry = JournalEntry(**item)
        except TypeError:
            raise ValueError(f"a malformed entry: {item!r:.200}") from None
        strings = (entry.path, entry.backup, entry.original_sha256, entry.translated_sha256)
        rel = PurePosixPath(entry.path) if isinstance(entry.path, str) else None
        if (
            not all(isinstance(s, str) for s in strings)
            or rel is None
            or rel.is_absolute()
            or not rel.parts
            or ".." in rel.parts
            or "/" in entry.backup
            or entry.backup in ("", ".", "..", rel.name)
        ):
            raise ValueError(f"an entry that does not name a file in the project: {item!r:.200}")
        entries.append(entry)
    return entries


def _recover_one(base: Path, entry: JournalEntry, recovery: Recovery) -> None:
    name = PurePosixPath(entry.path).name
    shown = base / entry.path
    with open_dir(shown.parent, base) as dir_fd:
        recovery.temporaries += _remove_temporaries(dir_fd, (name, entry.backup))
        current = _sha256(read_regular(dir_fd, name, shown))
        backup_st = lstat_in(dir_fd, entry.backup)
        backup_ok = (
            backup_st is not None
            and stat.S_ISREG(backup_st.st_mode)
            and _sha256(read_regular(dir_fd, entry.backup, shown)) == entry.original_sha256
        )
        if current == entry.translated_sha256:
            if backup_ok:
                recovery.kept += 1
            else:
                recovery.problems.append(
                    f"{entry.path}: translated by the interrupted run, but its backup "
                    f"{entry.backup} is not the original any more: check both"
                )
        elif current == entry.original_sha256:
            ours = backup_st is not None and not entry.backup_existed
            if ours and backup_st is not None and stat.S_ISREG(backup_st.st_mode):
                os.unlink(entry.backup, dir_fd=dir_fd)
                os.fsync(dir_fd)
            recovery.rolled_back += 1
        else:
            recovery.problems.append(
                f"{entry.path}: changed since the interrupted run; left as it is, with "
                f"{entry.backup} if it is there"
            )


def _remove_temporaries(dir_fd: int, names: tuple[str, ...]) -> int:
    """Remove the temporary files of ``names`` an interrupted write left in ``dir_fd``."""
    removed = 0
    for candidate in os.listdir(dir_fd):
        if any(is_temp_of(candidate, name) for name in names):
            st = lstat_in(dir_fd, candidate)
            if st is not None and stat.S_ISREG(st.st_mode):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(candidate, dir_fd=dir_fd)
                    removed += 1
    return removed
