"""The machine description shared by bench and verify: built here, read back as untrusted JSON."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from gpuport.machine import MachineDescription, describe_machine, driver_version


def test_the_cpu_machine_round_trips_through_json() -> None:
    here = describe_machine()
    assert here.accelerator == "cpu"
    assert here.device_arch is None and here.device_count == 0
    assert here.cpu_count >= 1
    again = MachineDescription.from_dict(json.loads(json.dumps(here.to_dict())))
    assert again == here
    assert again.label.endswith(f" on {here.hostname}")


class _Props:
    name = "AMD Instinct MI300X"
    gcnArchName = "gfx942:sramecc+:xnack-"
    major, minor = 9, 4
    total_memory = 192 * 2**30


def _fake_torch(hip: str | None) -> Any:
    cuda = SimpleNamespace(
        is_available=lambda: True,
        device_count=lambda: 8,
        get_device_properties=lambda index: _Props(),
    )
    version = SimpleNamespace(cuda=None if hip else "12.8", hip=hip)
    return SimpleNamespace(__version__="2.9.0+rocm6.4", cuda=cuda, version=version)


def test_a_rocm_torch_is_told_from_a_cuda_one_by_its_hip_version() -> None:
    amd = describe_machine(_fake_torch("6.4.43482"))
    assert (amd.accelerator, amd.device_arch, amd.device_count) == ("rocm", "gfx942", 8)
    assert amd.device_memory_bytes == 192 * 2**30 and amd.hip == "6.4.43482"
    nvidia = describe_machine(_fake_torch(None))
    assert (nvidia.accelerator, nvidia.device_arch, nvidia.cuda) == ("cuda", "sm_94", "12.8")


def test_driver_versions_are_read_from_the_kernel_modules(tmp_path: Path) -> None:
    nvidia = tmp_path / "nvidia"
    nvidia.write_text(
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\n"
    )
    amdgpu = tmp_path / "amdgpu"
    amdgpu.write_text("6.10.5\n")
    missing = tmp_path / "missing"
    assert driver_version(nvidia, amdgpu) == "nvidia 550.54.15"
    assert driver_version(missing, amdgpu) == "amdgpu 6.10.5"
    assert driver_version(missing, missing) is None


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"cpu_count": "2"}, "'cpu_count' is str, not int"),
        ({"accelerator": "tpu"}, "accelerator 'tpu' is not one of"),
        ({"hostname": None}, "'hostname' is NoneType, not str"),
        ({"device_count": True}, "'device_count' is bool, not int"),
    ],
)
def test_a_foreign_description_is_refused_naming_the_field(
    change: dict[str, object], message: str
) -> None:
    data = describe_machine().to_dict() | change
    with pytest.raises(ValueError, match=message):
        MachineDescription.from_dict(data)


def test_a_missing_field_is_named_and_an_unknown_one_ignored() -> None:
    data = describe_machine().to_dict()
    del data["torch"]
    with pytest.raises(ValueError, match="has no 'torch'"):
        MachineDescription.from_dict(data)
    newer = describe_machine().to_dict() | {"added_by_a_newer_gpuport": 1}
    assert MachineDescription.from_dict(newer).hostname == newer["hostname"]
    with pytest.raises(ValueError, match="not an object"):
        MachineDescription.from_dict([1, 2])
