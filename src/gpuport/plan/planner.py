"""The plan: for each GPU, the fewest devices that hold the model and the batch, how fast
they decode and prefill, what a million tokens costs, and why -- ranked in one table, and the
same for every batch size and context length of a sweep."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace

from gpuport.plan.catalog import GPUS_PER_NODE, Gpu, MeasuredRates
from gpuport.plan.engines import (
    DATACENTER_ENGINE,
    DESKTOP_ENGINE,
    ENGINES,
    default_engine,
    prefill_chunk,
)
from gpuport.plan.errors import PlanInputError
from gpuport.plan.memory import ASSUMPTIONS as MEMORY_ASSUMPTIONS
from gpuport.plan.memory import (
    DEFAULT_UTILIZATION,
    PREFILL_CHUNK_TOKENS,
    MemoryBreakdown,
    breakdown,
    max_context,
    max_sequences,
    weight_bytes,
)
from gpuport.plan.model_spec import ModelSpec
from gpuport.plan.precision import KvDtype, Precision, default_kv_dtype, parse_precision
from gpuport.plan.prices import Price
from gpuport.plan.speed import ASSUMPTIONS as SPEED_ASSUMPTIONS
from gpuport.plan.speed import (
    DecodeCase,
    DecodeEstimate,
    PrefillEstimate,
    Rates,
    Uncertainty,
    achieved_rates,
    cost_per_million_tokens,
    estimate_decode,
    estimate_prefill,
)

GB = 1e9
DEFAULT_CONTEXT = 8192
DEFAULT_BATCH = 32
DEFAULT_TP_MAX = 8
DEFAULT_PP_MAX = 4
_TP_SIZES = (1, 2, 4, 8)
_NUMBER_WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 6: "six", 8: "eight"}
# A sweep's limits: each GPU is planned once per batch x context, and the tables print one
# row per combination, so past these the output stops being readable.
MAX_SWEEP_VALUES = 16
MAX_SWEEP_COMBINATIONS = 64
DASH = "\N{EN DASH}"  # between the ends of a range: 60-85 as typeset
_UNITS = {"--context": "token", "--batch": "sequence"}


def parse_values(text: str, option: str) -> tuple[int, ...]:
    """Whole numbers as typed after ``--batch`` or ``--context``: one, or a comma list
    ("1,8,64"); their range and repeats are checked by :class:`PlanRequest`."""
    values: list[int] = []
    for item in text.split(","):
        word = item.strip()
        try:
            values.append(int(word))
        except ValueError:
            raise PlanInputError(
                f"{option} {text!r}: {word!r} is not a whole number; give one or several "
                f"separated by commas ({option} {'1,8,64' if option == '--batch' else '2048,8192'})"
            ) from None
    return tuple(values)


def _check_values(option: str, values: tuple[int, ...]) -> None:
    unit = _UNITS[option]
    for value in values:
        if value < 1:
            raise PlanInputError(f"{option} must be at least 1 {unit}, not {value}")
    seen: set[int] = set()
    for value in values:
        if value in seen:
            raise PlanInputError(f"{option} gives {value:,} twice: name each value once")
        seen.add(value)
    if len(values) > MAX_SWEEP_VALUES:
        raise PlanInputError(
            f"{option} gives {len(values)} values; a sweep takes at most {MAX_SWEEP_VALUES}"
        )


@dataclass(frozen=True, slots=True)
class PlanRequest:
    """What the user asked: the workload and the limits of the search."""

    precision: Precision
    kv_dtype: KvDtype
    context: int = DEFAULT_CONTEXT
    batch: int = DEFAULT_BATCH
    tp_max: int = DEFAULT_TP_MAX
    pp_max: int = DEFAULT_PP_MAX
    utilization: float = DEFAULT_UTILIZATION
    precision_from_checkpoint: bool = False
    engine: str | None = None  # plan/engines.py ENGINES; None: default_engine per GPU
    # A sweep: every batch x context is planned. Empty: just ``batch`` / ``context``, which
    # are the first value of each list, the point the ranking and its reasons are for.
    batches: tuple[int, ...] = ()
    contexts: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        _check_values("--context", self.context_values)
        _check_values("--batch", self.batch_values)
        if self.context not in self.context_values or self.batch not in self.batch_values:
            raise PlanInputError("the ranked batch and context must be among the sweep's values")
        combinations = len(self.batch_values) * len(self.context_values)
        if combinations > MAX_SWEEP_COMBINATIONS:
            raise PlanInputError(
                f"--batch and --context: {len(self.batch_values)} batch sizes x "
                f"{len(self.context_values)} contexts = {combinations} combinations per GPU; "
                f"a sweep takes at most {MAX_SWEEP_COMBINATIONS}: drop some values"
            )
        if self.engine is not None and self.engine not in ENGINES:
            raise PlanInputError(
                f"--engine {self.engine!r}: not an engine plan models; one of {', '.join(ENGINES)}"
            )
        if self.tp_max < 1 or self.pp_max < 1:
            raise PlanInputError("--tp and --pp limits must be at least 1")
        if not 0 < self.utilization <= 1:
            raise PlanInputError(
                f"--utilization must be above 0 and at most 1, not {self.utilization}"
            )

    @property
    def batch_values(self) -> tuple[int, ...]:
        """Every batch size planned, as given (the first is the ranked one)."""
        return self.batches or (self.batch,)

    @property
    def context_values(self) -> tuple[int, ...]:
        return self.contexts or (self.context,)

    @property
    def is_sweep(self) -> bool:
        return len(self.batch_values) * len(self.context_values) > 1

    def at(self, batch: int, context: int) -> PlanRequest:
        """The same request for one point of the sweep."""
        return replace(self, batch=batch, context=context, batches=(), contexts=())


def request_for(
    model: ModelSpec,
    *,
    precision: str | None = None,
    kv_dtype: KvDtype | None = None,
    context: int | tuple[int, ...] = DEFAULT_CONTEXT,
    batch: int | tuple[int, ...] = DEFAULT_BATCH,
    tp_max: int = DEFAULT_TP_MAX,
    pp_max: int = DEFAULT_PP_MAX,
    utilization: float = DEFAULT_UTILIZATION,
    engine: str | None = None,
) -> PlanRequest:
    """A request whose precision defaults to the checkpoint's own weight format; a tuple of
    contexts or batch sizes makes a sweep, ranked at the first of each."""
    chosen = parse_precision(precision or model.native_precision)
    contexts = context if isinstance(context, tuple) else (context,)
    batches = batch if isinstance(batch, tuple) else (batch,)
    if not contexts or not batches:
        raise PlanInputError("--batch and --context need at least one value each")
    return PlanRequest(
        precision=chosen,
        kv_dtype=kv_dtype or default_kv_dtype(chosen),
        context=contexts[0],
        batch=batches[0],
        tp_max=tp_max,
        pp_max=pp_max,
        utilization=utilization,
        precision_from_checkpoint=precision is None,
        engine=engine,
        batches=batches if len(batches) > 1 else (),
        contexts=contexts if len(contexts) > 1 else (),
    )


@dataclass(frozen=True, slots=True)
class PlanEntry:
    """One GPU type in the plan."""

    gpu: Gpu
    fits: bool
    tp: int
    pp: int
    memory: MemoryBreakdown  # for the chosen layout (the largest tried when nothing fits)
    max_sequences: int  # at the requested context
    max_context: int  # at the requested batch
    rates: Rates
    decode: DecodeEstimate | None
    prefill: PrefillEstimate | None
    price: Price | None
    reasons: tuple[str, ...]
    engine: str  # the serving engine the speed assumes (--engine, or the GPU's default)
    batch: int  # the workload this entry is for (one point of a sweep)
    context: int
    rank: int = 0

    @property
    def devices(self) -> int:
        return self.tp * self.pp

    @property
    def packages(self) -> float:
        return self.devices / self.gpu.devices_per_package

    @property
    def usd_per_hour(self) -> float | None:
        return self.price.usd_per_hour * self.devices if self.price else None

    @property
    def cost_per_million_output(self) -> float | None:
        if self.usd_per_hour is None or self.decode is None:
            return None
        return cost_per_million_tokens(self.usd_per_hour, self.decode.tokens_per_s)

    @property
    def cost_per_million_input(self) -> float | None:
        if self.usd_per_hour is None or self.prefill is None:
            return None
        return cost_per_million_tokens(self.usd_per_hour, self.prefill.tokens_per_s)


@dataclass(frozen=True, slots=True)
class PlanResult:
    """The whole answer: the model, the request, one ranked entry per GPU and the why."""

    model: ModelSpec
    request: PlanRequest
    entries: tuple[PlanEntry, ...]
    summary: tuple[str, ...]
    warnings: tuple[str, ...]
    assumptions: tuple[str, ...] = field(default=())
    # Every GPU at every batch x context, in rank order of the GPUs, then by context and
    # batch; without a sweep, the entries themselves.
    sweep: tuple[PlanEntry, ...] = field(default=())

    @property
    def sweep_entries(self) -> tuple[PlanEntry, ...]:
        return self.sweep or self.entries

    @property
    def weights_bytes(self) -> float:
        return weight_bytes(self.model, self.request.precision)

    @property
    def kv_bytes_per_sequence(self) -> float:
        return self.model.kv_bytes_per_sequence(
            self.request.context, self.request.kv_dtype.bytes_per_element
        )


PLAN_ASSUMPTIONS = (
    f"the serving engine is --engine, or by default {DATACENTER_ENGINE} on datacenter GPUs and "
    f"{DESKTOP_ENGINE} on workstation and consumer cards; each entry names the one it assumes",
    f'a range ("typically 60{DASH}85 tok/s") is where published measurements landed around the '
    "estimate when validated on GPUs the fit did not see (leave-one-GPU-out, "
    "benchmarks/plan_accuracy.md): the typical case, not a bound",
)


def _layouts(model: ModelSpec, request: PlanRequest) -> Iterator[tuple[int, int]]:
    """(tp, pp) from the fewest devices up.

    Tensor parallelism first, within one server (it speeds decode up); pipeline stages
    are added only on top of the widest TP group, as deployments across servers do.
    """
    tps = [
        tp
        for tp in _TP_SIZES
        if tp <= min(request.tp_max, GPUS_PER_NODE) and model.num_heads % tp == 0
    ]
    for tp in tps:
        yield tp, 1
    widest = tps[-1]
    for pp in range(2, min(request.pp_max, model.num_layers) + 1):
        yield widest, pp


def _gb(value: float) -> str:
    return f"{value / GB:,.1f} GB"


def _count(n: int, gpu: Gpu) -> str:
    """A count in words: two H100 SXMs, one MI300X, four MI250X GCDs."""
    noun = gpu.short + (" GCD" if gpu.devices_per_package > 1 else "")
    return f"{_NUMBER_WORDS.get(n, str(n))} {noun}" + ("s" if n > 1 else "")


def _rate(value: float) -> str:
    return f"{value:,.0f}" if value >= 10 else f"{value:,.1f}"


def range_sentence(estimate: DecodeEstimate | PrefillEstimate) -> str | None:
    """The typical range of an estimate and what it rests on, "typically 60-85 tok/s (8 in 10
    measurements within 0.80-1.13x the estimate, median error 9%; vLLM on datacenter GPUs,
    ...)" (None: no validation covers the case)."""
    span = estimate.range_tokens_per_s
    uncertainty: Uncertainty | None = estimate.uncertainty
    if span is None or uncertainty is None:
        return None
    low, high = span
    # The median error and the 10th-90th percentile span are both stated: a small median
    # next to a wide span is a model usually right with a few far-off cards, not a bound.
    return (
        f"typically {_rate(low)}{DASH}{_rate(high)} tok/s (8 in 10 measurements within "
        f"{uncertainty.low_factor:.2f}{DASH}{uncertainty.high_factor:.2f}\u00d7 the estimate, median "
        f"error {uncertainty.typical_error:.0%}; {uncertainty.basis})"
    )


def _engine_reason(gpu: Gpu, engine: str, chosen: bool) -> str:
    if chosen:
        return f"speed assumes {engine} (--engine)"
    return f"speed assumes {engine}, the default on {gpu.segment} GPUs (--engine for another)"


def _range_reasons(decode: DecodeEstimate, prefill: PrefillEstimate, rates: Rates) -> list[str]:
    reasons = []
    missing = []
    for what, estimate in (("decode", decode), ("prefill", prefill)):
        sentence = range_sentence(estimate)
        if sentence is not None:
            reasons.append(f"{what} {sentence}")
        else:
            missing.append(what)
    if missing and not rates.measured:
        reasons.append(
            f"{' and '.join(missing)}: no validated range for this engine and GPU class, a "
            "rough estimate (--measured calibrates it)"
        )
    return reasons


def _entry(
    model: ModelSpec,
    gpu: Gpu,
    engine: str,
    request: PlanRequest,
    price: Price | None,
    measured: MeasuredRates | None,
) -> PlanEntry:
    chosen: tuple[int, int, MemoryBreakdown] | None = None
    tried: list[tuple[int, int, MemoryBreakdown]] = []
    for tp, pp in _layouts(model, request):
        memory = breakdown(
            model,
            gpu,
            request.precision,
            request.kv_dtype,
            context=request.context,
            batch=request.batch,
            tp=tp,
            pp=pp,
            utilization=request.utilization,
            chunk=prefill_chunk(engine, PREFILL_CHUNK_TOKENS),
        )
        if memory.fits:
            chosen = (tp, pp, memory)
            break
        tried.append((tp, pp, memory))
    tp, pp, memory = chosen or tried[-1]
    rates = achieved_rates(gpu, request.precision, tp, measured, engine=request.engine)
    reasons: list[str] = []
    fits = chosen is not None
    sequences = max_sequences(model, request.kv_dtype, memory, request.context, tp, pp)
    longest = max_context(model, request.kv_dtype, memory, request.batch, tp, pp)
    usable = _gb(memory.budget)
    if not fits:
        total_weights = weight_bytes(model, request.precision)
        reasons.append(
            f"does not fit {tp * pp} {gpu.device_word}s (TP={tp}, PP={pp}): "
            f"{_gb(memory.used)} needed per {gpu.device_word} of {usable} usable "
            f"(weights {_gb(total_weights)} in all)"
        )
        return PlanEntry(
            gpu,
            False,
            tp,
            pp,
            memory,
            sequences,
            longest,
            rates,
            None,
            None,
            price,
            tuple(reasons),
            engine,
            request.batch,
            request.context,
        )
    devices = tp * pp
    if devices == 1:
        reasons.append(
            f"fits on one {gpu.device_word}: weights {_gb(memory.weights)} + KV "
            f"{_gb(memory.kv_cache)} + activations and runtime "
            f"{_gb(memory.activations + memory.overhead)} of {usable} usable"
        )
    else:
        layout = f"TP={tp}" + (f", PP={pp}" if pp > 1 else "")
        before_tp, before_pp, before = tried[-1]
        fewer = before_tp * before_pp
        word = gpu.device_word + ("s" if fewer != 1 else "")
        reasons.append(
            f"needs {devices} {gpu.device_word}s ({layout}): on {fewer} {word} each would hold "
            f"weights {_gb(before.weights)} + KV {_gb(before.kv_cache)} + activations and "
            f"runtime {_gb(before.activations + before.overhead)}, over {usable} usable"
        )
    if gpu.devices_per_package > 1:
        reasons.append(
            f"{gpu.name} counts as {gpu.devices_per_package} devices (GCDs of "
            f"{gpu.memory_gib:g} GiB): {devices} GCDs = {devices / gpu.devices_per_package:g} "
            "package(s)"
        )
    reasons.append(
        f"KV room {_gb(memory.kv_room)}: {sequences:,} sequences of {request.context:,} tokens, "
        f"or {request.batch} sequences of up to {longest:,} tokens"
    )
    decode = estimate_decode(
        DecodeCase(
            model,
            request.precision,
            request.kv_dtype,
            rates,
            batch=request.batch,
            context=request.context,
            tp=tp,
            pp=pp,
        )
    )
    prefill = estimate_prefill(
        model, request.precision, rates, context=request.context, tp=tp, pp=pp
    )
    crossover = decode.compute_bound_from_batch
    short = decode.weights_compute_bound_from_batch
    if crossover is not None:
        turn = f"turns compute-bound from batch {crossover:,}"
    else:
        turn = f"stays memory-bound at {request.context:,} tokens (KV reads grow with the batch)"
        if short is not None:
            turn += f"; with short contexts it turns compute-bound from batch {short:,}"
    reasons.append(f"decode is {decode.bound}-bound at batch {request.batch}; {turn}")
    reasons.append(_engine_reason(gpu, engine, request.engine is not None))
    reasons.extend(_range_reasons(decode, prefill, rates))
    if rates.note:
        reasons.append(rates.note)
    if rates.measured:
        reasons.append(f"speed from measured rates ({measured.source if measured else ''})")
    if price is None:
        reasons.append(f"no price on file: pass --price {gpu.id}=USD_PER_HOUR")
    return PlanEntry(
        gpu,
        True,
        tp,
        pp,
        memory,
        sequences,
        longest,
        rates,
        decode,
        prefill,
        price,
        tuple(reasons),
        engine,
        request.batch,
        request.context,
    )


def _rank_key(entry: PlanEntry) -> tuple[int, float, float]:
    if not entry.fits:
        return (2, entry.memory.used / max(entry.memory.budget, 1.0), 0.0)
    cost = entry.cost_per_million_output
    speed = entry.decode.tokens_per_s / entry.devices if entry.decode else 0.0
    if cost is None:
        return (1, -speed, 0.0)
    return (0, cost, -speed)


def _vendor_sentence(entries: list[PlanEntry], batch: int) -> str | None:
    """The cross-vendor line: fits on one MI300X, needs two H100 SXMs; 1.6x cheaper..."""
    best: dict[str, PlanEntry] = {}
    for entry in entries:
        if entry.fits and entry.gpu.vendor not in best:
            best[entry.gpu.vendor] = entry
    if len(best) < 2:
        return None
    first, second = sorted(best.values(), key=lambda e: (e.devices, e.rank))
    if first.devices == second.devices:
        text = f"fits on {_count(first.devices, first.gpu)} or {_count(second.devices, second.gpu)}"
    elif first.devices == 1:
        text = f"fits on {_count(1, first.gpu)}, needs {_count(second.devices, second.gpu)}"
    else:
        text = f"needs {_count(first.devices, first.gpu)} or {_count(second.devices, second.gpu)}"
    a, b = best["amd"], best["nvidia"]
    ca, cb = a.cost_per_million_output, b.cost_per_million_output
    if ca is not None and cb is not None:
        cheap, dear = (a, b) if ca <= cb else (b, a)
        ratio = max(ca, cb) / min(ca, cb)
        text += (
            f"; {cheap.gpu.short} is {ratio:.1f}x cheaper per token than "
            f"{dear.gpu.short} at batch {batch}"
        )
    elif a.decode and b.decode:
        fast, slow = (a, b) if a.decode.tokens_per_s >= b.decode.tokens_per_s else (b, a)
        assert fast.decode and slow.decode
        ratio = fast.decode.tokens_per_s / slow.decode.tokens_per_s
        text += (
            f"; {fast.gpu.short} decodes {ratio:.1f}x faster than "
            f"{slow.gpu.short} at batch {batch} (no price for both)"
        )
    return text[0].upper() + text[1:] + "."


def _cheapest_sentence(sweep: tuple[PlanEntry, ...]) -> str | None:
    """The sweep's cheapest point per output token, when prices allow."""
    priced = [e for e in sweep if e.cost_per_million_output is not None]
    if not priced:
        return None
    best = min(priced, key=lambda e: (e.cost_per_million_output or 0.0, e.rank))
    assert best.decode is not None
    return (
        f"Cheapest in the sweep: {_count(best.devices, best.gpu)} at batch {best.batch:,} and "
        f"{best.context:,} tokens, ${best.cost_per_million_output:,.3f} per 1M output tokens "
        f"({_rate(best.decode.tokens_per_s)} tokens/s)."
    )


def plan(
    model: ModelSpec,
    request: PlanRequest,
    gpus: list[Gpu],
    prices: Mapping[str, Price],
    measured: Mapping[str, MeasuredRates] | None = None,
) -> PlanResult:
    """Plan ``model`` on each of ``gpus`` at every batch x context: a pure function of its inputs.

    The ranking (and the summary's reasons) is at ``request.batch`` and ``request.context``.
    """
    measured = measured or {}
    points: dict[tuple[str, int, int], PlanEntry] = {}
    headline: list[PlanEntry] = []
    contexts = sorted(request.context_values)
    batches = sorted(request.batch_values)
    for gpu in gpus:
        engine = request.engine or default_engine(gpu)
        price, rates = prices.get(gpu.id), measured.get(gpu.id)
        for context in contexts:
            for batch in batches:
                at = request.at(batch, context) if request.is_sweep else request
                entry = _entry(model, gpu, engine, at, price, rates)
                points[gpu.id, batch, context] = entry
                if batch == request.batch and context == request.context:
                    headline.append(entry)
    ordered = sorted(headline, key=_rank_key)
    entries = tuple(replace(e, rank=i) for i, e in enumerate(ordered, start=1))
    sweep: tuple[PlanEntry, ...] = ()
    if request.is_sweep:
        sweep = tuple(
            replace(points[e.gpu.id, batch, context], rank=e.rank)
            for e in entries
            for context in contexts
            for batch in batches
        )
    kv = request.kv_dtype
    kv_sequence = model.kv_bytes_per_sequence(request.context, kv.bytes_per_element)
    params = model.params
    active = f" ({params.active / 1e9:,.1f}B active)" if model.moe is not None else ""
    origin = " (the checkpoint's format)" if request.precision_from_checkpoint else ""
    summary = [
        f"{model.name}: {params.total / 1e9:,.2f}B parameters{active}; {request.precision.name} "
        f"weights{origin} take {_gb(weight_bytes(model, request.precision))}.",
        f"KV cache ({model.attention_kind}, {kv.name}): "
        f"{model.kv_bytes_per_token(kv.bytes_per_element):,.0f} bytes per token; "
        f"{_gb(kv_sequence)} per {request.context:,}-token sequence, "
        f"{_gb(kv_sequence * request.batch)} for {request.batch}.",
    ]
    if request.is_sweep:
        summary.append(
            f"Sweep: batch {', '.join(f'{b:,}' for b in batches)} x context "
            f"{', '.join(f'{c:,}' for c in contexts)} on {len(entries)} GPU type(s); the "
            f"ranking is at batch {request.batch:,} and {request.context:,} tokens (the first "
            "value of each list)."
        )
    fitting = [e for e in entries if e.fits]
    if fitting:
        top = fitting[0]
        assert top.decode is not None
        cost = top.cost_per_million_output
        money = f" at ${cost:,.3f} per 1M output tokens" if cost is not None else ""
        span = top.decode.range_tokens_per_s
        typical = f", typically {_rate(span[0])}{DASH}{_rate(span[1])}" if span else ""
        summary.append(
            f"Best: {_count(top.devices, top.gpu)} on {top.engine}{money} "
            f"({_rate(top.decode.tokens_per_s)} tokens/s at batch {request.batch}{typical}; "
            f"{top.decode.bound}-bound)."
        )
    sentence = _vendor_sentence(list(entries), request.batch)
    if sentence:
        summary.append(sentence)
    cheapest = _cheapest_sentence(sweep)
    if cheapest:
        summary.append(cheapest)
    misfits = [e.gpu.short for e in entries if not e.fits]
    if misfits:
        limit = min(request.tp_max, GPUS_PER_NODE) * request.pp_max
        summary.append(f"Does not fit in up to {limit} devices: {', '.join(misfits)}.")
    if not fitting:
        summary.append(
            "No GPU in the list holds this model and batch: raise --pp, lower "
            "--batch or --context, or pick a smaller precision."
        )

    warnings = list(model.notes)
    if model.max_context and request.context > model.max_context:
        warnings.append(
            f"--context {request.context:,} is beyond the model's max_position_embeddings "
            f"({model.max_context:,})"
        )
    kinds = {e.price.kind for e in entries if e.price is not None}
    if len(kinds) > 1:
        warnings.append(
            "prices mix " + ", ".join(sorted(kinds)) + " figures (see each price's source); "
            "pass --prices FILE or --price GPU=USD for your own"
        )
    assumptions = (*MEMORY_ASSUMPTIONS, *SPEED_ASSUMPTIONS, *PLAN_ASSUMPTIONS)
    return PlanResult(
        model=model,
        request=request,
        entries=entries,
        summary=tuple(summary),
        warnings=tuple(warnings),
        assumptions=assumptions,
        sweep=sweep,
    )


__all__ = [
    "MAX_SWEEP_COMBINATIONS",
    "MAX_SWEEP_VALUES",
    "PlanEntry",
    "PlanRequest",
    "PlanResult",
    "parse_values",
    "plan",
    "range_sentence",
    "request_for",
]
