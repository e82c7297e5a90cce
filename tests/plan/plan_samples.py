"""Shared model configs for the plan tests (a module, not conftest, so that it cannot be
shadowed by another folder's conftest when tests/plan and tests/report run together)."""

from __future__ import annotations

from typing import Any

LLAMA_LIKE: dict[str, Any] = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 1024,
    "intermediate_size": 4096,
    "num_hidden_layers": 8,
    "num_attention_heads": 16,
    "num_key_value_heads": 4,
    "vocab_size": 32000,
    "max_position_embeddings": 4096,
    "tie_word_embeddings": False,
}
