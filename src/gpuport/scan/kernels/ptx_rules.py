"""Inline PTX and the NVIDIA-only features it reaches (GP301, GP309, GP310, GP311): each rule, then its check.

An ``asm`` statement belongs to the most specific rule its instructions call for: Hopper-only
instructions (GP309) before thread-block clusters (GP310) before asynchronous copies (GP311);
any other PTX is GP301's.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

from gpuport.findings import Category, Confidence, Finding, Severity
from gpuport.kb.kernels import kernel_apis
from gpuport.rules import rule
from gpuport.scan.kernels.ptx import (
    ASYNC,
    CLUSTER,
    HOPPER,
    Ptx,
    asm_of_family,
    is_hopper_wrapper,
    ptx_op_hip,
    ptx_wrapper_calls,
    special_register_hip,
)
from gpuport.scan.kernels.references import (
    AMDGPU_BUILTINS,
    COMPOSABLE_KERNEL,
    HIP_COOPERATIVE_GROUPS,
    HIP_EXTENSIONS,
    HIPBLASLT,
    NVIDIA_INLINE_PTX,
    ROCWMMA,
)
from gpuport.scan.kernels.source import KernelSource
from gpuport.scan.kernels.summaries import names_once_per_line

INLINE_PTX = rule(
    id="GP301",
    slug="inline-ptx-assembly",
    category=Category.KERNELS,
    severity=Severity.HIGH,
    confidence=Confidence.HIGH,
    summary="Inline PTX assembly does not compile for AMD GPUs and must be rewritten",
    what=(
        "Finds `asm(...)`, `asm volatile(...)`, `__asm__(...)` statements whose template is "
        "PTX, and `cuda::ptx::` wrappers, and names the PTX instructions and special registers "
        "it can see, with the HIP function that replaces each when there is one. An empty "
        'template used as a compiler barrier (`asm volatile("" ::: "memory")`) is fine '
        "and is not reported."
    ),
    why=(
        "PTX is NVIDIA's virtual instruction set. HIP-Clang compiles device code to AMDGPU "
        "machine code and has no PTX front end, so every PTX statement is a compile error. "
        "AMDGPU inline assembly exists, but its registers, wavefront width and instruction set "
        "differ entirely; the usual port is a HIP intrinsic or plain C++."
    ),
    example=(
        "__device__ unsigned lane() {\n"
        "  unsigned id;\n"
        '  asm volatile("mov.u32 %0, %%laneid;" : "=r"(id));\n'
        "  return id;\n"
        "}\n"
    ),
    instead="__device__ unsigned lane() { return __lane_id(); }\n",
    fix=(
        "Replace each PTX statement with the HIP intrinsic named in the message (for example "
        "`%laneid` → `__lane_id()`, `%smid` → `__smid()`, `%globaltimer` → `wall_clock64()`, "
        "`shfl.sync` → `__shfl_sync`, `prmt` → `__byte_perm`), or with plain C++; keep the PTX "
        "under `#ifdef __HIP_PLATFORM_NVIDIA__` if the code must still build for NVIDIA."
    ),
    mechanical=False,
    references=(HIP_EXTENSIONS, AMDGPU_BUILTINS, NVIDIA_INLINE_PTX),
    needles=("asm", "ptx::"),
)


def inline_ptx_assembly(src: KernelSource) -> Iterator[Finding]:
    """PTX in ``asm`` statements that no more specific rule claims, and ``cuda::ptx::`` wrappers."""
    for statement in src.asm:
        if statement.hidden_template:
            yield src.finding(
                INLINE_PTX,
                statement.start,
                statement.end,
                message="inline assembly with a template gpuport cannot see (a macro?); "
                "PTX must be rewritten for AMD GPUs",
                confidence=Confidence.MEDIUM,
            )
        elif statement.ptx is not None and statement.ptx.family is None:
            yield src.finding(
                INLINE_PTX, statement.start, statement.end, message=_rewrite(statement.ptx)
            )
    if "ptx::" in src.code:
        for m in src.once_per_line(ptx_wrapper_calls(src.body)):
            name = m.group(1)
            if is_hopper_wrapper(name):
                continue  # hopper-only-feature's
            register = name[len("get_sreg_") :] if name.startswith("get_sreg_") else ""
            hip = special_register_hip(register)
            yield src.finding(
                INLINE_PTX,
                m.start(),
                m.end(),
                message=f"cuda::ptx::{name} wraps a PTX instruction; rewrite it in HIP"
                + (f" ({hip})" if hip else ""),
            )


def _rewrite(ptx: Ptx) -> str:
    """inline-ptx-assembly's message: what replaces each instruction in HIP."""
    advice: list[str] = []
    with_special = {op for op, _ in ptx.special}
    for op, reg in ptx.special:
        advice.append(f"{op} %{reg} → {special_register_hip(reg) or 'no direct HIP equivalent'}")
    for op in ptx.opcodes:
        if op in with_special:
            continue
        hip = ptx_op_hip(op)
        advice.append(f"{op} → {hip}" if hip else f"{op} (no direct HIP equivalent)")
    if not advice:
        return "inline PTX assembly must be rewritten for AMD GPUs"
    more = f"; and {len(advice) - 4} more" if len(advice) > 4 else ""
    return "inline PTX must be rewritten for AMD: " + "; ".join(advice[:4]) + more


_HOPPER_NAME_ANCHORS = (
    "TensorMap",
    "tensorMap",
    "Programmatic",
    "PROGRAMMATIC",
    "GridDependency",
    "SM90_",
    "SM100_",
    "MMA::",
    "cp_async_bulk",
)

HOPPER_ONLY = rule(
    id="GP309",
    slug="hopper-only-feature",
    category=Category.KERNELS,
    severity=Severity.HIGH,
    confidence=Confidence.HIGH,
    summary="A Hopper-or-newer NVIDIA feature (wgmma, TMA, setmaxnreg, …) with no HIP counterpart",
    what=(
        "Finds warpgroup MMA (`wgmma.*`, including FP8 forms), the Tensor Memory Accelerator "
        "(`cp.async.bulk*`, `cuTensorMapEncode*`, `CUtensorMap`), `setmaxnreg`, "
        "`fence.proxy.async`, `mbarrier` transaction counts, `griddepcontrol` and programmatic "
        "dependent launch, Blackwell `tcgen05`, and CuTe's SM90/SM100 atoms. In a project scan, "
        "the findings of one component (or of the project) in two or more files are folded "
        "into one GP309 line that names the one decision (build those paths only for NVIDIA, "
        "take the portable path on ROCm) and lists the files; the originals are set aside."
    ),
    why=(
        "These are features of NVIDIA's sm_90a/sm_100a hardware. AMD GPUs have matrix cores "
        "(MFMA) and their own asynchronous copy paths, but no instruction-level equivalent, so "
        "kernels built around them (FlashAttention-3, CUTLASS 3 GEMMs) need an AMD-specific "
        "kernel rather than a port."
    ),
    example='asm volatile("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 ...");\n',
    instead=(
        "// use an AMD kernel library for the same operation:\n"
        "// composable_kernel (CK / CK-Tile), hipBLASLt, or rocWMMA / MFMA builtins\n"
    ),
    fix=(
        "Replace the kernel with a composable_kernel or hipBLASLt equivalent (or an existing "
        "ROCm build of the library that provides it), keeping the Hopper path behind "
        "`#ifdef __HIP_PLATFORM_NVIDIA__`."
    ),
    mechanical=False,
    references=(COMPOSABLE_KERNEL, HIPBLASLT, ROCWMMA),
    needles=("asm", "ptx::", *_HOPPER_NAME_ANCHORS),
)


def hopper_only_feature(src: KernelSource) -> Iterator[Finding]:
    """Hopper-or-newer PTX, its ``cuda::ptx::`` wrappers, and the TMA/PDL/CuTe-SM90 names."""
    for statement, ptx in asm_of_family(src.asm, HOPPER):
        message = (
            "inline PTX uses Hopper-or-newer instructions with no AMD counterpart: " + ptx.shown()
        )
        yield src.finding(HOPPER_ONLY, statement.start, statement.end, message=message)
    if "ptx::" in src.code:
        for m in src.once_per_line(ptx_wrapper_calls(src.body)):
            name = m.group(1)
            if is_hopper_wrapper(name):
                yield src.finding(
                    HOPPER_ONLY,
                    m.start(),
                    m.end(),
                    message=f"cuda::ptx::{name} is a Hopper-or-newer PTX instruction with no AMD "
                    "counterpart",
                )
    code = src.code
    for m, name in names_once_per_line(
        src, kernel_apis()["hopper-features"].pattern, _HOPPER_NAME_ANCHORS
    ):
        if _on_arch_directive(code, m.start()):
            # `#if __CUDA_ARCH_HAS_FEATURE__(SM90_ALL)`: one decision (what the AMD build
            # takes there), which GP324 reports; one finding for it, not two
            continue
        yield src.finding(
            HOPPER_ONLY,
            m.start(),
            m.end(),
            message=f"{name}: a Hopper-or-newer feature with no HIP counterpart",
        )


def _on_arch_directive(code: str, pos: int) -> bool:
    """Is ``pos`` on an ``#if``/``#elif`` line that tests ``__CUDA_ARCH*`` (GP324's subject)?"""
    line_start = code.rfind("\n", 0, pos) + 1
    line_end = code.find("\n", pos)
    line = code[line_start : line_end if line_end >= 0 else len(code)]
    return line.lstrip().startswith("#") and "__CUDA_ARCH" in line


_CLUSTER_NAME_ANCHORS = ("luster", "LUSTER")


# The cluster APIs, or a call of a cluster group's member functions.
@functools.cache
def _cluster_names_re() -> re.Pattern[str]:
    return re.compile(
        kernel_apis()["cluster-apis"].pattern.pattern
        + r"|cluster\w*\s*\.\s*(?:sync|map_shared_rank|block_rank|barrier_arrive|barrier_wait"
        r"|dim_blocks|num_blocks)\s*\("
    )


THREAD_BLOCK_CLUSTERS = rule(
    id="GP310",
    slug="thread-block-clusters",
    category=Category.KERNELS,
    severity=Severity.HIGH,
    confidence=Confidence.HIGH,
    summary="Thread-block clusters are used; today's AMD Instinct GPUs have no clusters",
    what=(
        "Finds `__cluster_dims__`, cluster launch attributes "
        "(`cudaLaunchAttributeClusterDimension`, `cudaFuncAttribute*Cluster*`), cluster "
        "occupancy queries, `cooperative_groups::this_cluster()`, `cluster_group` and "
        "`cluster.sync()`, and PTX cluster instructions (`barrier.cluster`, `mapa`, "
        "`%cluster_ctarank`)."
    ),
    why=(
        "Clusters (sm_90+) let blocks on neighbouring SMs share distributed shared memory and "
        "synchronise. CDNA GPUs have no such level in the hierarchy; recent HIP documents a "
        "`cluster_group` only for devices that report `clusterLaunch`, so code built on "
        "clusters needs a redesign (global-memory exchange or a cooperative grid)."
    ),
    example="__global__ void __cluster_dims__(2, 1, 1) k(float* x) { cg::this_cluster().sync(); }\n",
    instead=(
        "__global__ void k(float* x) { /* exchange through global memory, or use a cooperative\n"
        "   grid launch and cg::this_grid().sync() */ }\n"
    ),
    fix=(
        "Redesign the exchange between blocks without distributed shared memory; check "
        "`hipDeviceProp_t::clusterLaunch` before relying on HIP's cluster support."
    ),
    mechanical=False,
    references=(HIP_COOPERATIVE_GROUPS,),
    needles=("asm", *_CLUSTER_NAME_ANCHORS),
)


def thread_block_clusters(src: KernelSource) -> Iterator[Finding]:
    """Cluster PTX, cluster launch attributes and queries, and cooperative-groups clusters."""
    for statement, ptx in asm_of_family(src.asm, CLUSTER):
        message = (
            "inline PTX uses thread-block clusters, which AMD Instinct GPUs lack: " + ptx.shown()
        )
        yield src.finding(THREAD_BLOCK_CLUSTERS, statement.start, statement.end, message=message)
    for m, name in names_once_per_line(src, _cluster_names_re(), _CLUSTER_NAME_ANCHORS):
        yield src.finding(
            THREAD_BLOCK_CLUSTERS,
            m.start(),
            m.end(),
            message=f"{name}: thread-block clusters are not available on AMD Instinct GPUs",
        )


_ASYNC_NAME_ANCHORS = ("pipeline", "memcpy_async", "barrier", "aligned_size_t", "::wait")

ASYNC_COPY = rule(
    id="GP311",
    slug="async-copy-pipeline",
    category=Category.KERNELS,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="Asynchronous global-to-shared copies (cp.async, memcpy_async, cuda::pipeline)",
    what=(
        "Finds `cp.async` PTX, `__pipeline_memcpy_async` / `__pipeline_commit` / "
        "`__pipeline_wait_prior`, `cuda::memcpy_async`, `cuda::pipeline`, `cuda::barrier`, "
        "`cooperative_groups::memcpy_async` and their headers."
    ),
    why=(
        "These are Ampere-and-later mechanisms that copy from global to shared memory without "
        "going through registers. HIP has no portable equivalent of these APIs, so the code "
        "does not compile; AMD kernels overlap copies with compute by explicit double "
        "buffering in LDS."
    ),
    example=(
        "__pipeline_memcpy_async(&tile[threadIdx.x], &src[i], sizeof(float));\n"
        "__pipeline_commit();\n__pipeline_wait_prior(0);\n"
    ),
    instead="tile[threadIdx.x] = src[i];\n__syncthreads();\n",
    fix=(
        "Replace the asynchronous copy with ordinary loads into shared memory followed by "
        "`__syncthreads()`, double-buffering by hand where the overlap mattered."
    ),
    mechanical=False,
    references=(HIP_EXTENSIONS, COMPOSABLE_KERNEL),
    needles=("asm", *_ASYNC_NAME_ANCHORS),
)


def async_copy_pipeline(src: KernelSource) -> Iterator[Finding]:
    """cp.async/mbarrier PTX, the pipeline and memcpy_async APIs, and their headers."""
    for statement, ptx in asm_of_family(src.asm, ASYNC):
        message = (
            "inline PTX uses asynchronous copies or mbarriers with no HIP counterpart: "
            + ptx.shown()
        )
        yield src.finding(ASYNC_COPY, statement.start, statement.end, message=message)
    for m, name in names_once_per_line(
        src, kernel_apis()["async-copy-apis"].pattern, _ASYNC_NAME_ANCHORS
    ):
        yield src.finding(
            ASYNC_COPY,
            m.start(),
            m.end(),
            message=f"{name}: asynchronous global-to-shared copies have no HIP counterpart",
        )
    for header, offset in src.includes:
        if kernel_apis()["async-copy-headers"].pattern.match(header):
            yield src.finding(
                ASYNC_COPY,
                offset,
                message=f"#include <{header}>: asynchronous copies and pipelines have no HIP "
                "counterpart",
            )
