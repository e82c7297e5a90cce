"""The engine `plan` assumes per GPU when none is named."""

from __future__ import annotations

import pytest

from gpuport.plan.catalog import find_gpu
from gpuport.plan.engines import ENGINES, default_engine


@pytest.mark.parametrize(
    ("gpu_id", "engine"),
    [
        ("mi300x", "vllm"),
        ("h100-sxm", "vllm"),
        ("rx-7900-xtx", "llama.cpp"),
        ("rtx-4090", "llama.cpp"),
        ("radeon-pro-w7900", "llama.cpp"),
    ],
)
def test_datacenter_cards_default_to_vllm_and_desktop_cards_to_llama_cpp(
    gpu_id: str, engine: str
) -> None:
    gpu = find_gpu(gpu_id)
    assert gpu is not None
    assert default_engine(gpu) == engine
    assert engine in ENGINES
