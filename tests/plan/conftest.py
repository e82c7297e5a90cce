"""Helpers for the plan tests: small configs written on the fly, and a plan builder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture
def write_config(tmp_path: Path):  # type: ignore[no-untyped-def]
    """write_config(dict_or_text, folder="model") -> path of the written config.json."""

    def write(content: dict[str, Any] | str, folder: str = "model") -> Path:
        directory = tmp_path / folder
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / "config.json"
        text = content if isinstance(content, str) else json.dumps(content, indent=2)
        path.write_text(text, encoding="utf-8")
        return path

    return write
