"""Checks: turn the probes' facts into diagnoses, each with a status, the reason and the fix.

Every fact a check compares against comes from the knowledge base: the supported AMD targets
and the usual ``HSA_OVERRIDE_GFX_VERSION`` (kb/gpu_arch.toml), the targets of PyTorch's ROCm
wheels and the NVIDIA driver each CUDA release needs (kb/gpu_stack.toml), PyTorch's index
URLs (kb/platform.toml) and the CUDA-only Python packages (kb/packages.toml).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from gpuport import kb
from gpuport.doctor.model import Diagnosis, GpuSeen, Status
from gpuport.doctor.probes import AMD_VENDOR, NVIDIA_VENDOR, Facts
from gpuport.kb import gpu_stack

GIB = 2**30
# The groups AMD's install guide puts a user in, for /dev/kfd and /dev/dri/renderD*.
AMD_GROUPS = ("render", "video")
_TORCH_FAMILY = ("torch", "torchvision", "torchaudio")
_CUDA_RUNTIME = r"nvidia-cuda-runtime(-cu\d+)?"
_TOOLS = ("rocminfo", "amd-smi", "rocm-smi", "nvidia-smi")
_HIDE_ALL = {"", "-1", "none", "void", "nodevfiles"}


# --- what the facts say ------------------------------------------------------------------------


def has_amd(facts: Facts) -> bool:
    return bool(facts.amd_nodes) or any(gpu.vendor == AMD_VENDOR for gpu in facts.pci)


def has_nvidia(facts: Facts) -> bool:
    return (
        bool(facts.nvidia_driver)
        or bool(facts.nvidia_smi_gpus)
        or any(gpu.vendor == NVIDIA_VENDOR for gpu in facts.pci)
    )


def _product(pci_name: str) -> str:
    """``"Aqua Vanjaram [Instinct MI300X]"`` -> ``"Instinct MI300X"`` (pci.ids' bracketed name)."""
    start, end = pci_name.find("["), pci_name.rfind("]")
    return pci_name[start + 1 : end] if 0 <= start < end else pci_name


def gpus_seen(facts: Facts) -> list[GpuSeen]:
    """Every GPU, from the best source there is: KFD (AMD), nvidia-smi (NVIDIA), else PCI."""
    found: list[GpuSeen] = []
    names = [gpu.name for gpu in facts.rocminfo_gpus or []]
    for index, node in enumerate(facts.amd_nodes):
        arch = kb.find_gpu_arch(node.gfx)
        known = gpu_stack.amd_pci_device(node.device_id)
        if len(names) == len(facts.amd_nodes):
            name = names[index]
        elif known is not None:
            name = f"AMD {_product(known.name)}"
        elif arch is not None:
            name = f"AMD {arch.family} GPU"
        else:
            name = f"AMD GPU {node.gfx}"
        found.append(GpuSeen("amd", name, node.gfx, node.memory_bytes, "kfd"))
    if not facts.amd_nodes:
        for gpu in facts.pci:
            if gpu.vendor != AMD_VENDOR:
                continue
            known = gpu_stack.amd_pci_device(gpu.device)
            if known is None:
                found.append(GpuSeen("amd", f"AMD GPU [1002:{gpu.device:04x}]", source="pci"))
            else:
                found.append(GpuSeen("amd", f"AMD {_product(known.name)}", known.gfx, None, "pci"))
    if facts.nvidia_smi_gpus:
        found += [
            GpuSeen("nvidia", gpu.name, gpu.arch, gpu.memory_bytes, "nvidia-smi")
            for gpu in facts.nvidia_smi_gpus
        ]
    else:
        found += [
            GpuSeen("nvidia", f"NVIDIA GPU [10de:{gpu.device:04x}]", source="pci")
            for gpu in facts.pci
            if gpu.vendor == NVIDIA_VENDOR
        ]
    return found


def torch_build(facts: Facts) -> tuple[str, str]:
    """(flavour, version) of the installed torch: ("rocm", "6.4"), ("cuda", "12.6"),
    ("cpu", ""), or ("", "") when torch is not installed. A wheel without a local label is
    PyPI's, which on Linux is a CUDA build; its CUDA is that of the nvidia-cuda-runtime wheel
    it requires."""
    version = facts.packages.get("torch")
    if version is None:
        return "", ""
    _, _, local = version.partition("+")
    if local.startswith("rocm"):
        return "rocm", local.removeprefix("rocm")
    match = re.fullmatch(r"cu(\d+)(\d)", local)
    if match:
        return "cuda", f"{int(match.group(1))}.{match.group(2)}"
    if local.startswith("cpu"):
        return "cpu", ""
    # CUDA 12 wheels are nvidia-cuda-runtime-cu12; CUDA 13's dropped the suffix. torch's own
    # requirements say which one it uses; without them, any installed one is the best guess.
    runtimes = [n for n in facts.torch_requires if re.fullmatch(_CUDA_RUNTIME, n)] or [
        n for n in facts.packages if re.fullmatch(_CUDA_RUNTIME, n)
    ]
    for name in runtimes:
        if name in facts.packages:
            return "cuda", ".".join(facts.packages[name].split(".")[:2])
    return "cuda", ""


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _rocm_index(facts: Facts) -> str:
    return kb.pytorch_rocm_index(facts.rocm_version or kb.DEFAULT_ROCM_VERSION)


def _reinstall(index: str, version: str = "") -> str:
    pins = f"=={version}" if version else ""
    return (
        "pip uninstall -y torch torchvision torchaudio\n"
        f"pip install torch{pins} torchvision torchaudio --index-url {index}"
    )


def container_fix(facts: Facts, vendor: str) -> str:
    """How to give this container the GPU (kb/gpu_stack.toml [[container_gpu]]): the host's
    one-time set-up, then how to start the container."""
    entry = gpu_stack.container_gpu(facts.container, vendor)
    if entry is None:
        what = "/dev/kfd and /dev/dri" if vendor == "amd" else "the NVIDIA driver and /dev/nvidia*"
        return f"# start the {facts.container} container with the host's {what} passed in"
    flag = kb.find_docker_flag("--gpus")
    amd_flags = flag.rocm_replacement if flag is not None else "--device=/dev/kfd --device=/dev/dri"
    host = [f"{line}  # on the host" if "#" not in line else line for line in entry.host]
    return "\n".join([*host, entry.run.replace("{amd_flags}", amd_flags)])


# --- the checks --------------------------------------------------------------------------------


def check_gpu_present(facts: Facts) -> Diagnosis:
    title = "GPU present"
    gpus = gpus_seen(facts)
    if not gpus:
        if facts.kfd_error and facts.pci_error:
            return Diagnosis("gpu-present", title, Status.UNKNOWN, f"{facts.pci_error}")
        return Diagnosis(
            "gpu-present",
            title,
            Status.PROBLEM,
            "No GPU found: no AMD or NVIDIA GPU on the PCI bus, no KFD topology and no "
            "NVIDIA driver.",
            "Nothing on this machine can run GPU code; PyTorch will run on the CPU. Run "
            "gpuport doctor on the GPU machine itself.",
        )
    groups: dict[str, int] = {}
    for gpu in gpus:
        label = gpu.name + (f" ({gpu.arch}" if gpu.arch else "")
        if gpu.arch and gpu.memory_bytes:
            label += f", {gpu.memory_bytes / GIB:.0f} GiB"
        label += ")" if gpu.arch else ""
        groups[label] = groups.get(label, 0) + 1
    text = "; ".join(f"{count} x {label}" for label, count in groups.items())
    return Diagnosis("gpu-present", title, Status.OK, f"Found {text}.")


def check_kernel_driver(facts: Facts) -> Diagnosis:
    title = "Kernel driver"
    if has_amd(facts) and not facts.kfd_present:
        if facts.kfd_error:
            return Diagnosis("kernel-driver", title, Status.UNKNOWN, f"{facts.kfd_error}")
        return Diagnosis(
            "kernel-driver",
            title,
            Status.PROBLEM,
            "An AMD GPU is on the PCI bus but the amdgpu driver exposes no compute (KFD) "
            "topology" + (": the amdgpu module is not loaded." if not facts.amdgpu_loaded else "."),
            "ROCm reaches the GPU only through the amdgpu kernel driver's /dev/kfd.",
            "sudo modprobe amdgpu"
            if not facts.amdgpu_loaded
            else "sudo amdgpu-install --usecase=dkms",
        )
    if has_nvidia(facts) and not facts.nvidia_driver:
        if facts.nvidia_error:
            return Diagnosis("kernel-driver", title, Status.UNKNOWN, f"{facts.nvidia_error}")
        if facts.container:
            return Diagnosis(
                "kernel-driver",
                title,
                Status.PROBLEM,
                f"An NVIDIA GPU is on the PCI bus but this {facts.container} container has no "
                "NVIDIA driver: it was started without the NVIDIA container runtime.",
                "The NVIDIA Container Toolkit mounts the driver and the device nodes into the "
                "container; without it CUDA finds no device.",
                container_fix(facts, "nvidia"),
            )
        return Diagnosis(
            "kernel-driver",
            title,
            Status.PROBLEM,
            "An NVIDIA GPU is on the PCI bus but the NVIDIA kernel driver is not loaded.",
            "CUDA needs the NVIDIA kernel module (/proc/driver/nvidia).",
            "sudo modprobe nvidia",
        )
    parts = []
    if facts.kfd_present:
        parts.append(f"amdgpu {facts.amdgpu_version}" if facts.amdgpu_version else "amdgpu")
    if facts.nvidia_driver:
        parts.append(f"nvidia {facts.nvidia_driver}")
    return Diagnosis("kernel-driver", title, Status.OK, f"Loaded: {', '.join(parts)}.")


def check_device_nodes(facts: Facts) -> Diagnosis:
    title = "Device nodes"
    missing = []
    if has_amd(facts):
        if "dev/kfd" not in facts.dev_nodes:
            missing.append("/dev/kfd")
        if not any(node.startswith("dev/dri/renderD") for node in facts.dev_nodes):
            missing.append("/dev/dri/renderD*")
    if has_nvidia(facts):
        if "dev/nvidiactl" not in facts.dev_nodes:
            missing.append("/dev/nvidiactl")
        if not any(re.fullmatch(r"dev/nvidia\d+", node) for node in facts.dev_nodes):
            missing.append("/dev/nvidia<N>")
    if not missing:
        shown = ", ".join(f"/{node}" for node in sorted(facts.dev_nodes))
        return Diagnosis("device-nodes", title, Status.OK, f"Present: {shown}.")
    amd_missing = any(m.startswith(("/dev/kfd", "/dev/dri")) for m in missing)
    if facts.container:
        fix = container_fix(facts, "amd" if amd_missing else "nvidia")
        return Diagnosis(
            "device-nodes",
            title,
            Status.PROBLEM,
            f"This {facts.container} container has no {', '.join(missing)}.",
            "The GPU is on the host but was not passed into the container, so no GPU "
            "program inside it can open the device.",
            fix,
        )
    return Diagnosis(
        "device-nodes",
        title,
        Status.PROBLEM,
        f"{', '.join(missing)} missing although the GPU is there.",
        "The kernel driver creates these nodes when it binds the GPU; without them no GPU "
        "program can open the device.",
        "sudo modprobe amdgpu" if amd_missing else "sudo nvidia-modprobe -u -c=0",
    )


def check_permissions(facts: Facts) -> Diagnosis:
    title = "Permissions"
    closed = sorted(f"/{node}" for node, ok in facts.dev_nodes.items() if not ok)
    missing_groups = [group for group in AMD_GROUPS if group not in facts.groups]
    amd = has_amd(facts) and not facts.is_root_user
    if closed:
        fix = (
            "sudo usermod -aG render,video $USER  # then log out and back in"
            if amd
            else "sudo chmod a+rw /dev/nvidia*  # until the next boot; for good, set the nvidia "
            "module's NVreg_DeviceFileMode=0666 in /etc/modprobe.d"
        )
        if facts.container in ("docker", "podman") and amd:
            fix = f"{facts.container} run --group-add video --group-add render ..."
        elif facts.container and amd:
            fix = container_fix(facts, "amd")
        return Diagnosis(
            "permissions",
            title,
            Status.PROBLEM,
            f"This user cannot open {', '.join(closed)}"
            + (
                f" and is not in the {' and '.join(missing_groups)} group(s)."
                if amd and missing_groups
                else "."
            ),
            "A GPU program run by this user fails with 'no GPU found' or a permission error.",
            fix,
        )
    if amd and missing_groups:
        return Diagnosis(
            "permissions",
            title,
            Status.WARNING,
            f"This user is not in the {' and '.join(missing_groups)} group(s); the device "
            "nodes open today through another rule (uaccess or an ACL).",
            "AMD's install guide puts ROCm users in render and video; a login without a seat "
            "(ssh, a batch job) may not get the access this one has.",
            "sudo usermod -aG render,video $USER  # then log out and back in",
        )
    return Diagnosis("permissions", title, Status.OK, "This user can open every GPU device node.")


def check_visible_devices(facts: Facts) -> Diagnosis:
    title = "Visible-devices variables"
    names = ["CUDA_VISIBLE_DEVICES"]
    if has_amd(facts):
        names += ["HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"]
    if has_nvidia(facts) and facts.container:
        names.append("NVIDIA_VISIBLE_DEVICES")
    count = len(gpus_seen(facts))
    set_vars = {name: facts.env[name] for name in names if name in facts.env}
    for name, value in set_vars.items():
        if value.strip().lower() in _HIDE_ALL:
            return Diagnosis(
                "visible-devices",
                title,
                Status.PROBLEM,
                f"{name}={value!r} hides every GPU.",
                f"With {name} set like this, PyTorch sees no device "
                "(torch.cuda.is_available() is False) although the GPUs are there.",
                f"unset {name}",
            )
        indices = [part.strip() for part in value.split(",")]
        if (
            count
            and all(part.isdigit() for part in indices)
            and all(int(part) >= count for part in indices)
        ):
            return Diagnosis(
                "visible-devices",
                title,
                Status.PROBLEM,
                f"{name}={value} names no GPU this machine has (it has {count}, numbered from 0).",
                "Every GPU is hidden.",
                f"export {name}={','.join(str(i) for i in range(count))}",
            )
    if not set_vars:
        every = ": every GPU is visible" if count else ""
        return Diagnosis("visible-devices", title, Status.OK, f"None set{every}.")
    shown = ", ".join(f"{name}={value}" for name, value in set_vars.items())
    return Diagnosis("visible-devices", title, Status.OK, f"{shown}: selects some GPUs.")


def check_torch_build(facts: Facts) -> Diagnosis:
    title = "PyTorch build vs GPU vendor"
    if facts.packages_error:
        return Diagnosis("torch-build", title, Status.UNKNOWN, f"{facts.packages_error}")
    flavour, version = torch_build(facts)
    installed = facts.packages.get("torch", "")
    if not flavour:
        return Diagnosis(
            "torch-build", title, Status.OK, "PyTorch is not installed in this environment."
        )
    amd, nvidia = has_amd(facts), has_nvidia(facts)
    if amd and not nvidia and flavour != "rocm":
        kind = "the CPU-only build" if flavour == "cpu" else "a CUDA build"
        return Diagnosis(
            "torch-build",
            title,
            Status.PROBLEM,
            f"torch {installed} is {kind} on a machine with an AMD GPU.",
            "It cannot use the AMD GPU: torch.cuda.is_available() is False and everything "
            "runs on the CPU. PyTorch's ROCm build comes from PyTorch's ROCm index.",
            _reinstall(_rocm_index(facts)),
        )
    if nvidia and not amd and flavour in ("rocm", "cpu"):
        kind = "the CPU-only build" if flavour == "cpu" else "a ROCm build"
        return Diagnosis(
            "torch-build",
            title,
            Status.PROBLEM,
            f"torch {installed} is {kind} on a machine with an NVIDIA GPU.",
            "It cannot use the NVIDIA GPU: torch.cuda.is_available() is False.",
            _cuda_reinstall(facts, installed),
        )
    label = f"{flavour} {version}".strip() if flavour != "cpu" else "CPU-only"
    return Diagnosis("torch-build", title, Status.OK, f"torch {installed} ({label} build).")


def _cuda_index_for(facts: Facts, installed: str) -> str:
    """PyTorch's CUDA index for this torch release (the newest release the knowledge base
    knows when it does not know this one) that the machine's driver runs, or ""."""
    releases = gpu_stack.pytorch_cuda_releases()
    release = ".".join(installed.split("+")[0].split(".")[:2])
    newest = max(releases, key=gpu_stack.version_key)
    published = releases.get(release) or releases[newest]
    driver = _nvidia_driver(facts)
    if not driver:
        return gpu_stack.pytorch_cuda_index(published[-1])
    key = gpu_stack.version_key(driver)
    for field in ("toolkit_driver", "family_driver"):
        for cuda in reversed(published):
            entry = gpu_stack.cuda_driver(cuda)
            if entry is not None and gpu_stack.version_key(getattr(entry, field)) <= key:
                return gpu_stack.pytorch_cuda_index(cuda)
    return ""


def _cuda_reinstall(facts: Facts, installed: str) -> str:
    """Reinstall torch from PyTorch's CUDA index: this release (when PyTorch publishes CUDA
    builds of it) for a CUDA the driver runs; the newest CUDA build when no driver runs any."""
    version = installed.split("+")[0]
    release = ".".join(version.split(".")[:2])
    releases = gpu_stack.pytorch_cuda_releases()
    index = _cuda_index_for(facts, installed)
    if not index:
        newest = releases.get(release) or releases[max(releases, key=gpu_stack.version_key)]
        index = gpu_stack.pytorch_cuda_index(newest[-1])
    return _reinstall(index, version if release in releases else "")


def _nvidia_driver(facts: Facts) -> str:
    if facts.nvidia_driver:
        return facts.nvidia_driver
    for gpu in facts.nvidia_smi_gpus or []:
        if gpu.driver:
            return gpu.driver
    return ""


def check_cuda_driver(facts: Facts) -> Diagnosis:
    title = "NVIDIA driver vs PyTorch's CUDA"
    flavour, cuda = torch_build(facts)
    if facts.torch_report is not None and facts.torch_report.cuda:
        cuda = facts.torch_report.cuda
    installed = facts.packages.get("torch", "")
    driver = _nvidia_driver(facts)
    if not driver:
        why = facts.nvidia_error or "no NVIDIA driver version could be read"
        return Diagnosis("cuda-driver", title, Status.UNKNOWN, f"{why}")
    if flavour != "cuda":
        return Diagnosis(
            "cuda-driver",
            title,
            Status.OK,
            f"NVIDIA driver {driver}; no CUDA build of torch to match.",
        )
    if not cuda:
        return Diagnosis(
            "cuda-driver",
            title,
            Status.UNKNOWN,
            f"torch {installed} does not say which CUDA it was built for.",
        )
    entry = gpu_stack.cuda_driver(cuda)
    if entry is None:
        return Diagnosis(
            "cuda-driver",
            title,
            Status.UNKNOWN,
            f"the knowledge base has no driver requirement for CUDA {cuda}.",
        )
    try:
        have = gpu_stack.version_key(driver)
    except ValueError:
        return Diagnosis("cuda-driver", title, Status.UNKNOWN, f"driver {driver!r}")
    alternative = _cuda_index_for(facts, installed)
    release = installed.split("+")[0]
    switch = (
        f"\npip install --force-reinstall torch=={release} --index-url {alternative}  # or keep "
        "the driver and use a build for an older CUDA"
        if alternative and not alternative.endswith(cuda.replace(".", ""))
        else ""
    )
    if have < gpu_stack.version_key(entry.family_driver):
        return Diagnosis(
            "cuda-driver",
            title,
            Status.PROBLEM,
            f"torch {installed} is built for CUDA {cuda}, which needs NVIDIA driver "
            f"{entry.family_driver} or newer; this machine has {driver}.",
            "With a driver older than its CUDA family needs, torch.cuda.is_available() is "
            "False ('The NVIDIA driver on your system is too old').",
            f"sudo apt install nvidia-driver-{entry.toolkit_driver.split('.')[0]}  # or your "
            f"distribution's driver >= {entry.toolkit_driver}" + switch,
        )
    if have < gpu_stack.version_key(entry.toolkit_driver):
        return Diagnosis(
            "cuda-driver",
            title,
            Status.WARNING,
            f"torch {installed} (CUDA {cuda}) runs on driver {driver} only through CUDA minor "
            f"version compatibility; CUDA {cuda} ships with {entry.toolkit_driver}.",
            "Features that need the newer driver, and PTX compiled by the newer toolkit, fail.",
            f"sudo apt install nvidia-driver-{entry.toolkit_driver.split('.')[0]}" + switch,
        )
    return Diagnosis(
        "cuda-driver",
        title,
        Status.OK,
        f"Driver {driver} runs CUDA {cuda} (needs {entry.toolkit_driver}).",
    )


def _wrong_flavour(facts: Facts, amd: bool) -> list[tuple[str, str]]:
    """(package==version, fix) for GPU packages built for the other vendor."""
    found = []
    for name, version in sorted(facts.packages.items()):
        if name in _TORCH_FAMILY:
            continue
        entry = kb.find_package(name)
        if amd and entry is not None:
            cuda_only = entry.status in (
                kb.PackageStatus.NOT_APPLICABLE,
                kb.PackageStatus.NOT_SUPPORTED,
            ) or (
                entry.status is kb.PackageStatus.NEEDS_ROCM_BUILD
                and entry.rocm_package is not None
                and entry.rocm_package != name
            )
            if cuda_only and (
                "cuda" in name or "nvidia" in name or "gpu" in name or entry.rocm_package
            ):
                if entry.rocm_package:
                    index = entry.index_for(facts.rocm_version or kb.DEFAULT_ROCM_VERSION)
                    extra = f" --index-url {index}" if index else ""
                    fix = f"pip uninstall -y {name} && pip install {entry.rocm_package}{extra}"
                else:
                    fix = f"pip uninstall -y {name}"
                found.append((f"{name}=={version}", fix))
        elif not amd and ("rocm" in name or "migraphx" in name):
            found.append((f"{name}=={version}", f"pip uninstall -y {name}"))
    return found


def check_gpu_packages(facts: Facts) -> Diagnosis:
    title = "GPU packages' flavour"
    if facts.packages_error:
        return Diagnosis("gpu-packages", title, Status.UNKNOWN, f"{facts.packages_error}")
    amd, nvidia = has_amd(facts), has_nvidia(facts)
    wrong = _wrong_flavour(facts, amd) if amd != nvidia else []
    broken = (
        f" Could not read the metadata of {_plural(len(facts.broken_packages), 'distribution')}: "
        + "; ".join(facts.broken_packages[:3])
        + "."
        if facts.broken_packages
        else ""
    )
    if wrong:
        vendor = "AMD" if amd else "NVIDIA"
        other = "CUDA" if amd else "ROCm"
        return Diagnosis(
            "gpu-packages",
            title,
            Status.WARNING,
            f"{other} builds on an {vendor} machine: {', '.join(item for item, _ in wrong)}."
            + broken,
            f"They cannot use the {vendor} GPU: they fail to load or fall back to the CPU.",
            "\n".join(fix for _, fix in wrong),
        )
    if facts.broken_packages:
        return Diagnosis(
            "gpu-packages", title, Status.UNKNOWN, "some metadata unreadable:" + broken
        )
    return Diagnosis(
        "gpu-packages",
        title,
        Status.OK,
        f"No GPU package of the other vendor's flavour among {_plural(len(facts.packages), 'distribution')}.",
    )


def check_vendor_tools(facts: Facts) -> Diagnosis:
    title = "Vendor tools"
    tools = [note for note in facts.notes if note.probe in _TOOLS]
    failed = [note for note in tools if not note.ok]
    if failed:
        return Diagnosis(
            "vendor-tools",
            title,
            Status.UNKNOWN,
            "" + "; ".join(f"{note.probe}: {note.outcome}" for note in failed) + ".",
            "The file-based checks above do not need these tools; a tool that hangs often "
            "means a GPU or driver in a bad state.",
        )
    if (
        facts.rocminfo_gpus is not None
        and facts.amd_nodes
        and len(facts.rocminfo_gpus) != len(facts.amd_nodes)
    ):
        return Diagnosis(
            "vendor-tools",
            title,
            Status.WARNING,
            f"rocminfo sees {len(facts.rocminfo_gpus)} GPU agent(s), the KFD topology "
            f"{len(facts.amd_nodes)}.",
            "The ROCm runtime does not see every GPU the driver has (a visible-devices "
            "variable, or a GPU in a bad state).",
        )
    if not tools:
        return Diagnosis("vendor-tools", title, Status.OK, "None needed: no GPU tool to run.")
    return Diagnosis(
        "vendor-tools",
        title,
        Status.OK,
        "; ".join(f"{note.probe}: {note.outcome}" for note in tools) + ".",
    )


def check_torch_runtime(facts: Facts) -> Diagnosis:
    title = "torch at run time (--import-torch)"
    if facts.torch_report is None:
        return Diagnosis(
            "torch-runtime",
            title,
            Status.PROBLEM if "torch" in facts.packages else Status.UNKNOWN,
            facts.torch_error or "torch was not imported",
            "Importing torch is the first thing every PyTorch program does.",
        )
    report = facts.torch_report
    count = len(gpus_seen(facts))
    if count and report.device_count == 0:
        return Diagnosis(
            "torch-runtime",
            title,
            Status.PROBLEM,
            f"torch {report.version} sees no GPU although this machine has {count}.",
            "Programs will run on the CPU; the checks above say why.",
        )
    devices = ", ".join(report.devices) or "no GPU"
    return Diagnosis(
        "torch-runtime",
        title,
        Status.OK,
        f"torch {report.version} (HIP {report.hip or '-'}, CUDA {report.cuda or '-'}) sees "
        f"{report.device_count}: {devices}.",
    )


Check = Callable[[Facts], Diagnosis]
# Checks that need a GPU to say anything; on a machine without one they are listed as skipped.
GPU_CHECKS: tuple[Check, ...] = (
    check_kernel_driver,
    check_device_nodes,
    check_permissions,
)
NVIDIA_CHECKS: tuple[Check, ...] = (check_cuda_driver,)
ALWAYS: tuple[Check, ...] = (check_visible_devices, check_torch_build, check_gpu_packages)
