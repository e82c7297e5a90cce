"""What a model is made of, read from a Hugging Face config.json, a preset or a bare count.

The spec holds the shapes that memory and speed depend on (layers, heads, KV layout, experts,
sliding windows) and a parameter count computed from them, part by part, so that it can be
checked against the totals the model's authors publish. Nothing here imports or runs model
code: config.json is read as JSON data.

This is one cohesive module: the spec, and the one reading of config.json that fills it. The
other two ways in are that same reading: a preset is a published config.json shipped as data
(plan/presets/, read through gpuport.kb.loader), and a bare count scales the shape of the
nearest preset. Splitting the spec from its reading would put each family's layout (norms,
gated MLPs, MLA, experts, sliding windows) in one module and the fields it fills in another.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from gpuport.kb.loader import Entry, KbError, data_label, json_files, load_json
from gpuport.plan.errors import PlanInputError, read_input

# Families whose layout gpuport knows. Others are read as a Llama-style decoder (with a note)
# when the standard fields are there, and refused with the missing fields named otherwise.
KNOWN_FAMILIES = (
    "llama",
    "mistral",
    "mixtral",
    "qwen2",
    "qwen2_moe",
    "qwen3",
    "qwen3_moe",
    "gemma",
    "gemma2",
    "gemma3",
    "gemma3_text",
    "deepseek_v2",
    "deepseek_v3",
    "gpt_oss",
    "llama4",
    "llama4_text",
    "phi",
    "phi3",
)
# Gemma layers carry four RMSNorms (before and after attention and MLP), others two.
_FOUR_NORM_FAMILIES = ("gemma2", "gemma3", "gemma3_text")
# Phi-2 ("phi") uses a plain two-matrix GELU MLP with biases; everything else here is gated.
_UNGATED_FAMILIES = ("phi",)


@dataclass(frozen=True, slots=True)
class MlaSpec:
    """Multi-head latent attention (DeepSeek-V2/V3): KV is cached as one compressed latent."""

    q_lora_rank: int  # 0: queries are projected directly
    kv_lora_rank: int
    qk_nope_head_dim: int
    qk_rope_head_dim: int
    v_head_dim: int


@dataclass(frozen=True, slots=True)
class MoeSpec:
    """Mixture of experts: every expert is resident; each token uses ``experts_per_token``."""

    num_experts: int
    experts_per_token: int
    expert_intermediate: int
    shared_intermediate: int  # summed width of the always-on shared expert(s); 0 when none
    moe_layers: int  # layers with an MoE block; the others have a dense MLP
    params_per_expert: int  # one routed expert in one layer, biases included


@dataclass(frozen=True, slots=True)
class ParamCount:
    """Parameters by part, summed over all layers."""

    embedding: int  # input token embedding
    lm_head: int  # output projection; 0 when tied to the embedding
    attention: int
    dense_mlp: int  # dense MLP blocks (all layers of a dense model; the dense ones of an MoE)
    experts: int  # routed experts, all resident
    shared: int  # shared experts and routers
    norms: int
    other: int  # vision tower and projector of multimodal checkpoints
    active_experts: int  # routed-expert parameters one token goes through

    @property
    def total(self) -> int:
        return (
            self.embedding
            + self.lm_head
            + self.attention
            + self.dense_mlp
            + self.experts
            + self.shared
            + self.norms
            + self.other
        )

    @property
    def active(self) -> int:
        """Parameters one token computes with: the input embedding is a lookup, not a matmul.

        This is DeepSeek's convention ("36.6B activated, including 0.9B for the output
        head") and OpenAI's for gpt-oss; Mistral and Qwen also count the input embedding
        (see :attr:`Published.active_includes_embedding`).
        """
        lm_head = self.lm_head or self.embedding  # a tied head still multiplies
        return (
            lm_head
            + self.attention
            + self.dense_mlp
            + self.shared
            + self.norms
            + self.active_experts
        )

    @property
    def embeddings(self) -> int:
        """Embedding and output head: the weights quantized checkpoints usually keep 16-bit."""
        return self.embedding + self.lm_head


@dataclass(frozen=True, slots=True)
class Published:
    """The parameter counts a model's authors state, with where they state them."""

    total: float
    active: float | None
    source: str
    active_includes_embedding: bool = False  # Mistral and Qwen count the input embedding


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """One model, as far as capacity planning needs to know it."""

    name: str
    source: str  # where it came from: a path, "preset", or "parameter count"
    family: str  # config.json's model_type
    hidden_size: int
    num_layers: int
    vocab_size: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    intermediate_size: int
    params: ParamCount
    layer_windows: tuple[int, ...]  # per layer: 0 = full attention, else the window in tokens
    mla: MlaSpec | None = None
    moe: MoeSpec | None = None
    max_context: int = 0  # max_position_embeddings; 0 when unknown
    native_precision: str = "bf16"  # the checkpoint's own weight format
    published: Published | None = None
    notes: tuple[str, ...] = ()
    estimated_shape: bool = False  # True for a bare count: the shape is borrowed

    @property
    def attention_kind(self) -> str:
        if self.mla is not None:
            return "MLA"
        if self.num_kv_heads == 1:
            return "MQA"
        if self.num_kv_heads < self.num_heads:
            return "GQA"
        return "MHA"

    @property
    def sliding_layers(self) -> int:
        return sum(1 for w in self.layer_windows if w)

    def kv_elements_per_token(self) -> int:
        """Cached numbers per token in one layer (keys and values, or MLA's latent)."""
        if self.mla is not None:
            # DeepSeek caches the compressed KV latent plus the decoupled RoPE key:
            # (kv_lora_rank + qk_rope_head_dim) per layer per token, shared by all heads.
            # https://arxiv.org/abs/2405.04434 (DeepSeek-V2, section 2.1)
            return self.mla.kv_lora_rank + self.mla.qk_rope_head_dim
        return 2 * self.num_kv_heads * self.head_dim

    def kv_tokens_held(self, context: int) -> int:
        """Token-layers of cache one sequence of ``context`` tokens holds (windows capped)."""
        full, windows = _window_counts(self.layer_windows)
        return full * context + sum(count * min(context, w) for w, count in windows)

    def kv_bytes_per_sequence(self, context: int, bytes_per_element: float) -> float:
        return self.kv_tokens_held(context) * self.kv_elements_per_token() * bytes_per_element

    def kv_bytes_per_token(self, bytes_per_element: float) -> float:
        """KV bytes one more token adds when no window is full yet (all layers)."""
        return self.num_layers * self.kv_elements_per_token() * bytes_per_element

    def decode_flops_per_token(self, context: int) -> float:
        """Matmul FLOPs for one new token attending to ``context`` cached tokens."""
        weights = 2.0 * self.params.active
        if self.mla is not None:
            # With the up-projections absorbed (how MLA decodes), each head scores against
            # the latent plus RoPE key and reads values from the latent.
            per_head = (self.mla.kv_lora_rank + self.mla.qk_rope_head_dim) + self.mla.kv_lora_rank
        else:
            per_head = 2 * self.head_dim
        attention = 2.0 * self.num_heads * per_head * self.kv_tokens_held(context)
        return weights + attention


@lru_cache(maxsize=256)
def _window_counts(layer_windows: tuple[int, ...]) -> tuple[int, tuple[tuple[int, int], ...]]:
    """(full-attention layers, ((window, layers with it), ...)): the planner's searches ask
    for a model's KV size thousands of times, and a model has only a few distinct windows."""
    counts = Counter(layer_windows)
    full = counts.pop(0, 0)
    return full, tuple(sorted(counts.items()))


@dataclass(frozen=True, slots=True)
class Preset:
    """A popular model's published config.json, carried as data with its source."""

    name: str
    aliases: tuple[str, ...]
    hf_repo: str
    source: str
    checked: str
    config: Mapping[str, Any]
    published: Published


# --- reading config.json ---------------------------------------------------------------------


class _Fields:
    """Typed reads from a config dict that collect what is missing or wrong."""

    def __init__(self, data: Mapping[str, Any], origin: str) -> None:
        self.data = data
        self.origin = origin
        self.missing: list[str] = []

    def has(self, *names: str) -> bool:
        return any(self.data.get(n) is not None for n in names)

    def raw(self, *names: str) -> Any:
        for name in names:
            value = self.data.get(name)
            if value is not None:
                return value
        return None

    def int(self, *names: str, default: int | None = None, minimum: int = 1) -> int:
        """The first of ``names`` that is set, as a whole number >= ``minimum``."""
        value = self.raw(*names)
        if value is None:
            if default is None:
                self.missing.append(names[0])
                return 0
            return default
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise PlanInputError(f"{self.origin}: {names[0]} must be a number, not {value!r}")
        if isinstance(value, float) and not value.is_integer():
            raise PlanInputError(f"{self.origin}: {names[0]} must be a whole number, not {value}")
        number = int(value)
        if number < minimum:
            raise PlanInputError(
                f"{self.origin}: {names[0]} is {number}; it must be at least {minimum}"
            )
        return number

    def flag(self, name: str, default: bool) -> bool:
        value = self.data.get(name)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise PlanInputError(f"{self.origin}: {name} must be true or false, not {value!r}")
        return value


def _text_config(config: Mapping[str, Any]) -> tuple[Mapping[str, Any], Mapping[str, Any] | None]:
    """The language model's part of a (possibly multimodal) config, and the vision part."""
    text = config.get("text_config")
    vision = config.get("vision_config")
    if isinstance(text, Mapping):
        merged = dict(text)
        # Wrappers keep some fields only at the top (e.g. Gemma 3's tie_word_embeddings).
        for key in ("tie_word_embeddings", "torch_dtype", "quantization_config"):
            if key not in merged and key in config:
                merged[key] = config[key]
        if "model_type" not in text and "model_type" in config:
            merged["model_type"] = config["model_type"]
        return merged, vision if isinstance(vision, Mapping) else None
    return config, vision if isinstance(vision, Mapping) else None


def _family(config: Mapping[str, Any]) -> str:
    family = config.get("model_type")
    if isinstance(family, str) and family:
        return family
    architectures = config.get("architectures")
    if isinstance(architectures, list) and architectures and isinstance(architectures[0], str):
        return architectures[0]
    return "unknown"


def _layer_windows(f: _Fields, family: str, layers: int) -> tuple[tuple[int, ...], list[str]]:
    """Per-layer attention window (0 = full), from the config's own description of it."""
    notes: list[str] = []
    window_value = f.raw("sliding_window")
    window = 0
    if window_value is not None:
        if isinstance(window_value, bool) or not isinstance(window_value, int) or window_value < 1:
            raise PlanInputError(
                f"{f.origin}: sliding_window must be a positive whole number or null, "
                f"not {window_value!r}"
            )
        window = window_value
    types = f.raw("layer_types")
    if types is not None:
        if not isinstance(types, list) or len(types) != layers:
            count = len(types) if isinstance(types, list) else "not a list"
            raise PlanInputError(
                f"{f.origin}: layer_types has {count} entries but num_hidden_layers is {layers}"
            )
        sliding = [t == "sliding_attention" for t in types]
        if any(sliding) and not window:
            raise PlanInputError(
                f"{f.origin}: layer_types names sliding_attention layers but sliding_window is "
                "not set"
            )
        return tuple(window if s else 0 for s in sliding), notes
    if not window:
        return (0,) * layers, notes
    if family == "gemma2":
        # Gemma 2 alternates, starting with a sliding layer (transformers' Gemma2 decoder:
        # is_sliding = not bool(layer_idx % 2)).
        return tuple(window if i % 2 == 0 else 0 for i in range(layers)), notes
    if family in ("gemma3", "gemma3_text"):
        # Gemma 3: every sliding_window_pattern-th layer is global (default 6: five local
        # layers of 1024 tokens per global one), https://arxiv.org/abs/2503.19786
        pattern = f.int("sliding_window_pattern", default=6)
        return tuple(0 if (i + 1) % pattern == 0 else window for i in range(layers)), notes
    if family.startswith("qwen"):
        # Qwen configs carry a sliding_window value that is off unless use_sliding_window.
        if not f.flag("use_sliding_window", False):
            return (0,) * layers, notes
        notes.append("use_sliding_window is on: every layer is treated as windowed")
        return (window,) * layers, notes
    return (window,) * layers, notes


def _norm_params(hidden: int, family: str, biased: bool) -> int:
    per_norm = hidden * (2 if biased else 1)
    count = 4 if family in _FOUR_NORM_FAMILIES else (1 if family == "phi" else 2)
    return count * per_norm


def _vision_params(vision: Mapping[str, Any], text_hidden: int) -> int:
    """A ViT-style vision tower and its projector, from vision_config (an estimate)."""
    hidden = vision.get("hidden_size")
    inter = vision.get("intermediate_size")
    layers = vision.get("num_hidden_layers", vision.get("depth"))
    if not all(isinstance(v, int) and v > 0 for v in (hidden, inter, layers)):
        return 0
    assert isinstance(hidden, int) and isinstance(inter, int) and isinstance(layers, int)
    per_layer = 4 * (hidden * hidden + hidden) + 2 * hidden * inter + inter + hidden + 4 * hidden
    patch = vision.get("patch_size", 14)
    image = vision.get("image_size", 0)
    channels = vision.get("num_channels", 3)
    embed = 0
    if isinstance(patch, int) and isinstance(channels, int) and patch > 0:
        embed = channels * patch * patch * hidden + hidden
        if isinstance(image, int) and image > 0:
            embed += (image // patch) ** 2 * hidden
    projector = hidden * text_hidden
    return layers * per_layer + embed + 2 * hidden + projector


def _native_precision(config: Mapping[str, Any]) -> str:
    quant = config.get("quantization_config")
    if isinstance(quant, Mapping):
        method = str(quant.get("quant_method", "")).lower()
        if method == "mxfp4":
            return "mxfp4"
        if method == "fp8":
            return "fp8"
        if method in ("gptq", "awq"):
            bits = quant.get("bits", 4)
            group = quant.get("group_size", 128)
            if bits == 4 and isinstance(group, int) and group > 0:
                return f"int4-g{group}"
            if bits == 8:
                return "int8"
    dtype = str(config.get("torch_dtype", config.get("dtype", "bfloat16"))).lower()
    return {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16"}.get(dtype, "bf16")


def spec_from_config(
    config: Mapping[str, Any],
    *,
    name: str,
    source: str,
    published: Published | None = None,
) -> ModelSpec:
    """Build a :class:`ModelSpec` from a parsed config.json (raises :class:`PlanInputError`)."""
    if not isinstance(config, Mapping):
        raise PlanInputError(f"{source}: config.json must hold a JSON object")
    text, vision = _text_config(config)
    family = _family(text)
    f = _Fields(text, source)
    notes: list[str] = []

    hidden = f.int("hidden_size", "d_model", "n_embd")
    layers = f.int("num_hidden_layers", "n_layer", "num_layers")
    heads = f.int("num_attention_heads", "n_head")
    vocab = f.int("vocab_size")
    is_moe_family = f.has("num_local_experts", "n_routed_experts", "num_experts")
    inter = f.int("intermediate_size", "ffn_dim", default=0 if is_moe_family else None, minimum=0)
    if f.missing:
        known = family in KNOWN_FAMILIES
        what = f"a {family} config" if known else f"architecture {family!r}"
        raise PlanInputError(
            f"{source}: cannot size {what}: missing {', '.join(f.missing)} "
            "(gpuport needs hidden_size, num_hidden_layers, num_attention_heads, "
            "intermediate_size and vocab_size)"
        )
    if family not in KNOWN_FAMILIES:
        notes.append(
            f"architecture {family!r} is not one gpuport knows: read as a Llama-style decoder"
        )

    kv_heads = f.int("num_key_value_heads", "num_kv_heads", default=heads)
    if kv_heads > heads or heads % kv_heads:
        raise PlanInputError(
            f"{source}: num_key_value_heads ({kv_heads}) must divide num_attention_heads ({heads})"
        )
    if f.has("head_dim"):
        head_dim = f.int("head_dim")
    else:
        if hidden % heads:
            raise PlanInputError(
                f"{source}: hidden_size ({hidden}) is not a multiple of num_attention_heads "
                f"({heads}) and head_dim is not given"
            )
        head_dim = hidden // heads

    windows, window_notes = _layer_windows(f, family, layers)
    notes.extend(window_notes)
    tied = f.flag("tie_word_embeddings", family in ("gemma", "gemma2", "gemma3", "gemma3_text"))
    gated = family not in _UNGATED_FAMILIES
    biased_norms = family == "phi"

    # Attention
    mla: MlaSpec | None = None
    if f.has("kv_lora_rank"):
        q_lora = f.int("q_lora_rank", default=0, minimum=0)
        mla = MlaSpec(
            q_lora_rank=q_lora,
            kv_lora_rank=f.int("kv_lora_rank"),
            qk_nope_head_dim=f.int("qk_nope_head_dim"),
            qk_rope_head_dim=f.int("qk_rope_head_dim"),
            v_head_dim=f.int("v_head_dim"),
        )
        if f.missing:
            raise PlanInputError(
                f"{source}: an MLA config (kv_lora_rank is set) also needs {', '.join(f.missing)}"
            )
        qk_dim = mla.qk_nope_head_dim + mla.qk_rope_head_dim
        if q_lora:
            q = hidden * q_lora + q_lora + q_lora * heads * qk_dim
        else:
            q = hidden * heads * qk_dim
        attention_per_layer = (
            q
            + hidden * (mla.kv_lora_rank + mla.qk_rope_head_dim)
            + mla.kv_lora_rank
            + mla.kv_lora_rank * heads * (mla.qk_nope_head_dim + mla.v_head_dim)
            + heads * mla.v_head_dim * hidden
        )
        head_dim = qk_dim
    else:
        q_width = heads * head_dim
        kv_width = kv_heads * head_dim
        attention_per_layer = hidden * q_width + 2 * hidden * kv_width + q_width * hidden
        if family.startswith("qwen2") or f.flag("attention_bias", False) or family == "phi":
            attention_per_layer += q_width + 2 * kv_width  # q, k, v biases
            if f.flag("attention_bias", False) or family == "phi":
                attention_per_layer += hidden  # output bias
        if family.startswith("qwen3") or family in ("gemma3", "gemma3_text"):
            attention_per_layer += 2 * head_dim  # per-head RMSNorm of q and k
        if family == "gpt_oss":
            attention_per_layer += heads  # one learned attention sink per head

    # MLP and experts
    def mlp_params(width: int) -> int:
        if gated:
            return 3 * hidden * width
        return 2 * hidden * width + width + hidden  # fc1/fc2 with biases (Phi-2)

    moe: MoeSpec | None = None
    experts_total = active_experts = shared_total = dense_total = 0
    num_experts = f.int(
        "num_local_experts", "n_routed_experts", "num_experts", default=0, minimum=0
    )
    if num_experts > 1:
        top_k = f.int("num_experts_per_tok", "experts_per_token", "num_experts_per_token")
        expert_inter = f.int("moe_intermediate_size", default=inter or 0, minimum=0)
        if f.missing or not expert_inter:
            missing = f.missing or ["moe_intermediate_size"]
            raise PlanInputError(f"{source}: an MoE config also needs {', '.join(missing)}")
        if top_k > num_experts:
            raise PlanInputError(
                f"{source}: num_experts_per_tok ({top_k}) is larger than the number of experts "
                f"({num_experts})"
            )
        per_expert = 3 * hidden * expert_inter
        if family == "gpt_oss":
            per_expert += 2 * expert_inter + hidden  # gate_up and down biases
        router = hidden * num_experts + (num_experts if family in ("gpt_oss", "deepseek_v3") else 0)
        # Llama 4: one shared expert as wide as a routed one (intermediate_size) beside them.
        llama4 = family.startswith("llama4")
        n_shared = f.int("n_shared_experts", default=1 if llama4 else 0, minimum=0)
        shared_inter = n_shared * expert_inter
        if f.has("shared_expert_intermediate_size"):
            shared_inter = f.int("shared_expert_intermediate_size", minimum=0)
        shared_per_layer = (3 * hidden * shared_inter if shared_inter else 0) + router
        if f.has("shared_expert_intermediate_size") and shared_inter:
            shared_per_layer += hidden  # Qwen2-MoE's sigmoid gate on the shared expert
        # Which layers are MoE: DeepSeek keeps the first few dense; Qwen-MoE can list some.
        first_dense = f.int("first_k_dense_replace", default=0, minimum=0)
        step = f.int(
            "moe_layer_freq",
            "decoder_sparse_step",
            "interleave_moe_layer_step",
            default=1,
            minimum=1,
        )
        mlp_only = f.raw("mlp_only_layers") or []
        if not isinstance(mlp_only, list):
            raise PlanInputError(f"{source}: mlp_only_layers must be a list of layer numbers")
        if llama4:  # transformers' Llama 4: layers step - 1, 2 * step - 1, ... (Maverick: odd)
            moe_layer_ids = list(range(step - 1, layers, step))
        elif family.startswith("qwen"):
            # transformers' Qwen-MoE: (layer_idx + 1) % decoder_sparse_step == 0
            moe_layer_ids = [i for i in range(layers) if (i + 1) % step == 0 and i not in mlp_only]
        else:
            # DeepSeek: layer_idx >= first_k_dense_replace and layer_idx % moe_layer_freq == 0
            moe_layer_ids = [i for i in range(layers) if i >= first_dense and i % step == 0]
        moe_layers = len(moe_layer_ids)
        dense_layers = layers - moe_layers
        if dense_layers and not inter:
            raise PlanInputError(
                f"{source}: {dense_layers} dense layer(s) but intermediate_size is not given"
            )
        experts_total = moe_layers * num_experts * per_expert
        active_experts = moe_layers * top_k * per_expert
        shared_total = moe_layers * shared_per_layer
        # Llama 4's dense layers are intermediate_size_mlp wide, twice an expert.
        dense_width = f.int("intermediate_size_mlp", default=inter) if llama4 else inter
        dense_total = dense_layers * mlp_params(dense_width)
        moe = MoeSpec(
            num_experts=num_experts,
            experts_per_token=top_k,
            expert_intermediate=expert_inter,
            shared_intermediate=shared_inter,
            moe_layers=moe_layers,
            params_per_expert=per_expert,
        )
    else:
        if not inter:
            raise PlanInputError(f"{source}: intermediate_size must be at least 1")
        dense_total = layers * mlp_params(inter)

    embedding = vocab * hidden
    lm_head = 0 if tied else vocab * hidden + (vocab if family == "phi" else 0)
    norms = layers * _norm_params(hidden, family, biased_norms) + hidden * (
        2 if biased_norms else 1
    )
    other = _vision_params(vision, hidden) if vision is not None else 0
    if other:
        notes.append(f"includes a vision tower of about {other / 1e9:.2f}B parameters (estimated)")
    mtp = f.int("num_nextn_predict_layers", default=0, minimum=0)
    if mtp:
        notes.append(
            f"{mtp} multi-token-prediction layer(s) in the checkpoint are not counted: they are "
            "loaded only for speculative decoding"
        )
    params = ParamCount(
        embedding=embedding,
        lm_head=lm_head,
        attention=layers * attention_per_layer,
        dense_mlp=dense_total,
        experts=experts_total,
        shared=shared_total,
        norms=norms,
        other=other,
        active_experts=active_experts,
    )
    max_context = f.int("max_position_embeddings", "n_positions", default=0, minimum=0)
    return ModelSpec(
        name=name,
        source=source,
        family=family,
        hidden_size=hidden,
        num_layers=layers,
        vocab_size=vocab,
        num_heads=heads,
        num_kv_heads=kv_heads if mla is None else heads,
        head_dim=head_dim,
        intermediate_size=inter,
        params=params,
        layer_windows=windows,
        mla=mla,
        moe=moe,
        max_context=max_context,
        native_precision=_native_precision(text),
        published=published,
        notes=tuple(notes),
    )


# --- presets ---------------------------------------------------------------------------------


PRESETS_PACKAGE = "gpuport.plan"


def _preset_from_document(document: Any, filename: str) -> Preset:
    """One preset file: ``{"gpuport": {name, sources, published counts}, "config": {...}}``."""
    label = data_label(filename, PRESETS_PACKAGE)
    preset = Entry(document, label)
    meta = preset.table("gpuport")
    return Preset(
        name=meta.text("name"),
        aliases=meta.texts("aliases"),
        hf_repo=meta.text("hf_repo"),
        source=meta.text("source"),
        checked=meta.iso_date("checked").isoformat(),
        config=preset.table("config").raw,
        published=Published(
            total=meta.number("published_params"),
            active=meta.optional_number("published_active"),
            source=meta.text("published_source"),
            active_includes_embedding=meta.flag("published_active_includes_embedding"),
        ),
    )


@cache
def presets() -> dict[str, Preset]:
    """Every built-in preset by name (plan/presets/*.json), read once."""
    found: dict[str, Preset] = {}
    for filename in json_files("presets", PRESETS_PACKAGE):
        preset = _preset_from_document(load_json(filename, PRESETS_PACKAGE), filename)
        if preset.name in found:
            raise KbError(f"{data_label(filename, PRESETS_PACKAGE)}: a second preset {preset.name}")
        found[preset.name] = preset
    return found


def _normalize(name: str) -> str:
    return name.strip().lower().replace("_", "-").replace(" ", "-")


def find_preset(name: str) -> Preset | None:
    wanted = _normalize(name)
    if "/" in wanted:  # a Hugging Face repo id such as meta-llama/Llama-3.1-8B
        for preset in presets().values():
            if _normalize(preset.hf_repo) == wanted:
                return preset
        wanted = wanted.rsplit("/", 1)[1]
    for preset in presets().values():
        if wanted == preset.name or wanted in (_normalize(a) for a in preset.aliases):
            return preset
    return None


def spec_from_preset(preset: Preset) -> ModelSpec:
    return spec_from_config(
        preset.config,
        name=preset.name,
        source=f"preset ({preset.source})",
        published=preset.published,
    )


# --- loading ---------------------------------------------------------------------------------


def read_config(path: Path) -> dict[str, Any]:
    """Parse a config.json, or raise :class:`PlanInputError` naming the file and line."""
    raw = read_input(path)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise PlanInputError(f"{path}:{line}: not UTF-8 text") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PlanInputError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise PlanInputError(f"{path}: config.json must hold a JSON object")
    return data


def load_model(reference: str) -> ModelSpec:
    """A preset name (or its Hugging Face repo id), a config.json, or a folder holding one."""
    path = Path(reference).expanduser()
    if path.is_dir():
        config_path = path / "config.json"
        if not config_path.is_file():
            raise PlanInputError(f"{path}: the folder has no config.json")
        path = config_path
    if path.exists():  # read_config refuses what is not a regular file (a FIFO, a device)
        name = path.parent.name if path.name == "config.json" else path.stem
        return spec_from_config(read_config(path), name=name or str(path), source=str(path))
    preset = find_preset(reference)
    if preset is not None:
        return spec_from_preset(preset)
    if reference.endswith(".json") or reference.startswith(("/", ".", "~")):
        raise PlanInputError(f"{reference}: no such file or folder")
    from difflib import get_close_matches

    names = sorted(presets())
    close = get_close_matches(_normalize(reference), names, n=3, cutoff=0.5)
    hint = f" (did you mean {', '.join(close)}?)" if close else ""
    raise PlanInputError(
        f"model {reference!r} is neither a file, a folder with a config.json, nor a preset"
        f"{hint}; presets: {', '.join(names)}"
    )


def _count_name(params: float) -> str:
    if params >= 1e12:
        return f"{params / 1e12:.3g}T parameters"
    return f"{params / 1e9:.3g}B parameters"


def spec_from_params(params: float, precision_hint: str = "bf16") -> ModelSpec:
    """A model known only by its parameter count.

    Weights follow from the count exactly. The KV cache does not: its shape is borrowed
    from the dense preset nearest in size (a Llama-style GQA layout), and the spec says so.
    """
    if not math.isfinite(params) or params < 1e6:
        raise PlanInputError(f"--params must be a parameter count of at least 1e6, not {params:g}")
    candidates = [
        spec_from_preset(p)
        for p in presets().values()
        if p.published.active is None and "vision_config" not in p.config
    ]
    like = min(candidates, key=lambda s: abs(math.log(s.params.total / params)))
    total = int(params)
    shape_params = like.params.total
    scale = total / shape_params
    # Keep the borrowed model's split of the count into parts, scaled to the given total.
    scaled = ParamCount(
        embedding=round(like.params.embedding * scale),
        lm_head=round(like.params.lm_head * scale),
        attention=round(like.params.attention * scale),
        dense_mlp=0,
        experts=0,
        shared=0,
        norms=round(like.params.norms * scale),
        other=0,
        active_experts=0,
    )
    rest = total - scaled.total
    scaled = replace(scaled, dense_mlp=rest)
    note = (
        f"only a parameter count was given: the KV cache and activations use the shape of "
        f"{like.name} ({like.num_layers} layers, {like.num_kv_heads} KV heads of "
        f"{like.head_dim}); pass a config.json for exact figures"
    )
    return replace(
        like,
        name=_count_name(params),
        source="parameter count",
        params=scaled,
        native_precision=precision_hint,
        published=None,
        notes=(note,),
        estimated_shape=True,
    )
