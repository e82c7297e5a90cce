"""The plan: for each GPU, the fewest devices that hold the model and the batch, how fast
they decode and prefill, what a million tokens costs, and why -- ranked in one table."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace

from gpuport.plan.catalog import GPUS_PER_NODE, Gpu, MeasuredRates
from gpuport.plan.errors import PlanInputError
from gpuport.plan.memory import ASSUMPTIONS as MEMORY_ASSUMPTIONS
from gpuport.plan.memory import (
    DEFAULT_UTILIZATION,
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

    def __post_init__(self) -> None:
        if self.context < 1:
            raise PlanInputError(f"--context must be at least 1 token, not {self.context}")
        if self.batch < 1:
            raise PlanInputError(f"--batch must be at least 1 sequence, not {self.batch}")
        if self.tp_max < 1 or self.pp_max < 1:
            raise PlanInputError("--tp and --pp limits must be at least 1")
        if not 0 < self.utilization <= 1:
            raise PlanInputError(
                f"--utilization must be above 0 and at most 1, not {self.utilization}"
            )


def request_for(
    model: ModelSpec,
    *,
    precision: str | None = None,
    kv_dtype: KvDtype | None = None,
    context: int = DEFAULT_CONTEXT,
    batch: int = DEFAULT_BATCH,
    tp_max: int = DEFAULT_TP_MAX,
    pp_max: int = DEFAULT_PP_MAX,
    utilization: float = DEFAULT_UTILIZATION,
) -> PlanRequest:
    """A request whose precision defaults to the checkpoint's own weight format."""
    chosen = parse_precision(precision or model.native_precision)
    return PlanRequest(
        precision=chosen,
        kv_dtype=kv_dtype or default_kv_dtype(chosen),
        context=context,
        batch=batch,
        tp_max=tp_max,
        pp_max=pp_max,
        utilization=utilization,
        precision_from_checkpoint=precision is None,
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

    @property
    def weights_bytes(self) -> float:
        return weight_bytes(self.model, self.request.precision)

    @property
    def kv_bytes_per_sequence(self) -> float:
        return self.model.kv_bytes_per_sequence(
            self.request.context, self.request.kv_dtype.bytes_per_element
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


def _entry(
    model: ModelSpec,
    gpu: Gpu,
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
            gpu, False, tp, pp, memory, sequences, longest, rates, None, None, price, tuple(reasons)
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
    if rates.note:
        reasons.append(rates.note)
    if rates.measured:
        reasons.append(f"speed from measured rates ({measured.source if measured else ''})")
    if price is None:
        reasons.append(f"no price on file: pass --price {gpu.id}=USD_PER_HOUR")
    return PlanEntry(
        gpu, True, tp, pp, memory, sequences, longest, rates, decode, prefill, price, tuple(reasons)
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


def plan(
    model: ModelSpec,
    request: PlanRequest,
    gpus: list[Gpu],
    prices: Mapping[str, Price],
    measured: Mapping[str, MeasuredRates] | None = None,
) -> PlanResult:
    """Plan ``model`` on each of ``gpus``: a pure function of its inputs."""
    measured = measured or {}
    built = [_entry(model, gpu, request, prices.get(gpu.id), measured.get(gpu.id)) for gpu in gpus]
    ordered = sorted(built, key=_rank_key)
    entries = tuple(replace(e, rank=i) for i, e in enumerate(ordered, start=1))
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
    fitting = [e for e in entries if e.fits]
    if fitting:
        top = fitting[0]
        assert top.decode is not None
        cost = top.cost_per_million_output
        money = f" at ${cost:,.3f} per 1M output tokens" if cost is not None else ""
        summary.append(
            f"Best: {_count(top.devices, top.gpu)}{money} "
            f"({top.decode.tokens_per_s:,.0f} tokens/s at batch {request.batch}, "
            f"{top.decode.bound}-bound)."
        )
    sentence = _vendor_sentence(list(entries), request.batch)
    if sentence:
        summary.append(sentence)
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
    assumptions = (*MEMORY_ASSUMPTIONS, *SPEED_ASSUMPTIONS)
    return PlanResult(
        model=model,
        request=request,
        entries=entries,
        summary=tuple(summary),
        warnings=tuple(warnings),
        assumptions=assumptions,
    )


__all__ = [
    "PlanEntry",
    "PlanRequest",
    "PlanResult",
    "plan",
    "request_for",
]
