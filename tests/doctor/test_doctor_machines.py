"""Each test machine, diagnosed: the status, the sentence and the fix of every check that matters."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from doctor_machines import (
    GIB,
    H100_SMI,
    HANG,
    Machine,
    h100_node,
    mi300x_node,
    ok,
    rx6700xt_desktop,
    rx7900xtx_desktop,
    write,
)

from gpuport.doctor import CommandResult, Diagnosis, DoctorReport, Status, diagnose
from gpuport.doctor.probes import gfx_name, override_gfx
from gpuport.doctor.system import subprocess_runner


def by_check(report: DoctorReport) -> dict[str, Diagnosis]:
    return {item.check: item for item in report.diagnoses}


def statuses(report: DoctorReport) -> dict[str, Status]:
    return {item.check: item.status for item in report.diagnoses}


# --- formats ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "gfx"),
    [
        (90402, "gfx942"),
        (90010, "gfx90a"),
        (100301, "gfx1031"),
        (110000, "gfx1100"),
        (120001, "gfx1201"),
    ],
)
def test_kfd_target_versions_become_gfx_ids(version: int, gfx: str) -> None:
    assert gfx_name(version) == gfx


@pytest.mark.parametrize(
    ("value", "gfx"),
    [
        ("10.3.0", "gfx1030"),
        ("11.0.0", "gfx1100"),
        ("9.4.2", "gfx942"),
        ("ten", None),
        ("10.3", None),
    ],
)
def test_override_values_name_the_target_they_spoof(value: str, gfx: str | None) -> None:
    assert override_gfx(value) == gfx


# --- machines --------------------------------------------------------------------------------


def test_mi300x_node_is_healthy(tmp_path: Path) -> None:
    report = diagnose(mi300x_node(tmp_path).view())
    assert report.healthy and report.verdict == "healthy (1 could not be checked)"
    found = statuses(report)
    assert found.pop("driver-skew") is Status.UNKNOWN
    assert set(found.values()) == {Status.OK}, found
    assert len(report.gpus) == 8
    assert report.gpus[0].name == "AMD Instinct MI300X" and report.gpus[0].arch == "gfx942"
    assert report.gpus[0].memory_bytes == 192 * GIB
    assert report.rocm == "6.4.1" and report.driver == "amdgpu 6.10.5"
    checks = by_check(report)
    assert "8 x AMD Instinct MI300X (gfx942, 192 GiB)" in checks["gpu-present"].summary
    assert "gfx942 (CDNA3) is supported (ROCm 6.4.1)" in checks["gpu-support"].summary


def test_rx7900xtx_with_a_wheel_not_built_for_gfx1100(tmp_path: Path) -> None:
    report = diagnose(rx7900xtx_desktop(tmp_path, "2.0.1+rocm5.4.2").view())
    arch = by_check(report)["torch-arch"]
    assert arch.status is Status.PROBLEM
    assert "not for gfx1100" in arch.summary and "invalid device function" in arch.why
    # ROCm 6.4 is installed and PyTorch's rocm6.4 wheels carry gfx1100
    assert arch.fix.endswith("--index-url https://download.pytorch.org/whl/rocm6.4")
    assert by_check(report)["torch-build"].status is Status.OK
    assert by_check(report)["hsa-override"].status is Status.OK  # RDNA3 flagship: no override
    assert not report.healthy


def test_rx7900xtx_with_the_cuda_wheel(tmp_path: Path) -> None:
    report = diagnose(rx7900xtx_desktop(tmp_path, "2.7.1+cu126").view())
    build = by_check(report)["torch-build"]
    assert build.status is Status.PROBLEM
    assert "is a CUDA build on a machine with an AMD GPU" in build.summary
    # ROCm 6.4 is installed, and PyTorch publishes a rocm6.4 index
    assert build.fix.endswith("--index-url https://download.pytorch.org/whl/rocm6.4")
    assert build.fix.startswith("pip uninstall -y torch torchvision torchaudio")


def test_h100_with_the_rocm_wheel_gets_the_same_release_for_a_cuda_its_driver_runs(
    tmp_path: Path,
) -> None:
    check = by_check(diagnose(h100_node(tmp_path, "535.104.05", "2.7.1+rocm6.3").view()))[
        "torch-build"
    ]
    assert check.status is Status.PROBLEM
    # torch 2.7 has CUDA 11.8, 12.6 and 12.8 builds; a 535 driver runs 12.x fully only to 12.2,
    # 11.8 fully: the newest that runs with every feature
    assert check.fix.splitlines()[1] == (
        "pip install torch==2.7.1 torchvision torchaudio "
        "--index-url https://download.pytorch.org/whl/cu118"
    )


def test_rx6700xt_needs_the_rdna2_override(tmp_path: Path) -> None:
    report = diagnose(rx6700xt_desktop(tmp_path).view())
    checks = by_check(report)
    assert checks["hsa-override"].status is Status.PROBLEM
    assert checks["hsa-override"].fix == "export HSA_OVERRIDE_GFX_VERSION=10.3.0"
    assert checks["torch-arch"].status is Status.PROBLEM
    assert checks["torch-arch"].fix == "export HSA_OVERRIDE_GFX_VERSION=10.3.0"
    assert checks["gpu-support"].status is Status.WARNING  # not on AMD's list


def test_rx6700xt_with_the_override_set_is_fine(tmp_path: Path) -> None:
    machine = rx6700xt_desktop(tmp_path)
    machine.env["HSA_OVERRIDE_GFX_VERSION"] = "10.3.0"
    checks = by_check(diagnose(machine.view()))
    assert checks["hsa-override"].status is Status.OK
    assert checks["torch-arch"].status is Status.OK
    assert "through HSA_OVERRIDE_GFX_VERSION=10.3.0" in checks["torch-arch"].summary


def test_an_override_of_another_generation_is_a_problem(tmp_path: Path) -> None:
    machine = rx6700xt_desktop(tmp_path)
    machine.env["HSA_OVERRIDE_GFX_VERSION"] = "11.0.0"
    check = by_check(diagnose(machine.view()))["hsa-override"]
    assert check.status is Status.PROBLEM
    assert "gfx1031 as a gfx1100" in check.summary
    assert check.fix == "unset HSA_OVERRIDE_GFX_VERSION"


def test_an_override_on_a_natively_supported_card_is_a_warning(tmp_path: Path) -> None:
    machine = mi300x_node(tmp_path)
    machine.env["HSA_OVERRIDE_GFX_VERSION"] = "9.4.0"
    check = by_check(diagnose(machine.view()))["hsa-override"]
    assert check.status is Status.WARNING and check.fix == "unset HSA_OVERRIDE_GFX_VERSION"


def test_h100_with_a_driver_too_old_for_torchs_cuda(tmp_path: Path) -> None:
    report = diagnose(h100_node(tmp_path, "535.104.05", "2.9.0+cu130").view())
    check = by_check(report)["cuda-driver"]
    assert check.status is Status.PROBLEM
    assert "built for CUDA 13.0, which needs NVIDIA driver 580 or newer" in check.summary
    assert "535.104.05" in check.summary
    assert "nvidia-driver-580" in check.fix
    # the same torch release for CUDA 12.8 runs on a 535 driver (minor version compatibility)
    assert "torch==2.9.0 --index-url https://download.pytorch.org/whl/cu128" in check.fix
    assert report.gpus[0].name == "NVIDIA H100 80GB HBM3" and report.gpus[0].arch == "sm_90"
    assert "gpu-support" not in by_check(report)  # AMD checks do not run on NVIDIA


def test_h100_with_a_driver_in_minor_version_compatibility_is_a_warning(tmp_path: Path) -> None:
    check = by_check(diagnose(h100_node(tmp_path, "550.54.15", "2.7.1+cu128").view()))[
        "cuda-driver"
    ]
    assert check.status is Status.WARNING
    assert "minor version compatibility" in check.summary


def test_h100_healthy(tmp_path: Path) -> None:
    report = diagnose(h100_node(tmp_path, "570.133.20", "2.7.1+cu126").view())
    assert report.healthy, [
        (d.check, d.summary) for d in report.diagnoses if d.status is not Status.OK
    ]
    assert set(statuses(report).values()) == {Status.OK}


def test_pypi_torch_takes_its_cuda_from_the_nvidia_runtime_wheel(tmp_path: Path) -> None:
    machine = h100_node(tmp_path, "535.104.05", "2.8.0")
    machine.package("nvidia-cuda-runtime-cu12", "12.8.90")
    check = by_check(diagnose(machine.view()))["cuda-driver"]
    assert check.status is Status.WARNING and "CUDA 12.8" in check.summary


def test_pypi_torch_for_cuda_13_requires_the_runtime_wheel_without_a_suffix(
    tmp_path: Path,
) -> None:
    machine = h100_node(tmp_path, "535.104.05", "2.9.0")
    machine.package(
        "torch",
        "2.9.0",
        "Metadata-Version: 2.1\nName: torch\nVersion: 2.9.0\n"
        "Requires-Dist: filelock\n"
        'Requires-Dist: nvidia-cuda-runtime==13.0.96; platform_system == "Linux"\n',
    )
    machine.package("nvidia-cuda-runtime", "13.0.96")
    machine.package("nvidia-cuda-runtime-cu12", "12.8.90")  # another package's, not torch's
    check = by_check(diagnose(machine.view()))["cuda-driver"]
    assert check.status is Status.PROBLEM
    assert "built for CUDA 13.0" in check.summary


def test_laptop_without_a_gpu(tmp_path: Path) -> None:
    machine = Machine(tmp_path)
    machine.pci("0000:00:02.0", 0x8086, 0xA7A0, 0x030000)  # an Intel iGPU is not ours
    machine.package("torch", "2.7.1+cpu")
    report = diagnose(machine.view())
    checks = by_check(report)
    assert report.verdict.startswith("no GPU found") and not report.healthy
    assert checks["gpu-present"].status is Status.PROBLEM
    assert checks["gpu-present"].summary.startswith("No GPU found")
    skipped = [d.check for d in report.diagnoses if d.status is Status.UNKNOWN]
    assert {"kernel-driver", "device-nodes", "torch-arch", "cuda-driver"} <= set(skipped)
    assert checks["torch-build"].status is Status.OK


def test_container_without_device_nodes(tmp_path: Path) -> None:
    machine = mi300x_node(tmp_path)
    write(tmp_path, ".dockerenv", "")
    (tmp_path / "dev/kfd").unlink()
    for node in (tmp_path / "dev/dri").iterdir():
        node.unlink()
    report = diagnose(machine.view())
    check = by_check(report)["device-nodes"]
    assert check.status is Status.PROBLEM
    assert "docker container has no /dev/kfd, /dev/dri/renderD*" in check.summary
    assert check.fix.startswith("docker run --device=/dev/kfd --device=/dev/dri")
    assert "--group-add render" in check.fix
    assert report.in_container == "docker"


def test_nvidia_container_without_the_runtime(tmp_path: Path) -> None:
    machine = Machine(tmp_path).pci("0000:18:00.0", 0x10DE, 0x2330, 0x030200)
    write(tmp_path, "proc/1/cgroup", "0::/kubepods/besteffort/pod1234/abcd\n")
    check = by_check(diagnose(machine.view()))["kernel-driver"]
    assert check.status is Status.PROBLEM
    assert "kubernetes container has no NVIDIA driver" in check.summary
    # Kubernetes hands out GPUs through a device plugin, not docker run --gpus
    assert "nvidia.com/gpu: 1" in check.fix and "docker" not in check.fix


def test_nvidia_docker_container_without_the_toolkit(tmp_path: Path) -> None:
    machine = Machine(tmp_path).pci("0000:18:00.0", 0x10DE, 0x2330, 0x030200)
    write(tmp_path, ".dockerenv", "")
    checks = by_check(diagnose(machine.view()))
    assert checks["kernel-driver"].status is Status.PROBLEM
    assert checks["kernel-driver"].fix.splitlines() == [
        "sudo apt-get install -y nvidia-container-toolkit  # after adding NVIDIA's repository",
        "sudo nvidia-ctk runtime configure --runtime=docker  # on the host",
        "sudo systemctl restart docker  # on the host",
        "docker run --gpus all ...",
    ]
    assert checks["device-nodes"].fix.endswith("docker run --gpus all ...")


def test_amd_podman_container_without_device_nodes(tmp_path: Path) -> None:
    machine = mi300x_node(tmp_path)
    write(tmp_path, "run/.containerenv", "")
    (tmp_path / "dev/kfd").unlink()
    check = by_check(diagnose(machine.view()))["device-nodes"]
    assert check.status is Status.PROBLEM
    assert check.fix == (
        "podman run --device=/dev/kfd --device=/dev/dri --group-add video --group-add render "
        "--security-opt seccomp=unconfined ..."
    )


def test_rocm_smi_gives_the_driver_version_when_sysfs_has_none(tmp_path: Path) -> None:
    machine = rx7900xtx_desktop(tmp_path, "2.7.1+rocm6.3")
    machine.tool(
        "rocm-smi", ok("=== ROCm System Management Interface ===\nDriver version: 6.8.5\n")
    )
    report = diagnose(machine.view())
    assert report.driver == "amdgpu 6.8.5"
    assert ("rocm-smi", "driver 6.8.5") in [(n.probe, n.outcome) for n in report.probes]
    assert ("rocm-smi", "--showdriverversion") in machine.runner.calls


def test_rocm_smi_garbage_is_could_not_check(tmp_path: Path) -> None:
    machine = rx7900xtx_desktop(tmp_path, "2.7.1+rocm6.3").tool("rocm-smi", ok("\x00garbage"))
    check = by_check(diagnose(machine.view()))["vendor-tools"]
    assert check.status is Status.UNKNOWN and "rocm-smi" in check.summary


def test_user_not_in_render_and_video(tmp_path: Path) -> None:
    machine = mi300x_node(tmp_path)
    machine.groups = frozenset({"users"})
    check = by_check(diagnose(machine.view()))["permissions"]
    assert check.status is Status.WARNING  # the nodes still open for this test's user
    assert check.fix.startswith("sudo usermod -aG render,video $USER")


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root opens every file")
def test_user_who_cannot_open_dev_kfd(tmp_path: Path) -> None:
    machine = mi300x_node(tmp_path)
    machine.groups = frozenset({"users"})
    (tmp_path / "dev/kfd").chmod(0)
    check = by_check(diagnose(machine.view()))["permissions"]
    assert check.status is Status.PROBLEM
    assert "cannot open /dev/kfd and is not in the render and video group(s)" in check.summary


@pytest.mark.parametrize("value", ["", "-1"])
def test_cuda_visible_devices_hiding_every_gpu(tmp_path: Path, value: str) -> None:
    machine = h100_node(tmp_path, "570.133.20", "2.7.1+cu126")
    machine.env["CUDA_VISIBLE_DEVICES"] = value
    check = by_check(diagnose(machine.view()))["visible-devices"]
    assert check.status is Status.PROBLEM
    assert "hides every GPU" in check.summary and check.fix == "unset CUDA_VISIBLE_DEVICES"


def test_visible_devices_naming_gpus_that_are_not_there(tmp_path: Path) -> None:
    machine = mi300x_node(tmp_path)
    machine.env["ROCR_VISIBLE_DEVICES"] = "8,9"
    check = by_check(diagnose(machine.view()))["visible-devices"]
    assert (
        check.status is Status.PROBLEM
        and check.fix == "export ROCR_VISIBLE_DEVICES=0,1,2,3,4,5,6,7"
    )


def test_cuda_packages_on_an_amd_machine(tmp_path: Path) -> None:
    machine = (
        mi300x_node(tmp_path).package("onnxruntime-gpu", "1.20.1").package("cupy-cuda12x", "13.3.0")
    )
    check = by_check(diagnose(machine.view()))["gpu-packages"]
    assert check.status is Status.WARNING
    assert "onnxruntime-gpu==1.20.1" in check.summary and "cupy-cuda12x==13.3.0" in check.summary
    assert "pip uninstall -y onnxruntime-gpu && pip install onnxruntime-migraphx" in check.fix


def test_gfx950_on_a_rocm_older_than_its_support(tmp_path: Path) -> None:
    machine = Machine(tmp_path).amd_gpu(
        90500, simd=1024, simd_per_cu=4, memory=288 * GIB, device=0x75A3
    )
    write(tmp_path, "opt/rocm/.info/version", "6.4.1\n")
    check = by_check(diagnose(machine.view()))["gpu-support"]
    assert check.status is Status.PROBLEM and "needs ROCm 7.0 or newer" in check.summary


def test_amd_gpu_without_the_driver(tmp_path: Path) -> None:
    machine = Machine(tmp_path).pci("0000:03:00.0", 0x1002, 0x744C, 0x030000)
    import shutil

    shutil.rmtree(tmp_path / "sys/class/kfd")
    check = by_check(diagnose(machine.view()))["kernel-driver"]
    assert check.status is Status.PROBLEM and check.fix == "sudo modprobe amdgpu"


# --- bad input -------------------------------------------------------------------------------


def test_unreadable_sysfs_files_are_could_not_check(tmp_path: Path) -> None:
    machine = mi300x_node(tmp_path)
    nodes = tmp_path / "sys/class/kfd/kfd/topology/nodes"
    for node in nodes.iterdir():  # a directory where a file should be: unreadable for anyone
        (node / "properties").unlink()
        (node / "properties").mkdir()
    report = diagnose(machine.view())
    assert any(not note.ok and "cannot read" in note.outcome for note in report.probes)
    for check in ("gpu-support", "torch-arch", "hsa-override"):
        assert by_check(report)[check].status is Status.UNKNOWN
        assert "cannot read /sys/class/kfd/kfd/topology/nodes/" in by_check(report)[check].summary
    assert len(report.gpus) == 8  # still seen on the PCI bus
    assert by_check(report)["torch-build"].status is Status.OK  # the rest still ran


def test_an_unreadable_memory_bank_folder_loses_only_the_memory_size(tmp_path: Path) -> None:
    machine = mi300x_node(tmp_path)
    banks = tmp_path / "sys/class/kfd/kfd/topology/nodes/1/mem_banks"
    for bank in banks.iterdir():
        (bank / "properties").unlink()
        bank.rmdir()
    banks.rmdir()
    banks.symlink_to(banks)  # a link to itself: listing it fails (ELOOP), even for root
    report = diagnose(machine.view())
    assert len(report.gpus) == 8 and report.gpus[0].arch == "gfx942"
    assert report.gpus[0].memory_bytes is None and report.gpus[1].memory_bytes == 192 * GIB
    assert by_check(report)["gpu-support"].status is Status.OK


def test_a_hanging_tool_is_could_not_check(tmp_path: Path) -> None:
    machine = mi300x_node(tmp_path).tool("rocminfo", HANG)
    report = diagnose(machine.view())
    check = by_check(report)["vendor-tools"]
    assert check.status is Status.UNKNOWN
    assert "rocminfo: did not answer within 10 s" in check.summary
    assert report.healthy  # the file-based checks found nothing wrong


def test_garbage_tool_output_is_could_not_check(tmp_path: Path) -> None:
    machine = h100_node(tmp_path, "570.133.20", "2.7.1+cu126").tool(
        "nvidia-smi", ok("\x1b[2J???\nFailed to parse\n")
    )
    report = diagnose(machine.view())
    check = by_check(report)["vendor-tools"]
    assert check.status is Status.UNKNOWN and "could not read its output" in check.summary
    assert by_check(report)["cuda-driver"].status is Status.OK  # /proc still names the driver


def test_rocminfo_garbage_too(tmp_path: Path) -> None:
    machine = mi300x_node(tmp_path).tool("rocminfo", ok("segfault? \x00\x01 garbage"))
    check = by_check(diagnose(machine.view()))["vendor-tools"]
    assert check.status is Status.UNKNOWN and "no agents" in check.summary


def test_broken_package_metadata_is_reported_not_fatal(tmp_path: Path) -> None:
    machine = mi300x_node(tmp_path).package("mystery", "1.0", metadata="garbage without fields\n")
    report = diagnose(machine.view())
    check = by_check(report)["gpu-packages"]
    assert check.status is Status.UNKNOWN and "Could not read the metadata of 1" in check.summary
    assert by_check(report)["torch-build"].status is Status.OK


def test_a_torch_that_fails_to_import(tmp_path: Path) -> None:
    machine = mi300x_node(tmp_path).tool(
        "python3",
        CommandResult(
            1, "", "Traceback ...\nImportError: libamdhip64.so.6: cannot open shared object file\n"
        ),
    )
    check = by_check(diagnose(machine.view(), import_torch=True))["torch-runtime"]
    assert check.status is Status.PROBLEM and "libamdhip64.so.6" in check.summary


def test_import_torch_arch_list_overrides_the_knowledge_base(tmp_path: Path) -> None:
    machine = rx7900xtx_desktop(tmp_path, "2.7.1+rocm6.3")
    report_json = '{"version": "2.7.1+rocm6.3", "hip": "6.3.42131", "cuda": null, "arch_list": ["gfx942"], "device_count": 1, "devices": ["Radeon RX 7900 XTX"]}'
    machine.tool("python3", ok(report_json + "\n"))
    report = diagnose(machine.view(), import_torch=True)
    checks = by_check(report)
    assert checks["torch-arch"].status is Status.PROBLEM
    assert "torch.cuda.get_arch_list()" in checks["torch-arch"].summary
    assert checks["torch-runtime"].status is Status.OK


def test_the_real_runner_times_out_a_hanging_command() -> None:
    run = subprocess_runner()
    done = run([sys.executable, "-c", "import time; time.sleep(30)"], 0.3)
    assert not done.ran and done.error == "did not answer within 0.3 s"
    assert run(["gpuport-no-such-tool-xyz"], 1).error == "not installed"


def test_nvidia_smi_line_format(tmp_path: Path) -> None:
    machine = h100_node(tmp_path, "570.133.20", "2.7.1+cu126", count=1)
    report = diagnose(machine.view())
    assert report.gpus[0].memory_bytes == 81559 * 2**20
    assert H100_SMI.count(",") == 3


def test_driver_skew_is_reported_as_not_checked_with_the_reason(tmp_path: Path) -> None:
    skew = by_check(diagnose(mi300x_node(tmp_path).view()))["driver-skew"]
    assert skew.status is Status.UNKNOWN and not skew.fix
    assert "Not checked whether amdgpu 6.10.5 is within the releases ROCm 6.4.1" in skew.summary
    assert "no public table maps amdgpu module versions to ROCm releases" in skew.summary


def test_without_rocminfo_the_pci_id_names_the_gpu(tmp_path: Path) -> None:
    report = diagnose(rx7900xtx_desktop(tmp_path, "2.7.1+rocm6.3").view())
    assert report.gpus[0].name == "AMD Radeon RX 7900 XT/7900 XTX/7900 GRE/7900M"
    assert report.gpus[0].arch == "gfx1100"


def test_without_the_kfd_topology_the_pci_id_gives_name_and_target(tmp_path: Path) -> None:
    machine = Machine(tmp_path).pci("0000:05:00.0", 0x1002, 0x74A1, 0x038000)
    gpus = diagnose(machine.view()).gpus
    assert [(g.name, g.arch, g.source) for g in gpus] == [("AMD Instinct MI300X", "gfx942", "pci")]
