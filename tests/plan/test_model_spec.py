"""Model specs from config.json: parameter counts against published totals, KV layouts of
GQA, MLA, sliding-window and MoE models, and clear messages for bad configs."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from plan_samples import LLAMA_LIKE

from gpuport.plan.errors import PlanInputError
from gpuport.plan.model_spec import (
    find_preset,
    load_model,
    presets,
    spec_from_config,
    spec_from_params,
    spec_from_preset,
)

WriteConfig = Callable[..., Path]
BF16 = 2.0


def test_there_are_at_least_twenty_presets_with_sources() -> None:
    found = presets()
    assert len(found) >= 20
    for preset in found.values():
        assert preset.source.startswith("https://huggingface.co/"), preset.name
        assert preset.published.source, preset.name
        assert preset.checked.count("-") == 2, preset.name


@pytest.mark.parametrize("name", sorted(presets()))
def test_parameter_count_matches_the_published_total(name: str) -> None:
    preset = presets()[name]
    spec = spec_from_preset(preset)
    # Published totals are rounded to two or three digits ("70.6B", "141B").
    assert spec.params.total == pytest.approx(preset.published.total, rel=0.01)


@pytest.mark.parametrize(
    "name", sorted(n for n, p in presets().items() if p.published.active is not None)
)
def test_active_parameters_match_the_published_figure(name: str) -> None:
    preset = presets()[name]
    spec = spec_from_preset(preset)
    active = spec.params.active
    if preset.published.active_includes_embedding:
        active += spec.params.embedding
    assert preset.published.active is not None
    assert active == pytest.approx(preset.published.active, rel=0.03)


def test_llama_3_1_8b_kv_bytes_per_token_is_131072() -> None:
    # 32 layers x 8 KV heads x 128 x (K and V) x 2 bytes, as the issue states.
    spec = load_model("llama-3.1-8b")
    assert (spec.num_layers, spec.num_kv_heads, spec.head_dim) == (32, 8, 128)
    assert spec.kv_bytes_per_token(BF16) == 131_072
    assert spec.attention_kind == "GQA"


def test_gqa_formula_on_llama_3_1_70b() -> None:
    spec = load_model("meta-llama/Llama-3.1-70B")  # by Hugging Face repo id
    assert spec.kv_bytes_per_token(BF16) == 80 * 2 * 8 * 128 * 2  # 327,680
    # Eight query heads share a KV head: the cache is 8x smaller than MHA's would be.
    assert spec.num_heads // spec.num_kv_heads == 8


def test_mla_caches_the_latent_on_deepseek_v3() -> None:
    spec = load_model("deepseek-v3")
    assert spec.attention_kind == "MLA"
    assert spec.mla is not None
    # (kv_lora_rank 512 + qk_rope_head_dim 64) per layer per token, 61 layers.
    assert spec.kv_elements_per_token() == 576
    assert spec.kv_bytes_per_token(BF16) == 61 * 576 * 2
    # Versus 128 heads x (192 + 128) dims if K and V were cached per head.
    assert spec.kv_elements_per_token() < 128 * (192 + 128) / 70


def test_sliding_window_layers_cap_at_the_window_on_gemma_3_27b() -> None:
    spec = load_model("gemma-3-27b")
    # Every sixth layer is global: layers 5, 11, ..., 59 -> 10 global, 52 local.
    assert spec.sliding_layers == 52
    assert [i for i, w in enumerate(spec.layer_windows) if not w] == list(range(5, 62, 6))
    per_token_layer = 2 * 16 * 128 * BF16
    expected = (10 * 8192 + 52 * 1024) * per_token_layer
    assert spec.kv_bytes_per_sequence(8192, BF16) == expected
    # Below the window the hybrid layout costs as much as full attention.
    assert spec.kv_bytes_per_sequence(1000, BF16) == 62 * 1000 * per_token_layer


def test_gemma_2_alternates_starting_with_a_sliding_layer() -> None:
    spec = load_model("gemma-2-9b")
    assert spec.layer_windows[:4] == (4096, 0, 4096, 0)
    per_token_layer = 2 * 8 * 256 * BF16
    assert spec.kv_bytes_per_sequence(8192, BF16) == (21 * 8192 + 21 * 4096) * per_token_layer


def test_gpt_oss_reads_layer_types() -> None:
    spec = load_model("gpt-oss-120b")
    assert spec.layer_windows[:2] == (128, 0)
    assert spec.sliding_layers == 18
    assert spec.kv_bytes_per_sequence(8192, BF16) == (18 * 8192 + 18 * 128) * 2 * 8 * 64 * BF16
    assert spec.native_precision == "mxfp4"


def test_qwen_sliding_window_is_off_unless_enabled() -> None:
    spec = load_model("qwen2.5-7b")  # config says sliding_window 131072, use_sliding_window false
    assert spec.sliding_layers == 0


def test_moe_experts_all_resident_and_few_active_on_mixtral() -> None:
    spec = load_model("mixtral-8x7b")
    assert spec.moe is not None
    assert (spec.moe.num_experts, spec.moe.experts_per_token, spec.moe.moe_layers) == (8, 2, 32)
    assert spec.params.experts == 32 * 8 * 3 * 4096 * 14336
    assert spec.params.active_experts == spec.params.experts // 4


def test_deepseek_keeps_its_first_three_layers_dense_and_a_shared_expert() -> None:
    spec = load_model("deepseek-r1")
    assert spec.moe is not None
    assert spec.moe.moe_layers == 58
    assert spec.moe.shared_intermediate == 2048
    assert spec.params.dense_mlp == 3 * 3 * 7168 * 18432
    assert spec.native_precision == "fp8"


def test_tied_embeddings_are_counted_once() -> None:
    spec = load_model("llama-3.2-1b")
    assert spec.params.lm_head == 0
    assert spec.params.embedding == 128256 * 2048


def test_reads_a_folder_or_a_file(write_config: WriteConfig) -> None:
    path = write_config(LLAMA_LIKE, folder="my-model")
    from_folder = load_model(str(path.parent))
    from_file = load_model(str(path))
    assert from_folder.name == "my-model"
    assert from_folder.params.total == from_file.params.total
    attention = 8 * (1024 * 1024 * 2 + 2 * 1024 * 256)
    mlp = 8 * 3 * 1024 * 4096
    norms = 8 * 2 * 1024 + 1024
    assert from_folder.params.total == 2 * 32000 * 1024 + attention + mlp + norms


def test_multimodal_wrapper_uses_text_config(write_config: WriteConfig) -> None:
    wrapped = {"model_type": "llava", "text_config": dict(LLAMA_LIKE), "vision_config": {}}
    spec = load_model(str(write_config(wrapped)))
    assert spec.hidden_size == 1024
    assert spec.family == "llama"


def test_unknown_architecture_names_the_missing_fields(write_config: WriteConfig) -> None:
    path = write_config({"model_type": "mamba", "d_state": 16, "vocab_size": 50280})
    with pytest.raises(PlanInputError) as caught:
        load_model(str(path))
    message = str(caught.value)
    assert "architecture 'mamba'" in message
    assert "hidden_size" in message and "num_attention_heads" in message
    assert "vocab_size" not in message.split("missing")[1].split("(")[0]


def test_unknown_architecture_with_standard_fields_is_read_with_a_note(
    write_config: WriteConfig,
) -> None:
    config = dict(LLAMA_LIKE, model_type="brand_new_lm")
    spec = load_model(str(write_config(config)))
    assert any("brand_new_lm" in note for note in spec.notes)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"num_key_value_heads": 5}, "must divide num_attention_heads"),
        ({"hidden_size": -4}, "hidden_size is -4; it must be at least 1"),
        ({"num_hidden_layers": 0}, "num_hidden_layers is 0"),
        ({"hidden_size": "4096"}, "hidden_size must be a number"),
        (
            {"hidden_size": 1000, "num_attention_heads": 7, "num_key_value_heads": 7},
            "not a multiple of num_attention_heads",
        ),
        ({"num_local_experts": 4, "num_experts_per_tok": 6}, "larger than the number of experts"),
        (
            {"sliding_window": 512, "layer_types": ["full_attention"] * 3},
            "layer_types has 3 entries but num_hidden_layers is 8",
        ),
        ({"kv_lora_rank": 64}, "an MLA config"),
    ],
)
def test_bad_or_contradictory_fields_are_named(
    write_config: WriteConfig, change: dict[str, Any], expected: str
) -> None:
    config = copy.deepcopy(LLAMA_LIKE)
    config.update(change)
    path = write_config(config)
    with pytest.raises(PlanInputError, match=expected) as caught:
        load_model(str(path))
    assert str(path) in str(caught.value)


def test_broken_json_names_file_and_line(write_config: WriteConfig) -> None:
    path = write_config('{\n  "hidden_size": 4096,\n  "num_hidden_layers": ,\n}')
    with pytest.raises(PlanInputError, match=rf"{path}:3: not valid JSON"):
        load_model(str(path))


def test_not_an_object(write_config: WriteConfig) -> None:
    with pytest.raises(PlanInputError, match="JSON object"):
        load_model(str(write_config("[1, 2, 3]")))


def test_binary_config_is_refused(write_config: WriteConfig) -> None:
    path = write_config("{}")
    path.write_bytes(b'{"a": 1,\n"b": "\xff\xfe"}')
    with pytest.raises(PlanInputError, match=":2: not UTF-8"):
        load_model(str(path))


def test_missing_path_is_named(tmp_path: Path) -> None:
    with pytest.raises(PlanInputError, match="no such file or folder"):
        load_model(str(tmp_path / "absent" / "config.json"))


def test_folder_without_config(tmp_path: Path) -> None:
    with pytest.raises(PlanInputError, match=r"no config\.json"):
        load_model(str(tmp_path))


def test_unknown_name_suggests_a_preset() -> None:
    with pytest.raises(PlanInputError, match=r"did you mean llama-3\.1-8b"):
        load_model("llama-3.1-8")


def test_presets_answer_to_aliases() -> None:
    preset = find_preset("Llama-3.3-70B-Instruct")
    assert preset is not None and preset.name == "llama-3.1-70b"


def test_bare_parameter_count_borrows_a_shape_and_says_so() -> None:
    spec = spec_from_params(70e9)
    assert spec.params.total == 70_000_000_000
    assert spec.name == "70B parameters"
    assert spec_from_params(1.5e12).name == "1.5T parameters"
    assert spec.estimated_shape
    assert "llama" in spec.notes[0] or "qwen" in spec.notes[0]
    assert spec.num_kv_heads == 8  # a 70B-class GQA layout
    with pytest.raises(PlanInputError, match="at least 1e6"):
        spec_from_params(-5)


def test_config_dict_without_source_file() -> None:
    spec = spec_from_config(LLAMA_LIKE, name="inline", source="inline")
    assert spec.max_context == 4096
    assert spec.decode_flops_per_token(1) > 2 * spec.params.active


@pytest.mark.parametrize(
    ("name", "total", "moe_layers", "experts"),
    [("llama-4-scout", 109e9, 48, 16), ("llama-4-maverick", 400e9, 24, 128)],
)
def test_llama_4_reads_its_nested_interleaved_moe_with_a_shared_expert(
    name: str, total: float, moe_layers: int, experts: int
) -> None:
    # Meta's model cards: Scout 109B total, Maverick 400B, both 17B active; Maverick puts
    # an MoE block in every second layer (interleave_moe_layer_step 2), dense ones between.
    spec = load_model(name)
    assert spec.family == "llama4_text"
    assert spec.moe is not None
    assert (spec.moe.moe_layers, spec.moe.num_experts) == (moe_layers, experts)
    assert spec.moe.experts_per_token == 1
    assert spec.moe.shared_intermediate == spec.moe.expert_intermediate == 8192
    assert spec.params.total == pytest.approx(total, rel=0.01)
    assert spec.params.active + spec.params.embedding == pytest.approx(17e9, rel=0.03)
    if moe_layers < spec.num_layers:  # dense layers are intermediate_size_mlp (16384) wide
        assert spec.params.dense_mlp == (spec.num_layers - moe_layers) * 3 * 5120 * 16384
