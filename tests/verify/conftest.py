"""Fixtures of the verify tests: a tiny recording of the whole suite, made once."""

from __future__ import annotations

from pathlib import Path

import pytest
from verify_helpers import run_cli


@pytest.fixture(scope="session")
def tiny_reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The whole suite at the tiny size, recorded on this CPU."""
    path = tmp_path_factory.mktemp("verify") / "ref.gpv"
    code, _, err = run_cli("verify", "record", "-o", str(path), "--size", "tiny", "--device", "cpu")
    assert code == 0, err
    return path
