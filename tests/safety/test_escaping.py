"""A hostile project through scan, assess and port in every format: nothing raw gets out.

The project's file names and code carry markup for every medium (HTML, Markdown links and
images, table pipes, backticks), escape sequences that drive a terminal (title, clear
screen, OSC 8 links, CSI through C1), bidi overrides, C1 controls and bytes that are not
UTF-8. Each output is checked for what its medium would act on: terminals get no control
character, Markdown and HTML build no tag, link or image from the project, JSON and SARIF
parse as strict UTF-8, and the diff on a pipe still applies byte for byte.
"""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner
from markdown_it import MarkdownIt
from markdown_it.token import Token

from gpuport.cli import main

SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(2)>"
MD_LINK = "[x](javascript:alert(3))"
MD_IMAGE = "![i](https://evil.example/i.png)"
TITLE = "\x1b]0;pwned\x07"
CLEAR = "\x1b[2J"
OSC8 = "\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\"
BIDI = "\u202e"
C1 = "\x85\x9b31m"
MARKUP = f"{SCRIPT} {IMG} {MD_LINK} {MD_IMAGE} | a | b | `tick` https://evil.example"
CONTROLS = f"{TITLE}{CLEAR}{OSC8}{BIDI}{C1}"
# What no terminal may receive raw: C0 but tab and newline, DEL, C1, bidi overrides/isolates.
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")

KERNEL = (
    f"// {MARKUP} {CONTROLS}\n"
    "#include <cuda_runtime.h>\n"
    f'const char* s = "{SCRIPT} {CONTROLS}";\n'
    "void f(float* p) { cudaMalloc(&p, 4); cudaFree(p); }\n"
)
REQUIREMENTS = (
    "torch==2.3.0+cu121\n"
    "--extra-index-url https://download.pytorch.org/whl/cu121\n"
    f"nvidia-cublas-cu12 # {MARKUP} {CONTROLS}\n"
)
# File names: every hostile piece that a file system allows in a name.
NAMES = [
    f"k {SCRIPT.replace('/', '')}.cu",
    f"k {MD_LINK}.cu",
    f"k {TITLE}{CLEAR}{BIDI}\x85\x9b.cu",
    "k | pipe `tick`.cu",
    "k\nnewline.cu",
]


def make_hostile_project(root: Path) -> Path:
    (root / "src").mkdir(parents=True)
    for name in NAMES:
        (root / "src" / name).write_text(KERNEL, encoding="utf-8")
    # A name and code that are not UTF-8: kept as lone surrogates inside gpuport.
    bad = KERNEL.encode() + b"// \xff\xfe not utf-8 \xc3(\n"
    (root / "src" / os.fsdecode(b"bad-\xff\xfe.cu")).write_bytes(bad)
    (root / "requirements.txt").write_text(REQUIREMENTS, encoding="utf-8")
    (root / "Dockerfile").write_text(
        f"FROM nvidia/cuda:12.4.1-devel-ubuntu22.04\n# {MARKUP} {CONTROLS}\n"
        "ENV NVIDIA_VISIBLE_DEVICES=all\n",
        encoding="utf-8",
    )
    return root


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_hostile_project(tmp_path_factory.mktemp("hostile") / "proj")


def run(*args: str) -> tuple[int, bytes, bytes]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout_bytes, result.stderr_bytes


def report_of(command: str, project: Path, fmt: str) -> bytes:
    """The report ``command`` writes in ``fmt`` (port's terminal summary: on stderr)."""
    extra = ["--no-html"] if command == "assess" else []
    code, stdout, stderr = run(command, str(project), "--no-progress", "--format", fmt, *extra)
    assert code in (0, 1), stderr
    assert not RAW_CONTROL.search(stderr.decode("utf-8")), stderr
    # Beside its terminal summary, port prints the diff on stdout: on a pipe, byte-exact.
    return stderr if command == "port" and fmt == "terminal" else stdout


COMMANDS = ("scan", "assess", "port")


def test_the_project_really_is_hostile(project: Path) -> None:
    """The findings and changes quote the hostile text, so the checks below mean something."""
    document = json.loads(report_of("port", project, "json"))
    assert len(document["files"]) >= len(NAMES) + 2
    scan = json.loads(report_of("scan", project, "json"))
    assert len({f["location"]["path"] for f in scan["findings"]}) >= len(NAMES)
    assert any(SCRIPT in line for f in scan["findings"] for line in f["excerpt"]["lines"] or [])


@pytest.mark.parametrize("command", COMMANDS)
def test_terminal_output_carries_no_control_character(project: Path, command: str) -> None:
    text = report_of(command, project, "terminal").decode("utf-8")  # strict: valid UTF-8
    assert not RAW_CONTROL.search(text), RAW_CONTROL.search(text)
    assert "\\x1b]0;pwned\\x07" in text and "\\u202e" in text


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_json_and_sarif_are_strict_utf8_json(project: Path, command: str, fmt: str) -> None:
    raw = report_of(command, project, fmt)
    text = raw.decode("utf-8", "strict")
    assert not re.search("[\x7f-\x9f\u2028\u2029\ud800-\udfff]", text)
    document = json.loads(text)
    strings = list(_strings(document))
    assert not [s for s in strings if re.search("[\ud800-\udfff]", s)]
    # the bad bytes, shown validly: U+FFFD, a visible escape, or percent-encoded in a URI
    assert any("\ufffd" in s or "\\xff" in s or "%FF" in s for s in strings)


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


# The only raw HTML the Markdown renderers write themselves.
OUR_MARKDOWN_HTML = {"<details>", "<summary>", "</summary>", "</details>", "<sub>", "</sub>"}


def _walk(tokens: list[Token]) -> list[Token]:
    out: list[Token] = []
    for token in tokens:
        out.append(token)
        out.extend(_walk(token.children or []))
    return out


@pytest.mark.parametrize("command", COMMANDS)
def test_markdown_builds_nothing_from_the_project(project: Path, command: str) -> None:
    text = report_of(command, project, "markdown").decode("utf-8")
    assert not RAW_CONTROL.search(text)
    tokens = _walk(MarkdownIt("commonmark").enable("table").enable("strikethrough").parse(text))
    tags = {
        tag
        for t in tokens
        if t.type in ("html_inline", "html_block")
        for tag in re.findall(r"</?[a-zA-Z][^>]*>", t.content)
    }
    assert tags <= OUR_MARKDOWN_HTML, tags
    assert not [t for t in tokens if t.type == "image"]
    for token in tokens:
        if token.type == "link_open":
            href = str(token.attrs.get("href", ""))
            assert not re.match(r"(?i)[a-z][a-z0-9+.-]*:|//", href), href
    # GitHub's autolink extension works on text outside code: no bare scheme left for it.
    for inline in (t.content for t in tokens if t.type == "inline"):
        outside_code = re.sub(r"(`+).*?\1", "", inline)
        assert not re.search(r"(?i)\b(https?|ftp)://|\bwww\.", outside_code), inline
    assert "@everyone" not in text
    if command == "port":
        shown = " ".join(t.content for t in tokens if t.type in ("text", "code_inline"))
        assert NAMES[0] in shown and MD_LINK in shown  # shown as the text it is


class _Page(HTMLParser):
    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


@pytest.mark.parametrize("command", COMMANDS)
def test_html_is_inert_under_its_policy(project: Path, command: str) -> None:
    text = report_of(command, project, "html").decode("utf-8")
    assert not RAW_CONTROL.search(text)
    for raw in ("<script", "<img", "onerror=alert(2)>"):
        assert raw not in text, raw
    page = _Page(text)
    assert not {t for t, _ in page.tags} & {"script", "img", "iframe", "object", "embed", "link"}
    policies = [
        a["content"]
        for t, a in page.tags
        if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"
    ]
    assert len(policies) == 1 and "default-src 'none'" in str(policies[0])
    for tag, attrs in page.tags:
        assert not [name for name in attrs if name.startswith("on")], tag
        href = attrs.get("href")
        if href is not None:
            assert href.startswith(("#", "https://", "http://")), href
            assert "evil.example" not in href  # project text never becomes a link


def test_diff_on_a_pipe_is_byte_exact_and_applies(project: Path, tmp_path: Path) -> None:
    code, diff, _ = run("port", str(project), "--no-progress")
    assert code in (0, 1)
    assert b"\x1b]0;pwned\x07" in diff  # exact: the code's own bytes
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-a", str(project), str(copy)], check=True)
    out = tmp_path / "out"
    assert run("port", str(project), "--no-progress", "--out", str(out))[0] in (0, 1)
    patch = tmp_path / "port.patch"
    patch.write_bytes(diff)
    applied = subprocess.run(
        ["git", "apply", str(patch)], cwd=copy, capture_output=True, check=False
    )
    assert applied.returncode == 0, applied.stderr
    for path in out.rglob("*"):
        if path.is_file():
            assert (copy / path.relative_to(out)).read_bytes() == path.read_bytes(), path


def test_diff_on_a_terminal_shows_control_characters(project: Path) -> None:
    """Under a real pseudo-terminal, the diff's escape sequences are shown, not sent."""
    leader, follower = pty.openpty()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "NO_COLOR": "1"}
    with subprocess.Popen(
        [sys.executable, "-m", "gpuport.cli", "port", str(project), "--no-progress"],
        stdout=follower,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        env=env,
    ) as process:
        os.close(follower)
        shown = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            shown += chunk
        process.wait(timeout=120)
    os.close(leader)
    text = shown.decode("utf-8").replace("\r\n", "\n")  # the tty turns \n into \r\n
    assert "+#include <hip/hip_runtime.h>" in text
    assert not RAW_CONTROL.search(text), RAW_CONTROL.search(text)
    assert "\\x1b]0;pwned\\x07" in text and "\\u202e" in text and "\\x9b" in text
