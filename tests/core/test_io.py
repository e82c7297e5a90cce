"""Atomic writes: a user's file is its old self or its whole new self, never half-written."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from gpuport import io
from gpuport.files import is_port_artifact
from gpuport.io import UnsafeWrite, is_temp_of, open_dir, temp_name, write_atomic, write_backup


def test_new_file_follows_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        write_atomic(tmp_path / "sub" / "report.html", "<p>hi</p>")
    finally:
        os.umask(old)
    target = tmp_path / "sub" / "report.html"
    assert target.read_text() == "<p>hi</p>"
    assert target.stat().st_mode & 0o777 == 0o644


def test_existing_mode_is_kept_and_backup_is_made(tmp_path: Path) -> None:
    target = tmp_path / "run.sh"
    target.write_text("old\n")
    target.chmod(0o755)
    write_atomic(target, "new\n", backup_suffix=".orig")
    assert target.read_text() == "new\n"
    assert target.stat().st_mode & 0o777 == 0o755
    assert (tmp_path / "run.sh.orig").read_text() == "old\n"


def test_undecodable_bytes_round_trip(tmp_path: Path) -> None:
    data = b"caf\xe9 // latin-1\n"
    write_atomic(tmp_path / "k.cu", data.decode("utf-8", "surrogateescape"))
    assert (tmp_path / "k.cu").read_bytes() == data


def test_a_failed_write_leaves_the_original_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "requirements.txt"
    target.write_text("torch==2.3.1+cu121\n")

    def broken_replace(src: str, dst: str, **dir_fds: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="No space left"):
        write_atomic(target, "torch==2.3.1+rocm6.4\n")
    assert target.read_text() == "torch==2.3.1+cu121\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["requirements.txt"]


def test_a_symbolic_link_is_neither_written_through_nor_replaced(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("theirs\n")
    link = tmp_path / "report.json"
    link.symlink_to(outside)
    with pytest.raises(UnsafeWrite, match="symbolic link"):
        write_atomic(link, "{}")
    assert link.is_symlink() and outside.read_text() == "theirs\n"


def test_a_fifo_is_not_replaced(tmp_path: Path) -> None:
    fifo = tmp_path / "out.sarif"
    os.mkfifo(fifo)
    with pytest.raises(UnsafeWrite, match="not a regular file"):
        write_atomic(fifo, "{}")
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.sarif"]


def test_below_a_root_no_folder_on_the_way_may_be_a_link(tmp_path: Path) -> None:
    root, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    (root / "a").mkdir(parents=True)
    elsewhere.mkdir()
    (root / "a" / "b").symlink_to(elsewhere)
    with pytest.raises(UnsafeWrite, match="symbolic link"):
        write_atomic(root / "a" / "b" / "k.cu", "int x;\n", root=root)
    assert list(elsewhere.iterdir()) == []
    write_atomic(root / "a" / "new" / "k.cu", "int x;\n", root=root)  # folders are created
    assert (root / "a" / "new" / "k.cu").read_text() == "int x;\n"


def test_a_backup_is_never_written_through_a_planted_link(tmp_path: Path) -> None:
    target = tmp_path / "Dockerfile"
    target.write_text("FROM nvidia/cuda\n")
    planted = tmp_path / "elsewhere.pth"
    (tmp_path / "Dockerfile.orig").symlink_to(planted)
    for replace in (False, True):
        with open_dir(tmp_path) as dir_fd, pytest.raises(UnsafeWrite, match="symbolic link"):
            write_backup(dir_fd, "Dockerfile", "Dockerfile.orig", replace=replace)
    assert not planted.exists()
    assert (tmp_path / "Dockerfile.orig").is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["Dockerfile", "Dockerfile.orig"]


def test_a_backup_is_complete_and_never_replaces_one_unless_asked(tmp_path: Path) -> None:
    target = tmp_path / "k.cu"
    data = bytes(range(256)) * 5000  # more than one write() may take
    target.write_bytes(data)
    target.chmod(0o640)
    with open_dir(tmp_path) as dir_fd:
        assert write_backup(dir_fd, "k.cu", "k.cu.orig") == data
        target.write_bytes(b"changed")
        with pytest.raises(FileExistsError):
            write_backup(dir_fd, "k.cu", "k.cu.orig")
        assert (tmp_path / "k.cu.orig").read_bytes() == data
        write_backup(dir_fd, "k.cu", "k.cu.orig", replace=True)
    assert (tmp_path / "k.cu.orig").read_bytes() == b"changed"
    assert (tmp_path / "k.cu.orig").stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.cu", "k.cu.orig"]


def test_a_backup_that_does_not_read_back_is_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "k.cu").write_text("original\n")
    real_read = io.read_regular

    def corrupted(dir_fd: int, name: str, shown: object) -> bytes:
        return real_read(dir_fd, name, str(shown))[:-1]

    monkeypatch.setattr(io, "read_regular", corrupted)
    with open_dir(tmp_path) as dir_fd, pytest.raises(OSError, match="did not read back"):
        write_backup(dir_fd, "k.cu", "k.cu.orig")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.cu"]


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_as_root_a_replaced_file_keeps_its_owner(tmp_path: Path) -> None:
    target = tmp_path / "requirements.txt"
    target.write_text("torch\n")
    os.chown(target, 1234, 2345)
    write_atomic(target, "torch==2.3.1+rocm6.4\n", backup_suffix=".orig")
    for path in (target, tmp_path / "requirements.txt.orig"):
        st = path.stat()
        assert (st.st_uid, st.st_gid) == (1234, 2345), path


def test_temporary_names_are_recognised_as_port_artifacts() -> None:
    name = temp_name("Dockerfile")
    assert is_temp_of(name, "Dockerfile") and is_port_artifact(name)
    assert not is_temp_of(name, "Docker") and not is_temp_of("Dockerfile.tmp", "Dockerfile")
