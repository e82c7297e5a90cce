"""The AMD checks: the GPU's target against ROCm's supported list and the torch wheel's targets,
``HSA_OVERRIDE_GFX_VERSION``, and the kernel driver against the ROCm user space.

The targets come from kb/gpu_arch.toml (supported lists, usual overrides) and kb/gpu_stack.toml
(the targets PyTorch's ROCm wheels are built for).
"""

from __future__ import annotations

from gpuport import kb
from gpuport.doctor.checks import Check, _reinstall, torch_build
from gpuport.doctor.model import Diagnosis, Status
from gpuport.doctor.probes import Facts, override_gfx
from gpuport.kb import gpu_stack


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
            fixes.append(_reinstall(_index_with(gfx, facts.rocm_version)))
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


def _index_with(gfx: str, rocm: str) -> str:
    """PyTorch's ROCm index for the installed ROCm when its wheels carry ``gfx``, else the
    newest index the knowledge base names."""
    if rocm:
        index = kb.pytorch_rocm_index(rocm)
        entry = gpu_stack.archs_of_torch_rocm_wheel(index.rsplit("rocm", 1)[-1])
        if entry is not None and gfx in entry.archs:
            return index
    return kb.pytorch_rocm_index(kb.DEFAULT_ROCM_VERSION)


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


AMD_CHECKS: tuple[Check, ...] = (
    check_gpu_support,
    check_torch_arch,
    check_hsa_override,
    check_driver_skew,
)
