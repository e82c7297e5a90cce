"""One build of gpuport's sdist and wheel, and one fresh venv with the wheel, for the session.

Everything installs offline from the wheelhouse ``scripts/setup.sh --test`` fills
(``.cache/wheelhouse``, or ``GPUPORT_WHEELHOUSE``); pip's own configuration files are left out
(``PIP_CONFIG_FILE=/dev/null``) so that no index this machine's pip knows is reached either.
The tests that use these fixtures share one xdist group, so the build happens once.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from packaging_support import ROOT, Dist, Installed, offline_env, run


@pytest.fixture(scope="session")
def wheelhouse() -> Path:
    path = Path(os.environ.get("GPUPORT_WHEELHOUSE", ROOT / ".cache" / "wheelhouse"))
    if not (path / ".requirements").is_file():
        pytest.fail(f"no wheelhouse at {path}: run scripts/setup.sh --test (or make setup-test)")
    return path


@pytest.fixture(scope="session")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Dist:
    """``python -m build``: the sdist, then the wheel built from the sdist (as PyPI users get it)."""
    out = tmp_path_factory.mktemp("dist")
    done = run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)],
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (wheel,) = out.glob("gpuport-*.whl")
    (sdist,) = out.glob("gpuport-*.tar.gz")
    return Dist(wheel, sdist)


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory, dist: Dist, wheelhouse: Path) -> Installed:
    """A fresh venv with the wheel and its dependencies from the wheelhouse, nothing else."""
    venv = tmp_path_factory.mktemp("venv")
    env = offline_env(wheelhouse)
    made = run([sys.executable, "-m", "venv", "--without-pip", str(venv)], env=env)
    assert made.returncode == 0, made.stderr
    # The test venv's pip installs into the new one (pip >= 22.3): no ensurepip run per test.
    pip = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q"]
    done = run([*pip, str(dist.wheel)], env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    workdir = tmp_path_factory.mktemp("work")
    return Installed(venv, env, workdir)
