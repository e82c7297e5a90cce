"""``say`` writes printable text to a pipe or file as rich would, without loading rich."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console
from rich.text import Text

from gpuport.cli.ui import say

MESSAGES = [
    "wrote report.json",
    "app/[id]/page.py",  # brackets are not rich markup here
    "[bold red]not markup[/] :smile: not an emoji code",
    "naïve → ✓ 日本語",
    "x" * 300,  # one long line, never wrapped
    "",
    "tab\there",  # not printable: rich expands the tab
    "escape \x1b[31m red",  # not printable: rich's own handling
    "bell\x07 and return\r",
]


def _as_rich_writes(message: str) -> str:
    out = io.StringIO()
    Console(file=out, no_color=True, highlight=False, soft_wrap=True).print(Text(message))
    return out.getvalue()


@pytest.mark.parametrize("message", MESSAGES)
def test_say_to_a_pipe_writes_what_rich_writes(
    message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    say(message)
    assert err.getvalue() == _as_rich_writes(message)


def test_a_json_scan_to_a_file_never_loads_rich(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("import pynvml\n", encoding="utf-8")
    out = tmp_path / "out.json"
    code = (
        "import sys\n"
        "from gpuport.cli import main\n"
        f"sys.argv = ['gpuport', 'scan', {str(tmp_path)!r}, '--format', 'json', '-o', "
        f"{str(out)!r}, '--fail-on', 'never']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('rich' in sys.modules, file=sys.__stdout__)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.strip() == "False"
    assert f"wrote {out}" in done.stderr
    assert json.loads(out.read_text(encoding="utf-8"))["summary"]["findings"] == 1
