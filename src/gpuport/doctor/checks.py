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
from gpuport.doctor.probes import AMD_VENDOR, NVIDIA_VENDOR, Facts, override_gfx
from gpuport.kb import gpu_stack

GIB = 2**30
# The groups AMD's install guide puts a user in, for /dev/kfd and /dev/dri/renderD*.
AMD_GROUPS = ("render", "video")
_TORCH_FAMILY = ("torch", "torchvision", "torchaudio")
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
    PyPI's, which on Linux is a CUDA build; its CUDA is that of the nvidia-cuda-runtime wheel."""
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
    for name, runtime in facts.packages.items():
        if re.fullmatch(r"nvidia-cuda-runtime-cu\d+", name):
            return "cuda", ".".join(runtime.split(".")[:2])
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
                "sudo nvidia-ctk runtime configure --runtime=docker && sudo systemctl restart "
                "docker  # on the host\ndocker run --gpus all ...",
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
        flag = kb.find_docker_flag("--gpus")
        amd_flags = (
            flag.rocm_replacement if flag is not None else "--device=/dev/kfd --device=/dev/dri"
        )
        fix = f"docker run {amd_flags} ..." if amd_missing else "docker run --gpus all ..."
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
            else "ls -l /dev/nvidia*  # the nodes should be crw-rw-rw-; reload the driver"
        )
        if facts.container and amd:
            fix = "docker run --group-add video --group-add render ..."
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
            _reinstall(
                _cuda_index_for(facts, installed) or "https://download.pytorch.org/whl/cu126"
            ),
        )
    label = f"{flavour} {version}".strip() if flavour != "cpu" else "CPU-only"
    return Diagnosis("torch-build", title, Status.OK, f"torch {installed} ({label} build).")


def _cuda_index_for(facts: Facts, installed: str) -> str:
    """PyTorch's CUDA index for this torch release that the machine's driver runs, or ""."""
    release = ".".join(installed.split("+")[0].split(".")[:2])
    published = gpu_stack.pytorch_cuda_releases().get(release, ())
    driver = _nvidia_driver(facts)
    if not published:
        return ""
    if not driver:
        return gpu_stack.pytorch_cuda_index(published[-1])
    key = gpu_stack.version_key(driver)
    for field in ("toolkit_driver", "family_driver"):
        for cuda in reversed(published):
            entry = gpu_stack.cuda_driver(cuda)
            if entry is not None and gpu_stack.version_key(getattr(entry, field)) <= key:
                return gpu_stack.pytorch_cuda_index(cuda)
    return ""


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


def _torch_archs(facts: Facts) -> tuple[tuple[str, ...], str]:
    """The gfx targets of the installed ROCm torch and where that list came from."""
    if facts.torch_report is not None and facts.torch_report.arch_list:
        return facts.torch_report.arch_list, "torch.cuda.get_arch_list()"
    flavour, version = torch_build(facts)
    entry = gpu_stack.archs_of_torch_rocm_wheel(version) if flavour == "rocm" else None
    if entry is None:
        return (), ""
    return entry.archs, f"PyTorch's +rocm{entry.rocm_from}+ wheels"


def _distinct_gfx(facts: Facts) -> list[str]:
    return sorted({node.gfx for node in facts.amd_nodes})


def _no_targets(check: str, title: str, facts: Facts) -> Diagnosis | None:
    """A could-not-check diagnosis when no AMD GPU's target could be read."""
    if facts.amd_nodes:
        return None
    why = facts.kfd_error or "the KFD topology names no GPU target"
    return Diagnosis(check, title, Status.UNKNOWN, why)


def check_gpu_support(facts: Facts) -> Diagnosis:
    title = "AMD GPU vs ROCm's supported list"
    if (unknown := _no_targets("gpu-support", title, facts)) is not None:
        return unknown
    found = []
    status = Status.OK
    fix = why = ""
    for gfx in _distinct_gfx(facts):
        arch = kb.find_gpu_arch(gfx)
        if arch is None:
            status = max(status, Status.UNKNOWN, key=_rank)
            found.append(f"{gfx} is not in gpuport's knowledge base")
            continue
        if not arch.officially_supported:
            status = max(status, Status.WARNING, key=_rank)
            found.append(
                f"{gfx} ({arch.family}) is not on AMD's supported list: {arch.support_note.rstrip('.')}"
            )
            why = "ROCm's libraries ship no code for it; it runs, if at all, through an override."
            continue
        if (
            arch.rocm_since
            and facts.rocm_version
            and gpu_stack.version_key(facts.rocm_version) < gpu_stack.version_key(arch.rocm_since)
        ):
            status = Status.PROBLEM
            found.append(
                f"{gfx} needs ROCm {arch.rocm_since} or newer; ROCm {facts.rocm_version} is "
                "installed"
            )
            why = "The installed ROCm's libraries have no code for this GPU."
            fix = (
                f"# install ROCm {arch.rocm_since} or newer: "
                "https://rocm.docs.amd.com/projects/install-on-linux/en/latest/"
            )
            continue
        rocm = f" (ROCm {facts.rocm_version})" if facts.rocm_version else ""
        found.append(f"{gfx} ({arch.family}) is supported{rocm}")
    return Diagnosis("gpu-support", title, status, "; ".join(found) + ".", why, fix)


_ORDER = (Status.OK, Status.UNKNOWN, Status.WARNING, Status.PROBLEM)


def _rank(status: Status) -> int:
    return _ORDER.index(status)


def check_torch_arch(facts: Facts) -> Diagnosis:
    title = "AMD GPU vs PyTorch's targets"
    if (unknown := _no_targets("torch-arch", title, facts)) is not None:
        return unknown
    flavour, _ = torch_build(facts)
    installed = facts.packages.get("torch", "")
    if flavour != "rocm":
        return Diagnosis(
            "torch-arch", title, Status.OK, "No ROCm build of torch installed: nothing to match."
        )
    archs, origin = _torch_archs(facts)
    if not archs:
        return Diagnosis(
            "torch-arch",
            title,
            Status.UNKNOWN,
            f"the targets of torch {installed} are not known (run with "
            "--import-torch to ask torch itself).",
        )
    override = facts.env.get("HSA_OVERRIDE_GFX_VERSION", "")
    spoofed = override_gfx(override) if override else None
    missing = []
    fixes = []
    for gfx in _distinct_gfx(facts):
        effective = spoofed or gfx
        if effective in archs:
            continue
        missing.append(gfx if not spoofed else f"{gfx} (as {spoofed})")
        arch = kb.find_gpu_arch(gfx)
        target = override_gfx(arch.hsa_override) if arch is not None and arch.hsa_override else None
        if arch is not None and target in archs and not spoofed:
            fixes.append(f"export HSA_OVERRIDE_GFX_VERSION={arch.hsa_override}")
        elif any(gfx in item.archs for item in gpu_stack.torch_rocm_archs()):
            fixes.append(_reinstall(kb.pytorch_rocm_index(kb.DEFAULT_ROCM_VERSION)))
        else:
            fixes.append(f"# build PyTorch from source with PYTORCH_ROCM_ARCH={gfx}")
    if missing:
        return Diagnosis(
            "torch-arch",
            title,
            Status.PROBLEM,
            f"torch {installed} carries code for {', '.join(archs)} ({origin}); not for "
            f"{', '.join(missing)}.",
            "Every GPU kernel fails with 'HIP error: invalid device function' "
            "(hipErrorNoBinaryForGpu).",
            "\n".join(dict.fromkeys(fixes)),
        )
    shown = ", ".join(_distinct_gfx(facts))
    via = f" through HSA_OVERRIDE_GFX_VERSION={override}" if spoofed else ""
    return Diagnosis(
        "torch-arch", title, Status.OK, f"torch {installed} carries code for {shown}{via}."
    )


def check_hsa_override(facts: Facts) -> Diagnosis:
    title = "HSA_OVERRIDE_GFX_VERSION"
    if (unknown := _no_targets("hsa-override", title, facts)) is not None:
        return unknown
    value = facts.env.get("HSA_OVERRIDE_GFX_VERSION")
    archs, _ = _torch_archs(facts)
    gfx_list = _distinct_gfx(facts)
    if value is None:
        for gfx in gfx_list:
            arch = kb.find_gpu_arch(gfx)
            if arch is None or not arch.hsa_override or (arch.officially_supported and not archs):
                continue
            native = gfx in archs if archs else arch.officially_supported
            if not native:
                return Diagnosis(
                    "hsa-override",
                    title,
                    Status.PROBLEM,
                    f"{gfx} ({arch.family}) has no code of its own in ROCm's libraries"
                    + (" or this torch" if archs else "")
                    + f"; it runs with HSA_OVERRIDE_GFX_VERSION={arch.hsa_override}, which is "
                    "not set.",
                    f"The runtime then loads {override_gfx(arch.hsa_override)} code, which runs "
                    "on this card; an unofficial but common workaround.",
                    f"export HSA_OVERRIDE_GFX_VERSION={arch.hsa_override}",
                )
        return Diagnosis("hsa-override", title, Status.OK, "Not set, and not needed.")
    target = override_gfx(value)
    if target is None:
        return Diagnosis(
            "hsa-override",
            title,
            Status.PROBLEM,
            f"HSA_OVERRIDE_GFX_VERSION={value!r} is not a version like 10.3.0.",
            "The ROCm runtime cannot use it.",
            "unset HSA_OVERRIDE_GFX_VERSION",
        )
    for gfx in gfx_list:
        if gfx[:-2] != target[:-2]:  # gfx10xx vs gfx11xx: another generation
            return Diagnosis(
                "hsa-override",
                title,
                Status.PROBLEM,
                f"HSA_OVERRIDE_GFX_VERSION={value} makes the runtime treat the {gfx} as a "
                f"{target}, an architecture of another generation.",
                "Code built for another generation crashes or computes wrong results.",
                "unset HSA_OVERRIDE_GFX_VERSION",
            )
        arch = kb.find_gpu_arch(gfx)
        native = (gfx in archs) if archs else bool(arch and arch.officially_supported)
        if native and target != gfx:
            return Diagnosis(
                "hsa-override",
                title,
                Status.WARNING,
                f"HSA_OVERRIDE_GFX_VERSION={value} is set, but the {gfx} has code of its own.",
                "The override makes it run code tuned for another chip instead.",
                "unset HSA_OVERRIDE_GFX_VERSION",
            )
    shown = ", ".join(gfx_list) or "the GPU"
    return Diagnosis(
        "hsa-override", title, Status.OK, f"{value}: runs {shown} as {target}, the same generation."
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
    tools = [note for note in facts.notes if note.probe in ("rocminfo", "nvidia-smi", "amd-smi")]
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


def check_driver_skew(facts: Facts) -> Diagnosis:
    """amdgpu kernel driver vs ROCm user space: said to be unchecked, with the reason."""
    title = "amdgpu kernel driver vs ROCm user space"
    driver = f"amdgpu {facts.amdgpu_version}" if facts.amdgpu_version else "the amdgpu driver"
    rocm = f"ROCm {facts.rocm_version}" if facts.rocm_version else "the ROCm user space"
    return Diagnosis(
        "driver-skew",
        title,
        Status.UNKNOWN,
        f"Not checked whether {driver} is within the releases {rocm} is tested with: no public "
        "table maps amdgpu module versions to ROCm releases (AMD's user and kernel-space "
        "support matrix names kernel drivers by ROCm release only).",
        "ROCm supports a kernel driver up to two releases older or newer than its user space; "
        "a wider gap can fail at start-up or hang. Compare the installed amdgpu-dkms "
        "package's ROCm release with this one by hand.",
    )


Check = Callable[[Facts], Diagnosis]
# Checks that need a GPU to say anything; on a machine without one they are listed as skipped.
GPU_CHECKS: tuple[Check, ...] = (
    check_kernel_driver,
    check_device_nodes,
    check_permissions,
)
AMD_CHECKS: tuple[Check, ...] = (
    check_gpu_support,
    check_torch_arch,
    check_hsa_override,
    check_driver_skew,
)
NVIDIA_CHECKS: tuple[Check, ...] = (check_cuda_driver,)
ALWAYS: tuple[Check, ...] = (check_visible_devices, check_torch_build, check_gpu_packages)
