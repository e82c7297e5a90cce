"""port.in_place's pieces: which files are the port's own, and what recovery does with each."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from gpuport.files import PORT_JOURNAL_NAME
from gpuport.port.in_place import recover
from gpuport.port.project import port_project

CUDA_IMAGE = "FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\n"


def test_backups_the_journal_and_temporaries_are_left_out_of_a_port(tmp_path: Path) -> None:
    for name in ("Dockerfile", "Dockerfile.orig", "Dockerfile.bak", "Dockerfile.prod"):
        (tmp_path / name).write_text(CUDA_IMAGE)
    (tmp_path / PORT_JOURNAL_NAME).write_text("{}")
    (tmp_path / ".Dockerfile.1a2b3c4d.tmp").write_text(CUDA_IMAGE)
    result = port_project(tmp_path, "6.4", backup_suffix=".bak")
    # Dockerfile.prod is a Dockerfile of its own: no "Dockerfile.prod" minus a suffix beside it;
    # with --backup-suffix .bak, Dockerfile.orig is somebody's file too
    assert [f.path for f in result.files] == ["Dockerfile", "Dockerfile.orig", "Dockerfile.prod"]
    assert result.problems == []


def test_a_name_alone_does_not_make_a_backup(tmp_path: Path) -> None:
    (tmp_path / "Dockerfile.orig").write_text(CUDA_IMAGE)  # no Dockerfile beside it
    assert [f.path for f in port_project(tmp_path, "6.4").files] == ["Dockerfile.orig"]
    (tmp_path / "Dockerfile").write_text(CUDA_IMAGE)
    assert [f.path for f in port_project(tmp_path, "6.4").files] == ["Dockerfile"]


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _interrupted_run(root: Path, current: str, backup: str, *, backup_existed: bool) -> None:
    """k.cu and k.cu.orig as a killed ``port --in-place`` of "original" -> "translated" left
    them (as far as the journal knows), with that run's journal."""
    (root / "k.cu").write_text(current)
    (root / "k.cu.orig").write_text(backup)
    entry = {
        "path": "k.cu",
        "backup": "k.cu.orig",
        "original_sha256": _sha(b"original\n"),
        "translated_sha256": _sha(b"translated\n"),
        "backup_existed": backup_existed,
    }
    (root / PORT_JOURNAL_NAME).write_text(json.dumps({"version": 1, "files": [entry]}))


def test_recovery_leaves_a_file_changed_since_the_kill_and_reports_it(tmp_path: Path) -> None:
    _interrupted_run(tmp_path, "edited by hand since\n", "original\n", backup_existed=False)
    recovery = recover(tmp_path)
    assert recovery.problems == [
        "k.cu: changed since the interrupted run; left as it is, with k.cu.orig if it is there"
    ]
    assert (tmp_path / "k.cu").read_text() == "edited by hand since\n"
    assert (tmp_path / "k.cu.orig").read_text() == "original\n"
    assert not (tmp_path / PORT_JOURNAL_NAME).exists()


def test_recovery_keeps_a_backup_that_was_there_before_the_run(tmp_path: Path) -> None:
    older = "an older backup, replaced with --force\n"
    _interrupted_run(tmp_path, "original\n", older, backup_existed=True)
    recovery = recover(tmp_path)
    assert (recovery.rolled_back, recovery.problems) == (1, [])
    assert (tmp_path / "k.cu.orig").read_text() == older


def test_no_journal_means_nothing_to_recover(tmp_path: Path) -> None:
    (tmp_path / "k.cu").write_text("x\n")
    (tmp_path / ".k.cu.1a2b3c4d.tmp").write_text("not gpuport's: no journal names k.cu\n")
    recovery = recover(tmp_path)
    assert not recovery.found and recovery.temporaries == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == [".k.cu.1a2b3c4d.tmp", "k.cu"]
