"""Atomic writes: a user's file is its old self or its whole new self, never half-written."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gpuport.io import write_atomic


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

    def broken_replace(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="No space left"):
        write_atomic(target, "torch==2.3.1+rocm6.4\n")
    assert target.read_text() == "torch==2.3.1+cu121\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["requirements.txt"]
