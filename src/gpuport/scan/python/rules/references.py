"""Pages several GP2xx rules cite: PyTorch's HIP notes and AMD's PyTorch compatibility table."""

from __future__ import annotations

PYTORCH_HIP_NOTES = "https://pytorch.org/docs/stable/notes/hip.html"
PYTORCH_ROCM_COMPAT = (
    "https://rocm.docs.amd.com/en/latest/compatibility/ml-compatibility/pytorch-compatibility.html"
)
