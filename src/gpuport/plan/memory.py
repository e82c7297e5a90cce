"""Memory per GPU: weights, KV cache, activations and runtime overhead, and what is left.

Everything is per device for one tensor/pipeline-parallel layout. The KV cache is exact for
the model's layout (GQA heads, MLA's latent, sliding-window layers capped at their window);
activations and runtime overhead are stated estimates, listed in :data:`ASSUMPTIONS`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from gpuport.plan.catalog import GIB, Gpu
from gpuport.plan.model_spec import ModelSpec
from gpuport.plan.precision import KvDtype, Precision

# vLLM reserves this share of device memory for itself by default
# (https://docs.vllm.ai/en/latest/configuration/engine_args.html, --gpu-memory-utilization).
DEFAULT_UTILIZATION = 0.9
# CUDA/HIP context, kernel images, BLAS and attention workspaces, CUDA/HIP graphs. An
# assumption; NVIDIA's aiconfigurator reserves 3.5 GiB of "other memory" per GPU for
# TensorRT-LLM, vLLM engines on H100 usually report 1-2 GiB of non-torch memory.
RUNTIME_OVERHEAD_GIB = 1.5
# NCCL/RCCL buffers when ranks communicate: aiconfigurator counts 342-392 MiB per GPU.
COMMUNICATION_BUFFERS_GIB = 0.4
# Tokens one prefill step processes (vLLM's chunked prefill, max_num_batched_tokens).
PREFILL_CHUNK_TOKENS = 2048
ACTIVATION_BYTES = 2  # bf16 activations
LOGITS_BYTES = 4  # logits are sampled in fp32

ASSUMPTIONS = (
    f"usable memory = capacity x utilization ({DEFAULT_UTILIZATION:g} by default, vLLM's "
    "--gpu-memory-utilization)",
    f"runtime overhead {RUNTIME_OVERHEAD_GIB:g} GiB per GPU (context, kernels, workspaces, "
    f"graphs) plus {COMMUNICATION_BUFFERS_GIB:g} GiB of NCCL/RCCL buffers when GPUs talk",
    "activations for one prefill chunk (the engine's: 512 tokens for llama.cpp, "
    f"{PREFILL_CHUNK_TOKENS} otherwise) or the batch, whichever is larger, in bf16; fp32 "
    "logits for the batch",
    "weights split evenly over tensor- and pipeline-parallel ranks; KV heads split over "
    "tensor-parallel ranks (replicated when there are fewer KV heads than ranks); MLA's "
    "latent cache is replicated on every tensor-parallel rank, as vLLM does",
)


def weight_bytes(model: ModelSpec, precision: Precision) -> float:
    """All weights in ``precision``; the parts outside its scope stay 16-bit."""
    params = model.params
    width = precision.bytes_per_weight
    if precision.scope == "all":
        return params.total * width
    if precision.scope == "experts":
        if model.moe is None:  # a dense model: MXFP4 then covers the linear layers
            return params.embeddings * 2 + (params.total - params.embeddings) * width
        return params.experts * width + (params.total - params.experts) * 2
    return params.embeddings * 2 + (params.total - params.embeddings) * width


def expert_weight_bytes(model: ModelSpec, precision: Precision) -> float:
    """The routed experts' share of :func:`weight_bytes` (0 for a dense model)."""
    # Experts are linear layers, so every scope puts them in the precision's format.
    return model.params.experts * precision.bytes_per_weight


def kv_share(model: ModelSpec, tp: int) -> float:
    """The fraction of a sequence's KV cache one tensor-parallel rank holds."""
    if model.mla is not None:
        return 1.0
    heads_per_rank = math.ceil(model.num_kv_heads / tp)
    return heads_per_rank / model.num_kv_heads


def kv_bytes_per_device(
    model: ModelSpec, kv: KvDtype, context: int, sequences: int, tp: int, pp: int
) -> float:
    per_sequence = model.kv_bytes_per_sequence(context, kv.bytes_per_element)
    return sequences * per_sequence * kv_share(model, tp) / pp


def activation_bytes(
    model: ModelSpec, batch: int, tp: int, chunk: int = PREFILL_CHUNK_TOKENS
) -> float:
    """Peak activations: one prefill chunk of ``chunk`` tokens (the engine's,
    engines.prefill_chunk) or one decode step of the batch, whichever is larger."""
    tokens = max(batch, chunk)
    if model.moe is not None:
        mlp_width = model.moe.experts_per_token * model.moe.expert_intermediate
    else:
        mlp_width = model.intermediate_size
    qkv = (model.num_heads + 2 * model.num_kv_heads) * model.head_dim
    per_token = 4 * model.hidden_size + (qkv + 2 * mlp_width) / tp
    logits = batch * model.vocab_size / tp * LOGITS_BYTES
    return tokens * per_token * ACTIVATION_BYTES + logits


def overhead_bytes(devices: int) -> float:
    extra = COMMUNICATION_BUFFERS_GIB if devices > 1 else 0.0
    return (RUNTIME_OVERHEAD_GIB + extra) * GIB


@dataclass(frozen=True, slots=True)
class MemoryBreakdown:
    """Bytes per device for one layout."""

    capacity: float
    budget: float  # capacity x utilization
    weights: float
    kv_cache: float  # the requested batch at the requested context
    activations: float
    overhead: float

    @property
    def used(self) -> float:
        return self.weights + self.kv_cache + self.activations + self.overhead

    @property
    def free(self) -> float:
        return self.budget - self.used

    @property
    def kv_room(self) -> float:
        """What is left for KV once weights, activations and overhead are placed."""
        return self.budget - self.weights - self.activations - self.overhead

    @property
    def fits(self) -> bool:
        return self.free >= 0


def breakdown(
    model: ModelSpec,
    gpu: Gpu,
    precision: Precision,
    kv: KvDtype,
    *,
    context: int,
    batch: int,
    tp: int,
    pp: int,
    utilization: float,
    chunk: int = PREFILL_CHUNK_TOKENS,
) -> MemoryBreakdown:
    """Bytes per device; ``chunk`` is the engine's prefill chunk (engines.prefill_chunk)."""
    devices = tp * pp
    return MemoryBreakdown(
        capacity=gpu.memory_bytes,
        budget=gpu.memory_bytes * utilization,
        weights=weight_bytes(model, precision) / devices,
        kv_cache=kv_bytes_per_device(model, kv, context, batch, tp, pp),
        activations=activation_bytes(model, batch, tp, chunk),
        overhead=overhead_bytes(devices),
    )


def max_sequences(
    model: ModelSpec, kv: KvDtype, memory: MemoryBreakdown, context: int, tp: int, pp: int
) -> int:
    """How many sequences of ``context`` tokens the KV room holds."""
    per_sequence = kv_bytes_per_device(model, kv, context, 1, tp, pp)
    if memory.kv_room <= 0:
        return 0
    if per_sequence <= 0:
        return 1 << 30
    return int(memory.kv_room // per_sequence)


def max_context(
    model: ModelSpec, kv: KvDtype, memory: MemoryBreakdown, batch: int, tp: int, pp: int
) -> int:
    """The longest context ``batch`` sequences can each reach in the KV room (0: none)."""
    room = memory.kv_room
    if room <= 0:
        return 0

    def fits(tokens: int) -> bool:
        return kv_bytes_per_device(model, kv, tokens, batch, tp, pp) <= room

    return largest_true(fits, 1 << 26)  # 67M tokens: past any model's context


def largest_true(holds: Callable[[int], bool], limit: int) -> int:
    """The largest n in [1, limit] for which ``holds`` is true (0: not even 1), for a ``holds``
    that is true up to some n and false after it: doubling, then bisection."""
    if not holds(1):
        return 0
    low, high = 1, 2
    while high < limit and holds(high):
        low, high = high, high * 2
    if high >= limit:
        if holds(limit):
            return limit
        high = limit
    while high - low > 1:
        middle = (low + high) // 2
        if holds(middle):
            low = middle
        else:
            high = middle
    return low
