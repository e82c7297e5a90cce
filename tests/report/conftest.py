"""Report tests: the ``--update-goldens`` flag and the golden-file fixture.

The flag is registered here, which pytest reads at start-up when it is pointed at
tests/report (``pytest tests/report --update-goldens``). ``GPUPORT_UPDATE_GOLDENS=1`` does
the same from any directory.
"""

from __future__ import annotations

import os

import pytest
from report_golden import Golden


def _updating(config: pytest.Config) -> bool:
    try:
        flag = bool(config.getoption("--update-goldens"))
    except ValueError:  # the option was not registered (conftest not loaded at start-up)
        flag = False
    return flag or os.environ.get("GPUPORT_UPDATE_GOLDENS") == "1"


@pytest.fixture
def golden(request: pytest.FixtureRequest) -> Golden:
    return Golden(_updating(request.config))
