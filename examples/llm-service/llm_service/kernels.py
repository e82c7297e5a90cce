"""Loads the fused softmax extension, falling back to PyTorch when it is not built."""

import torch

try:
    from llm_service import _kernels  # built by setup.py (CUDAExtension)
except ImportError:  # pragma: no cover - CPU-only development machines
    _kernels = None


def fused_softmax(scores: torch.Tensor, scale: float) -> torch.Tensor:
    if _kernels is not None and scores.is_cuda and scores.dtype == torch.float32:
        return _kernels.fused_softmax(scores, scale)
    return torch.softmax(scores * scale, dim=-1)
