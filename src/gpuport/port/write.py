"""Writing a port's result as a translated copy of the whole tree (``port --out DIR``).

The tree is copied entry by entry, never following a symbolic link: a link to a place in the
project becomes a relative link to the same place in the copy; a link that leads out of the
project, and a FIFO, socket or device, is not copied and is reported. Translations are then
written at each file's real path in the copy, with every folder opened without following a
link (:mod:`gpuport.io`), so nothing is written through a link and the copy never aliases
the source. A file that cannot be copied or written is a problem in the returned list, not
an exception, so the rest of the port still lands and the report says what did not.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path, PurePosixPath

from gpuport.files import DEFAULT_EXCLUDED_DIRS
from gpuport.io import UnsafeWrite, copy_file, open_dir, write_atomic
from gpuport.port.model import FileResult, PortResult
from gpuport.read_policy import what_is

UTF8_BOM = b"\xef\xbb\xbf"


def payload(file: FileResult) -> bytes:
    """The bytes of ``file``'s translation: its text, with the original's byte order mark."""
    assert file.translated is not None
    return (UTF8_BOM if file.bom else b"") + file.translated.encode("utf-8", "surrogateescape")


def reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def real_rel(root: Path, rel: str) -> str | None:
    """``rel``'s real path relative to the real ``root`` ("." for the root itself), with every
    symbolic link on the way resolved; None when it leads out of ``root``."""
    real_root = os.path.realpath(root)
    real = os.path.realpath(root / rel)
    if real != real_root and not real.startswith(real_root.rstrip(os.sep) + os.sep):
        return None
    return Path(os.path.relpath(real, real_root)).as_posix()


class _TreeCopy:
    """Copies a project folder into an output folder, entry by entry (see the module doc)."""

    def __init__(self, root: Path, out_dir: Path, problems: list[str]) -> None:
        self.root = root
        self.real_root = os.path.realpath(root)
        self.out_dir = out_dir
        self.problems = problems

    def copy(self, rel: str = "") -> None:
        source = self.root / rel if rel else self.root
        try:
            with os.scandir(source) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            self.problems.append(f"{rel or '.'}: not copied: {reason(exc)}")
            return
        try:
            with (
                open_dir(self.out_dir / rel, self.out_dir, create=True) as out_fd,
                open_dir(source) as src_fd,
            ):
                subfolders = [e for e in entries if self._copy_entry(e, rel, src_fd, out_fd)]
        except OSError as exc:
            self.problems.append(f"{rel or '.'}: not copied: {reason(exc)}")
            return
        for entry in subfolders:
            self.copy(f"{rel}/{entry.name}" if rel else entry.name)

    def _copy_entry(self, entry: os.DirEntry[str], rel_dir: str, src_fd: int, out_fd: int) -> bool:
        """Copy one entry that is not a folder; True for a folder to copy next."""
        rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
        try:
            st = entry.stat(follow_symlinks=False)
            if stat.S_ISDIR(st.st_mode):
                return entry.name not in DEFAULT_EXCLUDED_DIRS
            if stat.S_ISLNK(st.st_mode):
                self._copy_link(entry, rel, rel_dir, out_fd)
            elif stat.S_ISREG(st.st_mode):
                copy_file(src_fd, entry.name, out_fd, shown=self.out_dir / rel)
            else:
                self.problems.append(f"{rel}: not copied: {what_is(st.st_mode)}")
        except OSError as exc:
            self.problems.append(f"{rel}: not copied: {reason(exc)}")
        return False

    def _copy_link(self, entry: os.DirEntry[str], rel: str, rel_dir: str, out_fd: int) -> None:
        target = os.readlink(entry.path)
        inside = real_rel(self.root, rel)
        if inside is None:
            self.problems.append(
                f"{rel}: not copied: symbolic link to {target} leads out of the project"
            )
            return
        # the same place in the copy, whatever the link's own text says (an absolute link
        # into the project would point into the original)
        text = os.path.relpath(inside, rel_dir or ".")
        try:
            os.symlink(text, entry.name, dir_fd=out_fd)
        except FileExistsError:
            old = os.stat(entry.name, dir_fd=out_fd, follow_symlinks=False)
            if not stat.S_ISLNK(old.st_mode):
                raise UnsafeWrite(self.out_dir / rel, "exists and is not a link") from None
            os.unlink(entry.name, dir_fd=out_fd)  # an earlier copy's link (--force)
            os.symlink(text, entry.name, dir_fd=out_fd)


def write_tree_copy(root: Path, result: PortResult, out_dir: Path) -> list[str]:
    """Copy ``root`` to ``out_dir`` with every translated file in place of its original."""
    problems = copy_tree(root, out_dir)
    writer = TranslationWriter(root, out_dir, problems)
    for file in result.files:
        writer.write(file)
    return problems


def copy_tree(root: Path, out_dir: Path) -> list[str]:
    """Copy ``root`` (a folder or one file) to ``out_dir`` as it is; what was not copied."""
    problems: list[str] = []
    out_dir.mkdir(parents=True, exist_ok=True)
    if not root.is_dir():
        real = Path(os.path.realpath(root))  # a file named on the command line: the user's
        try:
            with open_dir(real.parent) as src_fd, open_dir(out_dir) as out_fd:
                copy_file(src_fd, real.name, out_fd, shown=out_dir / root.name, dst_name=root.name)
        except OSError as exc:
            problems.append(f"{root.name}: not copied: {reason(exc)}")
    else:
        _TreeCopy(root, out_dir, problems).copy()
    return problems


class TranslationWriter:
    """Writes translations, one file at a time, into a copy that :func:`copy_tree` made, so
    that ``port --out`` can write each file as its port is done (issue 10)."""

    def __init__(self, root: Path, out_dir: Path, problems: list[str]) -> None:
        self.root = root
        self.out_dir = out_dir
        self.problems = problems  # what could not be written is added here
        self.written: set[str] = set()

    def write(self, file: FileResult) -> None:
        """Write ``file``'s translation in place of its original; nothing if unchanged."""
        if file.changed:
            _write_translation(self.root, file, self.out_dir, self.written, self.problems)


def _write_translation(
    root: Path, file: FileResult, out_dir: Path, written: set[str], problems: list[str]
) -> None:
    if not root.is_dir():
        rel, new_rel = root.name, PurePosixPath(file.new_path).name
    else:
        found = real_rel(root, file.path)
        if found is None or found == ".":
            problems.append(
                f"{file.path}: translation not written: it is reached through a symbolic "
                "link that leads out of the project"
            )
            return
        rel = found
        new_rel = str(PurePosixPath(found).with_name(PurePosixPath(file.new_path).name))
    if rel in written:  # the same file reached twice (through a link inside the project)
        return
    written.add(rel)
    try:
        # a new tree, not the user's only copy: no fsync of each folder (1 fsync per file,
        # as before; measured in the commit that added this line)
        write_atomic(out_dir / new_rel, payload(file), root=out_dir, sync_dir=False)
        if new_rel != rel:
            with (
                open_dir((out_dir / rel).parent, out_dir) as out_fd,
                contextlib.suppress(FileNotFoundError),
            ):
                os.unlink(PurePosixPath(rel).name, dir_fd=out_fd)
    except OSError as exc:
        problems.append(f"{file.path}: could not write the translation: {reason(exc)}")
