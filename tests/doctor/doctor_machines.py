"""Test machines for ``gpuport doctor``: sysfs, procfs and /dev as files under a folder, recorded
tool output, and Python packages as ``*.dist-info`` folders.

The file layouts follow the public documentation of each format (see the docstring of
gpuport.doctor.probes); the numbers are those of the real parts (an MI300X has 304 compute units
of 4 SIMDs and 192 GiB; an RX 7900 XTX 96 CUs of 2 SIMDs and 24 GiB).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from gpuport.doctor import CommandResult, SystemView

GIB = 2**30
HANG = CommandResult(None, error="did not answer within 10 s")
NOT_INSTALLED = CommandResult(None, error="not installed")


@dataclass
class FakeRunner:
    """Replays recorded output by program name; a program not listed is not installed."""

    outputs: Mapping[str, CommandResult] = field(default_factory=dict)
    calls: list[tuple[str, ...]] = field(default_factory=list)

    def __call__(self, argv: Sequence[str], timeout: float) -> CommandResult:
        self.calls.append(tuple(argv))
        key = Path(argv[0]).name
        return self.outputs.get(key, NOT_INSTALLED)


def ok(stdout: str) -> CommandResult:
    return CommandResult(0, stdout)


def write(root: Path, relative: str, text: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


class Machine:
    """A machine being built under ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.site = root / "_site"  # the Python environment's site-packages
        self.site.mkdir(parents=True, exist_ok=True)
        self.env: dict[str, str] = {}
        self.groups = frozenset({"users", "render", "video"})
        self.runner = FakeRunner({})
        self._nodes = 0
        # node 0 of a KFD topology is the CPU
        write(
            root,
            "sys/class/kfd/kfd/topology/nodes/0/properties",
            "cpu_cores_count 64\nsimd_count 0\ngfx_target_version 0\n",
        )

    def amd_gpu(
        self, target: int, *, simd: int, simd_per_cu: int, memory: int, device: int, count: int = 1
    ) -> Machine:
        for _ in range(count):
            self._nodes += 1
            node = f"sys/class/kfd/kfd/topology/nodes/{self._nodes}"
            write(
                self.root,
                f"{node}/properties",
                f"cpu_cores_count 0\nsimd_count {simd}\nmem_banks_count 1\n"
                f"gfx_target_version {target}\nsimd_per_cu {simd_per_cu}\nvendor_id 4098\n"
                f"device_id {device}\ndrm_render_minor {127 + self._nodes}\n",
            )
            write(
                self.root,
                f"{node}/mem_banks/0/properties",
                f"heap_type 1\nsize_in_bytes {memory}\n",
            )
            self.pci(f"0000:{self._nodes:02x}:00.0", 0x1002, device, 0x038000)
            write(self.root, f"dev/dri/renderD{127 + self._nodes}", "")
        write(self.root, "dev/kfd", "")
        (self.root / "sys/module/amdgpu").mkdir(parents=True, exist_ok=True)
        return self

    def pci(self, slot: str, vendor: int, device: int, klass: int) -> Machine:
        base = f"sys/bus/pci/devices/{slot}"
        write(self.root, f"{base}/vendor", f"0x{vendor:04x}\n")
        write(self.root, f"{base}/device", f"0x{device:04x}\n")
        write(self.root, f"{base}/class", f"0x{klass:06x}\n")
        return self

    def nvidia_gpu(self, driver: str, count: int = 1) -> Machine:
        write(
            self.root,
            "proc/driver/nvidia/version",
            f"NVRM version: NVIDIA UNIX x86_64 Kernel Module  {driver}  Thu Aug 15 2024\n"
            "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n",
        )
        for index in range(count):
            self.pci(f"0000:{0x18 + index:02x}:00.0", 0x10DE, 0x2330, 0x030200)
            write(self.root, f"dev/nvidia{index}", "")
        write(self.root, "dev/nvidiactl", "")
        return self

    def package(self, name: str, version: str, metadata: str | None = None) -> Machine:
        folder = self.site / f"{name.replace('-', '_')}-{version}.dist-info"
        text = (
            metadata
            if metadata is not None
            else f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
        )
        write(folder, "METADATA", text)
        return self

    def tool(self, name: str, result: CommandResult) -> Machine:
        self.runner = FakeRunner({**self.runner.outputs, name: result})
        return self

    def view(self) -> SystemView:
        return SystemView(
            root=self.root,
            env=self.env,
            runner=self.runner,
            groups=self.groups,
            is_root_user=False,
            python_paths=(str(self.site),),
            python="python3",
        )


def rocminfo(gpus: Sequence[tuple[str, str]]) -> str:
    """rocminfo's output: a CPU agent, then one agent per (gfx, marketing name)."""
    parts = [
        "ROCk module version 6.10.5 is loaded\n=====================\nHSA System Attributes\n"
        "=====================\nRuntime Version:         1.14\n\n==========\nHSA Agents\n==========\n"
        "*******\nAgent 1\n*******\n  Name:                    AMD EPYC 9654 96-Core Processor\n"
        "  Marketing Name:          AMD EPYC 9654 96-Core Processor\n  Device Type:             CPU\n"
    ]
    for number, (gfx, name) in enumerate(gpus, 2):
        parts.append(
            f"*******\nAgent {number}\n*******\n  Name:                    {gfx}\n"
            f"  Uuid:                    GPU-{number:016x}\n  Marketing Name:          {name}\n"
            "  Vendor Name:             AMD\n  Device Type:             GPU\n"
            f"  ISA Info:\n    ISA 1\n      Name:                    amdgcn-amd-amdhsa--{gfx}:sramecc+:xnack-\n"
        )
    return "".join(parts) + "*** Done ***\n"


def mi300x_node(root: Path) -> Machine:
    """Eight MI300X on ROCm 6.4.1 with PyTorch's ROCm 6.3 wheel: healthy."""
    machine = Machine(root).amd_gpu(
        90402, simd=1216, simd_per_cu=4, memory=192 * GIB, device=0x74A1, count=8
    )
    write(root, "sys/module/amdgpu/version", "6.10.5\n")
    write(root, "opt/rocm/.info/version", "6.4.1-120\n")
    machine.package("torch", "2.7.1+rocm6.3").package("numpy", "2.2.6")
    machine.tool("rocminfo", ok(rocminfo([("gfx942", "AMD Instinct MI300X")] * 8)))
    return machine


def rx7900xtx_desktop(root: Path, torch: str) -> Machine:
    machine = Machine(root).amd_gpu(110000, simd=192, simd_per_cu=2, memory=24 * GIB, device=0x744C)
    write(root, "opt/rocm/.info/version", "6.4.0-47\n")
    machine.package("torch", torch)
    return machine


def rx6700xt_desktop(root: Path) -> Machine:
    machine = Machine(root).amd_gpu(100301, simd=80, simd_per_cu=2, memory=12 * GIB, device=0x73DF)
    write(root, "opt/rocm/.info/version", "6.3.3\n")
    machine.package("torch", "2.7.1+rocm6.3")
    return machine


H100_SMI = "NVIDIA H100 80GB HBM3, {driver}, 81559, 9.0\n"


def h100_node(root: Path, driver: str, torch: str, count: int = 2) -> Machine:
    machine = Machine(root).nvidia_gpu(driver, count)
    machine.package("torch", torch)
    machine.tool("nvidia-smi", ok(H100_SMI.format(driver=driver) * count))
    return machine
