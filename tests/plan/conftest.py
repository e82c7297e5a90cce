"""Helpers for the plan tests: small configs written on the fly, and a plan builder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

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


@pytest.fixture
def write_config(tmp_path: Path):  # type: ignore[no-untyped-def]
    """write_config(dict_or_text, folder="model") -> path of the written config.json."""

    def write(content: dict[str, Any] | str, folder: str = "model") -> Path:
        directory = tmp_path / folder
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / "config.json"
        text = content if isinstance(content, str) else json.dumps(content, indent=2)
        path.write_text(text, encoding="utf-8")
        return path

    return write
