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
        ("Dockerfile_amd", FileKind.DOCKERFILE),
        ("Dockerfile-cuda12", FileKind.DOCKERFILE),
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


# --- gpuport.read_policy: what may be read ----------------------------------------------------


@pytest.fixture(params=[True, False], ids=["fd-paths", "realpath-only"])
def fd_paths(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Both ways of checking the opened file: /proc/self/fd (Linux) and resolving the name."""
    from gpuport import read_policy

    if request.param and not read_policy._HAS_FD_PATHS:
        pytest.skip("no /proc/self/fd here")
    monkeypatch.setattr(read_policy, "_HAS_FD_PATHS", request.param)
    return bool(request.param)


def test_read_within_reads_a_link_that_stays_inside(tmp_path: Path, fd_paths: bool) -> None:
    from gpuport.read_policy import read_within

    (tmp_path / "real.txt").write_text("numpy\n")
    (tmp_path / "link.txt").symlink_to("real.txt")
    assert read_within(tmp_path, tmp_path / "link.txt", 100) == b"numpy\n"


@pytest.mark.parametrize("target", ["/proc/self/environ", "../outside.txt", "out/outside.txt"])
def test_read_within_refuses_what_leads_out(tmp_path: Path, fd_paths: bool, target: str) -> None:
    from gpuport.read_policy import ReadRefused, read_within

    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "outside.txt").write_text("secret\n")
    (root / "out").symlink_to(tmp_path)
    with pytest.raises(ReadRefused) as refused:
        read_within(root, root / target, 1 << 20)
    assert refused.value.kind is SkipKind.OUTSIDE_ROOT
    assert "leads out of the project" in refused.value.reason


def test_read_regular_is_bounded_even_when_the_size_says_zero() -> None:
    from gpuport.read_policy import ReadRefused, read_regular

    if not Path("/proc/self/status").exists():
        pytest.skip("no /proc here")
    assert os.stat("/proc/self/status").st_size == 0  # procfs does not know the size
    with pytest.raises(ReadRefused) as refused:
        read_regular("/proc/self/status", 10)
    assert refused.value.kind is SkipKind.TOO_LARGE
    assert refused.value.reason == "at least 11 bytes is over the 10-byte limit"


def test_read_regular_refuses_a_fifo_without_blocking(tmp_path: Path) -> None:
    from gpuport.read_policy import ReadRefused, read_regular

    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "to-pipe").symlink_to("pipe")
    for name in ("pipe", "to-pipe"):
        with pytest.raises(ReadRefused) as refused:
            read_regular(tmp_path / name, 100)
        assert refused.value.kind is SkipKind.NOT_REGULAR
        assert refused.value.reason == "a FIFO (named pipe), not a regular file; not read"


def test_a_file_named_on_the_command_line_may_be_a_link_anywhere(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "train.py").write_text("import torch\n")
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "train.py").symlink_to(tmp_path / "elsewhere" / "train.py")
    files, skipped = _items(tmp_path / "project" / "train.py")
    assert not skipped and not files[0].confined
    got = read_text(files[0])
    assert not isinstance(got, Skipped) and got.text == "import torch\n"


def test_walk_reports_links_out_only_where_it_would_have_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "notes").write_text("secret\n")
    root = tmp_path / "root"
    root.mkdir()
    (root / "notes.txt").symlink_to(outside / "notes")  # not a name gpuport reads: silent
    (root / ".venv").symlink_to(outside)  # an excluded folder: silent, as it always was
    (root / "train.py").symlink_to(outside / "notes")
    files, skipped = _items(root)
    assert not files
    assert [(s.path, s.kind) for s in skipped] == [("train.py", SkipKind.OUTSIDE_ROOT)]
    assert skipped[0].reason == (
        f"symbolic link to {outside / 'notes'} leads out of the project; not followed"
    )
