"""Which C/C++ files use CUDA: a file classification that decides whether the kernel rules read a file at all."""

from __future__ import annotations

import re

from gpuport.scan.kernels.words import words
from gpuport.syntax.cxx import code_only

# What makes C/C++ code "use CUDA". Each pattern starts with a literal, and the substrings
# are plain ``in`` tests, so a project's CUDA-free C++ files cost about 1% of lexing them.
# A header that selects code with the HIP platform macros (`#ifdef __HIP_PLATFORM_AMD__`
# `constexpr int warp_size = 64;`) is GPU code too, though it may name nothing of CUDA's.
_CUDA_SUBSTRINGS = (
    "<<<",
    "threadIdx",
    "blockIdx",
    "warpSize",
    "cooperative_groups",
    "mma.h",
    "__HIP_PLATFORM_",
)
_CUDA_WORD_RES = (
    re.compile(r"__(?:global|device|shared|constant|managed)__"),
    re.compile(
        r"cu(?:da[A-Z_]|[A-Z][a-z]\w*\s*\(|blas|dnn|rand|fft|sparse|solver|tlass|te::|te/|b/)"
    ),
    re.compile(r"CU(?:result|device|stream|context|function|module|deviceptr)\b"),
    re.compile(r"nv(?:rtc|tx|ToolsExt|cuda)"),
)


def mentions_cuda(text: str) -> bool:
    """Whether ``text`` (code, comments and strings alike) mentions CUDA: a cheap first test."""
    if any(needle in text for needle in _CUDA_SUBSTRINGS):
        return True
    return any(next(words(pattern, text), None) is not None for pattern in _CUDA_WORD_RES)


def uses_cuda(text: str) -> bool:
    """Whether C/C++ code (not its comments or strings) uses CUDA.

    That is: it includes a CUDA header, uses ``__global__``/``__device__``, a ``<<<``
    launch, thread indices, or CUDA runtime, driver or library APIs.
    """
    return mentions_cuda(text) and mentions_cuda(code_only(text))
