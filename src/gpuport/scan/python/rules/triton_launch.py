"""GP218: Triton launch settings that fit NVIDIA's 32-lane warps but not AMD's 64-lane wavefronts."""

from __future__ import annotations

import ast

from gpuport.findings import Category, Confidence, Severity
from gpuport.rules import rule
from gpuport.scan.python import guards
from gpuport.scan.python.checks import Assignment, looks_at
from gpuport.scan.python.context import PythonContext
from gpuport.scan.python.nodes import target_name

# A block holds at most 1024 threads on AMD GPUs as on NVIDIA ones; Triton's num_warps counts
# 64-lane wavefronts on CDNA, so more than 16 is over the limit there.
# https://rocm.docs.amd.com/en/latest/reference/gpu-arch-specs.html
_MAX_BLOCK_THREADS = 1024
_WAVEFRONT = 64
_MAX_WAVES = _MAX_BLOCK_THREADS // _WAVEFRONT

TRITON_NUM_WARPS_OVER_LIMIT = rule(
    id="GP218",
    slug="triton-num-warps-over-block-limit",
    category=Category.PYTHON,
    severity=Severity.MEDIUM,
    confidence=Confidence.MEDIUM,
    summary="Asks Triton for more warps than a 1024-thread block holds with 64-lane wavefronts",
    what=(
        "Finds `num_warps=N` with N above 16 written as a literal: in `triton.Config(...)`, a "
        "kernel launch (`kernel[grid](..., num_warps=32)`) or an assignment to `num_warps`. "
        "It stays quiet where the code tells ROCm apart (`32 if not is_hip() else 16`) and in "
        "files that prune configs by their `num_warps` (an autotune `prune_configs_by` or a "
        "filter comparing `config.num_warps`)."
    ),
    why=(
        "Triton's num_warps counts 32-thread warps on NVIDIA GPUs but 64-thread wavefronts on "
        "AMD's CDNA GPUs (MI200, MI300). 32 warps are 1024 threads on NVIDIA, the block "
        "limit, and 2048 on CDNA, over it: that config fails to compile or launch there, and "
        "an autotune list that offers it errors out or wastes its benchmark runs."
    ),
    example=(
        "@triton.autotune(configs=[triton.Config({}, num_warps=w) for w in (4, 8, 16)]\n"
        "                 + [triton.Config({}, num_warps=32)], key=['N'])\n"
    ),
    instead=(
        "MAX_WARPS = 1024 // torch.cuda.get_device_properties(0).warp_size\n"
        "configs = [c for c in CONFIGS if c.num_warps <= MAX_WARPS]\n"
    ),
    fix=(
        "Cap num_warps at 1024 // warp size (16 on CDNA): prune the autotune configs by the "
        "device's warp size, or pick 16 when torch.version.hip is set."
    ),
    mechanical=False,
    references=(
        "https://github.com/Dao-AILab/flash-attention/pull/1534",
        "https://rocm.docs.amd.com/en/latest/how-to/rocm-for-ai/inference-optimization/optimizing-triton-kernel.html",
    ),
    needles=("num_warps",),
)


def _warps(node: ast.AST | None) -> int | None:
    """The literal warp count above the CDNA limit, else None."""
    if isinstance(node, ast.Constant) and type(node.value) is int and node.value > _MAX_WAVES:
        return node.value
    return None


# The module last asked about, and whether it prunes configs by num_warps (one walk per file).
_PRUNING: list[tuple[ast.AST, bool]] = []


def _prunes_by_warps(ctx: PythonContext, node: ast.AST) -> bool:
    """The file compares some ``….num_warps`` or passes ``prune_configs_by``: the configs the
    autotuner runs are filtered, usually by the device's limit (mamba's ``config_prune``)."""
    root = node
    for _child, parent in guards.ancestors(ctx.parents, node):
        root = parent
    if _PRUNING and _PRUNING[0][0] is root:
        return _PRUNING[0][1]
    prunes = False
    for sub in ast.walk(root):
        if isinstance(sub, ast.Compare) and any(
            isinstance(side, ast.Attribute) and side.attr == "num_warps"
            for side in (sub.left, *sub.comparators)
        ):
            prunes = True
            break
        if isinstance(sub, ast.keyword) and sub.arg == "prune_configs_by":
            prunes = True
            break
    _PRUNING[:] = [(root, prunes)]
    return prunes


@looks_at(TRITON_NUM_WARPS_OVER_LIMIT, events=(Assignment,), every_call=True)
def triton_num_warps_over_block_limit(ctx: PythonContext, subject: Assignment | ast.Call) -> None:
    if isinstance(subject, ast.Call):
        value = next((kw.value for kw in subject.keywords if kw.arg == "num_warps"), None)
        placed: ast.AST | None = subject  # its parents are known; the keyword's not yet
    else:
        if target_name(subject.target) != "num_warps":
            return
        value, placed = subject.value, subject.node
    warps = _warps(value)
    if warps is None or value is None:
        return
    where = placed or value
    if guards.rocm_guarded(ctx.parents, where) or _prunes_by_warps(ctx, where):
        return
    ctx.report(
        TRITON_NUM_WARPS_OVER_LIMIT,
        value,
        f"num_warps={warps} is {warps * _WAVEFRONT} threads with AMD's 64-lane wavefronts, over "
        f"the {_MAX_BLOCK_THREADS}-thread block limit: cap it at {_MAX_WAVES} on CDNA GPUs",
    )
