"""What ``gpuport doctor`` returns: one diagnosis per check, and what it saw of the machine."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Status(enum.StrEnum):
    """The outcome of one check."""

    OK = "ok"
    WARNING = "warning"
    PROBLEM = "problem"
    UNKNOWN = "could not check"


@dataclass(frozen=True, slots=True)
class Diagnosis:
    """One check's verdict: what is wrong (or right), why it matters, and the command that fixes it."""

    check: str  # the check's id, e.g. "torch-build"
    title: str  # what the check looks at, e.g. "PyTorch build vs GPU vendor"
    status: Status
    summary: str  # one sentence: what was found
    why: str = ""  # why it matters (empty when all is well)
    fix: str = ""  # the exact command (or commands, one a line) that fixes it; "" when none


@dataclass(frozen=True, slots=True)
class GpuSeen:
    """One GPU as the probes saw it."""

    vendor: str  # "amd" | "nvidia"
    name: str  # a product name where one is known, else the PCI id
    arch: str = ""  # "gfx942", "sm_90"; "" when unknown
    memory_bytes: int | None = None
    source: str = ""  # where it was seen: "kfd", "pci", "nvidia-smi"


@dataclass(frozen=True, slots=True)
class ProbeNote:
    """One thing the doctor looked at, and what came of it (for the "checks ran" list)."""

    probe: str  # "KFD topology", "nvidia-smi", ...
    outcome: str  # "4 GPU nodes", "not installed", "timed out after 10 s"
    ok: bool = True  # False when it could not be read


@dataclass(frozen=True, slots=True)
class DoctorReport:
    """The diagnosis of one machine's GPU software stack."""

    vendor: str  # "amd" | "nvidia" | "amd+nvidia" | "none"
    gpus: tuple[GpuSeen, ...]
    driver: str  # "amdgpu 6.10.5", "nvidia 550.54.15", "" when none
    rocm: str  # the installed ROCm user space ("6.4.1"), "" when none
    torch: str  # the installed torch ("2.7.1+rocm6.3"), "" when none
    in_container: str  # the container runtime ("docker", "podman", ...), "" when none
    diagnoses: tuple[Diagnosis, ...]
    probes: tuple[ProbeNote, ...] = field(default=())

    def count(self, status: Status) -> int:
        return sum(1 for item in self.diagnoses if item.status is status)

    @property
    def healthy(self) -> bool:
        """No problem found (warnings and checks that could not run allowed)."""
        return self.count(Status.PROBLEM) == 0

    @property
    def verdict(self) -> str:
        """One line for the top of every format."""
        problems, warnings = self.count(Status.PROBLEM), self.count(Status.WARNING)
        unknown = self.count(Status.UNKNOWN)
        if not self.gpus:
            head = "no GPU found"
        elif problems:
            head = f"{problems} problem{'s' if problems != 1 else ''} found"
        else:
            head = "healthy"
        tail = []
        if warnings:
            tail.append(f"{warnings} warning{'s' if warnings != 1 else ''}")
        if unknown:
            tail.append(f"{unknown} could not be checked")
        return head + (f" ({', '.join(tail)})" if tail else "")
