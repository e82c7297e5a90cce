"""A hostile repository: what gpuport reads, what it refuses, and how the command line fails.

Each tree is built in a temporary folder beside an "outside" folder holding a secret; a second
secret sits in the environment, where ``-r /proc/self/environ`` would find it. Runs that could
hang if a FIFO or ``/dev/zero`` were read go through a subprocess with a timeout.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

import gpuport
from gpuport.cli import main
from gpuport.config import ConfigError, load_baseline, load_settings
from gpuport.files import ProjectFile, SourceText, WalkOptions, read_text, walk
from gpuport.findings import SkipKind, Skipped

SECRET = "hostile-secret-3f9c1e"  # in the outside folder's files
ENV_SECRET = "hostile-env-secret-7a2b90"  # in the environment of every subprocess run
SRC = str(Path(gpuport.__file__).resolve().parent.parent)
TIMEOUT = 120  # seconds; a run that reads a FIFO or /dev/zero never ends without it

KERNEL = "__global__ void k(int* x) { x[threadIdx.x & 31] = warp_sum(x[0]); }\n"  # GP302


def gpuport_run(
    *args: str, cwd: Path | None = None, shell_redirect: str = ""
) -> subprocess.CompletedProcess[str]:
    """``gpuport ARGS`` in a subprocess, with the secret in its environment and a time limit."""
    env = {**os.environ, "PYTHONPATH": SRC, "GPUPORT_HOSTILE_SECRET": ENV_SECRET}
    env.pop("COLUMNS", None)
    command = [sys.executable, "-m", "gpuport.cli", *args]
    if shell_redirect:
        command = ["sh", "-c", f'"$@" {shell_redirect}', "sh", *command]
    return subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False
    )


def cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def bind_socket(path: Path) -> socket.socket:
    """A unix socket at ``path`` (bound from its folder: socket paths are limited to ~100 bytes)."""
    sock = socket.socket(socket.AF_UNIX)
    here = os.getcwd()
    os.chdir(path.parent)
    try:
        sock.bind(path.name)
    finally:
        os.chdir(here)
    return sock


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the project with files a scan must never read."""
    out = tmp_path / "outside"
    (out / "pkg").mkdir(parents=True)
    (out / "secret.txt").write_text(f"torch==2.0+cu118  # {SECRET}\n")
    (out / "requirements.txt").write_text(f"tensorflow-gpu  # {SECRET}\n")
    (out / "pkg" / "leak.py").write_text(f"import torch\ntorch.cuda.nccl  # {SECRET}\n")
    (out / "pkg" / "k.cu").write_text(f"// {SECRET}\n{KERNEL}")
    return out


@pytest.fixture
def hostile(tmp_path: Path, outside: Path) -> Path:
    """A project whose links, includes and special files all try to read outside it."""
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "k.cu").write_text(KERNEL)
    (root / "src" / "alias.cu").symlink_to("../k.cu")  # a link inside the project: followed
    (root / "linkdir").symlink_to(outside)  # a folder out of the project
    (root / "requirements-out.txt").symlink_to(outside / "secret.txt")  # a file out of it
    (root / "leak.py").symlink_to(outside / "pkg" / "leak.py")
    (root / "gone.py").symlink_to(outside / "nothing-here.py")  # broken, and out
    (root / "escape").symlink_to("../outside/pkg")  # relative, out
    os.mkfifo(root / "fifo.py")
    os.mkfifo(root / "pipe.txt")
    with open(root / "big.txt", "wb") as big:  # sparse: over the 8 MiB include cap
        big.truncate(9 * 1024 * 1024)
    (root / "Dockerfile.orig").write_text("FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\n")
    (root / "Dockerfile").write_text("FROM rocm/dev-ubuntu-22.04:6.4\n")  # ported: .orig a backup
    (root / "requirements.txt").write_text(
        "-r /proc/self/environ\n"
        "-r ../outside/secret.txt\n"
        "-r ../../../../../../../../../../etc/passwd\n"
        "-r linkdir/secret.txt\n"
        "-c pipe.txt\n"
        "-r big.txt\n"
        "torch==2.0+cu118\n"
    )
    return root


def _secret_free(*texts: str) -> None:
    for text in texts:
        assert SECRET not in text and ENV_SECRET not in text
        assert "root:x:0:0" not in text  # /etc/passwd


# --- the walk and the reader, in process ------------------------------------------------------


def _walk(root: Path) -> tuple[dict[str, ProjectFile], dict[str, Skipped]]:
    files: dict[str, ProjectFile] = {}
    skipped: dict[str, Skipped] = {}
    for item in walk(root, WalkOptions()):
        if isinstance(item, Skipped):
            skipped[item.path] = item
        else:
            files[item.rel] = item
    return files, skipped


def test_links_out_of_the_project_are_reported_never_followed(hostile: Path) -> None:
    files, skipped = _walk(hostile)
    for rel in ("linkdir", "requirements-out.txt", "leak.py", "gone.py", "escape"):
        assert skipped[rel].kind is SkipKind.OUTSIDE_ROOT, rel
        assert "leads out of the project; not followed" in skipped[rel].reason
    assert "symbolic link to ../outside/pkg" in skipped["escape"].reason
    assert not any(rel.startswith(("linkdir/", "escape/")) for rel in files)
    # a link that stays inside still works
    assert {"k.cu", "src/alias.cu", "requirements.txt"} <= set(files)


def test_fifos_sockets_and_backups_are_reported_not_read(hostile: Path) -> None:
    sock = bind_socket(hostile / "sock.cu")
    try:
        files, skipped = _walk(hostile)
    finally:
        sock.close()
    assert skipped["fifo.py"].kind is SkipKind.NOT_REGULAR
    assert "FIFO" in skipped["fifo.py"].reason
    assert skipped["sock.cu"].kind is SkipKind.NOT_REGULAR
    assert "socket" in skipped["sock.cu"].reason
    assert skipped["Dockerfile.orig"].kind is SkipKind.PORT_ARTIFACT
    assert not {"fifo.py", "sock.cu", "Dockerfile.orig"} & set(files)


def test_a_custom_backup_suffix_is_a_port_artifact_too(tmp_path: Path) -> None:
    (tmp_path / "Dockerfile.bak").write_text("FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\n")
    (tmp_path / "Dockerfile").write_text("FROM rocm/dev-ubuntu-22.04:6.4\n")
    skipped = [i for i in walk(tmp_path, WalkOptions(backup_suffix=".bak"))]
    assert [(s.path, s.kind) for s in skipped if isinstance(s, Skipped)] == [
        ("Dockerfile.bak", SkipKind.PORT_ARTIFACT)
    ]


@pytest.mark.skipif(os.geteuid() != 0, reason="mknod of a device node needs root")
def test_device_nodes_with_source_names_are_reported_not_opened(tmp_path: Path) -> None:
    zero = os.makedev(1, 5)  # /dev/zero: reading it never ends
    os.mknod(tmp_path / "zero.py", stat.S_IFCHR | 0o600, zero)
    os.mknod(tmp_path / "requirements-zero.txt", stat.S_IFCHR | 0o600, zero)
    (tmp_path / "requirements.txt").write_text("-r requirements-zero.txt\n")
    files, skipped = _walk(tmp_path)
    assert list(files) == ["requirements.txt"]
    assert skipped["zero.py"].kind is SkipKind.NOT_REGULAR
    assert "character device" in skipped["zero.py"].reason
    assert skipped["requirements-zero.txt"].kind is SkipKind.NOT_REGULAR
    proc = gpuport_run("scan", str(tmp_path), "--format", "json")
    include = [s for s in json.loads(proc.stdout)["skipped"] if s["path"] == "requirements.txt"]
    assert include == [
        {
            "path": "requirements.txt",
            "line": 1,
            "kind": "not-regular",
            "reason": "-r requirements-zero.txt: a character device, not a regular file; not read",
            "partial": True,
        }
    ]


def _read_in_thread(file: ProjectFile) -> SourceText | Skipped:
    """read_text in a daemon thread, so that a read that blocks fails the test, not the run."""
    got: list[SourceText | Skipped] = []
    worker = threading.Thread(target=lambda: got.append(read_text(file)), daemon=True)
    worker.start()
    worker.join(TIMEOUT)
    assert not worker.is_alive(), "read_text blocked"
    return got[0]


@pytest.mark.parametrize(
    "swap",
    [
        lambda p, out: os.mkfifo(p),
        lambda p, out: p.symlink_to(out / "pkg" / "leak.py"),
    ],
    ids=["fifo", "link-out"],
)
def test_a_file_swapped_after_the_walk_is_not_read(
    tmp_path: Path, outside: Path, swap: Callable[[Path, Path], None]
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / "train.py").write_text("import torch\n")
    files, _ = _walk(root)
    (root / "train.py").unlink()
    swap(root / "train.py", outside)
    got = _read_in_thread(files["train.py"])
    assert isinstance(got, Skipped)
    assert got.kind in (SkipKind.NOT_REGULAR, SkipKind.OUTSIDE_ROOT)
    assert SECRET not in got.reason


def test_a_folder_swapped_for_a_link_out_after_the_walk_is_not_read(
    tmp_path: Path, outside: Path
) -> None:
    root = tmp_path / "project"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "leak.py").write_text("import torch\n")
    files, _ = _walk(root)
    (root / "pkg" / "leak.py").unlink()
    (root / "pkg").rmdir()
    (root / "pkg").symlink_to(outside / "pkg")
    got = read_text(files["pkg/leak.py"])
    assert isinstance(got, Skipped) and got.kind is SkipKind.OUTSIDE_ROOT


# --- the whole command, as CI would run it --------------------------------------------------


@pytest.mark.parametrize("fmt", ["json", "sarif", "markdown", "terminal", "html"])
def test_no_outside_text_reaches_any_output(hostile: Path, fmt: str) -> None:
    proc = gpuport_run("scan", str(hostile), "--format", fmt)
    assert proc.returncode == 2, proc.stderr  # input problems: links out, FIFOs, includes
    assert "Traceback" not in proc.stderr
    _secret_free(proc.stdout, proc.stderr)


def test_assess_reports_and_html_hold_no_outside_text(hostile: Path, tmp_path: Path) -> None:
    html = tmp_path / "report.html"
    proc = gpuport_run("assess", str(hostile), "--format", "json", "--html", str(html))
    assert proc.returncode == 2, proc.stderr
    _secret_free(proc.stdout, proc.stderr, html.read_text())


def test_each_hostile_entry_is_reported_once_with_its_line(hostile: Path) -> None:
    proc = gpuport_run("scan", str(hostile), "--format", "json")
    data = json.loads(proc.stdout)
    include_problems = sorted(
        (s["line"], s["kind"], s["partial"])
        for s in data["skipped"]
        if s["path"] == "requirements.txt"
    )
    assert include_problems == [
        (1, "outside-root", True),
        (2, "outside-root", True),
        (3, "outside-root", True),
        (4, "outside-root", True),
        (5, "not-regular", True),
        (6, "too-large", True),
    ]
    kinds = {s["path"]: s["kind"] for s in data["skipped"] if s["path"] != "requirements.txt"}
    assert kinds == {
        "Dockerfile.orig": "port-artifact",
        "escape": "outside-root",
        "fifo.py": "not-regular",
        "gone.py": "outside-root",
        "leak.py": "outside-root",
        "linkdir": "outside-root",
        "requirements-out.txt": "outside-root",
    }  # pipe.txt and big.txt have no source names: the walk leaves them out without a word
    found = {(f["location"]["path"], f["rule_id"]) for f in data["findings"]}
    assert found == {("k.cu", "GP302"), ("src/alias.cu", "GP302"), ("requirements.txt", "GP101")}


def test_a_lone_backup_name_is_the_projects_own_file(tmp_path: Path) -> None:
    # No Dockerfile beside it: Dockerfile.orig is somebody's Dockerfile, scanned like one.
    (tmp_path / "Dockerfile.orig").write_text("FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\n")
    code, out, _ = cli("scan", str(tmp_path), "--format", "json")
    assert code == 1 and json.loads(out)["skipped"] == []


def test_a_scan_of_only_backups_is_clean(tmp_path: Path) -> None:
    # gpuport's own files are listed, but they are not input problems: exit 0, not 2.
    (tmp_path / "Dockerfile.orig").write_text("FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\n")
    (tmp_path / "Dockerfile").write_text("FROM rocm/dev-ubuntu-22.04:6.4\n")
    code, out, _ = cli("scan", str(tmp_path), "--format", "json")
    assert code == 0
    assert [s["kind"] for s in json.loads(out)["skipped"]] == ["port-artifact"]


def test_a_nul_byte_in_an_include_is_a_problem_on_its_line_not_a_crash(tmp_path: Path) -> None:
    # Past the first 8 KiB a NUL byte no longer makes the file binary: the include is read.
    (tmp_path / "requirements.txt").write_text("#" * 9000 + "\n-r a\0b.txt\ntorch==2.0+cu118\n")
    code, out, _ = cli("scan", str(tmp_path), "--format", "json")
    assert code == 1  # the finding on line 3; the include is a partial problem, not a crash
    assert json.loads(out)["skipped"] == [
        {
            "path": "requirements.txt",
            "line": 2,
            "kind": "missing",
            "reason": "-r a\0b.txt: a file name cannot hold a NUL byte; not read",
            "partial": True,
        }
    ]


# --- configuration ----------------------------------------------------------------------------


def _pyproject(root: Path, body: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "requirements.txt").write_text("numpy\n")
    (root / "pyproject.toml").write_text(f"[tool.gpuport]\n{body}\n")
    return root


@pytest.mark.parametrize("target", ["/dev/zero", "fifo.json", "../outside/base.json"])
def test_a_baseline_in_pyproject_must_be_a_regular_file_inside_the_project(
    tmp_path: Path, target: str
) -> None:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "base.json").write_text('{"fingerprints": []}\n')
    root = _pyproject(tmp_path / "project", f'baseline = "{target}"')
    os.mkfifo(root / "fifo.json")
    proc = gpuport_run("scan", str(root), "--format", "json")
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert (
        "pyproject.toml: [tool.gpuport] baseline: " in proc.stderr
        and "Traceback" not in proc.stderr
    )
    assert ("not a regular file" in proc.stderr) or ("leads out of the project" in proc.stderr)


@pytest.mark.parametrize("target", ["/dev/zero", "fifo.json"])
def test_a_baseline_flag_may_be_anywhere_but_must_be_regular(tmp_path: Path, target: str) -> None:
    root = _pyproject(tmp_path / "project", "")
    os.mkfifo(root / "fifo.json")
    proc = gpuport_run("scan", str(root), "--baseline", target, cwd=root)
    assert proc.returncode == 2
    assert f"error: baseline file {target}: " in proc.stderr
    assert "not a regular file" in proc.stderr


def test_a_baseline_flag_outside_the_project_is_the_users_choice(tmp_path: Path) -> None:
    elsewhere = tmp_path / "ci" / "base.json"
    elsewhere.parent.mkdir()
    elsewhere.write_text('{"fingerprints": ["abc"]}\n')
    settings = load_settings(tmp_path / "project", {"baseline": str(elsewhere)})
    assert load_baseline(settings) == frozenset({"abc"})


def test_huge_and_deeply_nested_baselines_are_refused(tmp_path: Path) -> None:
    huge = tmp_path / "huge.json"
    with open(huge, "wb") as handle:  # sparse
        handle.truncate(64 * 1024 * 1024)
    settings = load_settings(tmp_path, {"baseline": str(huge)})
    with pytest.raises(ConfigError, match="over the 16,777,216-byte limit"):
        load_baseline(settings)
    deep = tmp_path / "deep.json"
    deep.write_text('{"fingerprints": ' + "[" * 100_000 + "]" * 100_000 + "}")
    code, _, err = cli("scan", str(tmp_path), "--baseline", str(deep))
    assert code == 2 and "nested too deeply" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("body", "key"),
    [
        ("max-file-size = 8.5", "max-file-size"),
        ('max-file-size = "1e400"', "max-file-size"),
        ('max-file-size = "inf"', "max-file-size"),
        ('max-file-size = "nan"', "max-file-size"),
        ("max-file-size = true", "max-file-size"),
        ("max-file-size = 99999999999999999999", "max-file-size"),
        ("max-file-size = []", "max-file-size"),
        ("baseline = 5", "baseline"),
        ('baseline = ""', "baseline"),
        ("baseline = []", "baseline"),
        ("fail-on = {a = 1}", "fail-on"),
        ("exclude = [1]", "exclude"),
        ("select = {}", "select"),
        ("rocm-version = []", "rocm-version"),
        ("offload-arch = 5", "offload-arch"),
        ('baseline = "a\\u0000b.json"', "baseline"),
    ],
)
def test_bad_config_values_are_exit_2_naming_the_file_and_key(
    tmp_path: Path, body: str, key: str
) -> None:
    root = _pyproject(tmp_path, body)
    code, out, err = cli("scan", str(root), "--format", "json")
    assert code == 2 and out == ""
    assert f"pyproject.toml: [tool.gpuport] {key}: " in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_deeply_nested_pyproject_is_an_input_problem_not_a_crash(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        "x = " + "[" * 10_000 + "]" * 10_000 + "\n[tool.gpuport]\n"
    )
    code, out, err = cli("scan", str(tmp_path), "--format", "json")
    assert code == 2 and "Traceback" not in err
    assert [s["path"] for s in json.loads(out)["skipped"]] == ["pyproject.toml"]


# --- messages ---------------------------------------------------------------------------------


def test_messages_are_not_rich_markup(tmp_path: Path) -> None:
    root = _pyproject(tmp_path, '"[link=https://x]y[/link]" = 1')
    code, _, err = cli("scan", str(root))
    assert code == 2
    assert "'[link=https://x]y[/link]' in [tool.gpuport]" in err
    assert "\x1b]8;" not in err  # no OSC 8 hyperlink


def test_control_characters_in_messages_are_shown_escaped(tmp_path: Path) -> None:
    root = _pyproject(tmp_path, 'baseline = "x\\u001b]0;pwned\\u0007\\u001b[2J.json"')
    code, _, err = cli("scan", str(root))
    assert code == 2
    assert "\x1b" not in err and "\x07" not in err
    assert "x\\x1b]0;pwned\\x07\\x1b[2J.json" in err


# --- exit codes -------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["scan", "assess"])
def test_a_missing_path_is_a_usage_error_and_writes_no_report(
    tmp_path: Path, command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    report = tmp_path / "report.json"
    code, out, err = cli(command, str(tmp_path / "nope"), "--format", "json", "-o", str(report))
    assert code == 2 and out == ""
    assert "nope: no such file or folder" in err
    assert not report.exists()
    assert not (tmp_path / "gpuport-report.html").exists()  # assess's default --html


def test_assess_html_is_not_written_for_a_missing_path(tmp_path: Path) -> None:
    html = tmp_path / "r.html"
    code, _, _ = cli("assess", str(tmp_path / "nope"), "--html", str(html))
    assert code == 2 and not html.exists()


def test_a_fifo_as_the_path_is_a_usage_error(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "train.py")
    proc = gpuport_run("scan", str(tmp_path / "train.py"))
    assert proc.returncode == 2
    assert "a FIFO (named pipe), not a file or folder to scan" in proc.stderr


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a folder whatever its mode")
def test_an_unreadable_folder_is_a_usage_error(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0)
    try:
        code, _, err = cli("scan", str(locked))
    finally:
        locked.chmod(0o700)
    assert code == 2 and "cannot read it" in err


def test_a_full_stdout_is_one_line_and_exit_2(tmp_path: Path) -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this system")
    (tmp_path / "requirements.txt").write_text("torch==2.0+cu118\n")
    proc = gpuport_run("scan", str(tmp_path), "--format", "json", shell_redirect="> /dev/full")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[0] == (
        "error: cannot write the output: No space left on device"
    )
    assert "Traceback" not in proc.stderr


def test_a_closed_stdout_is_one_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("torch==2.0+cu118\n")
    proc = gpuport_run("scan", str(tmp_path), "--format", "json", shell_redirect=">&-")
    assert proc.returncode == 2
    assert "error: cannot write the output: standard output is closed" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_closed_pipe_ends_quietly_with_exit_2(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("torch==2.0+cu118\n")
    env = {**os.environ, "PYTHONPATH": SRC}
    reader = subprocess.Popen(
        [sys.executable, "-m", "gpuport.cli", "scan", str(tmp_path), "--format", "json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert reader.stdout is not None
    reader.stdout.close()  # the reader goes away before gpuport writes a byte
    _, err = reader.communicate(timeout=TIMEOUT)
    assert reader.returncode == 2
    assert err == b""


def test_ctrl_c_in_a_command_exits_130(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupt(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("gpuport.cli.scan.scan_path", interrupt)
    code, _, err = cli("scan", str(tmp_path))
    assert code == 130 and "interrupted" in err


def test_ctrl_c_outside_the_error_handler_exits_130_not_clicks_1() -> None:
    @click.command("interrupt-me")
    def interrupt_me() -> None:
        raise KeyboardInterrupt

    main.add_command(interrupt_me)
    try:
        code, _, err = cli("interrupt-me")
    finally:
        main.commands.pop("interrupt-me")
    assert code == 130 and "interrupted" in err and "Aborted" not in err
