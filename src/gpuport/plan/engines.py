"""The serving engines `plan` models, and which one it assumes when none is named."""

from __future__ import annotations

from gpuport.plan.catalog import Gpu

# Engine ids as `--engine` takes them. Each behaves differently at the same batch: per-token
# host overhead, kernels reaching different shares of bandwidth and matrix peak.
ENGINES = ("vllm", "sglang", "tensorrt-llm", "llama.cpp", "transformers")

# Datacenter GPUs serve through vLLM on both vendors (the engine both ship a build of);
# consumer and workstation cards mostly run llama.cpp (and Ollama, built on it).
DATACENTER_ENGINE = "vllm"
DESKTOP_ENGINE = "llama.cpp"


def default_engine(gpu: Gpu) -> str:
    """The engine `plan` assumes for ``gpu`` when the user names none."""
    return DATACENTER_ENGINE if gpu.segment == "datacenter" else DESKTOP_ENGINE
