"""The gpuport-scan hook of .pre-commit-hooks.yaml, run the way users meet it: pre-commit try-repo.

pre-commit clones the hook repository and pip-installs it into its own venv; here pip reads only
the wheelhouse (no network) and pre-commit's cache lives in a temporary folder. The hook
repository is a fresh git repository holding the working tree's package files, so uncommitted
changes are what is tested (try-repo itself sees only what git tracks).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from packaging_support import GROUP, ROOT, offline_env, run

pytestmark = GROUP
PRE_COMMIT = [sys.executable, "-m", "pre_commit"]
GIT = ["git", "-c", "user.name=gpuport tests", "-c", "user.email=tests@example.invalid"]
HOOK_REPO_FILES = ("pyproject.toml", "README.md", "MANIFEST.in", ".pre-commit-hooks.yaml")


def git_repo(path: Path) -> None:
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "files"]):
        done = run([*GIT, *cmd], cwd=path)
        assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("hook-repo")
    for name in HOOK_REPO_FILES:
        shutil.copy2(ROOT / name, repo / name)
    shutil.copytree(
        ROOT / "src" / "gpuport",
        repo / "src" / "gpuport",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
    )
    git_repo(repo)
    return repo


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small project: a ROCm blocker, a clean module, a file gpuport does not read."""
    path = tmp_path_factory.mktemp("project")
    (path / "train.py").write_text(
        "import torch\n\nif torch.version.cuda.startswith('12'):\n    print('cuda 12')\n"
    )
    (path / "clean.py").write_text("def add(a, b):\n    return a + b\n")
    (path / "notes.md").write_text("torch.version.cuda\n")
    git_repo(path)
    return path


def try_repo(
    hook_repo: Path, project: Path, wheelhouse: Path, home: Path, *files: str
) -> subprocess.CompletedProcess[str]:
    env = offline_env(wheelhouse, PRE_COMMIT_HOME=str(home), PRE_COMMIT_COLOR="never")
    return run(
        [*PRE_COMMIT, "try-repo", str(hook_repo), "gpuport-scan", "--files", *files],
        cwd=project,
        env=env,
    )


def test_hook_definition() -> None:
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert hook["id"] == "gpuport-scan"
    assert hook["language"] == "python"
    assert hook.get("pass_filenames", True) is True
    entry = hook["entry"].split()[0]
    assert f'{entry} = "gpuport.cli.precommit:main"' in (ROOT / "pyproject.toml").read_text()


def test_hook_fails_on_a_rocm_blocker_and_passes_a_clean_file(
    hook_repo: Path, project: Path, wheelhouse: Path, tmp_path: Path
) -> None:
    failed = try_repo(
        hook_repo, project, wheelhouse, tmp_path / "a", "train.py", "clean.py", "notes.md"
    )
    assert failed.returncode == 1, failed.stdout + failed.stderr
    out = failed.stdout
    assert "gpuport-scan" in out and "Failed" in out, out
    assert "train.py" in out and "GP202" in out, out
    assert "clean.py\n" not in out and "notes.md" not in out, out

    passed = try_repo(hook_repo, project, wheelhouse, tmp_path / "b", "clean.py", "notes.md")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "Passed" in passed.stdout and "GP2" not in passed.stdout, passed.stdout
