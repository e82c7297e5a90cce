"""Serving tests: the fake OpenAI-compatible servers, started once per test session."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_server import FakeServer


@pytest.fixture(scope="session")
def server() -> Iterator[FakeServer]:
    with FakeServer() as running:
        yield running


@pytest.fixture(scope="session")
def server_b() -> Iterator[FakeServer]:
    """A second server, for verify serve's two-server comparisons."""
    with FakeServer() as running:
        yield running


@pytest.fixture(autouse=True)
def data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The default results store lives under the test's own folder, never the user's."""
    home = tmp_path / "data"
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    return home
