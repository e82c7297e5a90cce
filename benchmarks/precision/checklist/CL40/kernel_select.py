"""Chooses the FP8 GEMM implementation for the current GPU."""

import torch


def is_sm_at_least_89() -> bool:
    return torch.cuda.is_available() and torch.cuda.get_device_capability() >= (8, 9)


def fp8_gemm_backend() -> str:
    if is_sm_at_least_89():
        return "cutlass_rowwise"
    return "torch_scaled_mm"
