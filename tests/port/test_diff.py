"""`port`'s unified diff applies with the real `git apply` and GNU `patch -p1`, for any bytes.

Every case is a file whose text or name `str.splitlines`, a bare "name" header or a missing
final newline used to break: the diff is applied for real and the result compared byte for
byte with the translation.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from gpuport.port.diff import NO_NEWLINE, quote_path, split_lines, unified_diff
from gpuport.port.model import FileResult, PortResult
from gpuport.report.common import visible_lines

# Every character str.splitlines() takes for a line break, \n excepted.
LINE_BREAKS_BUT_NEWLINE = ("\r", "\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")

CASES: list[tuple[str, str, str]] = [
    *(
        (f"sep-{ord(ch):x}.cu", f"a{ch}cudaFree(0);\nb{ch}c\n", f"a{ch}hipFree(0);\nb{ch}c\n")
        for ch in LINE_BREAKS_BUT_NEWLINE
    ),
    ("crlf.cu", "x\r\ncudaFree(0);\r\ny\r\n", "x\r\nhipFree(0);\r\ny\r\n"),
    ("lone-cr-at-end.cu", "cudaFree(0);\r", "hipFree(0);\r"),
    ("no-final-newline.cu", "1\n2\n3\n4\ncudaFree(0);", "1\n2\n3\n4\nhipFree(0);"),
    ("unchanged-last.cu", "cudaFree(0);\n1\n2\n3\n4\n5\nlast", "hipFree(0);\n1\n2\n3\n4\n5\nlast"),
    ("newline-added.cu", "cudaFree(0);", "hipFree(0);\n"),
    ("newline-dropped.cu", "cudaFree(0);\n", "hipFree(0);"),
    ("not-utf8-\udcff.cu", "x\udcfe\udc80\ncudaFree(0);\n", "x\udcfe\udc80\nhipFree(0);\n"),
    ("with space.cu", "cudaFree(0);\n", "hipFree(0);\n"),
    ("sub dir/x y.cu", "cudaFree(0);\n", "hipFree(0);\n"),
    ("new\nline.cu", "cudaFree(0);\n", "hipFree(0);\n"),
    ('quote".cu', "cudaFree(0);\n", "hipFree(0);\n"),
    ("back\\slash.cu", "cudaFree(0);\n", "hipFree(0);\n"),
    ("tab\there.cu", "cudaFree(0);\n", "hipFree(0);\n"),
    ("esc\x1b[2J.cu", "cudaFree(0); // \x1b]0;title\x07\n", "hipFree(0); // \x1b]0;title\x07\n"),
    ("bidi-é\u202e.cu", "cudaFree(0); /* \u202e */\n", "hipFree(0); /* \u202e */\n"),
    ("-- dashes.cu", "--- a/x\n+++ b/x\ncudaFree(0);\n", "--- a/x\n+++ b/x\nhipFree(0);\n"),
]


def _bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def _diff(name: str, before: str, after: str) -> str:
    return unified_diff(PortResult("p", "6.4", [FileResult(name, name, "cuda", before, after)]))


def _apply(tmp_path: Path, command: list[str], name: str, before: str, after: str) -> bytes:
    """Apply the diff with ``command`` (the patch file appended) in a fresh tree."""
    tree = tmp_path / "tree"
    target = tree / os.fsdecode(_bytes(name))
    target.parent.mkdir(parents=True)
    target.write_bytes(_bytes(before))
    patch_file = tmp_path / "port.patch"
    patch_file.write_bytes(_bytes(_diff(name, before, after)))
    done = subprocess.run(
        [*command, str(patch_file)], cwd=tree, capture_output=True, check=False, timeout=60
    )
    assert done.returncode == 0, (done.stdout, done.stderr)
    return target.read_bytes()


@pytest.mark.parametrize(("name", "before", "after"), CASES, ids=[ascii(c[0]) for c in CASES])
def test_git_apply_takes_the_diff(tmp_path: Path, name: str, before: str, after: str) -> None:
    _apply(tmp_path, ["git", "apply", "--check"], name, before, after)
    assert _apply(tmp_path / "2", ["git", "apply"], name, before, after) == _bytes(after)


@pytest.mark.skipif(shutil.which("patch") is None, reason="needs GNU patch")
@pytest.mark.parametrize(("name", "before", "after"), CASES, ids=[ascii(c[0]) for c in CASES])
def test_patch_p1_takes_the_diff(tmp_path: Path, name: str, before: str, after: str) -> None:
    _apply(tmp_path, ["patch", "--dry-run", "-p1", "-i"], name, before, after)
    assert _apply(tmp_path / "2", ["patch", "-s", "-p1", "-i"], name, before, after) == _bytes(
        after
    )


def test_lines_end_at_newline_only() -> None:
    text = "a\rb\x85c\u2028d\fe\r\nf"
    assert split_lines(text) == ["a\rb\x85c\u2028d\fe\r\n", "f"]
    assert split_lines("a\n") == ["a\n"]
    assert split_lines("") == []


def test_no_newline_marker_comes_only_after_the_last_line() -> None:
    diff = _diff("a.cu", "cudaFree(0);\nx\fy\nz", "hipFree(0);\nx\fy\nz")
    assert diff == (
        "--- a/a.cu\n+++ b/a.cu\n@@ -1,3 +1,3 @@\n"
        f"-cudaFree(0);\n+hipFree(0);\n x\fy\n z\n{NO_NEWLINE}"
    )
    both = _diff("b.cu", "cudaFree(0);", "hipFree(0);")
    assert both.endswith(f"-cudaFree(0);\n{NO_NEWLINE}+hipFree(0);\n{NO_NEWLINE}")


QUOTED_NAMES = [
    ("a/plain.cu", "a/plain.cu"),
    ("a/with space.cu", "a/with space.cu\t"),  # git's tab, so patch keeps the space
    ('a/q"\\.cu', '"a/q\\"\\\\.cu"'),
    ("a/n\nt\te\x1b.cu", '"a/n\\nt\\te\\033.cu"'),
    ("a/\udcff\u00e9.cu", '"a/\\377\\303\\251.cu"'),  # bytes over 0x7f in octal
]


@pytest.mark.parametrize(("name", "quoted"), QUOTED_NAMES)
def test_file_names_are_quoted_as_git_quotes_them(name: str, quoted: str) -> None:
    assert quote_path(name) == quoted


def test_a_name_with_a_newline_keeps_the_headers_whole() -> None:
    header = _diff("new\nline.cu", "cudaFree(0);\n", "hipFree(0);\n").splitlines()[:2]
    assert header == ['--- "a/new\\nline.cu"', '+++ "b/new\\nline.cu"']


def test_on_a_terminal_control_characters_are_shown_not_sent() -> None:
    diff = _diff("esc\x1b]0;t\x07.cu", "cudaFree(0); \x1b[2J\x9b\u202e\r\n", "hipFree(0);\r\n")
    shown = visible_lines(diff)
    assert not any(ch in shown for ch in "\x1b\x07\x9b\u202e\r")
    assert "\\x1b[2J" in shown and "\\u202e" in shown and "\\x0d" in shown
    assert shown.count("\n") == diff.count("\n")


def test_a_file_with_a_byte_order_mark_gets_a_diff_git_applies(tmp_path: Path) -> None:
    # The texts gpuport compares leave the mark out; the file on disk and the translation that
    # `port --out` writes keep it: the diff's first line must carry it for the hunk to match.
    from click.testing import CliRunner

    from gpuport.cli import main

    project = tmp_path / "p"
    project.mkdir()
    (project / "k.cu").write_bytes(b"\xef\xbb\xbfcudaFree(0);\nint x;\n")
    out = tmp_path / "out"
    copied = CliRunner().invoke(main, ["port", "--no-progress", str(project), "--out", str(out)])
    assert copied.exit_code in (0, 1), copied.stderr
    done = CliRunner().invoke(main, ["port", "--no-progress", str(project)])
    assert done.exit_code in (0, 1), done.stderr
    patch_file = tmp_path / "port.patch"
    patch_file.write_bytes(done.stdout_bytes)
    applied = subprocess.run(
        ["git", "apply", str(patch_file)], cwd=project, capture_output=True, timeout=60
    )
    assert applied.returncode == 0, applied.stderr
    translated = (project / "k.cu").read_bytes()
    assert translated.startswith(b"\xef\xbb\xbf") and translated.count(b"\xef\xbb\xbf") == 1
    assert b"hipFree(0);" in translated
    assert translated == (out / "k.cu").read_bytes()  # the diff gives what --out writes
