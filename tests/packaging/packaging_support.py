"""What the packaging tests share: the repository root, their xdist group, offline child
processes, and the built and installed distributions their fixtures (conftest.py) return."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GROUP = pytest.mark.xdist_group("packaging")


def offline_env(wheelhouse: Path, **more: str) -> dict[str, str]:
    """The environment for a child process that must not import src/ or reach the network."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PYTHON"))}
    env.update(
        PIP_NO_INDEX="1",
        PIP_FIND_LINKS=str(wheelhouse),
        PIP_CONFIG_FILE=os.devnull,
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PIP_NO_COMPILE="1",
        NO_COLOR="1",
    )
    env.update(more)
    return env


def run(
    cmd: list[str], cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=cwd, env=env)


@dataclass(frozen=True)
class Dist:
    wheel: Path
    sdist: Path


@dataclass(frozen=True)
class Installed:
    venv: Path
    env: dict[str, str]
    workdir: Path  # outside the source tree: `import gpuport` can only find the installed one

    def bin(self, name: str) -> str:
        return str(self.venv / "bin" / name)
