"""The device a suite runs on: PyTorch loaded lazily, the datasheet peaks, the telemetry.

PyTorch is the optional extra ``gpuport[bench]``: it is imported here, only when a suite runs,
so that the rest of gpuport (and ``bench list/show/compare``) never needs it. Peaks come from
the plan's GPU catalog (kb/gpus.toml); a device it does not know gets absolute numbers only.
"""

from __future__ import annotations

import contextlib
import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from gpuport.machine import MachineDescription, describe_machine
from gpuport.plan.catalog import Gpu, find_gpu

# The torch the project is tested with; the pin keeps pip on the CPU wheel where there is no GPU
# (a bare `torch` requirement pulls several GB of CUDA libraries).
TORCH_PIN = "2.13.0"
INSTALL_HINT = f"pip install torch=={TORCH_PIN} && pip install 'gpuport[bench]'"


class BenchUnavailable(Exception):
    """The suite cannot run here (no torch); the message says how to fix it."""


def load_torch() -> ModuleType:
    """``import torch``, or :class:`BenchUnavailable` naming the install command."""
    try:
        return importlib.import_module("torch")
    except ImportError:
        raise BenchUnavailable(
            f"gpuport bench needs PyTorch, which is not installed: {INSTALL_HINT}"
        ) from None


def _catalog_names(device_name: str) -> list[str]:
    """Names to look the device up by: torch's name and shorter forms of it.

    torch says ``NVIDIA H100 80GB HBM3`` or ``AMD Instinct MI300X``; the catalog knows ids and
    aliases (``h100-sxm``, ``mi300x``), so the vendor words and then trailing words are dropped
    until one matches.
    """
    words = [w for w in device_name.replace("-", " ").replace("/", " ").split() if w]
    while words and words[0].lower() in ("nvidia", "amd", "instinct", "radeon", "geforce"):
        words = words[1:]
    names = [device_name]
    for end in range(len(words), 0, -1):
        names.append(" ".join(words[:end]))
        names.append("".join(words[:end]))
    return names


def catalog_gpu(machine: MachineDescription) -> Gpu | None:
    """The catalog entry of the machine's GPU, or None (the CPU, an unknown card)."""
    if machine.accelerator == "cpu":
        return None
    for name in _catalog_names(machine.device_name):
        gpu = find_gpu(name)
        if gpu is not None:
            return gpu
    return None


def unknown_device_note(machine: MachineDescription) -> str:
    if machine.accelerator == "cpu":
        return (
            f"{machine.device_name} is a CPU: the GPU catalog has no peaks for it, so results "
            "are absolute numbers without a fraction of peak"
        )
    return (
        f"{machine.device_name} is not in the GPU catalog: results are absolute numbers; add an "
        "entry with its datasheet peaks and a source to src/gpuport/kb/gpus.toml (or an alias to "
        "an existing one) to get fractions of peak"
    )


@dataclass(frozen=True, slots=True)
class Peaks:
    """The datasheet figures a result is divided by; None where the catalog has none."""

    gpu_id: str | None
    mem_bw_gbs: float | None
    tflops: dict[str, float]  # dtype -> dense matrix peak
    notes: dict[str, str]  # dtype -> how the peak was taken

    @classmethod
    def of(cls, gpu: Gpu | None) -> Peaks:
        if gpu is None:
            return cls(None, None, {}, {})
        fp8, fp8_note = gpu.peak_tflops("fp8")
        tflops = {"bf16": gpu.fp16_tflops, "fp16": gpu.fp16_tflops, "tf32": gpu.fp16_tflops / 2}
        notes = {"tf32": "TF32 peak taken as half the 16-bit matrix rate (the catalog's figure)"}
        if gpu.fp8_tflops:
            tflops["fp8"] = fp8
        elif fp8_note:
            notes["fp8"] = fp8_note
        notes["fp32"] = "the catalog lists no FP32 (non-tensor) peak: absolute numbers only"
        return cls(gpu.id, gpu.mem_bw_gbs, tflops, notes)


@dataclass
class Device:
    """Where workloads run: torch, the device string, the machine and its peaks."""

    torch: Any
    name: str  # "cuda" or "cpu"
    machine: MachineDescription
    peaks: Peaks

    @property
    def is_gpu(self) -> bool:
        return self.name != "cpu"

    @property
    def is_rocm(self) -> bool:
        return self.machine.accelerator == "rocm"

    def synchronize(self) -> None:
        if self.is_gpu:
            self.torch.cuda.synchronize()

    def empty_cache(self) -> None:
        if self.is_gpu:
            self.torch.cuda.empty_cache()

    def is_oom(self, exc: BaseException) -> bool:
        """Out of memory, on the device or on the host."""
        oom = getattr(self.torch, "OutOfMemoryError", None) or getattr(
            self.torch.cuda, "OutOfMemoryError", None
        )
        if oom is not None and isinstance(exc, oom):
            return True
        text = str(exc).lower()
        return isinstance(exc, MemoryError | RuntimeError) and (
            "out of memory" in text or "can't allocate memory" in text
        )


def open_device(torch: Any, *, cpu: bool = False) -> Device:
    """The first GPU torch sees (CUDA or ROCm), else the CPU."""
    machine = describe_machine(torch)
    if cpu or not torch.cuda.is_available():
        if machine.accelerator != "cpu":
            machine = describe_machine(None)
            machine = MachineDescription.from_dict(
                {**machine.to_dict(), "torch": torch.__version__}
            )
        return Device(torch, "cpu", machine, Peaks.of(None))
    return Device(torch, "cuda", machine, Peaks.of(catalog_gpu(machine)))


def telemetry(device: Device) -> tuple[dict[str, float], str]:
    """Clocks (MHz), power (W) and temperature (C) of GPU 0 where NVML or amdsmi is installed.

    Returns the readings and a note (empty when read); never fails the run.
    """
    if not device.is_gpu:
        return {}, "no GPU: clocks, power and temperature not read"
    if device.is_rocm:
        return _amdsmi()
    return _nvml()


def _nvml() -> tuple[dict[str, float], str]:
    try:
        pynvml: Any = importlib.import_module("pynvml")
    except ImportError:
        return (
            {},
            "NVML (pip install nvidia-ml-py) not installed: clocks, power, temperature skipped",
        )
    readings: dict[str, float] = {}
    try:
        pynvml.nvmlInit()
        try:
            handle = pynvml.nvmlDeviceGetHandleByIndex(0)
            readings["sm_clock_mhz"] = float(
                pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM)
            )
            readings["power_w"] = pynvml.nvmlDeviceGetPowerUsage(handle) / 1000.0
            readings["temperature_c"] = float(
                pynvml.nvmlDeviceGetTemperature(handle, pynvml.NVML_TEMPERATURE_GPU)
            )
        finally:
            with contextlib.suppress(Exception):
                pynvml.nvmlShutdown()
    except Exception as exc:  # a driver without NVML, a permission: a note, not a failure
        return readings, f"NVML could not be read ({exc})"
    return readings, ""


def _amdsmi() -> tuple[dict[str, float], str]:
    try:
        amdsmi: Any = importlib.import_module("amdsmi")
    except ImportError:
        return (
            {},
            "amdsmi (ROCm's Python package) not installed: clocks, power, temperature skipped",
        )
    readings: dict[str, float] = {}
    try:
        amdsmi.amdsmi_init()
        try:
            handle = amdsmi.amdsmi_get_processor_handles()[0]
            power = amdsmi.amdsmi_get_power_info(handle)
            watts = power.get("current_socket_power") or power.get("average_socket_power")
            if isinstance(watts, int | float):
                readings["power_w"] = float(watts)
            temp = amdsmi.amdsmi_get_temp_metric(
                handle,
                amdsmi.AmdSmiTemperatureType.HOTSPOT,
                amdsmi.AmdSmiTemperatureMetric.CURRENT,
            )
            readings["temperature_c"] = float(temp)
        finally:
            with contextlib.suppress(Exception):
                amdsmi.amdsmi_shut_down()
    except Exception as exc:  # an old amdsmi, no permission: a note, not a failure
        return readings, f"amdsmi could not be read ({exc})"
    return readings, ""
