"""``gpuport doctor`` on the command line: formats, exit codes, the hidden --root."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from doctor_machines import Machine

from gpuport.cli import main


def test_doctor_on_a_machine_without_gpu_says_so_and_exits_1(tmp_path: Path) -> None:
    Machine(tmp_path)
    result = CliRunner().invoke(main, ["doctor", "--root", str(tmp_path), "--format", "json"])
    assert result.exit_code == 1, result.output
    document = json.loads(result.stdout)
    assert document["verdict"].startswith("no GPU found")
    assert document["gpus"] == []
    assert document["checks"][0] == {
        "check": "gpu-present",
        "title": "GPU present",
        "status": "problem",
        "summary": "No GPU found: no AMD or NVIDIA GPU on the PCI bus, no KFD topology and no "
        "NVIDIA driver.",
        "why": "Nothing on this machine can run GPU code; PyTorch will run on the CPU. Run "
        "gpuport doctor on the GPU machine itself.",
        "fix": None,
    }
    assert "doctor: no GPU found" in result.stderr


def test_doctor_terminal_format_and_the_root_variable(tmp_path: Path) -> None:
    Machine(tmp_path)
    result = CliRunner(env={"GPUPORT_DOCTOR_ROOT": str(tmp_path)}).invoke(main, ["doctor"])
    assert result.exit_code == 1
    assert result.stdout.startswith("GPU stack: no GPU found")
    assert "could not check  Kernel driver" in result.stdout
    assert "Looked at" in result.stdout


def test_doctor_with_a_root_that_is_not_a_folder_exits_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["doctor", "--root", str(tmp_path / "nope")])
    assert result.exit_code == 2
    assert "not a folder to read the machine from" in result.stderr


def test_root_is_hidden_from_help() -> None:
    result = CliRunner().invoke(main, ["doctor", "--help"])
    assert result.exit_code == 0
    assert "--import-torch" in result.stdout and "--root" not in result.stdout
