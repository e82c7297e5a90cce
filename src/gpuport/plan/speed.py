"""Tokens per second from a roofline with stated efficiencies, and what each costs.

Decode reads every weight it uses (MoE: only the experts the batch's tokens pick) and the
KV cache once per step, so it is bound by memory bandwidth until the batch is large enough
for the matrix units to take over. Prefill processes whole prompts and is bound by
compute. Tensor parallelism adds two all-reduces per layer over the GPUs' interconnect.
Every estimate names the bound it hit.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from gpuport.plan.catalog import Gpu, MeasuredRates
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

# Share of the datasheet peak that serving kernels reach. Memory: NVIDIA's aiconfigurator
# scales HBM bandwidth by 0.8 (mem_bw_empirical_scaling_factor). Compute: llm-analysis
# validated its FasterTransformer model with flops_eff 0.7. Interconnect: an assumption.
MEMORY_EFFICIENCY = 0.80
COMPUTE_EFFICIENCY = 0.70
INTERCONNECT_EFFICIENCY = 0.80
# Fixed cost of one small all-reduce (decode messages are tens of KB), in microseconds.
# An assumption of the order nccl-tests/rccl-tests report for small messages.
ALLREDUCE_LATENCY_US = {"nvswitch": 10.0, "xgmi-mesh": 15.0, "xgmi-gcd": 15.0, "pcie": 30.0}
ALLREDUCES_PER_LAYER = 2  # after attention and after the MLP (Megatron-style TP)
MAX_BATCH_SEARCHED = 1 << 16

ASSUMPTIONS = (
    f"decode reaches {MEMORY_EFFICIENCY:.0%} of peak memory bandwidth and matrix products "
    f"{COMPUTE_EFFICIENCY:.0%} of the dense peak, or the share a vendor measured (AMD: about "
    "50% on MI300-series); measured rates (--measured) replace both",
    "decode reads each sequence's KV cache at the full --context (the worst case of a "
    "generation), and the weights once per step; an MoE step reads only the experts its "
    "tokens pick (uniform routing)",
    f"tensor parallelism: {ALLREDUCES_PER_LAYER} all-reduces per layer of batch x hidden "
    f"bf16 values at {INTERCONNECT_EFFICIENCY:.0%} of link bandwidth plus a fixed latency "
    "each (10 us NVLink, 15 us Infinity Fabric, 30 us PCIe), not overlapped with compute",
    "pipeline parallelism adds memory, not decode speed: a token passes the stages one "
    "after another",
    "cost per 1M tokens = price per GPU-hour x GPUs / (tokens per second x 3600) x 1e6",
    "these are roofline upper bounds: against published measurements they run 4% to 73% "
    "high (benchmarks/plan_accuracy.md)",
)


@dataclass(frozen=True, slots=True)
class Rates:
    """What one device achieves: bandwidth and matrix throughput after efficiency."""

    mem_bw_gbs: float
    tflops: float
    interconnect_gbs: float
    latency_us: float
    measured: bool
    note: str

    @property
    def label(self) -> str:
        return "measured" if self.measured else "datasheet x efficiency"


def achieved_rates(
    gpu: Gpu, precision: Precision, tp: int, measured: MeasuredRates | None
) -> Rates:
    peak, note = gpu.peak_tflops(precision.compute)
    link = gpu.interconnect.bandwidth_gbs(tp) * INTERCONNECT_EFFICIENCY
    latency = ALLREDUCE_LATENCY_US[gpu.interconnect.kind]
    if measured is not None:
        # Measured bf16 throughput, scaled to the precision's unit by the datasheet ratio.
        scale = peak / gpu.fp16_tflops
        return Rates(measured.mem_bw_gbs, measured.tflops_bf16 * scale, link, latency, True, note)
    return Rates(
        gpu.mem_bw_gbs * MEMORY_EFFICIENCY,
        peak * (gpu.compute_efficiency or COMPUTE_EFFICIENCY),
        link,
        latency,
        False,
        note,
    )


@dataclass(frozen=True, slots=True)
class StepTime:
    memory_s: float
    compute_s: float
    communication_s: float
    stages: int

    @property
    def seconds(self) -> float:
        return (max(self.memory_s, self.compute_s) + self.communication_s) * self.stages

    @property
    def bound(self) -> str:
        if self.communication_s > max(self.memory_s, self.compute_s):
            return "communication"
        return "memory" if self.memory_s >= self.compute_s else "compute"


@dataclass(frozen=True, slots=True)
class Uncertainty:
    """How far an estimate typically lands from a measurement, from validation on GPUs the
    fit did not see: the measured rate is typically between ``low_factor`` and
    ``high_factor`` times the estimate."""

    low_factor: float
    high_factor: float
    typical_error: float  # median absolute relative error in that validation
    basis: str  # "vLLM on datacenter GPUs, 41 measurements on 9 GPUs, leave-one-GPU-out"


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
    """One decode step's inputs: the model and its dtypes on ``tp`` x ``pp`` devices."""

    model: ModelSpec
    precision: Precision
    kv: KvDtype
    rates: Rates
    batch: int
    context: int
    tp: int
    pp: int


def decode_step(case: DecodeCase) -> StepTime:
    model, precision, batch, tp, pp = case.model, case.precision, case.batch, case.tp, case.pp
    devices = tp * pp
    all_weights = weight_bytes(model, precision)
    experts = expert_weight_bytes(model, precision)
    if model.moe is not None:
        picked = model.moe.experts_per_token / model.moe.num_experts
        touched = 1.0 - (1.0 - picked) ** batch  # expected share of experts a step reads
        read = all_weights - experts + experts * touched
    else:
        read = all_weights
    read_bytes = read / devices + kv_bytes_per_device(model, case.kv, case.context, batch, tp, pp)
    flops = batch * model.decode_flops_per_token(case.context) / devices
    return StepTime(
        memory_s=read_bytes / (case.rates.mem_bw_gbs * 1e9),
        compute_s=flops / (case.rates.tflops * 1e12),
        communication_s=_allreduce_seconds(model, case.rates, batch, tp, pp),
        stages=pp,
    )


def _crossover_batch(case: DecodeCase, context: int) -> int | None:
    """The smallest batch whose decode step is compute-bound at ``context``, if any below
    the limit (``case.batch`` is not used)."""

    def compute_bound(batch: int) -> bool:
        step = decode_step(replace(case, batch=batch, context=context))
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
    )


def estimate_prefill(
    model: ModelSpec,
    precision: Precision,
    rates: Rates,
    *,
    context: int,
    tp: int,
    pp: int,
) -> PrefillEstimate:
    """Prompts of ``context`` tokens, processed in chunks, stages pipelined over chunks."""
    chunk = max(1, min(PREFILL_CHUNK_TOKENS, context))
    devices = tp * pp
    # Causal attention: on average a prompt token attends to half the prompt.
    flops_per_token = model.decode_flops_per_token(max(1, context // 2))
    step = StepTime(
        memory_s=weight_bytes(model, precision) / devices / (rates.mem_bw_gbs * 1e9),
        compute_s=chunk * flops_per_token / devices / (rates.tflops * 1e12),
        communication_s=_allreduce_seconds(model, rates, chunk, tp, pp),
        stages=1,
    )
    return PrefillEstimate(tokens_per_s=chunk / step.seconds, step=step, chunk_tokens=chunk)


def cost_per_million_tokens(usd_per_hour: float, tokens_per_s: float) -> float:
    """Dollars per 1M tokens for hardware billed ``usd_per_hour`` producing ``tokens_per_s``."""
    return usd_per_hour / (tokens_per_s * 3600.0) * 1e6
