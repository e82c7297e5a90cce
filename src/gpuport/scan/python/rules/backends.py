"""GP204, GP205, GP215 and GP216: PyTorch backend switches whose meaning changes on ROCm.

TF32 and reduced-precision switches, cuDNN's benchmark mode (MIOpen's search on ROCm) and the
choice of attention kernels.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from gpuport.findings import Category, Confidence, Severity
from gpuport.kb import python_code
from gpuport.rules import rule
from gpuport.scan.python.checks import Assignment, looks_at
from gpuport.scan.python.context import PythonContext
from gpuport.scan.python.nodes import argument, is_false, target_name
from gpuport.scan.python.rules.references import PYTORCH_HIP_NOTES, PYTORCH_ROCM_COMPAT

# torch.backends.cudnn.flags(…) sets the cuDNN switches for a block: benchmark=… among them.
_CUDNN_FLAGS = "torch.backends.cudnn.flags"
# The precision switches and what each does on ROCm, from the knowledge base; a switch can be
# set only by writing its last name (allow_tf32…), which is the rule's needle.
_SWITCHES = python_code.precision_switches()

# The switches GP204 reports: TF32 ones are left alone, see its docs.
_REPORTED_SWITCHES = {name: s for name, s in _SWITCHES.items() if s.kind != "tf32"}

TF32_FLAG = rule(
    id="GP204",
    slug="tf32-flag",
    category=Category.PYTHON,
    severity=Severity.LOW,
    confidence=Confidence.MEDIUM,
    summary="Sets a reduced-precision switch that ROCm does not honour",
    what=(
        "Finds assignments to `torch.backends.cuda.matmul."
        "allow_fp16_reduced_precision_reduction` and `allow_bf16_reduced_precision_reduction`. "
        "The TF32 switches (`torch.backends.cuda.matmul.allow_tf32`, "
        "`torch.backends.cudnn.allow_tf32`, `cudnn.flags(allow_tf32=…)`) are not reported: on "
        "ROCm PyTorch ignores them, so FP32 matmuls keep full FP32 precision — the behaviour of "
        "an NVIDIA GPU older than Ampere, which every such project already runs on. No result "
        "changes and nothing breaks; only the TF32 speed-up is absent (hipBLASLt's XF32 on "
        "MI300 takes `HIPBLASLT_ALLOW_TF32=1`)."
    ),
    why=(
        "AMD's PyTorch compatibility table lists the reduced-precision-reduction switches as "
        "unsupported on ROCm, so a request through them — in particular `= False`, asking for "
        "full-precision reductions — is silently dropped."
    ),
    example="torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False\n",
    instead=(
        "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False\n"
        "# on ROCm: check the accuracy you need on the AMD GPU itself (or compute in fp32)\n"
    ),
    fix=(
        "Do not rely on the reduced-precision switches on ROCm: measure the accuracy on the "
        "target GPU, or upcast the reductions that need it."
    ),
    mechanical=False,
    references=(
        PYTORCH_ROCM_COMPAT,
        # TF32 on ROCm: "TF32 is not supported on ROCm" (PyTorch's HIP notes), and
        # Context::setAllowTF32CuBLAS returns without effect under USE_ROCM unless
        # HIPBLASLT_ALLOW_TF32=1 (aten/src/ATen/Context.cpp).
        f"{PYTORCH_HIP_NOTES}#tensorfloat-32-tf32-on-rocm",
        "https://github.com/pytorch/pytorch/blob/main/aten/src/ATen/Context.cpp",
    ),
    needles=tuple(sorted({name.rsplit(".", 1)[1] for name in _REPORTED_SWITCHES})),
)


@looks_at(TF32_FLAG, assignments=tuple(_REPORTED_SWITCHES))
def tf32_flag(ctx: PythonContext, subject: Assignment) -> None:
    switch = _REPORTED_SWITCHES[ctx.qual(subject.target) or ""]
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
        "`torch.backends.cudnn.flags(benchmark=True)`. A switch that only follows the user's "
        "own option of that name (`if args.cudnn_benchmark: …benchmark = True`, `…benchmark = "
        "cfg.benchmark`) is left alone: the user turns the search on, and can leave it off."
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


def _benchmark_option(node: ast.AST | None) -> bool:
    """``cudnn_benchmark``, ``args.benchmark``, ``cfg["cudnn_benchmark"]``,
    ``opts.get("benchmark")``: a user's option named for the switch."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if node.func.attr != "get" or not node.args:
            return False
        node = node.args[0]
        name = node.value if isinstance(node, ast.Constant) else None
    else:
        name = target_name(node) if node is not None else None
    return isinstance(name, str) and "benchmark" in name.lower()


def _follows_option(ctx: PythonContext, subject: Assignment) -> bool:
    """The switch is set from, or only under, the user's option of that name."""
    if _benchmark_option(subject.value):
        return True
    statement = subject.node
    parent = ctx.parents.get(statement) if statement is not None else None
    if not isinstance(parent, ast.If) or statement not in parent.body:
        return False
    tests = parent.test.values if isinstance(parent.test, ast.BoolOp) else [parent.test]
    return any(_benchmark_option(test) for test in tests)


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
    elif not is_false(subject.value) and not _follows_option(ctx, subject):
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
        "`torch.backends.cuda.enable_math_sdp(False)`. A `with sdpa_kernel(…)` block whose "
        "attention call is given FP8 scale factors (`q_descale=`, `k_descale=`…) is left "
        "alone: only the flash kernel takes FP8 inputs, so the math backend could not run "
        "that call either, and the FP8 attention itself is the porting question."
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


def _fp8_attention_block(parents: Mapping[ast.AST, ast.AST], node: ast.Call) -> bool:
    """``with sdpa_kernel(…):`` around a call given FP8 descale factors (``q_descale=…``)."""
    item = parents.get(node)
    block = parents.get(item) if isinstance(item, ast.withitem) else None
    if not isinstance(block, (ast.With, ast.AsyncWith)):
        return False
    return any(
        isinstance(inner, ast.Call)
        and any(kw.arg is not None and kw.arg.endswith("_descale") for kw in inner.keywords)
        for statement in block.body
        for inner in ast.walk(statement)
    )


@looks_at(SDPA_NO_FALLBACK, calls=(_SDPA_KERNEL, _SDP_KERNEL, _ENABLE_MATH_SDP))
def sdpa_no_fallback(ctx: PythonContext, node: ast.Call) -> None:
    qual = ctx.qual(node.func)
    if qual == _SDPA_KERNEL:
        backends = _backend_names(argument(node, 0, "backends"))
        if not backends or not backends <= {"FLASH_ATTENTION", "EFFICIENT_ATTENTION"}:
            return
        if _fp8_attention_block(ctx.parents, node):
            return  # only the flash kernel takes FP8 inputs: a fallback would not help
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
