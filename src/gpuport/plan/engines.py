"""The serving engines `plan` models, which one it assumes per GPU, and their fitted efficiencies.

The efficiencies (kb/plan_efficiency.toml) are written by ``benchmarks/plan_accuracy.py
--write`` from published measurements: a per-step overhead and achieved shares of memory
bandwidth and matrix peak per engine, vendor, GPU segment and architecture family (the most
specific group the data covers, falling back to the wider ones), a factor per weight format,
and the spread of measured/estimated rates seen leaving one GPU out of the fit.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from gpuport.kb.loader import Entry, KbError, entries, load_toml, table_entry
from gpuport.plan.catalog import Gpu
from gpuport.plan.precision import Precision

# Engine ids as `--engine` takes them. Each behaves differently at the same batch: per-token
# host overhead, kernels reaching different shares of bandwidth and matrix peak.
ENGINES = ("vllm", "sglang", "tensorrt-llm", "llama.cpp", "transformers")

# Engines alike enough that one stands in for another where the data lacks it: the
# serving engines (continuous batching, CUDA/HIP graphs, fused kernels), llama.cpp's GGUF
# kernels, and eager PyTorch (transformers' generate, no graphs).
ENGINE_CLASSES = {
    "vllm": "serving",
    "sglang": "serving",
    "tensorrt-llm": "serving",
    "llama.cpp": "gguf",
    "transformers": "eager",
}

# Datacenter GPUs serve through vLLM on both vendors (the engine both ship a build of);
# consumer and workstation cards mostly run llama.cpp (and Ollama, built on it).
DATACENTER_ENGINE = "vllm"
DESKTOP_ENGINE = "llama.cpp"

# Tokens one prefill step processes: llama.cpp's default physical batch (-ub 512,
# https://github.com/ggml-org/llama.cpp/blob/master/tools/llama-bench/README.md); vLLM's
# chunked prefill budget and the like elsewhere (memory.PREFILL_CHUNK_TOKENS).
PREFILL_CHUNKS = {"llama.cpp": 512}

# Engines that spread a model over several GPUs by layers, one GPU working at a time
# (llama.cpp's default --split-mode layer), not by tensor parallelism: a token (and a
# prompt chunk) passes every GPU in turn, so more GPUs add memory, not speed.
# https://github.com/ggml-org/llama.cpp/blob/master/tools/main/README.md (--split-mode)
LAYER_SPLIT_ENGINES = ("llama.cpp",)

# The per-step overhead is stated for a model of this many layers and scales with the
# layer count: an engine launches a fixed set of kernels per layer (a 126-layer 405B model
# pays about four times the host and launch cost of a 32-layer 8B one per token).
OVERHEAD_REFERENCE_LAYERS = 32

EFFICIENCY_TOML = "plan_efficiency.toml"
ANY = "*"
PHASES = ("decode", "prefill")
# The GPU classes the fit and the ranges are grouped by: a workstation card is a consumer
# die with more memory, so both count as "desktop".
SEGMENT_CLASSES = ("datacenter", "desktop")
VENDORS = ("nvidia", "amd")
# Weight formats grouped by the kernels that read them.
QUANT_KINDS = ("16bit", "fp8", "int8", "int4", "mxfp4", "gguf-legacy", "gguf-k", "gguf-iq")


def default_engine(gpu: Gpu) -> str:
    """The engine `plan` assumes for ``gpu`` when the user names none."""
    return DATACENTER_ENGINE if gpu.segment == "datacenter" else DESKTOP_ENGINE


def prefill_chunk(engine: str, default: int) -> int:
    return PREFILL_CHUNKS.get(engine, default)


def speed_layout(engine: str, tp: int, pp: int) -> tuple[int, int]:
    """The (tp, pp) that sets ``engine``'s speed on a ``tp`` x ``pp`` layout: a layer-split
    engine runs the devices one after another, as pipeline stages without overlap."""
    return (1, tp * pp) if engine in LAYER_SPLIT_ENGINES else (tp, pp)


def segment_class(gpu: Gpu) -> str:
    return "datacenter" if gpu.segment == "datacenter" else "desktop"


def arch_family(gpu: Gpu) -> str:
    """``Ada Lovelace (AD102)`` -> ``ada``, ``CDNA3`` -> ``cdna3``, ``Blackwell Ultra`` ->
    ``blackwell``: the architecture's first word, which names its generation."""
    return gpu.architecture.split()[0].lower() if gpu.architecture.strip() else ANY


def quant_kind(precision: Precision) -> str:
    """Which kernel family reads ``precision``'s weights (each dequantizes differently)."""
    name = precision.name
    if name in ("bf16", "fp16", "fp32", "F16"):
        return "16bit"
    if name in ("fp8", "int8", "mxfp4"):
        return name
    if name.startswith("int4"):
        return "int4"
    if name.startswith("IQ"):
        return "gguf-iq"
    if "_K" in name:
        return "gguf-k"
    return "gguf-legacy"


def profile_keys(engine: str, gpu: Gpu) -> Iterator[tuple[str, str, str, str]]:
    """(engine, vendor, segment class, family) from the most specific group to the global
    one, through the engine's class: the order in which fitted profiles are looked up.

    The segment class comes before the vendor: a desktop card of either vendor runs an
    engine more like another desktop card than like its vendor's datacenter parts (under
    leave-one-GPU-out, the R9700 predicted from MI300X and MI50 rows came out 4-6x slow;
    from the GeForce rows, within 10-40%), and there is no vendor-wide group: pulled towards
    the MI300X's and MI50's values, the R9700 came out 4.5-5.8x slow again."""
    vendor, segment, family = gpu.vendor, segment_class(gpu), arch_family(gpu)
    yield engine, vendor, segment, family
    yield engine, vendor, segment, ANY
    yield engine, ANY, segment, ANY
    yield engine, ANY, ANY, ANY
    yield ENGINE_CLASSES[engine], ANY, ANY, ANY
    yield ANY, ANY, ANY, ANY


def uncertainty_keys(engine: str, gpu: Gpu) -> Iterator[tuple[str, str, str]]:
    """(engine, segment class, vendor) from the most specific to the global range: an
    engine's range on one vendor's cards where the validation has enough of them, else on
    the class, the engine, everything."""
    segment = segment_class(gpu)
    yield engine, segment, gpu.vendor
    yield engine, segment, ANY
    yield engine, ANY, ANY
    yield ANY, ANY, ANY


@dataclass(frozen=True, slots=True)
class Profile:
    """Fitted efficiencies of one (engine, vendor, segment class, family) group."""

    key: tuple[str, str, str, str]
    token_overhead_s: float  # fixed cost of one step of a 32-layer model: launches, host work
    sequence_overhead_s: float  # and per running sequence (scheduling, sampling, detokenizing)
    bandwidth: float  # achieved share of peak memory bandwidth
    matrix: float  # achieved share of the dense matrix peak
    rows: int  # measurements the group was fitted from
    gpus: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class QuantFactor:
    """How much one engine's kernels for a weight format gain or lose against its profile."""

    engine: str
    kind: str
    bandwidth: float
    matrix: float
    rows: int


@dataclass(frozen=True, slots=True)
class Spread:
    """Measured/estimated rates under leave-one-GPU-out, for one engine, class and phase."""

    engine: str
    segment: str
    vendor: str
    phase: str
    low_factor: float  # 10th percentile of measured / estimated
    high_factor: float  # 90th percentile
    typical_error: float  # median |estimated / measured - 1|
    rows: int
    gpus: int


@dataclass(frozen=True, slots=True)
class EfficiencyTables:
    profiles: Mapping[tuple[str, str, str, str], Profile]
    quant: Mapping[tuple[str, str], QuantFactor]
    spreads: Mapping[tuple[str, str, str, str], Spread]  # engine, segment, vendor, phase
    measurements: int
    fitted: datetime.date
    source: str


def _choice_or_any(entry: Entry, key: str, choices: tuple[str, ...]) -> str:
    return entry.choice(key, (*choices, ANY))


def _share(entry: Entry, key: str) -> float:
    value = entry.number(key)
    if not 0 < value <= 1.5:
        raise KbError(f"{entry.where}: {key} {value} is not a share of the peak")
    return value


def _sourced(entry: Entry) -> None:
    """Every fitted entry says what it was fitted from and when."""
    entry.text("source")
    entry.date()


def tables_from_document(document: Mapping[str, Any]) -> EfficiencyTables:
    """Typed tables from parsed kb/plan_efficiency.toml (errors name the entry)."""
    data = dict(document)
    fit = table_entry(data, "fit", EFFICIENCY_TOML)
    profiles: dict[tuple[str, str, str, str], Profile] = {}
    for entry in entries(data, "profile", EFFICIENCY_TOML, "engine"):
        key = (
            _choice_or_any(entry, "engine", (*ENGINES, *sorted(set(ENGINE_CLASSES.values())))),
            _choice_or_any(entry, "vendor", VENDORS),
            _choice_or_any(entry, "segment", SEGMENT_CLASSES),
            entry.text("family"),
        )
        if key in profiles:
            raise KbError(f"{entry.where}: duplicate profile {key}")
        _sourced(entry)
        overhead = entry.number("token_overhead_ms")
        if not 0 <= overhead < 1000:
            raise KbError(f"{entry.where}: token_overhead_ms {overhead} is out of range")
        per_sequence = entry.number("sequence_overhead_us")
        if not 0 <= per_sequence < 10_000:
            raise KbError(f"{entry.where}: sequence_overhead_us {per_sequence} is out of range")
        profiles[key] = Profile(
            key,
            overhead / 1e3,
            per_sequence / 1e6,
            _share(entry, "bandwidth"),
            _share(entry, "matrix"),
            entry.integer("rows"),
            entry.texts("gpus"),
        )
    if (ANY, ANY, ANY, ANY) not in profiles:
        raise KbError(f"kb/{EFFICIENCY_TOML}: no global profile (every key '*')")
    quant: dict[tuple[str, str], QuantFactor] = {}
    for entry in entries(data, "quant", EFFICIENCY_TOML, "kind"):
        _sourced(entry)
        factor = QuantFactor(
            _choice_or_any(entry, "engine", ENGINES),
            entry.choice("kind", QUANT_KINDS),
            _share(entry, "bandwidth"),
            _share(entry, "matrix"),
            entry.integer("rows"),
        )
        quant[(factor.engine, factor.kind)] = factor
    spreads: dict[tuple[str, str, str, str], Spread] = {}
    for entry in entries(data, "uncertainty", EFFICIENCY_TOML, "engine"):
        _sourced(entry)
        spread = Spread(
            _choice_or_any(entry, "engine", ENGINES),
            _choice_or_any(entry, "segment", SEGMENT_CLASSES),
            # a range over both vendors may leave the key out
            entry.choice("vendor", (*VENDORS, ANY)) if "vendor" in entry.raw else ANY,
            entry.choice("phase", PHASES),
            entry.number("low_factor"),
            entry.number("high_factor"),
            entry.number("typical_error"),
            entry.integer("rows"),
            entry.integer("gpus"),
        )
        if not 0 < spread.low_factor <= spread.high_factor:
            raise KbError(f"{entry.where}: low_factor must be positive and <= high_factor")
        spreads[(spread.engine, spread.segment, spread.vendor, spread.phase)] = spread
    return EfficiencyTables(
        profiles,
        quant,
        spreads,
        fit.integer("measurements"),
        fit.date(),
        fit.text("source"),
    )


@cache
def efficiency_tables() -> EfficiencyTables:
    """kb/plan_efficiency.toml, loaded once."""
    return tables_from_document(load_toml(EFFICIENCY_TOML))


def find_profile(tables: EfficiencyTables, engine: str, gpu: Gpu) -> Profile:
    for key in profile_keys(engine, gpu):
        found = tables.profiles.get(key)
        if found is not None:
            return found
    raise KbError(f"kb/{EFFICIENCY_TOML}: no global profile")  # checked when loading


def find_quant(tables: EfficiencyTables, engine: str, precision: Precision) -> QuantFactor | None:
    kind = quant_kind(precision)
    return tables.quant.get((engine, kind)) or tables.quant.get((ANY, kind))


def find_spread(tables: EfficiencyTables, engine: str, gpu: Gpu, phase: str) -> Spread | None:
    for engine_key, segment, vendor in uncertainty_keys(engine, gpu):
        found = tables.spreads.get((engine_key, segment, vendor, phase))
        if found is not None:
            return found
    return None
