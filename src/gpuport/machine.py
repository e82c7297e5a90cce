"""The description of the machine a measurement ran on, shared by ``bench`` and ``verify``.

A run's numbers mean nothing without the machine: results recorded on a CUDA box and a ROCm box
meet on one machine (``bench import``, ``verify compare``), so the description travels with them
as plain JSON and is read back as untrusted input (:meth:`MachineDescription.from_dict`).

Torch is optional: without it (or without a device) the description is the host's. PyTorch's
ROCm builds still call the device ``cuda``; ``torch.version.hip`` tells them apart
(https://pytorch.org/docs/stable/notes/hip.html, read 2026-11-25).
"""

from __future__ import annotations

import os
import platform
import socket
import subprocess
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from types import ModuleType
from typing import Any

from gpuport import __version__

# The kinds of accelerator a description can name.
ACCELERATORS = ("cuda", "rocm", "cpu")

# Where the drivers say their versions without a vendor tool: NVIDIA's kernel module
# (https://download.nvidia.com/XFree86/Linux-x86_64/550.54.14/README/procinterface.html) and the
# amdgpu module's sysfs version (present for the DKMS driver that ROCm installs).
_NVIDIA_DRIVER = Path("/proc/driver/nvidia/version")
_AMDGPU_DRIVER = Path("/sys/module/amdgpu/version")


@dataclass(frozen=True, slots=True)
class MachineDescription:
    """One machine, as a measurement records it. Every field is JSON-safe."""

    hostname: str
    os: str
    python: str
    cpu: str
    cpu_count: int
    memory_bytes: int | None
    accelerator: str  # one of ACCELERATORS
    device_name: str  # the GPU's name as torch reports it, or the CPU's
    device_arch: str | None  # "sm_90", "gfx942"; None on the CPU
    device_memory_bytes: int | None
    device_count: int
    driver: str | None
    torch: str | None
    cuda: str | None  # the CUDA version torch was built for
    hip: str | None  # the HIP version torch was built for
    gpuport: str
    gpuport_revision: str | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: object) -> MachineDescription:
        """Read a description written by :meth:`to_dict`, possibly on another machine.

        Raises ``ValueError`` naming the first field that is missing or of the wrong type;
        fields this version does not know are ignored (a newer gpuport may add some).
        """
        if not isinstance(data, dict):
            raise ValueError("the machine description is not an object")
        values: dict[str, Any] = {}
        for field in fields(cls):
            if field.name not in data:
                raise ValueError(f"the machine description has no {field.name!r}")
            value = data[field.name]
            optional = "None" in str(field.type)
            want: type = int if str(field.type).startswith("int") else str
            if value is None and optional:
                values[field.name] = None
            elif isinstance(value, want) and not isinstance(value, bool):
                values[field.name] = value
            else:
                raise ValueError(
                    f"the machine description's {field.name!r} is {type(value).__name__}, "
                    f"not {want.__name__}"
                )
        if values["accelerator"] not in ACCELERATORS:
            raise ValueError(
                f"the machine description's accelerator {values['accelerator']!r} is not one of "
                + ", ".join(ACCELERATORS)
            )
        return cls(**values)

    @property
    def label(self) -> str:
        """A short name for tables: ``NVIDIA H100 80GB HBM3 (sm_90) on host``."""
        arch = f" ({self.device_arch})" if self.device_arch else ""
        return f"{self.device_name}{arch} on {self.hostname}"


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _cpu_name() -> str:
    text = _read(Path("/proc/cpuinfo")) or ""
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("model name", "Model", "Hardware") and value.strip():
            return value.strip()
    return platform.processor() or platform.machine() or "unknown CPU"


def _memory_bytes() -> int | None:
    for line in (_read(Path("/proc/meminfo")) or "").splitlines():
        if line.startswith("MemTotal:"):
            parts = line.split()
            if len(parts) >= 2 and parts[1].isdigit():
                return int(parts[1]) * 1024
    return None


def nvidia_driver_from_proc(text: str) -> str | None:
    """The version in ``/proc/driver/nvidia/version``'s text (``550.54.15``), or None.

    Its first line reads ``NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar
    5 ...`` (``Open Kernel Module`` for the open modules).
    """
    words = text.split()
    if "Module" in words:
        at = words.index("Module") + 1
        if at < len(words) and words[at][:1].isdigit():
            return words[at]
    return None


def driver_version(nvidia: Path = _NVIDIA_DRIVER, amdgpu: Path = _AMDGPU_DRIVER) -> str | None:
    """The GPU kernel driver's version from procfs/sysfs (``nvidia 550.54.15``), or None."""
    version = nvidia_driver_from_proc(_read(nvidia) or "")
    if version:
        return f"nvidia {version}"
    text = _read(amdgpu)
    if text and text.strip():
        return f"amdgpu {text.strip()}"
    return None


def _revision() -> str | None:
    """The git revision of gpuport's own source tree, when it runs from a checkout."""
    root = Path(__file__).resolve().parents[2]
    if not (root / ".git").exists():
        return None
    try:
        done = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.strip() or None


def device_arch(torch: ModuleType, index: int = 0) -> str | None:
    """``sm_90`` on NVIDIA, ``gfx942`` on AMD (the target features after ``:`` dropped)."""
    props = torch.cuda.get_device_properties(index)
    if getattr(torch.version, "hip", None):
        name = str(getattr(props, "gcnArchName", "") or "")
        return name.split(":", 1)[0] or None
    return f"sm_{props.major}{props.minor}"


def describe_machine(torch: ModuleType | None = None) -> MachineDescription:
    """This machine; with ``torch`` (the imported module), also its device and builds.

    Never imports torch itself: the caller decides whether the heavy import is wanted.
    """
    accelerator, device_name, arch, device_memory, count = "cpu", _cpu_name(), None, None, 0
    torch_version = cuda = hip = None
    if torch is not None:
        torch_version = str(torch.__version__)
        cuda = getattr(torch.version, "cuda", None)
        hip = getattr(torch.version, "hip", None)
        if torch.cuda.is_available():
            count = int(torch.cuda.device_count())
            props = torch.cuda.get_device_properties(0)
            accelerator = "rocm" if hip else "cuda"
            device_name = str(props.name)
            arch = device_arch(torch, 0)
            device_memory = int(props.total_memory)
    return MachineDescription(
        hostname=socket.gethostname(),
        os=platform.platform(),
        python=platform.python_version(),
        cpu=_cpu_name(),
        cpu_count=os.cpu_count() or 1,
        memory_bytes=_memory_bytes(),
        accelerator=accelerator,
        device_name=device_name,
        device_arch=arch,
        device_memory_bytes=device_memory,
        device_count=count,
        driver=driver_version() if accelerator != "cpu" else None,
        torch=torch_version,
        cuda=cuda,
        hip=hip,
        gpuport=__version__,
        gpuport_revision=_revision(),
    )
