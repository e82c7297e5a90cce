"""Golden files of the report tests: compare rendered text, or rewrite it on request."""

from __future__ import annotations

from pathlib import Path

import pytest

GOLDEN_DIR = Path(__file__).resolve().parent / "golden"


class Golden:
    """Compares text with a golden file, or rewrites the file when asked to."""

    def __init__(self, update: bool) -> None:
        self.update = update

    def check(self, name: str, actual: str) -> None:
        path = GOLDEN_DIR / name
        if self.update:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(actual, encoding="utf-8", newline="\n")
            return
        if not path.exists():
            pytest.fail(f"no golden file {path.name}; run `pytest tests/report --update-goldens`")
        expected = path.read_text(encoding="utf-8")
        assert actual == expected, (
            f"{name} differs from its golden file; if the change is intended, run "
            "`pytest tests/report --update-goldens` and review the diff"
        )
