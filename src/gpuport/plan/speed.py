"""Tokens per second from a roofline with fitted efficiencies, and what each costs.

Decode reads every weight it uses (MoE: only the experts the batch's tokens pick) and the
KV cache once per step, so it is bound by memory bandwidth until the batch is large enough
for the matrix units to take over; each step also pays the engine's fixed overhead (kernel
launches, sampling, host work). Prefill processes prompts in chunks and is bound by
compute. Tensor parallelism adds two all-reduces per layer over the GPUs' interconnect.
The achieved shares of bandwidth and matrix peak, and the overhead, are fitted per engine
and GPU group from published measurements (plan/engines.py, kb/plan_efficiency.toml); every
estimate names the bound it hit and carries the range that fit showed on unseen GPUs.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from gpuport.plan.catalog import Gpu, MeasuredRates
from gpuport.plan.engines import (
    ANY,
    ENGINES,
    LAYER_SPLIT_ENGINES,
    OVERHEAD_REFERENCE_LAYERS,
    EfficiencyTables,
    Spread,
    default_engine,
    efficiency_tables,
    find_profile,
    find_quant,
    find_spread,
    prefill_chunk,
    speed_layout,
)
from gpuport.plan.errors import PlanInputError
from gpuport.plan.memory import (
    ACTIVATION_BYTES,
    PREFILL_CHUNK_TOKENS,
    expert_weight_bytes,
    kv_bytes_per_device,
    largest_true,
    weight_bytes,
)
from gpuport.plan.model_spec import ModelSpec
from gpuport.plan.precision import KvDtype, Precision

INTERCONNECT_EFFICIENCY = 0.80
# Fixed cost of one small all-reduce (decode messages are tens of KB), in microseconds.
# An assumption of the order nccl-tests/rccl-tests report for small messages.
ALLREDUCE_LATENCY_US = {"nvswitch": 10.0, "xgmi-mesh": 15.0, "xgmi-gcd": 15.0, "pcie": 30.0}
ALLREDUCES_PER_LAYER = 2  # after attention and after the MLP (Megatron-style TP)
MAX_BATCH_SEARCHED = 1 << 16

ASSUMPTIONS = (
    "each engine step costs a fixed overhead (kernel launches, sampling, host work) that "
    f"grows with the layer count (fitted per {OVERHEAD_REFERENCE_LAYERS} layers) and a "
    "smaller one per running sequence, plus its weight and KV reads at a fitted share of peak memory bandwidth, or its matrix "
    "products at a fitted share of the dense peak, whichever is longer; the shares and the "
    "overhead are fitted per engine, vendor, GPU class and architecture from published "
    "measurements (kb/plan_efficiency.toml, benchmarks/plan_accuracy.md); measured rates "
    "(--measured) replace the shares",
    "decode reads each sequence's KV cache at the average context of a generation (half "
    "way from the prompt to --context) and the weights once per step; an MoE step reads "
    "only the experts its tokens pick (uniform routing)",
    "prefill runs in chunks (512 tokens for llama.cpp, 2048 otherwise), each reading the "
    "weights once; causal attention over half the prompt on average",
    "llama.cpp splits a model over GPUs by layers, which run one after another: more GPUs "
    "hold more, but do not decode faster",
    f"tensor parallelism: {ALLREDUCES_PER_LAYER} all-reduces per layer of batch x hidden "
    f"bf16 values at {INTERCONNECT_EFFICIENCY:.0%} of link bandwidth plus a fixed latency "
    "each (10 us NVLink, 15 us Infinity Fabric, 30 us PCIe), not overlapped with compute",
    "pipeline parallelism adds memory, not decode speed: a token passes the stages one "
    "after another",
    "cost per 1M tokens = price per GPU-hour x GPUs / (tokens per second x 3600) x 1e6",
    "ranges: the measured rate was between the low and high factor times the estimate for "
    "80% of published measurements on GPUs left out of the fit (benchmarks/plan_accuracy.md)",
)


@dataclass(frozen=True, slots=True)
class Uncertainty:
    """How far an estimate typically lands from a measurement, from validation on GPUs the
    fit did not see: the measured rate is typically between ``low_factor`` and
    ``high_factor`` times the estimate."""

    low_factor: float
    high_factor: float
    typical_error: float  # median absolute relative error in that validation
    basis: str  # "vLLM on datacenter GPUs, 41 measurements on 9 GPUs, leave-one-GPU-out"


_ENGINE_NAMES = {
    "vllm": "vLLM",
    "sglang": "SGLang",
    "tensorrt-llm": "TensorRT-LLM",
    "llama.cpp": "llama.cpp",
    "transformers": "transformers",
    # the engine classes of plan/engines.py ENGINE_CLASSES
    "serving": "serving engines",
    "gguf": "GGUF engines",
    "eager": "eager PyTorch engines",
}


_VENDOR_NAMES = {"nvidia": "NVIDIA", "amd": "AMD"}


def _uncertainty(spread: Spread | None) -> Uncertainty | None:
    if spread is None:
        return None
    engine = "every engine" if spread.engine == ANY else _ENGINE_NAMES[spread.engine]
    gpus = "all" if spread.segment == ANY else spread.segment
    if spread.vendor != ANY:
        gpus = f"{_VENDOR_NAMES[spread.vendor]} {gpus}"
    return Uncertainty(
        spread.low_factor,
        spread.high_factor,
        spread.typical_error,
        f"{engine} on {gpus} GPUs, {spread.phase}: {spread.rows} measurements on "
        f"{spread.gpus} GPUs, leave-one-GPU-out",
    )


@dataclass(frozen=True, slots=True)
class Rates:
    """What one device achieves under one engine: bandwidth and matrix throughput after
    efficiency, the engine's fixed cost per step, and how far such estimates range."""

    mem_bw_gbs: float
    tflops: float
    interconnect_gbs: float
    latency_us: float
    measured: bool
    note: str
    engine: str = "vllm"
    token_overhead_s: float = 0.0
    sequence_overhead_s: float = 0.0
    decode_uncertainty: Uncertainty | None = None
    prefill_uncertainty: Uncertainty | None = None
    efficiency_note: str = ""

    @property
    def label(self) -> str:
        return "measured" if self.measured else "datasheet x efficiency"


def _group_words(key: tuple[str, str, str, str]) -> str:
    engine, vendor, segment, family = key
    if engine == ANY:
        return "all engines and GPUs"
    words = [w for w in (vendor if vendor != ANY else "", segment if segment != ANY else "") if w]
    where = " ".join(words) + " GPUs" if words else "all GPUs"
    if family != ANY:
        where = f"{family} ({where})"
    return f"{_ENGINE_NAMES[engine]} on {where}"


def achieved_rates(
    gpu: Gpu,
    precision: Precision,
    tp: int,
    measured: MeasuredRates | None,
    engine: str | None = None,
    tables: EfficiencyTables | None = None,
) -> Rates:
    """``gpu``'s rates under ``engine`` (None: the default engine for the GPU), from the
    fitted ``tables`` (None: kb/plan_efficiency.toml) or from ``measured`` rates."""
    chosen = engine or default_engine(gpu)
    if chosen not in ENGINES:
        raise PlanInputError(f"unknown engine {chosen!r}; choose from {', '.join(ENGINES)}")
    fitted = tables or efficiency_tables()
    profile = find_profile(fitted, chosen, gpu)
    quant = find_quant(fitted, chosen, precision)
    bandwidth = profile.bandwidth * (quant.bandwidth if quant else 1.0)
    matrix = profile.matrix * (quant.matrix if quant else 1.0)
    peak, note = gpu.peak_tflops(precision.compute)
    link = gpu.interconnect.bandwidth_gbs(tp) * INTERCONNECT_EFFICIENCY
    latency = ALLREDUCE_LATENCY_US[gpu.interconnect.kind]
    overhead, per_sequence = profile.token_overhead_s, profile.sequence_overhead_s
    if measured is not None:
        # Measured bf16 throughput, scaled to the precision's unit by the datasheet ratio.
        scale = peak / gpu.fp16_tflops
        return Rates(
            measured.mem_bw_gbs,
            measured.tflops_bf16 * scale,
            link,
            latency,
            True,
            note,
            chosen,
            overhead,
            per_sequence,
            efficiency_note=f"{_ENGINE_NAMES[chosen]}: measured rates replace the fitted "
            f"shares; {overhead * 1e3:.2f} ms per step from the fit",
        )
    explained = (
        f"{_group_words(profile.key)}: {bandwidth:.0%} of peak bandwidth, {matrix:.0%} of "
        f"the matrix peak, {overhead * 1e3:.2f} ms per step of {OVERHEAD_REFERENCE_LAYERS} layers and "
        f"{per_sequence * 1e6:.0f} us per sequence in it (fitted from {profile.rows} "
        f"measurements, {fitted.fitted.isoformat()})"
    )
    return Rates(
        gpu.mem_bw_gbs * bandwidth,
        peak * matrix,
        link,
        latency,
        False,
        note,
        chosen,
        overhead,
        per_sequence,
        _uncertainty(find_spread(fitted, chosen, gpu, "decode")),
        _uncertainty(find_spread(fitted, chosen, gpu, "prefill")),
        explained,
    )


@dataclass(frozen=True, slots=True)
class StepTime:
    memory_s: float
    compute_s: float
    communication_s: float
    stages: int
    overhead_s: float = 0.0  # the engine's fixed cost of the step and its sequences

    @property
    def seconds(self) -> float:
        busy = max(self.memory_s, self.compute_s) + self.communication_s
        return busy * self.stages + self.overhead_s

    @property
    def bound(self) -> str:
        work = max(self.memory_s, self.compute_s)
        if self.overhead_s > max(work, self.communication_s) * self.stages:
            return "overhead"
        if self.communication_s > work:
            return "communication"
        return "memory" if self.memory_s >= self.compute_s else "compute"


@dataclass(frozen=True, slots=True)
class DecodeEstimate:
    tokens_per_s: float  # all sequences together
    per_sequence_tokens_per_s: float
    step: StepTime
    compute_bound_from_batch: int | None  # None: stays memory-bound up to MAX_BATCH_SEARCHED
    weights_compute_bound_from_batch: int | None  # the same with a 1-token context (no KV)
    uncertainty: Uncertainty | None = None  # None: no validation covers this case

    @property
    def bound(self) -> str:
        return self.step.bound

    @property
    def range_tokens_per_s(self) -> tuple[float, float] | None:
        """The typical range of the measured rate, all sequences together."""
        return _range(self.tokens_per_s, self.uncertainty)


@dataclass(frozen=True, slots=True)
class PrefillEstimate:
    tokens_per_s: float
    step: StepTime
    chunk_tokens: int
    uncertainty: Uncertainty | None = None

    @property
    def bound(self) -> str:
        return self.step.bound

    @property
    def range_tokens_per_s(self) -> tuple[float, float] | None:
        return _range(self.tokens_per_s, self.uncertainty)


def _range(tokens_per_s: float, uncertainty: Uncertainty | None) -> tuple[float, float] | None:
    if uncertainty is None:
        return None
    return tokens_per_s * uncertainty.low_factor, tokens_per_s * uncertainty.high_factor


def _allreduce_seconds(model: ModelSpec, rates: Rates, tokens: int, tp: int, pp: int) -> float:
    if tp <= 1:
        return 0.0
    message = tokens * model.hidden_size * ACTIVATION_BYTES
    # Ring all-reduce moves 2(tp-1)/tp of the message through each rank's links.
    transfer = 2 * (tp - 1) / tp * message / (rates.interconnect_gbs * 1e9)
    per_layer = ALLREDUCES_PER_LAYER * (rates.latency_us * 1e-6 + transfer)
    return per_layer * model.num_layers / pp


@dataclass(frozen=True, slots=True)
class DecodeCase:
    """One decode step's inputs: the model and its dtypes on ``tp`` x ``pp`` devices.

    ``context`` is the longest a sequence gets (prompt + output); ``prompt`` the tokens
    already there when generation starts. A step reads the KV cache at the average context
    of the generation, half way from ``prompt`` to ``context``.
    """

    model: ModelSpec
    precision: Precision
    kv: KvDtype
    rates: Rates
    batch: int
    context: int
    tp: int
    pp: int
    prompt: int = 0

    @property
    def average_context(self) -> int:
        start = min(max(self.prompt, 0), self.context)
        return max(1, round(start + (self.context - start) / 2))


def step_overhead(model: ModelSpec, rates: Rates, sequences: int) -> float:
    """The engine's fixed cost of one step over ``model``'s layers with ``sequences`` in it."""
    layers = model.num_layers / OVERHEAD_REFERENCE_LAYERS
    return rates.token_overhead_s * layers + rates.sequence_overhead_s * sequences


def decode_step(case: DecodeCase) -> StepTime:
    model, precision, batch = case.model, case.precision, case.batch
    tp, pp = speed_layout(case.rates.engine, case.tp, case.pp)
    devices = tp * pp
    all_weights = weight_bytes(model, precision)
    experts = expert_weight_bytes(model, precision)
    if model.moe is not None:
        picked = model.moe.experts_per_token / model.moe.num_experts
        touched = 1.0 - (1.0 - picked) ** batch  # expected share of experts a step reads
        read = all_weights - experts + experts * touched
    else:
        read = all_weights
    context = case.average_context
    read_bytes = read / devices + kv_bytes_per_device(model, case.kv, context, batch, tp, pp)
    flops = batch * model.decode_flops_per_token(context) / devices
    return StepTime(
        memory_s=read_bytes / (case.rates.mem_bw_gbs * 1e9),
        compute_s=flops / (case.rates.tflops * 1e12),
        communication_s=_allreduce_seconds(model, case.rates, batch, tp, pp),
        stages=pp,
        overhead_s=step_overhead(model, case.rates, batch),
    )


def _crossover_batch(case: DecodeCase, context: int) -> int | None:
    """The smallest batch whose decode step is compute-bound at ``context`` (the longest a
    sequence gets), if any below the limit (``case.batch`` is not used)."""

    def compute_bound(batch: int) -> bool:
        step = decode_step(
            replace(case, batch=batch, context=context, prompt=min(case.prompt, context))
        )
        return step.compute_s >= step.memory_s

    memory_bound_up_to = largest_true(lambda batch: not compute_bound(batch), MAX_BATCH_SEARCHED)
    return None if memory_bound_up_to >= MAX_BATCH_SEARCHED else memory_bound_up_to + 1


def estimate_decode(case: DecodeCase) -> DecodeEstimate:
    step = decode_step(case)
    return DecodeEstimate(
        tokens_per_s=case.batch / step.seconds,
        per_sequence_tokens_per_s=1.0 / step.seconds,
        step=step,
        compute_bound_from_batch=_crossover_batch(case, case.context),
        weights_compute_bound_from_batch=_crossover_batch(case, 1),
        uncertainty=case.rates.decode_uncertainty,
    )


def prefill_step(
    model: ModelSpec,
    precision: Precision,
    rates: Rates,
    *,
    context: int,
    tp: int,
    pp: int,
    prompts: int = 1,
) -> tuple[StepTime, int]:
    """One prefill chunk of ``prompts`` prompts of ``context`` tokens, and its tokens."""
    chunk = max(1, min(prefill_chunk(rates.engine, PREFILL_CHUNK_TOKENS), context * prompts))
    tp, pp = speed_layout(rates.engine, tp, pp)
    # Pipeline stages overlap over chunks; a layer-split engine's stages run in turn.
    devices = tp * pp if rates.engine not in LAYER_SPLIT_ENGINES else 1
    # Causal attention: on average a prompt token attends to half the prompt.
    flops_per_token = model.decode_flops_per_token(max(1, context // 2))
    step = StepTime(
        memory_s=weight_bytes(model, precision) / devices / (rates.mem_bw_gbs * 1e9),
        compute_s=chunk * flops_per_token / devices / (rates.tflops * 1e12),
        communication_s=_allreduce_seconds(model, rates, chunk, tp, pp),
        stages=1,
        overhead_s=step_overhead(model, rates, 0),
    )
    return step, chunk


def estimate_prefill(
    model: ModelSpec,
    precision: Precision,
    rates: Rates,
    *,
    context: int,
    tp: int,
    pp: int,
    prompts: int = 1,
) -> PrefillEstimate:
    """``prompts`` prompts of ``context`` tokens, processed in chunks, stages pipelined over
    chunks."""
    step, chunk = prefill_step(
        model, precision, rates, context=context, tp=tp, pp=pp, prompts=prompts
    )
    return PrefillEstimate(
        tokens_per_s=chunk / step.seconds,
        step=step,
        chunk_tokens=chunk,
        uncertainty=rates.prefill_uncertainty,
    )


def cost_per_million_tokens(usd_per_hour: float, tokens_per_s: float) -> float:
    """Dollars per 1M tokens for hardware billed ``usd_per_hour`` producing ``tokens_per_s``."""
    return usd_per_hour / (tokens_per_s * 3600.0) * 1e6
