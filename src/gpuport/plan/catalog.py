"""The GPU catalog (kb/gpus.toml) as typed records, name look-up, and measured rates.

A catalog entry describes one device as software sees it: an MI250X package is two GCDs
that ROCm and PyTorch list as two GPUs of 64 GB each, so the loader splits it in two and
the planner counts devices.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Mapping
from dataclasses import dataclass
from difflib import get_close_matches
from functools import cache
from pathlib import Path
from typing import Any

from gpuport.kb.loader import Entry, KbError, keyed, load_toml, table_entry
from gpuport.plan.errors import PlanInputError, read_input
from gpuport.plan.precision import ComputeKind

GIB = 1024**3
VENDORS = ("nvidia", "amd")
SEGMENTS = ("datacenter", "workstation", "consumer")
INTERCONNECTS = ("nvswitch", "xgmi-mesh", "xgmi-gcd", "pcie")
FIGURE_GROUPS = ("memory", "bandwidth", "compute", "power", "interconnect")
STATUSES = ("seen", "vendor", "derived")
# GPUs one server holds: 8 for HGX/DGX and Instinct OAM boards (MI250X: 4 packages =
# 8 GCDs); 8 for PCIe workstation and server chassis too.
GPUS_PER_NODE = 8


@dataclass(frozen=True, slots=True)
class Interconnect:
    """How the ranks of a tensor-parallel group talk to each other."""

    kind: str
    link_gbs: float  # per direction; see gpus.toml for what a "link" is per kind
    links: int = 0
    pair_gbs: float = 0.0

    def bandwidth_gbs(self, tp: int) -> float:
        """Peak bandwidth per direction one rank of a TP group of ``tp`` can use."""
        if self.kind == "xgmi-mesh":
            # A fully connected mesh: each rank reaches its tp-1 peers over their own links.
            return self.link_gbs * min(tp - 1, self.links)
        if self.kind == "xgmi-gcd":
            # MI250X: the package's two GCDs share a quad link; a wider ring crosses
            # packages over single links, and the slowest hop sets a ring's pace.
            return self.pair_gbs if tp == 2 else self.link_gbs
        return self.link_gbs

    @property
    def label(self) -> str:
        return {
            "nvswitch": "NVLink/NVSwitch",
            "xgmi-mesh": "Infinity Fabric mesh",
            "xgmi-gcd": "Infinity Fabric (GCD links)",
            "pcie": "PCIe",
        }[self.kind]


@dataclass(frozen=True, slots=True)
class Gpu:
    """One device: figures per device (an MI250X GCD, not the package)."""

    id: str
    aliases: tuple[str, ...]
    name: str
    short: str
    vendor: str
    segment: str  # datacenter / workstation / consumer
    architecture: str
    arch_id: str
    memory_gib: float
    usable_gib: float
    mem_bw_gbs: float
    fp16_tflops: float
    fp8_tflops: float | None
    int8_tops: float | None
    tdp_w: float
    interconnect: Interconnect
    devices_per_package: int
    compute_efficiency: float | None  # measured share of peak, where a vendor published it
    sources: Mapping[str, str]  # figure group -> URL
    status: Mapping[str, str]  # figure group -> seen / vendor / derived
    seen_in: str
    checked: datetime.date

    @property
    def memory_bytes(self) -> float:
        return self.usable_gib * GIB

    @property
    def device_word(self) -> str:
        return "GCD" if self.devices_per_package > 1 else "GPU"

    def peak_tflops(self, kind: ComputeKind) -> tuple[float, str]:
        """The dense peak for ``kind`` and a note when the GPU lacks that unit."""
        if kind == "fp8":
            if self.fp8_tflops:
                return self.fp8_tflops, ""
            return self.fp16_tflops, "no FP8 matrix units: FP8 weights computed at the 16-bit rate"
        if kind == "int8":
            if self.int8_tops:
                return self.int8_tops, ""
            return self.fp16_tflops, "no INT8 matrix rate listed: computed at the 16-bit rate"
        if kind == "fp32":
            return self.fp16_tflops / 2, "FP32 weights: assumed half the 16-bit matrix rate"
        return self.fp16_tflops, ""


GPUS_TOML = "gpus.toml"


def _gpu_from_entry(entry: Entry, gpu_id: str, sources: Mapping[str, str]) -> Gpu:
    per = entry.integer("devices_per_package", 1)
    memory = entry.number("memory_gib")
    usable = entry.number("usable_gib", memory)

    def share(value: float | None) -> float | None:
        return value / per if value is not None else None

    def cited(group: str, key: str) -> str:
        if key not in sources:
            raise KbError(f"{entry.where}: the {group} source {key!r} is not in [sources]")
        return sources[key]

    statuses = entry.text_table("status")
    for group, status in statuses.items():
        if status not in STATUSES:
            raise KbError(f"{entry.where}: status of {group} {status!r} is not one of {STATUSES}")
    return Gpu(
        id=gpu_id,
        aliases=entry.texts("aliases"),
        name=entry.text("name"),
        short=entry.text("short"),
        vendor=entry.choice("vendor", VENDORS),
        segment=entry.choice("segment", SEGMENTS),
        architecture=entry.text("architecture"),
        arch_id=entry.text("arch_id"),
        memory_gib=memory / per,
        usable_gib=usable / per,
        mem_bw_gbs=entry.number("mem_bw_gbs") / per,
        fp16_tflops=entry.number("fp16_tflops") / per,
        fp8_tflops=share(entry.optional_number("fp8_tflops")),
        int8_tops=share(entry.optional_number("int8_tops")),
        tdp_w=entry.number("tdp_w") / per,
        interconnect=Interconnect(
            kind=entry.choice("interconnect", INTERCONNECTS),
            link_gbs=entry.number("link_gbs"),
            links=entry.integer("links", 0),
            pair_gbs=entry.number("pair_gbs", 0.0),
        ),
        devices_per_package=per,
        compute_efficiency=entry.optional_number("compute_efficiency"),
        sources={group: cited(group, key) for group, key in entry.text_table("sources").items()},
        status=statuses,
        seen_in=entry.text("seen_in", ""),
        checked=entry.date(),
    )


def catalog_document() -> dict[str, Any]:
    """kb/gpus.toml as parsed TOML (for the schema test and the loader)."""
    return load_toml(GPUS_TOML)


@cache
def catalog() -> dict[str, Gpu]:
    """Every GPU of the catalog by id, in catalog order."""
    document = catalog_document()
    sources = table_entry(document, "sources", GPUS_TOML).raw
    for key, url in sources.items():
        if not isinstance(url, str):
            raise KbError(f"kb/{GPUS_TOML} [sources]: {key!r} must be a URL")
    return dict(
        keyed(
            document,
            "gpu",
            GPUS_TOML,
            "id",
            "duplicate GPU id",
            lambda entry, gpu_id: _gpu_from_entry(entry, gpu_id, sources),
        )
    )


def _key(text: str) -> str:
    return text.strip().lower().replace("_", "-").replace(" ", "-")


def find_gpu(name: str) -> Gpu | None:
    wanted = _key(name)
    for gpu in catalog().values():
        if wanted == gpu.id or wanted in (_key(a) for a in gpu.aliases):
            return gpu
    return None


def resolve_gpus(names: str | None) -> list[Gpu]:
    """``h100,mi300x`` -> catalog entries; None or "" or "all" -> the whole catalog."""
    if names is None or not names.strip() or names.strip().lower() == "all":
        return list(catalog().values())
    found: list[Gpu] = []
    for part in names.split(","):
        if not part.strip():
            continue
        gpu = find_gpu(part)
        if gpu is None:
            every = [g.id for g in catalog().values()] + [
                a for g in catalog().values() for a in g.aliases
            ]
            close = get_close_matches(_key(part), every, n=1, cutoff=0.4)
            hint = f"; did you mean {close[0]}?" if close else ""
            raise PlanInputError(
                f"unknown GPU {part.strip()!r}{hint} (known: "
                f"{', '.join(g.id for g in catalog().values())})"
            )
        if gpu not in found:
            found.append(gpu)
    if not found:
        raise PlanInputError("--gpus names no GPU")
    return found


# --- measured rates ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MeasuredRates:
    """Rates measured on a real device (a future `gpuport bench` store, or --measured)."""

    mem_bw_gbs: float
    tflops_bf16: float
    source: str


def load_measured(path: Path) -> dict[str, MeasuredRates]:
    """``{gpu: {"mem_bw_gbs": ..., "tflops_bf16": ...}}`` JSON, GPU names as in --gpus."""
    try:
        text = read_input(path, "measured rates").decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PlanInputError(f"{path}: cannot read measured rates ({exc})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PlanInputError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise PlanInputError(f"{path}: expected an object of GPU name -> measured rates")
    rates: dict[str, MeasuredRates] = {}
    for name, entry in data.items():
        gpu = find_gpu(str(name))
        if gpu is None:
            raise PlanInputError(f"{path}: unknown GPU {name!r} in measured rates")
        if not isinstance(entry, dict):
            raise PlanInputError(f"{path}: {name}: expected {{mem_bw_gbs, tflops_bf16}}")
        values: dict[str, float] = {}
        for key in ("mem_bw_gbs", "tflops_bf16"):
            value = entry.get(key)
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise PlanInputError(
                    f"{path}: {name}.{key} must be a positive number, not {value!r}"
                )
            values[key] = float(value)
        rates[gpu.id] = MeasuredRates(values["mem_bw_gbs"], values["tflops_bf16"], str(path))
    return rates
