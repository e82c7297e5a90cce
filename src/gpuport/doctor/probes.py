"""Probes: read what the machine says about its GPUs, drivers and Python packages, without judging.

Files first, vendor tools second, Python packages third, torch itself only when asked. Each
probe returns its facts or the reason it could not read them (a :class:`ProbeNote` with
``ok=False``); none raises for anything the machine can throw at it.

Formats read (public documentation, checked 2026-11-25):

- KFD topology, ``/sys/class/kfd/kfd/topology/nodes/<n>/properties``: ``name value`` lines;
  GPU nodes have ``simd_count`` > 0 and ``gfx_target_version`` = major*10000 + minor*100 +
  stepping (90402 is gfx942, 90010 gfx90a, 100301 gfx1031); ``mem_banks/<m>/properties`` give
  ``heap_type`` (1 and 2: the GPU's own memory) and ``size_in_bytes``
  (https://github.com/RadeonOpenCompute/ROCm_Documentation/blob/master/Topology/topo2.rst,
  https://github.com/torvalds/linux/blob/master/drivers/gpu/drm/amd/amdkfd/kfd_topology.c).
- ``/sys/module/amdgpu/version``: the DKMS driver's version (absent for the kernel's own).
- ``/proc/driver/nvidia/version``: ``NVRM version: NVIDIA UNIX ... Kernel Module  550.54.15 ...``
  (https://download.nvidia.com/XFree86/Linux-x86_64/550.54.14/README/procinterface.html).
- ``/sys/bus/pci/devices/<slot>/{vendor,device,class}``: hex ids; vendor 0x1002 is AMD, 0x10de
  NVIDIA; class 0x0300xx VGA, 0x0302xx 3D controller, 0x0380xx other display
  (https://www.kernel.org/doc/Documentation/ABI/testing/sysfs-bus-pci).
- ``/opt/rocm/.info/version``: the installed ROCm release (``6.4.1-120``)
  (https://rocm.docs.amd.com/projects/install-on-linux/en/latest/install/post-install.html).
- ``rocminfo``: one block per agent with ``Name: gfx942``, ``Marketing Name:`` and
  ``Device Type: GPU`` (https://rocm.docs.amd.com/projects/rocminfo/en/latest/).
- ``rocm-smi --showdriverversion``: a ``Driver version: 6.10.5`` line
  (https://rocm.docs.amd.com/projects/rocm_smi_lib/en/latest/).
- ``nvidia-smi --query-gpu=... --format=csv,noheader,nounits``: one CSV line per GPU
  (https://docs.nvidia.com/deploy/nvidia-smi/index.html).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from importlib import metadata

from gpuport import kb
from gpuport.doctor.model import ProbeNote
from gpuport.doctor.system import SystemView, Unreadable
from gpuport.machine import nvidia_driver_from_proc

AMD_VENDOR = 0x1002
NVIDIA_VENDOR = 0x10DE
_DISPLAY_CLASSES = (0x0300, 0x0302, 0x0380)  # the top 16 bits of the 24-bit class code
KFD_NODES = "sys/class/kfd/kfd/topology/nodes"


@dataclass(frozen=True, slots=True)
class AmdNode:
    """One GPU node of the KFD topology."""

    node: str
    gfx: str  # "gfx942"
    target_version: int  # 90402
    compute_units: int | None
    memory_bytes: int | None
    device_id: int | None
    render_minor: int | None


@dataclass(frozen=True, slots=True)
class PciGpu:
    slot: str
    vendor: int
    device: int


@dataclass(frozen=True, slots=True)
class ToolGpu:
    """A GPU as a vendor tool reports it."""

    name: str
    arch: str = ""  # "gfx942", "sm_90"
    memory_bytes: int | None = None
    driver: str = ""


@dataclass(frozen=True, slots=True)
class TorchReport:
    """What ``import torch`` said in a child process (only with ``--import-torch``)."""

    version: str
    hip: str | None
    cuda: str | None
    arch_list: tuple[str, ...]
    device_count: int
    devices: tuple[str, ...]


@dataclass
class Facts:
    """Everything the probes found; the checks read only this."""

    notes: list[ProbeNote] = field(default_factory=list)
    # AMD
    kfd_present: bool = False
    kfd_error: str = ""
    amd_nodes: list[AmdNode] = field(default_factory=list)
    amdgpu_loaded: bool = False
    amdgpu_version: str = ""
    rocm_version: str = ""
    rocminfo_gpus: list[ToolGpu] | None = None  # None: not run or unreadable
    # NVIDIA
    nvidia_driver: str = ""
    nvidia_error: str = ""
    nvidia_smi_gpus: list[ToolGpu] | None = None
    # Both
    pci: list[PciGpu] = field(default_factory=list)
    pci_error: str = ""
    dev_nodes: dict[str, bool] = field(default_factory=dict)  # path -> accessible
    container: str = ""
    groups: frozenset[str] = frozenset()
    is_root_user: bool = False
    env: dict[str, str] = field(default_factory=dict)
    # Python
    packages: dict[str, str] = field(default_factory=dict)  # normalized name -> version
    torch_requires: tuple[str, ...] = ()  # the names torch's metadata requires (normalized)
    broken_packages: list[str] = field(default_factory=list)
    packages_error: str = ""
    torch_report: TorchReport | None = None
    torch_error: str = ""  # why --import-torch could not tell

    def note(self, probe: str, outcome: str, ok: bool = True) -> None:
        self.notes.append(ProbeNote(probe, outcome, ok))


def gfx_name(target_version: int) -> str:
    """KFD's integer target version as a gfx id: 90402 -> gfx942, 90010 -> gfx90a."""
    major, rest = divmod(target_version, 10000)
    minor, stepping = divmod(rest, 100)
    return f"gfx{major}{minor:x}{stepping:x}"


def override_gfx(value: str) -> str | None:
    """``HSA_OVERRIDE_GFX_VERSION`` (``10.3.0``) as the gfx id it makes the runtime use."""
    match = re.fullmatch(r"\s*(\d+)\.(\d+)\.(\d+)\s*", value)
    if match is None:
        return None
    major, minor, stepping = (int(part) for part in match.groups())
    if minor > 15 or stepping > 15:
        return None
    return f"gfx{major}{minor:x}{stepping:x}"


def _properties(text: str) -> dict[str, int]:
    values: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].lstrip("-").isdigit():
            values[parts[0]] = int(parts[1])
    return values


def probe_kfd(view: SystemView, facts: Facts) -> None:
    """GPU nodes of the KFD topology, with their target, compute units and memory."""
    try:
        nodes = view.listdir(KFD_NODES)
    except Unreadable as exc:
        facts.kfd_error = str(exc)
        facts.note("KFD topology (/sys/class/kfd)", str(exc), ok=False)
        return
    facts.kfd_present = bool(nodes)
    if not nodes:
        facts.note("KFD topology (/sys/class/kfd)", "not present")
        return
    unreadable = []
    for node in nodes:
        try:
            text = view.read(f"{KFD_NODES}/{node}/properties")
        except Unreadable as exc:
            unreadable.append(str(exc))
            continue
        props = _properties(text or "")
        if props.get("simd_count", 0) <= 0 or props.get("gfx_target_version", 0) <= 0:
            continue  # a CPU node
        memory = 0
        try:
            banks = view.listdir(f"{KFD_NODES}/{node}/mem_banks")
        except Unreadable:
            banks = []  # the GPU is there; only its memory size is unknown
        for bank in banks:
            try:
                bank_props = _properties(
                    view.read(f"{KFD_NODES}/{node}/mem_banks/{bank}/properties") or ""
                )
            except Unreadable:
                continue
            if bank_props.get("heap_type") in (1, 2):
                memory += bank_props.get("size_in_bytes", 0)
        simd_per_cu = props.get("simd_per_cu", 0)
        target = props["gfx_target_version"]
        facts.amd_nodes.append(
            AmdNode(
                node=node,
                gfx=gfx_name(target),
                target_version=target,
                compute_units=props["simd_count"] // simd_per_cu if simd_per_cu > 0 else None,
                memory_bytes=memory or None,
                device_id=props.get("device_id"),
                render_minor=props.get("drm_render_minor"),
            )
        )
    if unreadable and not facts.amd_nodes:
        facts.kfd_error = unreadable[0]
        facts.note("KFD topology (/sys/class/kfd)", unreadable[0], ok=False)
    else:
        gfx = sorted({node.gfx for node in facts.amd_nodes})
        facts.note(
            "KFD topology (/sys/class/kfd)",
            f"{len(facts.amd_nodes)} GPU node(s)" + (f": {', '.join(gfx)}" if gfx else ""),
        )


def probe_pci(view: SystemView, facts: Facts) -> None:
    """AMD and NVIDIA display devices on the PCI bus."""
    base = "sys/bus/pci/devices"
    try:
        slots = view.listdir(base)
    except Unreadable as exc:
        facts.pci_error = str(exc)
        facts.note("PCI devices (/sys/bus/pci)", str(exc), ok=False)
        return
    for slot in slots:
        try:
            vendor = int((view.read(f"{base}/{slot}/vendor") or "0").strip(), 16)
            if vendor not in (AMD_VENDOR, NVIDIA_VENDOR):
                continue
            klass = int((view.read(f"{base}/{slot}/class") or "0").strip(), 16)
            device = int((view.read(f"{base}/{slot}/device") or "0").strip(), 16)
        except (Unreadable, ValueError):
            continue
        if klass >> 8 in _DISPLAY_CLASSES:
            facts.pci.append(PciGpu(slot, vendor, device))
    facts.note("PCI devices (/sys/bus/pci)", f"{len(facts.pci)} AMD or NVIDIA display device(s)")


def probe_drivers(view: SystemView, facts: Facts) -> None:
    """The amdgpu module and its version; the NVIDIA kernel module's version."""
    facts.amdgpu_loaded = view.exists("sys/module/amdgpu")
    try:
        facts.amdgpu_version = (view.read("sys/module/amdgpu/version") or "").strip()
    except Unreadable as exc:
        facts.note("amdgpu module", str(exc), ok=False)
    if facts.amdgpu_loaded:
        facts.note("amdgpu module", facts.amdgpu_version or "loaded (the kernel's own driver)")
    try:
        text = view.read("proc/driver/nvidia/version")
    except Unreadable as exc:
        facts.nvidia_error = str(exc)
        facts.note("NVIDIA driver (/proc/driver/nvidia)", str(exc), ok=False)
        return
    if text is None:
        return
    version = nvidia_driver_from_proc(text)
    if version is None:
        facts.nvidia_error = "/proc/driver/nvidia/version does not name a driver version"
        facts.note("NVIDIA driver (/proc/driver/nvidia)", facts.nvidia_error, ok=False)
        return
    facts.nvidia_driver = version
    facts.note("NVIDIA driver (/proc/driver/nvidia)", version)


def probe_nodes_and_user(view: SystemView, facts: Facts) -> None:
    """Device nodes, their access, the user's groups, and whether this is a container."""
    nodes = ["dev/kfd", "dev/nvidiactl"]
    try:
        nodes += [f"dev/dri/{name}" for name in view.listdir("dev/dri")]
        nodes += [f"dev/{name}" for name in view.listdir("dev") if re.fullmatch(r"nvidia\d+", name)]
    except Unreadable as exc:
        facts.note("device nodes (/dev)", str(exc), ok=False)
    facts.dev_nodes = {node: view.accessible(node) for node in nodes if view.exists(node)}
    facts.note("device nodes (/dev)", ", ".join(sorted(facts.dev_nodes)) or "none")
    facts.groups = view.groups
    facts.is_root_user = view.is_root_user
    facts.container = _container(view)
    if facts.container:
        facts.note("container", facts.container)


def _container(view: SystemView) -> str:
    if view.exists(".dockerenv"):
        return "docker"
    if view.exists("run/.containerenv"):
        return "podman"
    try:
        cgroup = view.read("proc/1/cgroup") or ""
    except Unreadable:
        cgroup = ""
    for marker, name in (("kubepods", "kubernetes"), ("docker", "docker"), ("lxc", "lxc")):
        if marker in cgroup:
            return name
    return view.env.get("container", "").strip()


def probe_rocm(view: SystemView, facts: Facts) -> None:
    """The installed ROCm user space: ``/opt/rocm/.info/version`` (or ``$ROCM_PATH``'s)."""
    base = view.env.get("ROCM_PATH", "/opt/rocm").strip() or "/opt/rocm"
    try:
        text = view.read(f"{base}/.info/version")
    except Unreadable as exc:
        facts.note("ROCm install", str(exc), ok=False)
        return
    if text is None:
        return
    match = re.match(r"\s*(\d+\.\d+(?:\.\d+)?)", text)
    if match:
        facts.rocm_version = match.group(1)
        facts.note(f"ROCm install ({base})", facts.rocm_version)
    else:
        facts.note(f"ROCm install ({base})", "its .info/version names no version", ok=False)


def parse_rocminfo(text: str) -> list[ToolGpu]:
    """GPU agents in ``rocminfo``'s output; ``ValueError`` when it has no agents at all."""
    blocks = re.split(r"^\*+\s*\n\s*Agent \d+\s*\n\*+\s*$", text, flags=re.M)
    if len(blocks) < 2:
        raise ValueError("no agents in its output")
    gpus = []
    for block in blocks[1:]:
        fields: dict[str, str] = {}
        for line in block.splitlines():
            key, sep, value = line.partition(":")
            if sep and key.strip() and key.strip() not in fields:
                fields[key.strip()] = value.strip()
        if fields.get("Device Type") == "GPU":
            gfx = fields.get("Name", "")
            gpus.append(ToolGpu(fields.get("Marketing Name", "") or gfx, gfx.split(":")[0]))
    return gpus


def parse_nvidia_smi(text: str) -> list[ToolGpu]:
    """``nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap`` CSV lines."""
    gpus = []
    for line in text.splitlines():
        if not line.strip():
            continue
        cells = [cell.strip() for cell in line.split(",")]
        if len(cells) != 4 or not re.fullmatch(r"\d+\.\d+", cells[3]):
            raise ValueError(f"unexpected line {line[:80]!r}")
        memory = int(cells[2]) * 2**20 if cells[2].isdigit() else None  # MiB
        major, minor = cells[3].split(".")
        gpus.append(ToolGpu(cells[0], f"sm_{major}{minor}", memory, cells[1]))
    if not gpus:
        raise ValueError("no GPU lines in its output")
    return gpus


def probe_tools(view: SystemView, facts: Facts) -> None:
    """rocminfo and nvidia-smi, each with the time-out; amd-smi for the ROCm version; rocm-smi
    for the amdgpu driver's version when sysfs has none."""
    amd = bool(facts.amd_nodes) or any(gpu.vendor == AMD_VENDOR for gpu in facts.pci)
    nvidia = bool(facts.nvidia_driver) or any(gpu.vendor == NVIDIA_VENDOR for gpu in facts.pci)
    if not (amd or nvidia or facts.rocm_version):
        facts.note("vendor tools (rocminfo, amd-smi, rocm-smi, nvidia-smi)", "not run: no GPU")
    if amd or facts.rocm_version:
        done = view.run("rocminfo")
        if not done.ran:
            facts.note("rocminfo", done.error, ok=done.error == "not installed")
        elif done.returncode != 0:
            why = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no message"]
            facts.note("rocminfo", f"exit status {done.returncode}: {why[0][:160]}", ok=False)
        else:
            try:
                facts.rocminfo_gpus = parse_rocminfo(done.stdout)
                facts.note("rocminfo", f"{len(facts.rocminfo_gpus)} GPU agent(s)")
            except ValueError as exc:
                facts.note("rocminfo", f"could not read its output ({exc})", ok=False)
        if not facts.rocm_version:
            done = view.run("amd-smi", "version")
            match = re.search(r"ROCm version:\s*(\d+\.\d+(?:\.\d+)?)", done.stdout)
            if done.ran and match:
                facts.rocm_version = match.group(1)
                facts.note("amd-smi version", f"ROCm {facts.rocm_version}")
            elif done.error:
                facts.note("amd-smi", done.error, ok=done.error == "not installed")
    if amd and not facts.amdgpu_version:
        _probe_rocm_smi(view, facts)
    if nvidia:
        done = view.run(
            "nvidia-smi",
            "--query-gpu=name,driver_version,memory.total,compute_cap",
            "--format=csv,noheader,nounits",
        )
        if not done.ran:
            facts.note("nvidia-smi", done.error, ok=done.error == "not installed")
        elif done.returncode != 0:
            why = (done.stdout or done.stderr).strip().splitlines()[:1] or ["no message"]
            facts.note("nvidia-smi", f"exit status {done.returncode}: {why[0][:160]}", ok=False)
        else:
            try:
                facts.nvidia_smi_gpus = parse_nvidia_smi(done.stdout)
                facts.note("nvidia-smi", f"{len(facts.nvidia_smi_gpus)} GPU(s)")
            except ValueError as exc:
                facts.note("nvidia-smi", f"could not read its output ({exc})", ok=False)


def _probe_rocm_smi(view: SystemView, facts: Facts) -> None:
    """The amdgpu driver's version from ``rocm-smi --showdriverversion`` (``Driver version:
    6.10.5``; the kernel's release for the kernel's own driver) when sysfs does not give it."""
    done = view.run("rocm-smi", "--showdriverversion")
    if not done.ran:
        facts.note("rocm-smi", done.error, ok=done.error == "not installed")
        return
    match = re.search(r"Driver version:\s*(\S+)", done.stdout)
    if done.returncode != 0 or match is None:
        facts.note("rocm-smi", "could not read the driver version from its output", ok=False)
        return
    facts.amdgpu_version = match.group(1)
    facts.note("rocm-smi", f"driver {facts.amdgpu_version}")


def probe_packages(view: SystemView, facts: Facts) -> None:
    """Installed distributions, from their metadata only (nothing is imported)."""
    try:
        found = list(metadata.distributions(path=list(view.python_paths)))
    except Exception as exc:  # any broken metadata must not stop the doctor
        facts.packages_error = f"cannot list the installed packages: {exc}"
        facts.note("Python packages", facts.packages_error, ok=False)
        return
    for dist in found:
        try:
            name = dist.metadata["Name"]
            version = dist.version
        except Exception as exc:  # a malformed METADATA file of any kind
            facts.broken_packages.append(f"{getattr(dist, '_path', '?')}: {exc}")
            continue
        if not name or not version:
            facts.broken_packages.append(
                f"{getattr(dist, '_path', 'a distribution')}: no name or version"
            )
            continue
        normalized = kb.normalize_name(name)
        if normalized == "torch" and "torch" not in facts.packages:
            facts.torch_requires = _required_names(dist)
        facts.packages.setdefault(normalized, version)
    outcome = f"{len(facts.packages)} distribution(s)"
    if facts.broken_packages:
        outcome += f", {len(facts.broken_packages)} with broken metadata"
    facts.note("Python packages (metadata)", outcome)


def _required_names(dist: metadata.Distribution) -> tuple[str, ...]:
    """The names a distribution's metadata requires (``nvidia-cuda-runtime-cu12``), or ()."""
    try:
        requires = dist.requires or []
    except Exception:  # a malformed Requires-Dist: the CUDA version is then guessed
        return ()
    names = (re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", item) for item in requires)
    return tuple(kb.normalize_name(match.group(1)) for match in names if match)


_TORCH_SCRIPT = """
import json, torch
cuda = torch.cuda
n = cuda.device_count() if cuda.is_available() else 0
print(json.dumps({
    "version": str(torch.__version__),
    "hip": getattr(torch.version, "hip", None),
    "cuda": getattr(torch.version, "cuda", None),
    "arch_list": list(cuda.get_arch_list()) if n else [],
    "device_count": n,
    "devices": [cuda.get_device_name(i) for i in range(n)],
}))
"""


def probe_torch_import(view: SystemView, facts: Facts) -> None:
    """``--import-torch``: what torch itself reports, in a child process with the time-out."""
    done = view.run(view.python, "-c", _TORCH_SCRIPT)
    if not done.ran:
        facts.torch_error = f"importing torch: {done.error}"
    elif done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        facts.torch_error = f"importing torch failed: {last[:200]}"
    else:
        try:
            data = json.loads(done.stdout.strip().splitlines()[-1])
            facts.torch_report = TorchReport(
                version=str(data["version"]),
                hip=data["hip"] if isinstance(data["hip"], str) else None,
                cuda=data["cuda"] if isinstance(data["cuda"], str) else None,
                arch_list=tuple(str(item) for item in data["arch_list"]),
                device_count=int(data["device_count"]),
                devices=tuple(str(item) for item in data["devices"]),
            )
        except (ValueError, KeyError, TypeError, IndexError):
            facts.torch_error = "could not read what torch reported"
    if facts.torch_report is not None:
        facts.note("import torch", f"{facts.torch_report.device_count} device(s)")
    else:
        facts.note("import torch", facts.torch_error, ok=False)
