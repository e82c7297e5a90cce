"""Writing a port's result: a translated copy of the whole tree, or the files in place.

Every file is written atomically; in place, each original is kept as FILE + suffix. A file
that cannot be written is a problem in the returned list, not an exception, so the rest of
the port still lands and the report says what did not.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from gpuport.files import DEFAULT_EXCLUDED_DIRS
from gpuport.io import write_atomic
from gpuport.port.model import FileResult, PortResult

UTF8_BOM = b"\xef\xbb\xbf"


def _bom(path: Path) -> bytes:
    try:
        with path.open("rb") as handle:
            return UTF8_BOM if handle.read(3) == UTF8_BOM else b""
    except OSError:
        return b""


def _payload(source: Path, file: FileResult) -> bytes:
    assert file.translated is not None
    return _bom(source) + file.translated.encode("utf-8", "surrogateescape")


def _source_path(root: Path, rel: str) -> Path:
    return root if root.is_file() else root / rel


def write_tree_copy(root: Path, result: PortResult, out_dir: Path) -> list[str]:
    """Copy ``root`` to ``out_dir`` with every translated file in place of its original."""
    problems: list[str] = []
    out_dir.mkdir(parents=True, exist_ok=True)
    if root.is_file():
        shutil.copy2(root, out_dir / root.name)
    else:

        def ignore(folder: str, names: list[str]) -> set[str]:
            return {n for n in names if n in DEFAULT_EXCLUDED_DIRS and Path(folder, n).is_dir()}

        shutil.copytree(root, out_dir, ignore=ignore, symlinks=True, dirs_exist_ok=True)
    for file in result.files:
        if not file.changed:
            continue
        try:
            write_atomic(out_dir / file.new_path, _payload(_source_path(root, file.path), file))
            if file.new_path != file.path:
                (out_dir / file.path).unlink(missing_ok=True)
        except OSError as exc:
            problems.append(f"{file.path}: could not write the translation: {exc.strerror or exc}")
    return problems


def write_in_place(root: Path, result: PortResult, backup_suffix: str, force: bool) -> list[str]:
    """Replace each changed file atomically, keeping the original as FILE + suffix."""
    problems: list[str] = []
    for file in result.files:
        if not file.changed:
            continue
        target = _source_path(root, file.path)
        backup = target.with_name(target.name + backup_suffix)
        if backup.exists() and not force:
            problems.append(
                f"{file.path}: not edited: its backup {backup.name} already exists "
                "(move it away, or use --force to replace it)"
            )
            continue
        try:
            write_atomic(target, _payload(target, file), backup_suffix=backup_suffix)
        except OSError as exc:
            problems.append(f"{file.path}: could not write: {exc.strerror or exc}")
    return problems
