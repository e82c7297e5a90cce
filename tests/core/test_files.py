"""Finding and reading files: classification and every kind of bad input."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gpuport.files import FileKind, ProjectFile, WalkOptions, classify, read_text, walk
from gpuport.findings import SkipKind, Skipped


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("requirements.txt", FileKind.REQUIREMENTS),
        ("requirements-dev.txt", FileKind.REQUIREMENTS),
        ("constraints.txt", FileKind.REQUIREMENTS),
        ("dev-requirements.txt", FileKind.REQUIREMENTS),
        ("pyproject.toml", FileKind.PYPROJECT),
        ("setup.py", FileKind.SETUP_PY),
        ("setup.cfg", FileKind.SETUP_CFG),
        ("environment.yml", FileKind.CONDA_ENV),
        ("Pipfile", FileKind.PIPFILE),
        ("Dockerfile", FileKind.DOCKERFILE),
        ("Dockerfile.rocm", FileKind.DOCKERFILE),
        ("train.dockerfile", FileKind.DOCKERFILE),
        ("docker-compose.yml", FileKind.COMPOSE),
        ("compose.yaml", FileKind.COMPOSE),
        ("deployment.yaml", FileKind.YAML),
        ("kernel.cu", FileKind.CUDA),
        ("kernel.cuh", FileKind.CUDA),
        ("ops.cpp", FileKind.CXX),
        ("ops.h", FileKind.CXX),
        ("train.py", FileKind.PYTHON),
        ("demo.ipynb", FileKind.NOTEBOOK),
        ("CMakeLists.txt", FileKind.CMAKE),
        ("cuda.cmake", FileKind.CMAKE),
        ("Makefile", FileKind.MAKEFILE),
        ("run.sh", FileKind.SHELL),
        ("notes.txt", None),
        ("image.png", None),
    ],
)
def test_classify(name: str, kind: FileKind | None) -> None:
    assert classify(name) is kind


def test_files_in_a_requirements_folder_are_requirements() -> None:
    assert classify("base.txt", "requirements") is FileKind.REQUIREMENTS
    assert classify("gpu.in", "requirements") is FileKind.REQUIREMENTS
    assert classify("base.txt", "docs") is None


def _items(root: Path, **kw: object) -> tuple[list[ProjectFile], list[Skipped]]:
    files: list[ProjectFile] = []
    skipped: list[Skipped] = []
    for item in walk(root, WalkOptions(**kw)):  # type: ignore[arg-type]
        (skipped if isinstance(item, Skipped) else files).append(item)  # type: ignore[arg-type]
    return files, skipped


def test_walk_is_sorted_skips_vcs_and_venv_and_honours_exclude(tmp_path: Path) -> None:
    for rel in ["b.py", "a.py", ".git/x.py", ".venv/lib/y.py", "pkg/c.cu", "gen/d.py", "z.txt"]:
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("x = 1\n")
    files, skipped = _items(tmp_path, exclude=("gen",))
    assert [f.rel for f in files] == ["a.py", "b.py", "pkg/c.cu"]
    assert not skipped


def test_missing_path_is_reported(tmp_path: Path) -> None:
    files, skipped = _items(tmp_path / "nope")
    assert not files
    assert skipped[0].kind is SkipKind.MISSING


def test_symlink_loop_is_reported_once_and_walk_ends(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text("x = 1\n")
    os.symlink("..", tmp_path / "pkg" / "up")
    os.symlink("self", tmp_path / "self")  # a link to itself: ELOOP
    files, skipped = _items(tmp_path)
    assert [f.rel for f in files] == ["pkg/m.py"]
    kinds = {s.path: s.kind for s in skipped}
    assert kinds.get("pkg/up") is SkipKind.SYMLINK_LOOP
    assert "self" not in kinds or kinds["self"] in (SkipKind.SYMLINK_LOOP, SkipKind.UNREADABLE)


def test_broken_symlink_to_a_known_file_kind_is_reported(tmp_path: Path) -> None:
    os.symlink("missing.py", tmp_path / "gone.py")
    _, skipped = _items(tmp_path)
    assert skipped and skipped[0].path == "gone.py"
    assert "broken symbolic link" in skipped[0].reason


def test_unreadable_file_is_skipped_with_the_os_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # CI runs as root, which reads any file whatever its mode; make the read fail instead.
    (tmp_path / "secret.py").write_text("x = 1\n")
    files, _ = _items(tmp_path)

    def deny(path: str, *args: object) -> int:
        raise PermissionError(13, "Permission denied", str(path))

    with monkeypatch.context() as patched:
        patched.setattr(os, "open", deny)  # what gpuport.read_policy opens files with
        got = read_text(files[0])
    assert isinstance(got, Skipped)
    assert got.kind is SkipKind.UNREADABLE and got.reason == "Permission denied"


def _one(tmp_path: Path, name: str, data: bytes) -> ProjectFile:
    p = tmp_path / name
    p.write_bytes(data)
    files, _ = _items(tmp_path)
    return next(f for f in files if f.rel == name)


def test_binary_file_is_skipped_with_line(tmp_path: Path) -> None:
    got = read_text(_one(tmp_path, "blob.py", b"x = 1\ny = 2\n\0\0\0"))
    assert isinstance(got, Skipped)
    assert got.kind is SkipKind.BINARY and got.line == 3


def test_huge_file_is_skipped_and_names_the_limit(tmp_path: Path) -> None:
    got = read_text(_one(tmp_path, "big.py", b"x = 1\n" * 1000), max_bytes=100)
    assert isinstance(got, Skipped)
    assert got.kind is SkipKind.TOO_LARGE and "100-byte limit" in got.reason


def test_non_utf8_is_read_losslessly_and_reported_with_line_and_column(tmp_path: Path) -> None:
    data = b"a = 1\nb = '\xff\xfe'\n"
    got = read_text(_one(tmp_path, "latin.py", data))
    assert not isinstance(got, Skipped)
    assert got.problem is not None and got.problem.partial
    assert got.problem.kind is SkipKind.NOT_UTF8
    assert got.problem.line == 2 and "column 6" in got.problem.reason
    assert got.text.encode("utf-8", "surrogateescape") == data


def test_utf8_bom_is_dropped(tmp_path: Path) -> None:
    got = read_text(_one(tmp_path, "bom.py", b"\xef\xbb\xbfx = 1\n"))
    assert not isinstance(got, Skipped)
    assert got.text == "x = 1\n" and got.problem is None


def test_port_artifacts_are_backups_journal_and_atomic_temp_files(tmp_path: Path) -> None:
    import tempfile

    from gpuport.files import PORT_JOURNAL_NAME, is_port_artifact

    fd, temp = tempfile.mkstemp(prefix=".Dockerfile.", suffix=".tmp", dir=tmp_path)
    os.close(fd)
    assert is_port_artifact(Path(temp).name)
    assert is_port_artifact("kernel.cu.orig") and is_port_artifact(PORT_JOURNAL_NAME)
    assert is_port_artifact("kernel.cu.bak", ".bak") and not is_port_artifact("kernel.cu.bak")
    assert not is_port_artifact("kernel.cu") and not is_port_artifact(".orig")
    assert not is_port_artifact(".x.tmp")  # too short a random part for mkstemp's names
