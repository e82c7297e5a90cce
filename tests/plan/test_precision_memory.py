"""Bits per weight of each format, and memory per GPU: weights, KV splits, what fits."""

from __future__ import annotations

import pytest

from gpuport.plan.catalog import GIB, find_gpu
from gpuport.plan.errors import PlanInputError
from gpuport.plan.memory import (
    breakdown,
    kv_bytes_per_device,
    largest_true,
    max_context,
    max_sequences,
    weight_bytes,
)
from gpuport.plan.model_spec import load_model, spec_from_params
from gpuport.plan.precision import (
    GGUF_BITS,
    default_kv_dtype,
    group_quant_bits,
    parse_kv_dtype,
    parse_precision,
)

BF16 = parse_precision("bf16")
KV_BF16 = parse_kv_dtype("bf16")


def test_seventy_billion_parameters_in_bf16_are_140_gb() -> None:
    assert weight_bytes(spec_from_params(70e9), BF16) == 140e9


@pytest.mark.parametrize(
    ("text", "bits"),
    [
        ("fp32", 32.0),
        ("bf16", 16.0),
        ("FP16", 16.0),
        ("fp8", 8.0),
        ("int8", 8.0),
        ("int4", 4 + 20 / 128),
        ("awq", 4 + 20 / 128),
        ("gptq-g32", 4 + 20 / 32),
        ("int4-g64", 4 + 20 / 64),
        ("mxfp4", 4.25),
        ("Q4_K_M", 4.8944),
        ("q8_0", 8.5008),
        ("gguf:Q6_K", 6.5633),
        ("Q4_0", 4.5),
    ],
)
def test_bits_per_weight_include_the_format_overhead(text: str, bits: float) -> None:
    precision = parse_precision(text)
    assert precision.bits_per_weight == pytest.approx(bits)
    assert precision.source


def test_group_quantization_overhead_shrinks_with_group_size() -> None:
    assert group_quant_bits(4, 128) == 4.15625
    assert group_quant_bits(4, 32) > group_quant_bits(4, 64) > group_quant_bits(4, 128) > 4
    # llama.cpp's own measurement for Q4_K_M (4.89) sits above plain Q4_K (4.5): the
    # "M" mix keeps some tensors in Q6_K.
    assert GGUF_BITS["Q4_K_M"] > 4.5


def test_unknown_precision_lists_the_choices() -> None:
    with pytest.raises(PlanInputError, match=r"unknown precision 'int3'.*Q4_K_M"):
        parse_precision("int3")
    with pytest.raises(PlanInputError, match="group size"):
        parse_precision("int4-g0")


def test_kv_dtype_parsing_and_default() -> None:
    assert parse_kv_dtype("fp8_e4m3").bytes_per_element == 1
    assert parse_kv_dtype("auto").name == "bf16"
    assert default_kv_dtype(parse_precision("fp32")).bytes_per_element == 4
    assert default_kv_dtype(parse_precision("int4")).name == "bf16"
    with pytest.raises(PlanInputError, match="unknown KV-cache dtype"):
        parse_kv_dtype("int2")


def test_quantized_checkpoints_keep_embeddings_16_bit() -> None:
    spec = load_model("llama-3.1-8b")
    int4 = parse_precision("int4")
    expected = (
        spec.params.embeddings * 2
        + (spec.params.total - spec.params.embeddings) * int4.bytes_per_weight
    )
    assert weight_bytes(spec, int4) == pytest.approx(expected)
    # GGUF bits per weight are measured over the whole file, embeddings included.
    gguf = parse_precision("Q4_K_M")
    assert weight_bytes(spec, gguf) == pytest.approx(spec.params.total * 4.8944 / 8)
    # llama.cpp's README lists Llama-3.1-8B Q4_K_M at 4.58 GiB.
    assert weight_bytes(spec, gguf) / GIB == pytest.approx(4.58, abs=0.01)


def test_mxfp4_covers_only_the_experts_of_gpt_oss() -> None:
    spec = load_model("gpt-oss-120b")
    mxfp4 = parse_precision("mxfp4")
    total = weight_bytes(spec, mxfp4)
    assert total == pytest.approx(
        spec.params.experts * 4.25 / 8 + (spec.params.total - spec.params.experts) * 2
    )
    # OpenAI: the checkpoint is about 60.8 GiB.
    assert total / GIB == pytest.approx(60.8, rel=0.02)


def test_moe_weights_count_every_expert() -> None:
    spec = load_model("mixtral-8x7b")
    assert weight_bytes(spec, BF16) == pytest.approx(spec.params.total * 2)
    assert weight_bytes(spec, BF16) > 90e9  # all 8 experts resident, not the 2 in use


def test_kv_heads_split_over_tensor_parallel_ranks_and_replicate_past_them() -> None:
    spec = load_model("llama-3.1-70b")  # 8 KV heads
    one = kv_bytes_per_device(spec, KV_BF16, 8192, 1, tp=1, pp=1)
    assert kv_bytes_per_device(spec, KV_BF16, 8192, 1, tp=4, pp=1) == one / 4
    assert kv_bytes_per_device(spec, KV_BF16, 8192, 1, tp=8, pp=1) == one / 8
    phi = load_model("llama-3.2-1b")  # 8 KV heads too; 16 ranks would replicate
    assert kv_bytes_per_device(phi, KV_BF16, 100, 1, tp=16, pp=1) == kv_bytes_per_device(
        phi, KV_BF16, 100, 1, tp=8, pp=1
    )
    assert kv_bytes_per_device(spec, KV_BF16, 8192, 1, tp=1, pp=4) == one / 4


def test_mla_latent_is_replicated_on_tensor_parallel_ranks() -> None:
    spec = load_model("deepseek-v3")
    one = kv_bytes_per_device(spec, KV_BF16, 4096, 3, tp=1, pp=1)
    assert kv_bytes_per_device(spec, KV_BF16, 4096, 3, tp=8, pp=1) == one
    assert one == 3 * 4096 * 61 * 576 * 2


def test_breakdown_and_what_fits_agree() -> None:
    spec = load_model("llama-3.1-8b")
    gpu = find_gpu("h100")
    assert gpu is not None
    memory = breakdown(
        spec, gpu, BF16, KV_BF16, context=8192, batch=32, tp=1, pp=1, utilization=0.9
    )
    assert memory.budget == pytest.approx(80 * GIB * 0.9)
    assert memory.weights == pytest.approx(spec.params.total * 2)
    assert memory.kv_cache == pytest.approx(32 * 8192 * 131_072)
    assert memory.fits
    sequences = max_sequences(spec, KV_BF16, memory, 8192, 1, 1)
    per_sequence = 8192 * 131_072
    assert sequences * per_sequence <= memory.kv_room < (sequences + 1) * per_sequence
    longest = max_context(spec, KV_BF16, memory, 32, 1, 1)
    assert 32 * longest * 131_072 <= memory.kv_room < 32 * (longest + 1) * 131_072
    squeezed = breakdown(
        spec, gpu, BF16, KV_BF16, context=8192, batch=sequences + 1, tp=1, pp=1, utilization=0.9
    )
    assert not squeezed.fits


def test_sliding_windows_let_long_contexts_fit() -> None:
    spec = load_model("gemma-3-27b")
    gpu = find_gpu("mi300x")
    assert gpu is not None
    memory = breakdown(spec, gpu, BF16, KV_BF16, context=1, batch=1, tp=1, pp=1, utilization=0.9)
    longest = max_context(spec, KV_BF16, memory, 1, 1, 1)
    # Only the 10 global layers keep growing: far longer than 62 full layers would allow.
    full_only = memory.kv_room / (62 * 2 * 16 * 128 * 2)
    assert longest > 5 * full_only


@pytest.mark.parametrize("edge", [0, 1, 2, 7, 64, 999, 1000, 5000])
@pytest.mark.parametrize("limit", [1000, 1024])
def test_largest_true_finds_the_edge_and_never_passes_the_limit(edge: int, limit: int) -> None:
    asked: list[int] = []

    def holds(n: int) -> bool:
        asked.append(n)
        return n <= edge

    assert largest_true(holds, limit) == min(edge, limit)
    assert max(asked) <= limit


def test_activations_follow_the_engines_prefill_chunk() -> None:
    # llama.cpp prefills 512 tokens a step (-ub 512), vLLM 2048: a batch-1 prompt's
    # activations are a quarter as large; a batch over the chunk sets the size itself.
    spec = load_model("llama-3.1-8b")
    gpu = find_gpu("rtx-4090")
    assert gpu is not None
    logits = spec.vocab_size * 4  # fp32 logits of one sequence
    per_token = 4 * spec.hidden_size + (
        (spec.num_heads + 2 * spec.num_kv_heads) * spec.head_dim + 2 * spec.intermediate_size
    )

    def activations(chunk: int, batch: int = 1) -> float:
        return breakdown(
            spec,
            gpu,
            BF16,
            KV_BF16,
            context=4096,
            batch=batch,
            tp=1,
            pp=1,
            utilization=0.9,
            chunk=chunk,
        ).activations

    assert activations(512) == pytest.approx(512 * per_token * 2 + logits)
    assert activations(2048) == pytest.approx(2048 * per_token * 2 + logits)
    assert (
        activations(2048)
        == breakdown(
            spec, gpu, BF16, KV_BF16, context=4096, batch=1, tp=1, pp=1, utilization=0.9
        ).activations
    )
    big = 4096  # decode steps of more sequences than either chunk holds
    assert activations(512, batch=big) == activations(2048, batch=big)
    assert activations(512, batch=big) > activations(2048)
