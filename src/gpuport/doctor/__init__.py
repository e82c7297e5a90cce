"""The ``doctor`` stage: probe this machine's GPU software stack and diagnose it.

:func:`diagnose` runs the probes (:mod:`gpuport.doctor.probes`) over a
:class:`~gpuport.doctor.system.SystemView`, then the checks (:mod:`gpuport.doctor.checks`), and
returns a :class:`~gpuport.doctor.model.DoctorReport`. Nothing here prints; a probe or check that
fails in a way nobody foresaw becomes a "could not check" diagnosis, and the rest still run.
"""

from __future__ import annotations

from collections.abc import Callable

from gpuport.doctor import amd_checks, checks, probes
from gpuport.doctor.model import Diagnosis, DoctorReport, GpuSeen, ProbeNote, Status
from gpuport.doctor.probes import Facts
from gpuport.doctor.system import CommandResult, Runner, SystemView, subprocess_runner

__all__ = [
    "CommandResult",
    "Diagnosis",
    "DoctorReport",
    "GpuSeen",
    "ProbeNote",
    "Runner",
    "Status",
    "SystemView",
    "diagnose",
    "subprocess_runner",
]

_PROBES: tuple[tuple[str, Callable[[SystemView, Facts], None]], ...] = (
    ("KFD topology (/sys/class/kfd)", probes.probe_kfd),
    ("PCI devices (/sys/bus/pci)", probes.probe_pci),
    ("kernel drivers", probes.probe_drivers),
    ("device nodes", probes.probe_nodes_and_user),
    ("ROCm install", probes.probe_rocm),
    ("vendor tools", probes.probe_tools),
    ("Python packages", probes.probe_packages),
)


def _check(check: checks.Check, facts: Facts) -> Diagnosis:
    try:
        return check(facts)
    except Exception as exc:  # one broken check must not hide the others
        name = check.__name__.removeprefix("check_").replace("_", "-")
        return Diagnosis(name, name, Status.UNKNOWN, f"{type(exc).__name__}: {exc}")


def diagnose(view: SystemView, *, import_torch: bool = False) -> DoctorReport:
    """Probe the machine ``view`` shows and run every check that applies."""
    facts = Facts(env=dict(view.env))
    for label, probe in _PROBES:
        try:
            probe(view, facts)
        except Exception as exc:  # a probe's surprise is a note, not a crash
            facts.note(label, f"{type(exc).__name__}: {exc}", ok=False)
    if import_torch:
        probes.probe_torch_import(view, facts)
    gpus = checks.gpus_seen(facts)
    amd, nvidia = checks.has_amd(facts), checks.has_nvidia(facts)
    chosen: list[checks.Check] = [checks.check_gpu_present]
    skipped: list[checks.Check] = []
    (chosen if gpus else skipped).extend(checks.GPU_CHECKS)
    (chosen if amd else skipped).extend(amd_checks.AMD_CHECKS if amd or not gpus else ())
    (chosen if nvidia else skipped).extend(checks.NVIDIA_CHECKS if nvidia or not gpus else ())
    chosen.extend(checks.ALWAYS)
    if gpus:
        chosen.append(checks.check_vendor_tools)
    if import_torch:
        chosen.append(checks.check_torch_runtime)
    diagnoses = [_check(check, facts) for check in chosen]
    for check in skipped:
        name = check.__name__.removeprefix("check_").replace("_", "-")
        diagnoses.append(
            Diagnosis(name, _TITLES.get(name, name), Status.UNKNOWN, "Not run: no GPU found.")
        )
    vendor = "+".join(v for v, present in (("amd", amd), ("nvidia", nvidia)) if present) or "none"
    flavour, _ = checks.torch_build(facts)
    driver = ", ".join(
        part
        for part in (
            f"amdgpu {facts.amdgpu_version}".strip() if facts.kfd_present else "",
            f"nvidia {facts.nvidia_driver}" if facts.nvidia_driver else "",
        )
        if part
    )
    return DoctorReport(
        vendor=vendor,
        gpus=tuple(gpus),
        driver=driver,
        rocm=facts.rocm_version,
        torch=facts.packages.get("torch", "") if flavour else "",
        in_container=facts.container,
        diagnoses=tuple(diagnoses),
        probes=tuple(facts.notes),
    )


_TITLES = {
    "kernel-driver": "Kernel driver",
    "device-nodes": "Device nodes",
    "permissions": "Permissions",
    "gpu-support": "AMD GPU vs ROCm's supported list",
    "torch-arch": "AMD GPU vs PyTorch's targets",
    "hsa-override": "HSA_OVERRIDE_GFX_VERSION",
    "cuda-driver": "NVIDIA driver vs PyTorch's CUDA",
    "driver-skew": "amdgpu kernel driver vs ROCm user space",
}
