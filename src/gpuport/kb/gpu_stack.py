"""What ``gpuport doctor`` checks a GPU stack against (gpu_stack.toml): the NVIDIA driver each CUDA
release needs, the CUDA builds PyTorch publishes, and the targets of PyTorch's ROCm wheels."""

from __future__ import annotations

import datetime
import functools
from collections.abc import Mapping
from dataclasses import dataclass

from gpuport.kb.loader import KbError, entries, load_toml, table_entry

GPU_STACK_TOML = "gpu_stack.toml"
PYTORCH_CUDA_INDEX = "https://download.pytorch.org/whl/cu{nodot}"


def version_key(version: str) -> tuple[int, ...]:
    """``"550.54.15"`` -> ``(550, 54, 15)``; ``ValueError`` for anything else."""
    parts = version.strip().split(".")
    if not parts or not all(part.isdigit() for part in parts):
        raise ValueError(f"not a version: {version!r}")
    return tuple(int(part) for part in parts)


@dataclass(frozen=True, slots=True)
class CudaDriver:
    """The Linux driver one CUDA release needs: all features, and at all (minor compatibility)."""

    cuda: str
    toolkit_driver: str
    family_driver: str
    sources: tuple[str, ...]
    checked: datetime.date


@dataclass(frozen=True, slots=True)
class TorchRocmArchs:
    """The gfx targets of PyTorch's ROCm wheels labelled ``+rocm<rocm_from>`` and later."""

    rocm_from: str
    archs: tuple[str, ...]
    sources: tuple[str, ...]
    checked: datetime.date


def _checked_version(text: str, where: str) -> str:
    try:
        version_key(text)
    except ValueError as exc:
        raise KbError(f"{where}: {exc}") from None
    return text


@functools.cache
def cuda_drivers() -> tuple[CudaDriver, ...]:
    """Every CUDA release the table knows, oldest first."""
    found = []
    for entry in entries(load_toml(GPU_STACK_TOML), "cuda_driver", GPU_STACK_TOML, "cuda"):
        found.append(
            CudaDriver(
                cuda=_checked_version(entry.text("cuda"), entry.where),
                toolkit_driver=_checked_version(entry.text("toolkit_driver"), entry.where),
                family_driver=_checked_version(entry.text("family_driver"), entry.where),
                sources=entry.sources(),
                checked=entry.date(),
            )
        )
    return tuple(sorted(found, key=lambda item: version_key(item.cuda)))


def cuda_driver(cuda: str) -> CudaDriver | None:
    """The entry for CUDA ``cuda`` ("12.6"); an unknown minor release of a known major gets the
    newest entry below it, so that its family driver still applies."""
    try:
        wanted = version_key(cuda)[:2]
    except ValueError:
        return None
    best = None
    for item in cuda_drivers():
        key = version_key(item.cuda)[:2]
        if key == wanted:
            return item
        if key[0] == wanted[0] and key < wanted:
            best = item
    return best


@functools.cache
def pytorch_cuda_releases() -> Mapping[str, tuple[str, ...]]:
    """torch release (``"2.7"``) -> the CUDA versions PyTorch publishes wheels for."""
    entry = table_entry(load_toml(GPU_STACK_TOML), "pytorch_cuda", GPU_STACK_TOML)
    entry.sources()
    entry.date()
    releases = entry.table("releases")
    result: dict[str, tuple[str, ...]] = {}
    for release in releases.raw:
        result[release] = tuple(
            _checked_version(v, releases.where) for v in releases.texts(release, required=True)
        )
    return result


def pytorch_cuda_index(cuda: str) -> str:
    """PyTorch's index URL for a CUDA version: ``12.6`` -> ``.../whl/cu126``."""
    return PYTORCH_CUDA_INDEX.format(nodot=cuda.replace(".", ""))


@functools.cache
def torch_rocm_archs() -> tuple[TorchRocmArchs, ...]:
    """The target lists of PyTorch's ROCm wheels, oldest ROCm first."""
    found = []
    for entry in entries(
        load_toml(GPU_STACK_TOML), "torch_rocm_archs", GPU_STACK_TOML, "rocm_from"
    ):
        found.append(
            TorchRocmArchs(
                rocm_from=_checked_version(entry.text("rocm_from"), entry.where),
                archs=entry.texts("archs", required=True),
                sources=entry.sources(),
                checked=entry.date(),
            )
        )
    return tuple(sorted(found, key=lambda item: version_key(item.rocm_from)))


def archs_of_torch_rocm_wheel(rocm: str) -> TorchRocmArchs | None:
    """The target list of PyTorch's wheel built for ROCm ``rocm`` ("6.4"), or None if older
    than every entry (or not a version)."""
    try:
        wanted = version_key(rocm)
    except ValueError:
        return None
    chosen = None
    for item in torch_rocm_archs():
        if version_key(item.rocm_from) <= wanted:
            chosen = item
    return chosen


@dataclass(frozen=True, slots=True)
class AmdPciDevice:
    """One AMD PCI device id: its name in the PCI ID database and its gfx target."""

    device_id: int
    name: str
    gfx: str


@functools.cache
def amd_pci_devices() -> Mapping[int, AmdPciDevice]:
    """AMD PCI device id (0x74a1) -> its name and gfx target."""
    entry = table_entry(load_toml(GPU_STACK_TOML), "amd_pci", GPU_STACK_TOML)
    entry.sources()
    entry.date()
    devices = entry.table("devices")
    result: dict[int, AmdPciDevice] = {}
    for key in devices.raw:
        try:
            device_id = int(key, 16)
        except ValueError:
            raise KbError(f"{devices.where}: {key!r} is not a hex PCI device id") from None
        fields = devices.texts(key, required=True)
        if len(fields) != 2:
            raise KbError(f"{devices.where}: {key} needs [name, gfx]")
        result[device_id] = AmdPciDevice(device_id, fields[0], fields[1])
    return result


def amd_pci_device(device_id: int | None) -> AmdPciDevice | None:
    """The AMD GPU with PCI device id ``device_id``, or None if the table does not know it."""
    return None if device_id is None else amd_pci_devices().get(device_id)


@dataclass(frozen=True, slots=True)
class ContainerGpu:
    """How one vendor's GPU reaches a container of one runtime: host set-up, then the start."""

    runtime: str  # "docker" | "podman" | "kubernetes"
    vendor: str  # "amd" | "nvidia"
    host: tuple[str, ...]
    run: str
    sources: tuple[str, ...]
    checked: datetime.date


@functools.cache
def container_gpus() -> Mapping[tuple[str, str], ContainerGpu]:
    """(runtime, vendor) -> how to give that container the GPU."""
    result: dict[tuple[str, str], ContainerGpu] = {}
    for entry in entries(load_toml(GPU_STACK_TOML), "container_gpu", GPU_STACK_TOML, "runtime"):
        item = ContainerGpu(
            runtime=entry.text("runtime"),
            vendor=entry.text("vendor"),
            host=entry.texts("host"),
            run=entry.text("run"),
            sources=entry.sources(),
            checked=entry.date(),
        )
        if item.vendor not in ("amd", "nvidia"):
            raise KbError(f"{entry.where}: vendor must be amd or nvidia")
        if (item.runtime, item.vendor) in result:
            raise KbError(f"{entry.where}: {item.vendor} under {item.runtime} is listed twice")
        result[(item.runtime, item.vendor)] = item
    return result


def container_gpu(runtime: str, vendor: str) -> ContainerGpu | None:
    """How to give a ``runtime`` container a ``vendor`` GPU, or None for an unknown runtime."""
    return container_gpus().get((runtime, vendor))
