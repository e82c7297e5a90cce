"""GP204, GP205, GP215 and GP216: PyTorch backend switches whose meaning changes on ROCm.

TF32 and reduced-precision switches, cuDNN's benchmark mode (MIOpen's search on ROCm) and the
choice of attention kernels.
"""

from __future__ import annotations

import ast

from gpuport.findings import Category, Confidence, Severity
from gpuport.kb import python_code
from gpuport.rules import rule
from gpuport.scan.python.checks import Assignment, looks_at
from gpuport.scan.python.context import PythonContext
from gpuport.scan.python.nodes import argument, is_false
from gpuport.scan.python.rules.references import PYTORCH_HIP_NOTES, PYTORCH_ROCM_COMPAT

# torch.backends.cudnn.flags(…) sets the cuDNN switches for a block: allow_tf32=… is this one.
_CUDNN_FLAGS = "torch.backends.cudnn.flags"
_CUDNN_TF32 = "torch.backends.cudnn.allow_tf32"
# The precision switches and what each does on ROCm, from the knowledge base; a switch can be
# set only by writing its last name (allow_tf32…), which is the rule's needle.
_SWITCHES = python_code.precision_switches()

TF32_FLAG = rule(
    id="GP204",
    slug="tf32-flag",
    category=Category.PYTHON,
    severity=Severity.LOW,
    confidence=Confidence.MEDIUM,
    summary="Sets a TF32 or reduced-precision switch that ROCm honours only in part",
    what=(
        "Finds assignments to `torch.backends.cuda.matmul.allow_tf32` and "
        "`torch.backends.cudnn.allow_tf32` (other than `= False`), to "
        "`allow_fp16_reduced_precision_reduction` / `allow_bf16_reduced_precision_reduction`, "
        "and `torch.backends.cudnn.flags(allow_tf32=…)`."
    ),
    why=(
        "TF32 is an NVIDIA Ampere+ format. On ROCm, PyTorch maps `allow_tf32` to hipBLASLt's "
        "XF32 only on MI300-class GPUs (gfx942) and recent releases, with numerics that differ "
        "from NVIDIA's; on other AMD GPUs the switch does nothing, so FP32 matmuls run at full "
        "FP32 speed. AMD's PyTorch compatibility table lists the cuDNN TF32 switch and the "
        "reduced-precision-reduction switches as unsupported, so a request for stricter "
        "accuracy through them is silently dropped."
    ),
    example="torch.backends.cuda.matmul.allow_tf32 = True\ntorch.backends.cudnn.allow_tf32 = True\n",
    instead=(
        "torch.set_float32_matmul_precision('high')  # the portable knob\n"
        "# then measure speed and accuracy on the AMD GPU you target\n"
    ),
    fix=(
        "Use `torch.set_float32_matmul_precision`, and do not rely on TF32 speed or on "
        "reduced-precision settings on ROCm: measure on the target GPU."
    ),
    mechanical=False,
    references=(
        f"{PYTORCH_HIP_NOTES}#tensorfloat-32-tf32-on-rocm",
        "https://github.com/pytorch/pytorch/issues/130600",
        PYTORCH_ROCM_COMPAT,
    ),
    needles=tuple(sorted({name.rsplit(".", 1)[1] for name in _SWITCHES})),
)


@looks_at(TF32_FLAG, assignments=tuple(_SWITCHES), calls=(_CUDNN_FLAGS,))
def tf32_flag(ctx: PythonContext, subject: Assignment | ast.Call) -> None:
    if isinstance(subject, ast.Call):  # cudnn.flags(allow_tf32=True)
        for kw in subject.keywords:
            if kw.arg == "allow_tf32" and not is_false(kw.value):
                message = f"sets {_CUDNN_TF32}: {_SWITCHES[_CUDNN_TF32].on_rocm}"
                ctx.report(TF32_FLAG, kw.value, message)
        return
    switch = _SWITCHES[ctx.qual(subject.target) or ""]
    if switch.kind == "tf32" and is_false(subject.value):
        return  # turning TF32 off asks for nothing ROCm lacks
    ctx.report(TF32_FLAG, subject.target, f"sets {switch.name}: {switch.on_rocm}")


_CUDNN_BENCHMARK = "torch.backends.cudnn.benchmark"

CUDNN_BENCHMARK = rule(
    id="GP205",
    slug="cudnn-benchmark",
    category=Category.PYTHON,
    severity=Severity.LOW,
    confidence=Confidence.MEDIUM,
    summary="Turns on cudnn.benchmark, which on ROCm runs MIOpen's exhaustive kernel search",
    what=(
        "Finds `torch.backends.cudnn.benchmark = True` (or any value other than False) and "
        "`torch.backends.cudnn.flags(benchmark=True)`."
    ),
    why=(
        "On ROCm the cuDNN switches drive MIOpen. With benchmark on, MIOpen does an "
        "exhaustive search for every new convolution shape and writes its find database; "
        "on a cold cache that can take minutes per shape (PyTorch's own CI measured ~13 "
        "minutes for one 3-D convolution), and with changing input shapes it never ends. "
        "The search results live in MIOpen's user database (~/.config/miopen), which a "
        "fresh container does not have."
    ),
    example="torch.backends.cudnn.benchmark = True\n",
    instead=(
        "torch.backends.cudnn.benchmark = not torch.version.hip  # or keep it, and\n"
        "# persist MIOpen's database (MIOPEN_USER_DB_PATH) between runs;\n"
        "# MIOPEN_FIND_MODE=FAST trades speed for a quick start\n"
    ),
    fix=(
        "Keep benchmark on only for fixed shapes, and persist MIOpen's user database across "
        "runs; otherwise turn it off on ROCm or set MIOPEN_FIND_MODE=FAST."
    ),
    mechanical=False,
    references=(
        "https://github.com/pytorch/pytorch/pull/145294",
        "https://github.com/pytorch/pytorch/pull/179795",
    ),
    needles=("cudnn",),
)


@looks_at(CUDNN_BENCHMARK, assignments=(_CUDNN_BENCHMARK,), calls=(_CUDNN_FLAGS,))
def cudnn_benchmark(ctx: PythonContext, subject: Assignment | ast.Call) -> None:
    message = (
        "cudnn.benchmark on ROCm runs MIOpen's exhaustive search for every new shape: "
        "minutes on a cold cache"
    )
    if isinstance(subject, ast.Call):  # cudnn.flags(benchmark=True)
        for kw in subject.keywords:
            if kw.arg == "benchmark" and not is_false(kw.value):
                ctx.report(CUDNN_BENCHMARK, kw.value, message)
    elif not is_false(subject.value):
        ctx.report(CUDNN_BENCHMARK, subject.target, message)


# How PyTorch's attention calls choose their kernels.
_SDPA_KERNEL = "torch.nn.attention.sdpa_kernel"
_SDP_KERNEL = "torch.backends.cuda.sdp_kernel"
_SDP_KERNEL_SWITCHES = ("enable_flash", "enable_math", "enable_mem_efficient", "enable_cudnn")
_ENABLE_CUDNN_SDP = "torch.backends.cuda.enable_cudnn_sdp"
_ENABLE_MATH_SDP = "torch.backends.cuda.enable_math_sdp"
_CUDNN_ATTENTION_OP = "torch.ops.aten._scaled_dot_product_cudnn_attention"


def _backend_names(node: ast.AST | None) -> set[str] | None:
    """``SDPBackend.X`` or a list of them -> {"X", …}; None when not written out."""
    if node is None:
        return None
    elements = node.elts if isinstance(node, (ast.List, ast.Tuple, ast.Set)) else [node]
    names: set[str] = set()
    for element in elements:
        if not isinstance(element, ast.Attribute):
            return None
        names.add(element.attr)
    return names


def _sdp_kernel_switches(call: ast.Call) -> tuple[dict[str, bool], bool]:
    """``sdp_kernel(…)``: whether each backend is on (on unless given False), and whether
    cuDNN's switch is given at all."""
    given = {name: argument(call, i, name) for i, name in enumerate(_SDP_KERNEL_SWITCHES)}
    enabled = {name: value is None or not is_false(value) for name, value in given.items()}
    return enabled, given["enable_cudnn"] is not None


def _cudnn_only(enabled: dict[str, bool], cudnn_given: bool) -> bool:
    """``sdp_kernel`` with cuDNN switched on and every other backend off."""
    others = ("enable_flash", "enable_math", "enable_mem_efficient")
    return cudnn_given and enabled["enable_cudnn"] and not any(enabled[name] for name in others)


CUDNN_ATTENTION = rule(
    id="GP215",
    slug="cudnn-attention",
    category=Category.PYTHON,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="Selects the cuDNN attention backend, which ROCm builds do not have",
    what=(
        "Finds `sdpa_kernel(SDPBackend.CUDNN_ATTENTION)` (cuDNN as the only choice), "
        "`torch.backends.cuda.sdp_kernel(enable_cudnn=True, …)` with every other backend off, "
        "direct calls of `_scaled_dot_product_cudnn_attention`, and (LOW) "
        "`torch.backends.cuda.enable_cudnn_sdp(True)`."
    ),
    why=(
        "cuDNN is NVIDIA's library. On ROCm, PyTorch reports cuDNN attention as unavailable, "
        "so forcing it makes every `scaled_dot_product_attention` call fail with 'No available "
        "kernel'; `enable_cudnn_sdp(True)` simply has no effect."
    ),
    example="with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):\n    out = F.scaled_dot_product_attention(q, k, v)\n",
    instead=(
        "with sdpa_kernel([SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION,\n"
        "                  SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]):\n"
        "    out = F.scaled_dot_product_attention(q, k, v)\n"
    ),
    fix="Give sdpa_kernel a priority list that ends with backends ROCm has (flash, efficient, math).",
    mechanical=False,
    references=(
        "https://github.com/pytorch/pytorch/issues/168873",
        "https://github.com/ostris/ai-toolkit/pull/933",
        PYTORCH_ROCM_COMPAT,
    ),
    needles=("sdp", "cudnn_attention"),
)


@looks_at(
    CUDNN_ATTENTION,
    calls=(_SDPA_KERNEL, _SDP_KERNEL, _ENABLE_CUDNN_SDP),
    call_prefixes=(_CUDNN_ATTENTION_OP,),
)
def cudnn_attention(ctx: PythonContext, node: ast.Call) -> None:
    cudnn_only = (
        "selects only the cuDNN attention backend: ROCm builds have none, so attention fails "
        "with 'No available kernel'"
    )
    qual = ctx.qual(node.func)
    if qual == _SDPA_KERNEL:
        if _backend_names(argument(node, 0, "backends")) == {"CUDNN_ATTENTION"}:
            ctx.report(CUDNN_ATTENTION, node, cudnn_only)
    elif qual == _SDP_KERNEL:
        if _cudnn_only(*_sdp_kernel_switches(node)):
            ctx.report(CUDNN_ATTENTION, node, cudnn_only)
    elif qual == _ENABLE_CUDNN_SDP:
        if not is_false(argument(node, 0, "enabled")):
            ctx.report(
                CUDNN_ATTENTION,
                node,
                "enable_cudnn_sdp(True) has no effect on ROCm: there is no cuDNN attention",
                severity=Severity.LOW,
            )
    else:  # torch.ops.aten._scaled_dot_product_cudnn_attention(…)
        ctx.report(
            CUDNN_ATTENTION,
            node,
            "calls the cuDNN attention operator directly; ROCm builds do not provide it",
        )


SDPA_NO_FALLBACK = rule(
    id="GP216",
    slug="sdpa-no-fallback",
    category=Category.PYTHON,
    severity=Severity.LOW,
    confidence=Confidence.MEDIUM,
    summary="Pins attention to the flash / memory-efficient kernels with no math fallback",
    what=(
        "Finds `sdpa_kernel(...)` given only FLASH_ATTENTION and/or EFFICIENT_ATTENTION, "
        "`torch.backends.cuda.sdp_kernel(..., enable_math=False)` and "
        "`torch.backends.cuda.enable_math_sdp(False)`."
    ),
    why=(
        "On ROCm the flash and memory-efficient kernels come from AOTriton or Composable "
        "Kernel, which cover fewer GPUs (MI200/MI300/MI350, RDNA3 partly or behind "
        "TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL) and fewer shapes (head dimension, masks) "
        "than on NVIDIA. Without the math backend to fall back on, such a call fails with "
        "'No available kernel' instead of running slower."
    ),
    example="with sdpa_kernel(SDPBackend.FLASH_ATTENTION):\n    out = F.scaled_dot_product_attention(q, k, v)\n",
    instead=(
        "with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.MATH]):\n"
        "    out = F.scaled_dot_product_attention(q, k, v)\n"
    ),
    fix="Keep SDPBackend.MATH (or EFFICIENT_ATTENTION) in the list as a fallback on ROCm.",
    mechanical=False,
    references=(
        "https://github.com/pytorch/pytorch/issues/138864",
        "https://github.com/ROCm/TheRock/issues/1946",
    ),
    needles=("sdp",),
)


@looks_at(SDPA_NO_FALLBACK, calls=(_SDPA_KERNEL, _SDP_KERNEL, _ENABLE_MATH_SDP))
def sdpa_no_fallback(ctx: PythonContext, node: ast.Call) -> None:
    qual = ctx.qual(node.func)
    if qual == _SDPA_KERNEL:
        backends = _backend_names(argument(node, 0, "backends"))
        if not backends or not backends <= {"FLASH_ATTENTION", "EFFICIENT_ATTENTION"}:
            return
        what = " and ".join(sorted(backends))
    elif qual == _SDP_KERNEL:
        enabled, cudnn_given = _sdp_kernel_switches(node)
        if enabled["enable_math"] or _cudnn_only(enabled, cudnn_given):
            return  # cuDNN alone is GP215's finding
        what = "sdp_kernel(enable_math=False)"
    elif is_false(argument(node, 0, "enabled")):  # enable_math_sdp(False)
        what = "enable_math_sdp(False)"
    else:
        return
    ctx.report(
        SDPA_NO_FALLBACK,
        node,
        f"attention pinned to {what} with no math fallback: on ROCm these kernels (AOTriton/CK) "
        "cover fewer GPUs and shapes, so calls can fail with 'No available kernel'",
    )
