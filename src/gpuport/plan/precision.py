"""Weight and KV-cache formats: how many bits a weight takes, and at what rate it computes.

Bits per weight include the format's own overhead (group scales, zero points, block
scales), each figure with the place it comes from, so that memory estimates hold for real
checkpoints and not just for the nominal width.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from gpuport.plan.errors import PlanInputError

# Which peak rate of the GPU the matrix products run at.
ComputeKind = Literal["fp32", "fp16", "fp8", "int8"]
# Which weights take the format: "all" of them, the "linear" layers (embedding and output
# head stay 16-bit, as in GPTQ/AWQ/FP8 checkpoints) or only the MoE "experts" (gpt-oss MXFP4).
Scope = Literal["all", "linear", "experts"]

DEFAULT_GROUP_SIZE = 128
FP16_SOURCE = "IEEE 754 binary16 / bfloat16: 16 bits"

# llama.cpp's own measurement of each GGUF type on meta-llama/Llama-3.1-8B, whole file
# (embeddings and output included), from tools/quantize/README.md:
# https://github.com/ggml-org/llama.cpp/blob/master/tools/quantize/README.md
_GGUF_README = "https://github.com/ggml-org/llama.cpp/blob/master/tools/quantize/README.md"
GGUF_BITS: dict[str, float] = {
    "IQ1_S": 2.0042,
    "IQ1_M": 2.1460,
    "IQ2_XXS": 2.3824,
    "IQ2_XS": 2.5882,
    "IQ2_S": 2.7403,
    "IQ2_M": 2.9294,
    "IQ3_XXS": 3.2548,
    "IQ3_XS": 3.4977,
    "IQ3_S": 3.6606,
    "IQ3_M": 3.7628,
    "IQ4_XS": 4.4597,
    "IQ4_NL": 4.6818,
    "Q2_K_S": 2.9697,
    "Q2_K": 3.1593,
    "Q3_K_S": 3.6429,
    "Q3_K_L": 4.2979,
    "Q4_K_S": 4.6672,
    "Q4_K_M": 4.8944,
    "Q5_K_S": 5.5704,
    "Q5_K_M": 5.7036,
    "Q6_K": 6.5633,
    "Q8_0": 8.5008,
    "F16": 16.0005,
}
# Types the README table leaves out, from their block layout in ggml-common.h
# (https://github.com/ggml-org/llama.cpp/blob/master/ggml/src/ggml-common.h): a block of
# 32 weights holds a 16-bit scale (Q4_1/Q5_1 add a 16-bit minimum) and the quants.
GGUF_BLOCK_BITS: dict[str, float] = {
    "Q4_0": (2 + 16) * 8 / 32,  # 4.5
    "Q4_1": (4 + 16) * 8 / 32,  # 5.0
    "Q5_0": (2 + 4 + 16) * 8 / 32,  # 5.5
    "Q5_1": (4 + 4 + 16) * 8 / 32,  # 6.0
}


@dataclass(frozen=True, slots=True)
class Precision:
    """A weight format."""

    name: str
    bits_per_weight: float
    compute: ComputeKind
    scope: Scope
    source: str  # where bits_per_weight comes from

    @property
    def bytes_per_weight(self) -> float:
        return self.bits_per_weight / 8


@dataclass(frozen=True, slots=True)
class KvDtype:
    """A KV-cache element format."""

    name: str
    bytes_per_element: float
    source: str


def group_quant_bits(bits: int, group_size: int) -> float:
    """Bits per weight of GPTQ/AWQ-style group quantization with group size ``group_size``.

    Each group of ``group_size`` weights along the input dimension stores one fp16 scale
    and one zero point packed at ``bits`` bits (the ``scales`` and ``qzeros`` tensors of
    AutoGPTQ and AutoAWQ checkpoints): bits + (16 + bits) / group_size.
    """
    return bits + (16 + bits) / group_size


def parse_precision(text: str) -> Precision:
    """``fp32``, ``bf16``/``fp16``, ``fp8``, ``int8``, ``int4`` (``int4-g64``, ``gptq``,
    ``awq``), ``mxfp4``, or a GGUF type such as ``Q4_K_M``."""
    raw = text.strip()
    key = raw.lower().replace("_", "-")
    if key in ("fp32", "float32", "f32"):
        return Precision("fp32", 32.0, "fp32", "all", "IEEE 754 binary32: 32 bits")
    if key in ("bf16", "bfloat16"):
        return Precision("bf16", 16.0, "fp16", "all", FP16_SOURCE)
    if key in ("fp16", "float16", "f16", "half"):
        return Precision("fp16", 16.0, "fp16", "all", FP16_SOURCE)
    if key in ("fp8", "fp8-e4m3", "e4m3", "w8a8-fp8"):
        # Per-tensor or 128x128-block scales add < 0.01 bit per weight (DeepSeek-V3's
        # fp32 scale per 128x128 block: 32/16384 = 0.002 bits).
        return Precision(
            "fp8", 8.0, "fp8", "linear", "OCP FP8 E4M3: 8 bits; embedding and head stay 16-bit"
        )
    if key in ("int8", "w8a8", "int8-w8a8"):
        return Precision(
            "int8",
            8.0,
            "int8",
            "linear",
            "8-bit weights with per-channel scales (W8A8); embedding and head stay 16-bit",
        )
    if key in ("mxfp4",):
        # OCP Microscaling: 32 FP4 (E2M1) values share one 8-bit E8M0 scale = 4.25 bits.
        # gpt-oss ships only its MoE experts in MXFP4; everything else stays bf16.
        return Precision(
            "mxfp4",
            4 + 8 / 32,
            "fp16",
            "experts",
            "OCP Microscaling spec v1.0: 4-bit E2M1 + one 8-bit scale per 32 = 4.25 bits "
            "(MoE experts only, as gpt-oss ships them)",
        )
    match = re.fullmatch(r"(int4|gptq|awq|w4a16)(?:-g(\d+))?", key)
    if match:
        group = int(match.group(2)) if match.group(2) else DEFAULT_GROUP_SIZE
        if group < 1:
            raise PlanInputError(f"--precision {raw}: the group size must be at least 1")
        bits = group_quant_bits(4, group)
        return Precision(
            f"int4-g{group}",
            bits,
            "fp16",
            "linear",
            f"GPTQ/AWQ group quantization: 4 bits + (16-bit scale + 4-bit zero) / {group} "
            f"= {bits:.3f} bits; embedding and head stay 16-bit",
        )
    gguf = raw.upper().replace("-", "_")
    if gguf.startswith("GGUF:"):
        gguf = gguf[5:]
    if gguf in GGUF_BITS:
        return Precision(
            gguf,
            GGUF_BITS[gguf],
            "fp16",
            "all",
            f"llama.cpp's measured bits per weight for {gguf} on Llama-3.1-8B ({_GGUF_README})",
        )
    if gguf in GGUF_BLOCK_BITS:
        return Precision(
            gguf,
            GGUF_BLOCK_BITS[gguf],
            "fp16",
            "all",
            f"GGUF {gguf} block layout in ggml-common.h: {GGUF_BLOCK_BITS[gguf]} bits",
        )
    known = "fp32, bf16, fp16, fp8, int8, int4[-gN], gptq, awq, mxfp4, " + ", ".join(
        sorted([*GGUF_BITS, *GGUF_BLOCK_BITS])
    )
    raise PlanInputError(f"unknown precision {raw!r}; choose from {known}")


KV_DTYPES: dict[str, KvDtype] = {
    "fp32": KvDtype("fp32", 4.0, "32-bit floats"),
    "bf16": KvDtype("bf16", 2.0, "16-bit floats"),
    "fp16": KvDtype("fp16", 2.0, "16-bit floats"),
    "fp8": KvDtype("fp8", 1.0, "vLLM --kv-cache-dtype fp8 (E4M3/E5M2): 1 byte"),
    "int8": KvDtype("int8", 1.0, "8-bit integers: 1 byte"),
    # llama.cpp's --cache-type-k/v q8_0 and q4_0 use the weight block layouts above.
    "q8_0": KvDtype("q8_0", (2 + 32) / 32, "llama.cpp q8_0 blocks: 34 bytes per 32 values"),
    "q4_0": KvDtype("q4_0", (2 + 16) / 32, "llama.cpp q4_0 blocks: 18 bytes per 32 values"),
}


def parse_kv_dtype(text: str) -> KvDtype:
    key = text.strip().lower().replace("-", "_")
    key = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32", "auto": "bf16"}.get(key, key)
    if key.startswith("fp8"):
        key = "fp8"
    found = KV_DTYPES.get(key)
    if found is None:
        raise PlanInputError(f"unknown KV-cache dtype {text!r}; choose from {', '.join(KV_DTYPES)}")
    return found


def default_kv_dtype(weights: Precision) -> KvDtype:
    """What serving engines use when told nothing: the model's activation dtype.

    vLLM's ``--kv-cache-dtype auto`` keeps KV in the model dtype (bf16 for FP8, GPTQ or
    AWQ checkpoints too); llama.cpp's default cache type is f16.
    """
    return KV_DTYPES["fp32"] if weights.name == "fp32" else KV_DTYPES["bf16"]
