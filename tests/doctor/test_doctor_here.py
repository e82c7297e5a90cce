"""``gpuport doctor`` on the machine the tests run on, read from the real ``/``.

CI machines and this project's development container have no GPU: there the doctor must say so,
list what it looked at and what it could not check, and exit 1. On a machine with a GPU the test
is skipped (what it finds there depends on that machine).
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from gpuport.cli import main

NEED_A_GPU = {
    "kernel-driver",
    "device-nodes",
    "permissions",
    "gpu-support",
    "torch-arch",
    "hsa-override",
    "driver-skew",
    "cuda-driver",
}


def test_doctor_on_this_gpu_less_machine_says_so_and_exits_1() -> None:
    runner = CliRunner(env={"GPUPORT_DOCTOR_ROOT": None, "CUDA_VISIBLE_DEVICES": None})
    result = runner.invoke(main, ["doctor", "--format", "json"])
    document = json.loads(result.stdout)
    if document["gpus"]:
        pytest.skip(f"this machine has a GPU: {document['gpus'][0]['name']}")
    assert result.exit_code == 1, result.output
    assert document["verdict"].startswith("no GPU found")
    assert document["vendor"] == "none" and document["healthy"] is False
    checks = {item["check"]: item for item in document["checks"]}
    assert checks["gpu-present"]["status"] == "problem"
    assert checks["gpu-present"]["summary"].startswith("No GPU found")
    # what it could not check without a GPU, each named and said to be not run
    for name in NEED_A_GPU:
        assert checks[name]["status"] == "could not check", name
        assert checks[name]["summary"] == "Not run: no GPU found."
    # what it ran anyway
    assert {"visible-devices", "torch-build", "gpu-packages"} <= {
        name for name, item in checks.items() if item["status"] != "could not check"
    }
    looked_at = [probe["probe"] for probe in document["probes"]]
    assert looked_at[:2] == ["KFD topology (/sys/class/kfd)", "PCI devices (/sys/bus/pci)"]
    assert any(probe.startswith("Python packages") for probe in looked_at)
    assert "doctor: no GPU found" in result.stderr
