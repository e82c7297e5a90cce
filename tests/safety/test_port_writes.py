"""A hostile repository against everything gpuport writes: ``port --out``, ``--in-place``, ``-o``.

Each test reproduces a row of issue 10 and checks that the project's originals and every
file outside it are as they were.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpuport.cli import main
from gpuport.files import PORT_JOURNAL_NAME

CUDA = "#include <cuda_runtime.h>\nvoid sync() { cudaDeviceSynchronize(); }\n"
DOCKERFILE = "FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\n"
REQUIREMENTS = "torch==2.3.1+cu121\n"

as_root = pytest.mark.skipif(os.geteuid() != 0, reason="the harm needs root (CI runs it as root)")


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, [*args], catch_exceptions=False)
    return result.exit_code, result.stderr


def project_with(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def snapshot(folder: Path) -> dict[str, str | bytes]:
    """Every entry under ``folder`` (links as their text, not followed): what must not change."""
    seen: dict[str, str | bytes] = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            path = Path(dirpath, name)
            rel = str(path.relative_to(folder))
            if path.is_symlink():
                seen[rel] = "-> " + os.readlink(path)
            elif path.is_file():
                seen[rel] = path.read_bytes()
            elif not path.is_dir():
                seen[rel] = f"mode {stat.S_IFMT(path.lstat().st_mode):o}"
    return seen


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """Files outside the project that a hostile repository points at."""
    return project_with(tmp_path / "outside", {"victim.cu": CUDA, "victim.txt": "keep me\n"})


@pytest.fixture
def hostile(tmp_path: Path, outside: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project with a directory link out of it, a link inside it, a FIFO and a socket."""
    root = project_with(
        tmp_path / "proj",
        {"src/k.cu": CUDA, "Dockerfile": DOCKERFILE, "requirements.txt": REQUIREMENTS},
    )
    (root / "shared").symlink_to(outside)  # a folder link that leaves the project
    (root / "alias").symlink_to("src")  # a folder link that stays in it
    (root / "absolute").symlink_to(root / "src")  # the same, written as an absolute path
    os.mkfifo(root / "pipe.cu")
    monkeypatch.chdir(root)  # a socket's path is limited to about 100 bytes: bind it relative
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind("sock.cu")
    return root


def test_out_never_writes_through_a_directory_link(
    hostile: Path, outside: Path, tmp_path: Path
) -> None:
    before = snapshot(outside)
    source_before = snapshot(hostile)
    out = tmp_path / "rocm"
    code, stderr = run("port", "--no-progress", str(hostile), "--out", str(out))
    assert code == 2, stderr  # what was not copied is reported
    assert snapshot(outside) == before
    assert snapshot(hostile) == source_before
    assert "shared: not copied: symbolic link" in stderr and "leads out of the project" in stderr
    assert not os.path.lexists(out / "shared")
    # links inside the project stay links, relative, into the copy: nothing aliases the source
    for name in ("alias", "absolute"):
        assert (out / name).is_symlink() and os.readlink(out / name) == "src"
        assert (out / name).resolve() == (out / "src").resolve()
    assert "hipDeviceSynchronize" in (out / "src" / "k.cu").read_text()
    assert "rocm" in (out / "Dockerfile").read_text()


def test_out_reports_fifos_and_sockets_and_copies_the_rest(hostile: Path, tmp_path: Path) -> None:
    out = tmp_path / "rocm"
    code, stderr = run("port", "--no-progress", str(hostile), "--out", str(out))
    assert code == 2
    assert "pipe.cu: not copied: a FIFO" in stderr and "sock.cu: not copied: a socket" in stderr
    assert "Traceback" not in stderr
    assert not os.path.lexists(out / "pipe.cu") and not os.path.lexists(out / "sock.cu")
    assert "hipDeviceSynchronize" in (out / "src" / "k.cu").read_text()


def test_out_into_a_folder_whose_subfolder_is_a_link_writes_nothing_there(
    tmp_path: Path, outside: Path
) -> None:
    root = project_with(tmp_path / "proj", {"src/k.cu": CUDA})
    out = tmp_path / "rocm"
    out.mkdir()
    (out / "src").symlink_to(outside)  # an earlier copy, or a trap, in the output folder
    before = snapshot(outside)
    code, stderr = run("port", "--no-progress", str(root), "--out", str(out), "--force")
    assert code == 2 and "symbolic link" in stderr
    assert snapshot(outside) == before


@pytest.mark.parametrize("where", ["same", "parent"])
def test_out_on_or_around_the_project_is_refused(tmp_path: Path, where: str) -> None:
    root = project_with(tmp_path / "proj", {"k.cu": CUDA})
    out = root if where == "same" else tmp_path
    code, stderr = run("port", "--no-progress", str(root), "--out", str(out), "--force")
    assert code == 2 and "--out" in stderr
    assert snapshot(root) == {"k.cu": CUDA.encode()}


def test_in_place_does_not_follow_a_link_out_of_the_project(hostile: Path, outside: Path) -> None:
    before = snapshot(outside)
    code, stderr = run("port", "--no-progress", str(hostile), "--in-place")
    assert code == 2
    assert snapshot(outside) == before  # not edited, and no victim.cu.orig beside it
    # the walk reports the link and never enters it (port/in_place.py refuses it again if not)
    assert "shared: skipped" in stderr and "leads out of the project" in stderr
    assert "hipDeviceSynchronize" in (hostile / "src" / "k.cu").read_text()
    assert (hostile / "src" / "k.cu.orig").read_text() == CUDA
    assert not (hostile / PORT_JOURNAL_NAME).exists()


def test_in_place_leaves_a_linked_file_a_link(tmp_path: Path) -> None:
    root = project_with(tmp_path / "proj", {"real.cu": CUDA})
    (root / "link.cu").symlink_to("real.cu")
    code, stderr = run("port", "--no-progress", str(root), "--in-place")
    assert code == 2 and "link.cu: not edited: it is a symbolic link" in stderr
    assert (root / "link.cu").is_symlink() and os.readlink(root / "link.cu") == "real.cu"
    assert not os.path.lexists(root / "link.cu.orig")
    assert "hipDeviceSynchronize" in (root / "real.cu").read_text()


@pytest.mark.parametrize("force", [False, True])
@pytest.mark.parametrize("planted_exists", [False, True])
def test_a_planted_backup_link_is_never_written_through(
    tmp_path: Path, outside: Path, force: bool, planted_exists: bool
) -> None:
    root = project_with(tmp_path / "proj", {"Dockerfile": DOCKERFILE, "k.cu": CUDA})
    target = outside / ("victim.txt" if planted_exists else "evil.pth")
    (root / "Dockerfile.orig").symlink_to(target)
    before = snapshot(outside)
    code, stderr = run("port", "--no-progress", str(root), "--in-place", *(["--force"] * force))
    assert code == 2 and "Dockerfile: not edited" in stderr
    assert snapshot(outside) == before  # not created, not overwritten
    assert (root / "Dockerfile").read_text() == DOCKERFILE
    assert (root / "Dockerfile.orig").is_symlink()
    assert "hipDeviceSynchronize" in (root / "k.cu").read_text()  # the rest still lands


def test_a_second_in_place_run_does_not_port_its_backups(tmp_path: Path) -> None:
    root = project_with(
        tmp_path / "proj",
        {"Dockerfile": DOCKERFILE, "Makefile": "NVCC = nvcc\n", "requirements.txt": REQUIREMENTS},
    )
    assert run("port", "--no-progress", str(root), "--in-place")[0] in (0, 1)
    after_first = snapshot(root)
    code, stderr = run("port", "--no-progress", str(root), "--in-place")
    assert code in (0, 1), stderr
    assert snapshot(root) == after_first
    assert (root / "Dockerfile.orig").read_text() == DOCKERFILE
    assert not any(name.endswith(".orig.orig") for name in os.listdir(root))
    summary = CliRunner().invoke(main, ["port", "--no-progress", "--format", "json", str(root)])
    assert summary.exit_code == 0 and '"files": []' in summary.stdout  # nothing left to port


def test_a_read_only_file_needs_force(tmp_path: Path) -> None:
    root = project_with(tmp_path / "proj", {"k.cu": CUDA})
    (root / "k.cu").chmod(0o444)
    code, stderr = run("port", "--no-progress", str(root), "--in-place")
    assert code == 2 and "k.cu: not edited: it is read-only" in stderr
    assert (root / "k.cu").read_text() == CUDA and not (root / "k.cu.orig").exists()
    code, stderr = run("port", "--no-progress", str(root), "--in-place", "--force")
    assert code == 0, stderr
    assert "hipDeviceSynchronize" in (root / "k.cu").read_text()
    assert (root / "k.cu").stat().st_mode & 0o777 == 0o444
    assert (root / "k.cu.orig").read_text() == CUDA


@as_root
def test_in_place_as_root_keeps_each_files_owner(tmp_path: Path) -> None:
    root = project_with(tmp_path / "proj", {"k.cu": CUDA})
    os.chown(root / "k.cu", 1234, 2345)
    assert run("port", "--no-progress", str(root), "--in-place")[0] == 0
    st = (root / "k.cu").stat()
    assert (st.st_uid, st.st_gid) == (1234, 2345)


@pytest.mark.parametrize("suffix", ["/x", "", ".", "..", "a/b", "../up"])
def test_a_backup_suffix_that_is_not_a_name_is_a_usage_error(tmp_path: Path, suffix: str) -> None:
    root = project_with(tmp_path / "proj", {"k.cu": CUDA})
    code, stderr = run("port", "--no-progress", str(root), "--in-place", "--backup-suffix", suffix)
    assert code == 2 and "--backup-suffix" in stderr
    assert snapshot(root) == {"k.cu": CUDA.encode()}


# --- -o and --html -----------------------------------------------------------------------------

OUTPUT_COMMANDS = [
    ("scan", "-o"),
    ("assess", "-o"),
    ("assess", "--html"),
    ("scan", "--write-baseline"),
    ("port", "-o"),
]


def output_args(command: str, flag: str, root: Path, target: Path) -> list[str]:
    extra = ["--fail-on", "never"] if command != "port" else []
    html = ["--no-html"] if command == "assess" and flag == "-o" else []
    return [command, "--no-progress", str(root), *extra, *html, flag, str(target)]


@as_root
@pytest.mark.parametrize(("command", "flag"), OUTPUT_COMMANDS)
def test_an_output_on_a_device_leaves_the_device(tmp_path: Path, command: str, flag: str) -> None:
    root = project_with(tmp_path / "proj", {"k.cu": CUDA})
    device = tmp_path / "null"
    os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # a /dev/null of our own
    code, stderr = run(*output_args(command, flag, root, device))
    assert code == 2 and "not a regular file" in stderr
    assert stat.S_ISCHR(device.lstat().st_mode) and device.lstat().st_rdev == os.makedev(1, 3)


@pytest.mark.parametrize(("command", "flag"), OUTPUT_COMMANDS)
def test_an_output_on_a_link_or_fifo_is_refused(tmp_path: Path, command: str, flag: str) -> None:
    root = project_with(tmp_path / "proj", {"k.cu": CUDA})
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    link = tmp_path / "stdout"
    link.symlink_to(victim)  # like /dev/stdout -> /proc/self/fd/1
    code, stderr = run(*output_args(command, flag, root, link))
    assert code == 2 and "symbolic link" in stderr
    assert link.is_symlink() and victim.read_text() == "keep me\n"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    code, stderr = run(*output_args(command, flag, root, fifo))  # and no hang
    assert code == 2 and "not a regular file" in stderr
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


@pytest.mark.parametrize(("command", "flag"), OUTPUT_COMMANDS)
@pytest.mark.parametrize("source", ["k.cu", "requirements.txt"])
def test_an_output_on_a_file_of_the_project_is_refused(
    tmp_path: Path, command: str, flag: str, source: str
) -> None:
    root = project_with(tmp_path / "proj", {"k.cu": CUDA, "requirements.txt": REQUIREMENTS})
    before = snapshot(root)
    code, stderr = run(*output_args(command, flag, root, root / source))
    assert code == 2 and "one of the files gpuport reads" in stderr
    assert snapshot(root) == before
    # the very file named as the project
    code, stderr = run(*output_args(command, flag, root / source, root / source))
    assert code == 2 and "one of the files gpuport reads" in stderr
    assert snapshot(root) == before


@pytest.mark.parametrize(("command", "flag"), OUTPUT_COMMANDS)
def test_a_report_may_still_go_into_the_project(tmp_path: Path, command: str, flag: str) -> None:
    root = project_with(tmp_path / "proj", {"k.cu": CUDA})
    report = root / "gpuport-report.html"
    for _ in range(2):  # a new file, then its own earlier report
        code, stderr = run(*output_args(command, flag, root, report))
        assert code in (0, 1), stderr
        assert report.stat().st_size > 0
    assert (root / "k.cu").read_text() == CUDA


# --- the journal of an interrupted --in-place ------------------------------------------------


@pytest.mark.parametrize(
    "journal",
    [
        "{not json",
        json.dumps({"version": 1, "files": [{"path": "../outside/victim.cu"}]}),
        json.dumps(
            {
                "version": 1,
                "files": [
                    {
                        "path": "../outside/victim.cu",
                        "backup": "victim.cu.orig",
                        "original_sha256": "0" * 64,
                        "translated_sha256": "1" * 64,
                        "backup_existed": False,
                    }
                ],
            }
        ),
        "link",
    ],
)
def test_a_journal_gpuport_cannot_trust_stops_the_port(
    tmp_path: Path, outside: Path, journal: str
) -> None:
    root = project_with(tmp_path / "proj", {"k.cu": CUDA})
    if journal == "link":
        (root / PORT_JOURNAL_NAME).symlink_to(outside / "victim.txt")
    else:
        (root / PORT_JOURNAL_NAME).write_text(journal)
    before, outside_before = snapshot(root), snapshot(outside)
    code, stderr = run("port", "--no-progress", str(root), "--in-place")
    assert code == 2 and "journal of an interrupted port --in-place cannot be read" in stderr
    assert snapshot(root) == before and snapshot(outside) == outside_before


def test_a_re_run_rolls_back_an_unfinished_file_and_keeps_a_finished_one(tmp_path: Path) -> None:
    root = project_with(tmp_path / "proj", {"a.cu": CUDA, "b.cu": CUDA.replace("sync", "s")})
    assert run("port", "--no-progress", str(root), "--out", str(tmp_path / "t"))[0] == 0
    # what a kill leaves: a.cu done, b.cu's backup written but b.cu not yet replaced,
    # temporary files of both, and the journal
    entries: list[dict[str, object]] = []
    for name in ("a.cu", "b.cu"):
        original = (root / name).read_bytes()
        new = (tmp_path / "t" / name).read_bytes()
        entries.append(
            {
                "path": name,
                "backup": name + ".orig",
                "original_sha256": hashlib.sha256(original).hexdigest(),
                "translated_sha256": hashlib.sha256(new).hexdigest(),
                "backup_existed": False,
            }
        )
        (root / (name + ".orig")).write_bytes(original)
        (root / f".{name}.orig.1a2b3c4d.tmp").write_bytes(original[:5])
    (root / "a.cu").write_bytes((tmp_path / "t" / "a.cu").read_bytes())
    (root / PORT_JOURNAL_NAME).write_text(json.dumps({"version": 1, "files": entries}))
    (root / f".{PORT_JOURNAL_NAME}.9f8e7d6c.tmp").write_text("{")
    code, stderr = run("port", "--no-progress", str(root), "--in-place")
    assert code == 0, stderr
    assert "1 translated file(s) kept" in stderr and "1 left as they were" in stderr
    assert "3 temporary file(s) removed" in stderr
    assert sorted(os.listdir(root)) == ["a.cu", "a.cu.orig", "b.cu", "b.cu.orig"]
    for name in ("a.cu", "b.cu"):
        assert (root / name).read_bytes() == (tmp_path / "t" / name).read_bytes()
    assert (root / "a.cu.orig").read_text() == CUDA
    assert (root / "b.cu.orig").read_text() == CUDA.replace("sync", "s")


def test_a_diff_after_an_interrupted_run_says_so(tmp_path: Path) -> None:
    root = project_with(tmp_path / "proj", {"k.cu": CUDA})
    (root / PORT_JOURNAL_NAME).write_text("{}")
    code, stderr = run("port", "--no-progress", str(root))
    assert code == 0 and "an interrupted port --in-place left" in stderr


def test_a_file_changed_since_the_kill_is_reported_and_left(tmp_path: Path) -> None:
    root = project_with(tmp_path / "proj", {"k.cu": CUDA, "k.cu.orig": "the kill's backup\n"})
    entry = {
        "path": "k.cu",
        "backup": "k.cu.orig",
        "original_sha256": hashlib.sha256(b"the kill's backup\n").hexdigest(),
        "translated_sha256": "0" * 64,
        "backup_existed": False,
    }
    (root / PORT_JOURNAL_NAME).write_text(json.dumps({"version": 1, "files": [entry]}))
    code, stderr = run("port", "--no-progress", str(root), "--in-place")
    assert code == 2 and "k.cu: changed since the interrupted run" in stderr
    assert (root / "k.cu").read_text() == CUDA
    assert (root / "k.cu.orig").read_text() == "the kill's backup\n"
    assert not (root / PORT_JOURNAL_NAME).exists()


@pytest.mark.parametrize(("command", "flag"), OUTPUT_COMMANDS)
def test_a_dash_is_not_taken_for_a_file_name(
    tmp_path: Path, command: str, flag: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project_with(tmp_path / "proj", {"k.cu": CUDA})
    monkeypatch.chdir(tmp_path)
    code, stderr = run(*output_args(command, flag, root, Path("-")))
    assert code == 2 and "standard output" in stderr
    assert not os.path.lexists(tmp_path / "-")
