"""Shared test setup: paths to the repository's fixtures, examples and reference data."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))  # for `import expect`


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-goldens",
        action="store_true",
        default=False,
        help="Rewrite golden files from the current renderers instead of comparing.",
    )


@pytest.fixture
def fixtures() -> Path:
    return ROOT / "tests" / "fixtures"


@pytest.fixture
def examples() -> Path:
    return ROOT / "examples"
