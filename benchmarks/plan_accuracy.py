"""Fits `gpuport plan`'s efficiency tables to published measurements and validates them leaving one GPU out.

Reads benchmarks/plan_data/measurements.csv (schema in its README). For every GPU in it, the
model is fitted on the other GPUs' rows and predicts that GPU's rows; the medians of
|estimated / measured - 1| over those predictions are the errors this script reports, next
to the previous model's ("before": 80% of bandwidth, 70% of the matrix peak, no per-step
overhead, KV read at the full context). ``--write`` refits on every row and writes
src/gpuport/kb/plan_efficiency.toml and benchmarks/plan_accuracy.md; ``--check`` exits 1
when the decode median is above 20% or the prefill median above 35%.

    .venv/bin/python benchmarks/plan_accuracy.py [--data CSV] [--write] [--check]

The fit: a decode or prefill step takes ``overhead + max(bytes / (peak_bw x bandwidth),
flops / (peak x matrix)) + all-reduce time`` (plan/speed.py computes the parts); the three
parameters are fitted per (engine, vendor, GPU class, architecture family) group by
minimizing squared log ratios of estimated to measured rates, each group pulled towards its
wider parent group (engine + vendor + class, engine + vendor, engine, everything) so that
thin groups stay close to what the wider data says. A factor per engine and weight format
(dequantization) is fitted on top. Pure Python: no numpy or scipy.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import math
import platform
import statistics
import sys
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from gpuport.plan.catalog import Gpu, find_gpu
from gpuport.plan.engines import (
    ANY,
    ENGINES,
    EfficiencyTables,
    Profile,
    QuantFactor,
    Spread,
    profile_keys,
    quant_kind,
    segment_class,
    uncertainty_keys,
)
from gpuport.plan.memory import breakdown, max_sequences
from gpuport.plan.model_spec import ModelSpec, load_model
from gpuport.plan.precision import Precision, parse_kv_dtype, parse_precision
from gpuport.plan.speed import (
    ALLREDUCE_LATENCY_US,
    INTERCONNECT_EFFICIENCY,
    DecodeCase,
    Rates,
    StepTime,
    decode_step,
    prefill_step,
    step_overhead,
)

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "plan_data" / "measurements.csv"
TABLES = ROOT / "src" / "gpuport" / "kb" / "plan_efficiency.toml"
REPORT = ROOT / "benchmarks" / "plan_accuracy.md"
DECODE_LIMIT = 0.20
PREFILL_LIMIT = 0.35
# The builds `plan` models. llama.cpp's Vulkan backend runs other kernels on the same card
# (the R9700 rows: prompt processing at half the ROCm build's rate), so a fit that mixed them
# would widen every AMD range; they stay in the data, skipped here with the reason.
MODELLED_BACKENDS = ("cuda", "rocm")
OFFLINE_MAX_BATCH = 1024  # when a serving row gives no batch: the widest that fits, capped
Params = tuple[float, float, float, float]  # s per step, s per sequence, bandwidth, matrix
# Before the fit: the previous model's efficiencies.
BEFORE: Params = (0.0, 0.0, 0.80, 0.70)
# Starting point and the weak pull of the global group: 1 ms per step, 20 us per sequence,
# 70% of bandwidth, 50% of the matrix peak.
PRIOR: Params = (1e-3, 2e-5, 0.70, 0.50)
PRIOR_WEIGHT = 0.05
PARENT_WEIGHT = 0.5  # the pull of a group towards its parent, per parameter (log scale)
QUANT_WEIGHT = 1.0  # the pull of a weight-format factor towards 1
MIN_GROUP_ROWS = 2
MIN_SPREAD_ROWS = 5
MIN_SPREAD_GPUS = 2  # for a vendor's own range
# Rates whose only non-zero figure is 1 s of overhead per step, to read the layer scale.
UNIT_OVERHEAD = Rates(1.0, 1.0, 1.0, 0.0, False, "", "vllm", token_overhead_s=1.0)
BOUNDS = ((1e-5, 0.05), (1e-7, 1e-3), (0.05, 0.95), (0.01, 1.0))


@dataclass(frozen=True)
class Parts:
    """One step at 100% of every peak and no overhead (seconds), from plan/speed.py."""

    memory_s: float
    compute_s: float
    communication_s: float
    stages: int
    tokens: float  # tokens the step produces (decode: the batch; prefill: the chunk)
    sequences: int  # sequences that pay the per-sequence overhead (decode: the batch)
    layers: float  # the step overhead's multiple: layers / OVERHEAD_REFERENCE_LAYERS

    @staticmethod
    def of(step: StepTime, tokens: float, sequences: int, spec: ModelSpec) -> Parts:
        # plan/speed.py's step_overhead with 1 s per step and 0 per sequence: the layer scale.
        layers = step_overhead(spec, UNIT_OVERHEAD, 0)
        return Parts(
            step.memory_s,
            step.compute_s,
            step.communication_s,
            step.stages,
            tokens,
            sequences,
            layers,
        )

    def seconds(self, params: Params) -> float:
        overhead, per_sequence, bandwidth, matrix = params
        busy = max(self.memory_s / bandwidth, self.compute_s / matrix) + self.communication_s
        return busy * self.stages + overhead * self.layers + per_sequence * self.sequences


@dataclass(frozen=True)
class Row:
    id: str
    gpu: Gpu
    engine: str
    model: str
    weights: str
    phase: str  # decode / prefill / offline
    batch: int
    measured: float  # tokens/s of the whole system
    source: str
    kind: str  # quant_kind of the weights
    keys: tuple[tuple[str, str, str, str], ...]  # profile keys, most specific first
    replicas: int
    decode: Parts | None
    prefill: Parts | None
    prefill_share: float  # offline: prompt tokens prefilled per output token
    before_decode: Parts | None
    before_prefill: Parts | None

    @property
    def report_phase(self) -> str:
        """Offline serving rates are output tokens/s: they count as decode."""
        return "prefill" if self.phase == "prefill" else "decode"


def _unit_rates(gpu: Gpu, precision: Precision, tp: int, engine: str) -> Rates:
    peak, _ = gpu.peak_tflops(precision.compute)
    link = gpu.interconnect.bandwidth_gbs(tp) * INTERCONNECT_EFFICIENCY
    latency = ALLREDUCE_LATENCY_US[gpu.interconnect.kind]
    return Rates(gpu.mem_bw_gbs, peak, link, latency, False, "", engine)


def _parts(
    spec: ModelSpec, gpu: Gpu, cells: dict[str, str], engine: str, full_context_kv: bool
) -> tuple[Parts | None, Parts | None, float, int]:
    precision = parse_precision(cells["weights"])
    kv = parse_kv_dtype(cells["kv_dtype"] or "fp16")
    tp = int(cells["tp"] or 1)
    batch = int(cells["batch"] or 0)
    prompt = int(cells["prompt_tokens"] or 0)
    output = int(cells["output_tokens"] or 0)
    phase = cells["phase"]
    rates = _unit_rates(gpu, precision, tp, engine)
    context = max(1, prompt + output)
    if phase == "offline" and batch < 1:
        memory = breakdown(
            spec, gpu, precision, kv, context=context, batch=1, tp=tp, pp=1, utilization=0.9
        )
        batch = max(1, min(max_sequences(spec, kv, memory, context, tp, 1), OFFLINE_MAX_BATCH))
    batch = max(batch, 1)
    decode = prefill = None
    share = 0.0
    if phase in ("decode", "offline"):
        start = context if full_context_kv else prompt
        case = DecodeCase(spec, precision, kv, rates, batch, context, tp, 1, prompt=start)
        decode = Parts.of(decode_step(case), batch, batch, spec)
    if phase in ("prefill", "offline") and prompt > 0:
        step, chunk = prefill_step(
            spec, precision, rates, context=prompt, tp=tp, pp=1, prompts=batch
        )
        prefill = Parts.of(step, chunk, 0, spec)
        share = prompt / max(output, 1) if phase == "offline" else 0.0
    return decode, prefill, share, batch


def load_rows(path: Path) -> tuple[list[Row], list[str]]:
    """The measurements this checkout can model, and why the others were skipped."""
    rows: list[Row] = []
    skipped: list[str] = []
    models: dict[str, ModelSpec] = {}
    with path.open(newline="", encoding="utf-8") as handle:
        for line, cells in enumerate(csv.DictReader(handle), start=2):
            where = f"{path.name}:{line} {cells.get('id', '')}"
            gpu = find_gpu(cells["gpu"])
            if gpu is None:
                skipped.append(f"{where}: GPU {cells['gpu']!r} is not in this catalog")
                continue
            engine = cells["engine"]
            backend = cells.get("backend") or ""  # a file without the column: all modelled
            if backend and backend not in MODELLED_BACKENDS:
                skipped.append(f"{where}: {backend} backend (plan models CUDA and ROCm builds)")
                continue
            if engine not in ENGINES:
                skipped.append(f"{where}: engine {engine!r} is not modelled")
                continue
            if cells["model"] not in models:
                try:
                    models[cells["model"]] = load_model(cells["model"])
                except Exception as exc:  # an unknown preset: report and go on
                    skipped.append(f"{where}: model {cells['model']!r}: {exc}")
                    continue
            spec = models[cells["model"]]
            decode, prefill, share, batch = _parts(spec, gpu, cells, engine, False)
            before_decode, before_prefill, _, _ = _parts(spec, gpu, cells, "vllm", True)
            if decode is None and prefill is None:
                skipped.append(f"{where}: phase {cells['phase']!r} with no tokens to model")
                continue
            gpus, tp = int(cells["gpus"] or 1), int(cells["tp"] or 1)
            rows.append(
                Row(
                    id=cells["id"],
                    gpu=gpu,
                    engine=engine,
                    model=cells["model"],
                    weights=cells["weights"],
                    phase=cells["phase"],
                    batch=batch,
                    measured=float(cells["measured_tokens_per_s"]),
                    source=cells["source"],
                    kind=quant_kind(parse_precision(cells["weights"])),
                    keys=tuple(profile_keys(engine, gpu)),
                    replicas=max(1, gpus // max(tp, 1)),
                    decode=decode,
                    prefill=prefill,
                    prefill_share=share,
                    before_decode=before_decode,
                    before_prefill=before_prefill,
                )
            )
    return rows, skipped


def predict(row: Row, params: Params, quant: tuple[float, float] = (1.0, 1.0)) -> float:
    overhead, per_sequence, bandwidth, matrix = params
    scaled = (overhead, per_sequence, bandwidth * quant[0], matrix * quant[1])
    return _rate(row, row.decode, row.prefill, scaled)


def predict_before(row: Row) -> float:
    overhead, per_sequence, bandwidth, matrix = BEFORE
    matrix = row.gpu.compute_efficiency or matrix
    return _rate(
        row, row.before_decode, row.before_prefill, (overhead, per_sequence, bandwidth, matrix)
    )


def _rate(row: Row, decode: Parts | None, prefill: Parts | None, params: Params) -> float:
    if row.phase == "prefill":
        assert prefill is not None
        return row.replicas * prefill.tokens / prefill.seconds(params)
    assert decode is not None
    seconds = decode.seconds(params)
    if row.phase == "offline" and prefill is not None:
        # Per decode step, batch/output sequences finish and as many prompts are prefilled.
        per_token = prefill.seconds(params) / prefill.tokens
        seconds += decode.tokens * row.prefill_share * per_token
    return row.replicas * decode.tokens / seconds


# --- fitting -------------------------------------------------------------------------------


def _search(loss: Callable[[float], float], start: float, low: float, high: float) -> float:
    """The minimum of a 1-D function of a log-scale value: a grid, then two finer grids."""
    best, width = start, max(high - low, 1e-9)
    for _ in range(3):
        lo, hi = max(low, best - width / 2), min(high, best + width / 2)
        grid = [lo + (hi - lo) * i / 16 for i in range(17)]
        best = min([best, *grid], key=loss)
        width /= 6
    return best


def _fit_group(
    rows: Sequence[Row],
    parent: Params,
    weight: float,
    quant: dict[tuple[str, str], tuple[float, float]],
) -> Params:
    logs = [math.log(p) for p in parent]
    centre = list(logs)
    bounds = [(math.log(lo), math.log(hi)) for lo, hi in BOUNDS]
    factors = [quant.get((r.engine, r.kind), (1.0, 1.0)) for r in rows]
    measured = [math.log(r.measured) for r in rows]

    def loss(values: list[float]) -> float:
        params = _params(values)
        total = sum(
            (math.log(predict(r, params, q)) - m) ** 2
            for r, q, m in zip(rows, factors, measured, strict=True)
        )
        return total + weight * sum((v - c) ** 2 for v, c in zip(values, centre, strict=True))

    for _ in range(3):
        for index in range(len(logs)):
            lo, hi = bounds[index]

            def along(value: float, index: int = index) -> float:
                trial = list(logs)
                trial[index] = value
                return loss(trial)

            logs[index] = _search(along, logs[index], lo, hi)
    return _params(logs)


def _params(logs: Sequence[float]) -> Params:
    return (math.exp(logs[0]), math.exp(logs[1]), math.exp(logs[2]), math.exp(logs[3]))


@dataclass
class Fit:
    profiles: dict[tuple[str, str, str, str], tuple[Params, list[Row]]] = field(
        default_factory=dict
    )
    quant: dict[tuple[str, str], tuple[float, float, int]] = field(default_factory=dict)

    def params_for(self, row: Row) -> Params:
        for key in row.keys:
            if key in self.profiles:
                return self.profiles[key][0]
        raise KeyError(row.keys[-1])

    def quant_for(self, row: Row) -> tuple[float, float]:
        found = self.quant.get((row.engine, row.kind))
        return (found[0], found[1]) if found else (1.0, 1.0)

    def predict(self, row: Row) -> float:
        return predict(row, self.params_for(row), self.quant_for(row))


def _fit_profiles(rows: Sequence[Row], fit: Fit) -> None:
    quant = {key: (qb, qm) for key, (qb, qm, _) in fit.quant.items()}
    fit.profiles = {}
    levels = len(rows[0].keys)
    for level in range(levels - 1, -1, -1):  # the global group first, the narrowest last
        groups: dict[tuple[str, str, str, str], list[Row]] = defaultdict(list)
        for row in rows:
            groups[row.keys[level]].append(row)
        for key, members in groups.items():
            if level == levels - 1:
                parent, weight = PRIOR, PRIOR_WEIGHT
            else:
                ancestors = members[0].keys[level + 1 :]
                parent_key = next(k for k in ancestors if k in fit.profiles)
                parent_params, parent_rows = fit.profiles[parent_key]
                if len(members) < MIN_GROUP_ROWS or len(members) == len(parent_rows):
                    continue  # too thin, or the very rows of its parent: the parent stands
                parent, weight = parent_params, PARENT_WEIGHT
            fit.profiles[key] = (_fit_group(members, parent, weight, quant), members)


def _fit_factor(members: Sequence[Row], params: Sequence[Params]) -> tuple[float, float]:
    """The bandwidth and matrix factors of one (engine, weight format) on fixed profiles."""
    measured = [math.log(r.measured) for r in members]
    logs = [0.0, 0.0]

    def loss(values: list[float]) -> float:
        q = (math.exp(values[0]), math.exp(values[1]))
        total = sum(
            (math.log(predict(r, p, q)) - m) ** 2
            for r, p, m in zip(members, params, measured, strict=True)
        )
        return total + QUANT_WEIGHT * (values[0] ** 2 + values[1] ** 2)

    for _ in range(2):
        for index in range(2):

            def along(value: float, index: int = index) -> float:
                trial = list(logs)
                trial[index] = value
                return loss(trial)

            logs[index] = _search(along, logs[index], math.log(0.3), math.log(1.5))
    return math.exp(logs[0]), math.exp(logs[1])


def _fit_quant(rows: Sequence[Row], fit: Fit) -> None:
    groups: dict[tuple[str, str], list[Row]] = defaultdict(list)
    for row in rows:
        groups[(row.engine, row.kind)].append(row)
    fit.quant = {}
    for key, members in groups.items():
        if len(members) < MIN_GROUP_ROWS or len({r.gpu.id for r in members}) < 2:
            continue
        bandwidth, matrix = _fit_factor(members, [fit.params_for(r) for r in members])
        fit.quant[key] = (bandwidth, matrix, len(members))


def fit_rows(rows: Sequence[Row]) -> Fit:
    """Profiles, then weight-format factors on top, then the profiles again with them."""
    fit = Fit()
    _fit_profiles(rows, fit)
    _fit_quant(rows, fit)
    _fit_profiles(rows, fit)
    return fit


# --- validation ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    row: Row
    estimate: float  # leave-one-GPU-out
    before: float

    @property
    def ratio(self) -> float:
        """measured / estimated"""
        return self.row.measured / self.estimate

    @property
    def error(self) -> float:
        return abs(self.estimate / self.row.measured - 1)

    @property
    def before_error(self) -> float:
        return abs(self.before / self.row.measured - 1)


def leave_one_gpu_out(rows: Sequence[Row]) -> list[Outcome]:
    outcomes: list[Outcome] = []
    for gpu in sorted({r.gpu.id for r in rows}):
        held = [r for r in rows if r.gpu.id == gpu]
        fit = fit_rows([r for r in rows if r.gpu.id != gpu])
        outcomes += [Outcome(r, fit.predict(r), predict_before(r)) for r in held]
    return outcomes


def percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    position = (len(ordered) - 1) * share
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def spreads(outcomes: Sequence[Outcome]) -> list[Spread]:
    """The ranges per (engine, class, vendor, phase) with enough rows, plus their fallbacks.

    A vendor's own range needs rows of at least two of its GPUs: one GPU's spread says how
    that card went, not how the next one will."""
    groups: dict[tuple[str, str, str, str], list[Outcome]] = defaultdict(list)
    for outcome in outcomes:
        row = outcome.row
        for engine, segment, vendor in uncertainty_keys(row.engine, row.gpu):
            groups[(engine, segment, vendor, row.report_phase)].append(outcome)
    result = []
    for (engine, segment, vendor, phase), members in sorted(groups.items()):
        gpus = len({o.row.gpu.id for o in members})
        if len(members) < MIN_SPREAD_ROWS or (vendor != ANY and gpus < MIN_SPREAD_GPUS):
            continue
        ratios = [o.ratio for o in members]
        result.append(
            Spread(
                engine,
                segment,
                vendor,
                phase,
                round(percentile(ratios, 0.1), 3),
                round(percentile(ratios, 0.9), 3),
                round(statistics.median(o.error for o in members), 3),
                len(members),
                gpus,
            )
        )
    return result


def tables_from_fit(fit: Fit, outcomes: Sequence[Outcome], rows: Sequence[Row]) -> EfficiencyTables:
    profiles = {}
    for key, (params, members) in fit.profiles.items():
        profiles[key] = Profile(
            key,
            params[0],
            params[1],
            params[2],
            params[3],
            len(members),
            tuple(sorted({r.gpu.id for r in members})),
        )
    quant = {
        key: QuantFactor(key[0], key[1], qb, qm, count)
        for key, (qb, qm, count) in fit.quant.items()
    }
    spread = {(s.engine, s.segment, s.vendor, s.phase): s for s in spreads(outcomes)}
    return EfficiencyTables(
        profiles, quant, spread, len(rows), datetime.date.today(), str(DATA.relative_to(ROOT))
    )


# --- output --------------------------------------------------------------------------------


def _median(values: Iterable[float]) -> float | None:
    listed = list(values)
    return statistics.median(listed) if listed else None


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def summary(outcomes: Sequence[Outcome]) -> dict[str, tuple[float | None, float | None, int]]:
    """phase -> (median error after, before, rows)"""
    result = {}
    for phase in ("decode", "prefill"):
        members = [o for o in outcomes if o.row.report_phase == phase]
        result[phase] = (
            _median(o.error for o in members),
            _median(o.before_error for o in members),
            len(members),
        )
    return result


def breakdown_table(outcomes: Sequence[Outcome], label: Callable[[Outcome], str]) -> list[str]:
    groups: dict[str, list[Outcome]] = defaultdict(list)
    for outcome in outcomes:
        groups[label(outcome)].append(outcome)
    lines = [
        "| group | rows | GPUs | median error | before | measured/estimated p10-p90 |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for name, members in sorted(groups.items()):
        ratios = [o.ratio for o in members]
        lines.append(
            f"| {name} | {len(members)} | {len({o.row.gpu.id for o in members})} | "
            f"{_pct(_median(o.error for o in members))} | "
            f"{_pct(_median(o.before_error for o in members))} | "
            f"{percentile(ratios, 0.1):.2f}-{percentile(ratios, 0.9):.2f} |"
        )
    return lines


def _group_label(o: Outcome) -> str:
    phase = o.row.phase + (
        f" b{o.row.batch}" if o.row.phase == "decode" and o.row.batch > 1 else ""
    )
    return f"{o.row.engine}, {o.row.gpu.vendor} {segment_class(o.row.gpu)}, {phase}"


def report(
    outcomes: Sequence[Outcome], rows: Sequence[Row], skipped: Sequence[str], data: Path
) -> str:
    overall = summary(outcomes)
    engines = sorted({r.engine for r in rows})
    gpus = sorted({r.gpu.id for r in rows})
    lines = [
        "## Results",
        "",
        f"{len(rows)} measurements ({data.name}), {len(gpus)} GPUs, engines: "
        f"{', '.join(engines)}; {len(skipped)} rows skipped. Computed "
        f"{datetime.date.today().isoformat()} on {platform.machine()} {platform.system()}, "
        f"Python {platform.python_version()}, no GPU (the fit needs none).",
        "",
        "| phase | rows | median error, leave-one-GPU-out | before (previous model) |",
        "|---|---:|---:|---:|",
    ]
    for phase, (after, before, count) in overall.items():
        lines.append(f"| {phase} | {count} | {_pct(after)} | {_pct(before)} |")
    lines += ["", "Per engine, GPU class and phase:", "", *breakdown_table(outcomes, _group_label)]
    lines += [
        "",
        "The ranges `plan` prints (the most specific that applies: engine, class and vendor,",
        "then engine and class, engine, all rows; a vendor's own range needs two of its GPUs):",
        "",
        "| engine | GPUs | phase | rows | GPUs | median error | 8 in 10 within |",
        "|---|---|---|---:|---:|---:|---|",
    ]
    for s in spreads(outcomes):
        lines.append(
            f"| {'all' if s.engine == ANY else s.engine} | "
            f"{'' if s.vendor == ANY else s.vendor + ' '}{'all' if s.segment == ANY else s.segment}"
            f" | {s.phase} | {s.rows} | {s.gpus} | "
            f"{s.typical_error:.0%} | {s.low_factor:.2f}-{s.high_factor:.2f}x |"
        )
    lines += ["", "Per GPU (each predicted by a fit that never saw it):", ""]
    lines += breakdown_table(outcomes, lambda o: f"{o.row.gpu.id} ({o.row.engine})")
    worst = sorted(outcomes, key=lambda o: o.error, reverse=True)[:10]
    lines += [
        "",
        "Largest errors:",
        "",
        "| measurement | measured tok/s | estimated | error |",
        "|---|---:|---:|---:|",
    ]
    for o in worst:
        lines.append(
            f"| [{o.row.id}]({o.row.source}) | {o.row.measured:,.1f} | {o.estimate:,.1f} | "
            f"{o.estimate / o.row.measured - 1:+.0%} |"
        )
    if skipped:
        lines += ["", "Skipped:", "", *(f"- {reason}" for reason in skipped)]
    return "\n".join(lines) + "\n"


METHOD = """# How accurate is `gpuport plan`?

`gpuport plan` models a decode or prefill step as a fixed overhead (kernel launches,
sampling, host work: stated per 32 layers and scaled by the model's layer count, plus a
smaller cost per running sequence) and the longer of its memory reads at a share of the
peak bandwidth and its matrix products at a share of the dense peak, plus all-reduce time
under tensor parallelism. The overheads and the two shares are **fitted from published
measurements** (benchmarks/plan_data/measurements.csv, each row with its source) per
engine, vendor, GPU class and architecture family, and written to
src/gpuport/kb/plan_efficiency.toml. This page says how far the fitted model lands from
measurements **on GPUs the fit did not see**.

Regenerate (refits the tables and rewrites this page):

    .venv/bin/python benchmarks/plan_accuracy.py --write
    .venv/bin/python benchmarks/plan_accuracy.py --check   # exits 1 past 20% decode / 35% prefill

## Method

- **The step model** (plan/speed.py): decode at batch *b* reads the weights (MoE: the
  experts the batch picks) and every sequence's KV cache at the *average* context of the
  generation (half way from the prompt to the end); prefill runs prompts in chunks (512
  tokens for llama.cpp, 2048 otherwise), each chunk reading the weights once; causal
  attention costs grow with the context. llama.cpp splits a model over GPUs by layers that
  run in turn, so its multi-GPU rows run at one GPU's pace.
- **The fit**: per group of (engine, vendor, GPU class: datacenter or desktop, architecture
  family) four parameters (overhead per step, per sequence, bandwidth share, matrix share)
  minimize the squared log ratio of estimated to measured tokens/s, with a pull towards the
  wider group's values (engine + vendor + class, engine + class, engine, engine class:
  serving engines / GGUF / eager PyTorch, all; the class before the vendor, since a desktop
  card runs an engine more like another desktop card than like its vendor's datacenter
  parts) so that a group with few rows stays near what
  the wider data says, and a group without rows uses its nearest fitted ancestor. A factor
  per (engine, weight format: 16-bit, FP8, INT8, INT4 GPTQ/AWQ, GGUF legacy/K/IQ quants)
  captures dequantization. Pure Python coordinate search; no numpy or scipy.
- **Leave-one-GPU-out**: for each GPU, everything is refitted without its rows and then
  predicts them. Errors are |estimated / measured - 1|; "decode" includes serving
  (offline) rows, whose rates are output tokens/s.
- **Ranges**: the 10th and 90th percentiles of measured / estimated under that validation,
  per engine, GPU class and vendor (a vendor's own range needs two of its GPUs; falling back
  to the engine and class, the engine, then all rows), are stored with the tables; `plan`
  prints them as each estimate's typical range next to the median error ("8 in 10
  measurements within 0.93-1.10x the estimate, median error 5%").
- **Data left out of the fit**: llama.cpp rows on its Vulkan backend (the `backend` column):
  `plan` models the CUDA and ROCm builds, and on the same card Vulkan ran prompt processing
  at half the ROCm build's rate; they are listed under "Skipped".
- **Before**: the previous model on the same rows (80% of bandwidth, 70% of the matrix peak
  or a vendor's measured share, no overhead, KV read at the full context).

"""


def _toml_text(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def toml_document(tables: EfficiencyTables) -> str:
    lines = [
        "# plan's fitted efficiencies. Written by benchmarks/plan_accuracy.py --write from the",
        "# published measurements in benchmarks/plan_data/measurements.csv (each row names its",
        "# source); do not edit by hand. Method and validation: benchmarks/plan_accuracy.md.",
        "",
        "[fit]",
        f"source = {_toml_text(tables.source)}",
        f"measurements = {tables.measurements}",
        f"checked = {tables.fitted.isoformat()}",
        "",
    ]
    checked = f"checked = {tables.fitted.isoformat()}"

    def source(rows: int, gpus: str) -> str:
        return f"source = {_toml_text(f'{tables.source}: {rows} rows on {gpus}')}"

    for profile in sorted(tables.profiles.values(), key=lambda p: (-p.key.count(ANY), p.key)):
        engine, vendor, segment, family = profile.key
        lines += [
            "[[profile]]",
            f"engine = {_toml_text(engine)}",
            f"vendor = {_toml_text(vendor)}",
            f"segment = {_toml_text(segment)}",
            f"family = {_toml_text(family)}",
            f"token_overhead_ms = {profile.token_overhead_s * 1e3:.3f}",
            f"sequence_overhead_us = {profile.sequence_overhead_s * 1e6:.2f}",
            f"bandwidth = {profile.bandwidth:.3f}",
            f"matrix = {profile.matrix:.3f}",
            f"rows = {profile.rows}",
            "gpus = [" + ", ".join(_toml_text(g) for g in profile.gpus) + "]",
            source(profile.rows, f"{len(profile.gpus)} GPUs"),
            checked,
            "",
        ]
    for factor in sorted(tables.quant.values(), key=lambda q: (q.engine, q.kind)):
        lines += [
            "[[quant]]",
            f"engine = {_toml_text(factor.engine)}",
            f"kind = {_toml_text(factor.kind)}",
            f"bandwidth = {factor.bandwidth:.3f}",
            f"matrix = {factor.matrix:.3f}",
            f"rows = {factor.rows}",
            source(factor.rows, "several GPUs"),
            checked,
            "",
        ]
    for spread in tables.spreads.values():
        lines += [
            "[[uncertainty]]",
            f"engine = {_toml_text(spread.engine)}",
            f"segment = {_toml_text(spread.segment)}",
            f"vendor = {_toml_text(spread.vendor)}",
            f"phase = {_toml_text(spread.phase)}",
            f"low_factor = {spread.low_factor:.3f}",
            f"high_factor = {spread.high_factor:.3f}",
            f"typical_error = {spread.typical_error:.3f}",
            f"rows = {spread.rows}",
            f"gpus = {spread.gpus}",
            source(spread.rows, f"{spread.gpus} GPUs, each predicted leaving it out of the fit"),
            checked,
            "",
        ]
    return "\n".join(lines).rstrip("\n") + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="the measurements CSV")
    parser.add_argument("--write", action="store_true", help="write the KB tables and the report")
    parser.add_argument("--check", action="store_true", help="exit 1 past the error limits")
    args = parser.parse_args(argv)
    if not args.data.is_file():
        print(f"{args.data}: no such measurements file", file=sys.stderr)
        return 2
    rows, skipped = load_rows(args.data)
    if len({r.gpu.id for r in rows}) < 2:
        print(f"{args.data}: leave-one-GPU-out needs rows of at least two GPUs", file=sys.stderr)
        return 2
    outcomes = leave_one_gpu_out(rows)
    text = report(outcomes, rows, skipped, args.data)
    print(text)
    if args.write:
        tables = tables_from_fit(fit_rows(rows), outcomes, rows)
        TABLES.write_text(toml_document(tables), encoding="utf-8")
        REPORT.write_text(METHOD + text, encoding="utf-8")
        print(f"wrote {TABLES.relative_to(ROOT)} and {REPORT.relative_to(ROOT)}")
    overall = summary(outcomes)
    decode, prefill = overall["decode"][0], overall["prefill"][0]
    if args.check and (
        (decode is not None and decode > DECODE_LIMIT)
        or (prefill is not None and prefill > PREFILL_LIMIT)
    ):
        print(
            f"median error past the limits: decode {_pct(decode)} (limit {DECODE_LIMIT:.0%}), "
            f"prefill {_pct(prefill)} (limit {PREFILL_LIMIT:.0%})",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
