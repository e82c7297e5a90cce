"""``gpuport-pre-commit FILE...``, the command the gpuport-scan hook runs, in-process."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from gpuport.cli import main as gpuport
from gpuport.cli.precommit import main

BLOCKER = "import torch\n\nif torch.version.cuda.startswith('12'):\n    print('cuda 12')\n"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository root (pre-commit's working directory) with files in several tiers."""
    for rel, text in {
        "src/app/train.py": BLOCKER,
        "tests/test_train.py": BLOCKER,
        "generated/stub.py": BLOCKER,
        "src/app/clean.py": "def add(a, b):\n    return a + b\n",
        "notes.md": "torch.version.cuda\n",
    }.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def hook(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), env={"NO_COLOR": "1"})


def test_fails_on_a_blocker_with_the_repository_path(repo: Path) -> None:
    done = hook("src/app/train.py", "src/app/clean.py", "notes.md", "deleted.py")
    assert done.exit_code == 1, done.output
    assert "src/app/train.py" in done.output and "GP202" in done.output
    assert "clean.py" not in done.output and "notes.md" not in done.output
    assert "2 of 2 files scanned" in done.output


def test_passes_clean_files_and_files_it_does_not_read(repo: Path) -> None:
    assert hook("src/app/clean.py", "notes.md").exit_code == 0
    done = hook("notes.md", "deleted.py")
    assert done.exit_code == 0 and done.output == ""


def test_test_files_are_reported_but_fail_only_with_all_tiers(repo: Path) -> None:
    done = hook("tests/test_train.py")
    assert done.exit_code == 0 and "tests/test_train.py" in done.output
    assert hook("--all-tiers", "tests/test_train.py").exit_code == 1


def test_fail_on_flag_and_pyproject_settings(repo: Path) -> None:
    assert hook("--fail-on", "high", "src/app/train.py").exit_code == 0
    assert hook("--ignore", "GP202", "src/app/train.py").exit_code == 0
    (repo / "pyproject.toml").write_text(
        '[tool.gpuport]\nfail-on = "high"\nexclude = ["generated/*"]\n'
    )
    assert hook("src/app/train.py").exit_code == 0
    assert hook("--fail-on", "medium", "generated/stub.py").exit_code == 0
    assert hook("--fail-on", "medium", "src/app/train.py").exit_code == 1


def test_a_baseline_written_by_scan_applies_to_the_hook(repo: Path) -> None:
    wrote = CliRunner().invoke(
        gpuport, ["scan", ".", "--no-progress", "--write-baseline", "gpuport-baseline.json"]
    )
    assert wrote.exit_code == 1, wrote.output
    (repo / "pyproject.toml").write_text('[tool.gpuport]\nbaseline = "gpuport-baseline.json"\n')
    assert hook("src/app/train.py").exit_code == 0
    (repo / "src/app/new.py").write_text(BLOCKER.replace("'12'", "'11'"))
    assert hook("src/app/train.py", "src/app/new.py").exit_code == 1
