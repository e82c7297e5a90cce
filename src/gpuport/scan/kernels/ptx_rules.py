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
from gpuport.scan.kernels.brackets import match_backward, scope_start
from gpuport.scan.kernels.ptx import (
    ASYNC,
    CLUSTER,
    HOPPER,
    AsmStatement,
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
        "and is not reported. PTX in two or more branches of one if/else chain (a store per "
        "vector width under `if constexpr (bytes == 4) ... else if constexpr (bytes == 8)`, a "
        "path per architecture) is one finding at the chain's `if` that names each "
        "statement's line: one rewrite of that helper covers them."
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
    plain = [
        s
        for s in src.asm
        if not s.hidden_template
        and s.ptx is not None
        and not s.ptx.family
        and src.compiled_on_rocm(s.start)  # a member ROCm never compiles is not folded in
    ]
    folded = _alternatives(src, plain)
    for head, statements in folded.items():
        notes = "".join(dict.fromkeys(s.constraint_note() for s in statements))
        yield src.finding(
            INLINE_PTX, head, statements[-1].end, message=_fold_message(src, statements) + notes
        )
    done = {id(s) for statements in folded.values() for s in statements}
    for statement in src.asm:
        if id(statement) in done:
            continue
        if statement.hidden_template:
            yield src.finding(
                INLINE_PTX,
                statement.start,
                statement.end,
                message="inline assembly with a template gpuport cannot see (a macro?); "
                "PTX must be rewritten for AMD GPUs" + statement.constraint_note(),
                confidence=Confidence.MEDIUM,
            )
        elif statement.ptx is not None and statement.ptx.family is None:
            yield src.finding(
                INLINE_PTX,
                statement.start,
                statement.end,
                message=_rewrite(statement.ptx) + statement.constraint_note(),
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


# A branch of an if/else chain: `if (...)`, `if constexpr (...)`, `else if (...)`, `else`.
# (not a preprocessor `#if (X)` or `#else`, which chooses what is compiled, not a branch)
_IF_BEFORE_RE = re.compile(r"(?<![#\w])(?<!#\s)if(?:\s+constexpr)?\s*$")
_ELSE_BEFORE_RE = re.compile(r"(?<![#\w])(?<!#\s)else\s*$")
_STATEMENT_IF_RE = re.compile(r"\s*(?:else\s+)?(if)\b")


def _alternatives(
    src: KernelSource, statements: list[AsmStatement]
) -> dict[int, list[AsmStatement]]:
    """The PTX statements that sit in different branches of one if/else chain, by the offset of
    the chain's first ``if``; only chains with PTX in two or more branches.

    ``if constexpr (bytes == 4) { st.global.cs.u32 } else if constexpr (bytes == 8) {
    st.global.cs.u64 } ...`` is one helper with one job done per size, or per architecture
    (``if constexpr (is_sm_100) { redux.sync } else { abs + redux.sync }``): a port rewrites
    that helper once (a plain or nontemporal store, a HIP reduction), not each branch. Several
    statements one after another in one block are separate rewrites and stay separate.
    """
    if len(statements) < 2:
        return {}
    chains: dict[int, list[tuple[int, AsmStatement]]] = {}
    for statement in statements:
        branch = _branch_of(src, statement.start)
        if branch is None:
            continue
        head = _chain_head(src, branch)
        chains.setdefault(head, []).append((branch, statement))
    result: dict[int, list[AsmStatement]] = {}
    for head, members in chains.items():
        if len({branch for branch, _ in members}) >= 2:
            result[head] = [statement for _, statement in members]
    return result


def _branch_of(src: KernelSource, pos: int) -> int | None:
    """Where the if/else branch holding the statement at ``pos`` starts (its ``if`` or
    ``else`` keyword), when that branch is the innermost block around it; else None."""
    code = src.code
    keyword = _branch_keyword(src, pos)  # a branch without braces: `if (c) asm(...);`
    if keyword is not None:
        return keyword
    nearest = max(code.rfind("{", 0, pos), code.rfind("}", 0, pos))
    if nearest >= 0 and code[nearest] == "{":  # the usual case: no block closes in between
        return _branch_keyword(src, nearest)
    opened = scope_start(code, pos)
    return _branch_keyword(src, opened) if opened >= 0 else None


def _branch_keyword(src: KernelSource, opened: int) -> int | None:
    """The ``if``/``else`` keyword of the branch whose body starts at ``opened``, or None."""
    code = src.code
    end = _end_before(code, opened)
    if _ELSE_BEFORE_RE.search(code, max(0, end - 5), end):
        return end - 4
    if end == 0 or code[end - 1] != ")":
        return None
    paren = match_backward(code, end - 1)
    if paren < 0:
        return None
    keyword = _IF_BEFORE_RE.search(code, max(0, paren - 40), paren)
    return keyword.start() if keyword is not None else None


def _chain_head(src: KernelSource, branch: int) -> int:
    """The first ``if`` of the chain whose branch starts at ``branch``: back through each
    ``else`` to the ``}`` of the branch before it."""
    code = src.code
    for _ in range(32):  # a chain longer than that is not a size or arch switch
        if code.startswith("if", branch):
            end = _end_before(code, branch)
            if not _ELSE_BEFORE_RE.search(code, max(0, end - 5), end):
                return branch
            branch = end - 4
        end = _end_before(code, branch)  # `branch` is at an `else` now
        if end > 0 and code[end - 1] == ";":  # the branch before has no braces: `if (c) s; else`
            semi = end - 1
            start = max(code.rfind(c, 0, semi) for c in ";{}") + 1
            head = _STATEMENT_IF_RE.match(code, start, semi)
            if head is None:
                return branch
            branch = head.start(1)
            continue
        if end == 0 or code[end - 1] != "}":
            return branch
        opened = match_backward(code, end - 1)
        previous = _branch_keyword(src, opened) if opened >= 0 else None
        if previous is None:
            return branch
        branch = previous
    return branch


def _end_before(code: str, pos: int) -> int:
    """Where the code before ``pos`` ends, past the blanks just before it."""
    while pos > 0 and code[pos - 1].isspace():
        pos -= 1
    return pos


def _fold_message(src: KernelSource, statements: list[AsmStatement]) -> str:
    """One line for the PTX in several branches of one if/else chain: the branches' lines and
    what replaces each instruction."""
    lines = ", ".join(str(src.line_of(s.start)) for s in statements)
    advice: list[str] = []
    for statement in statements:
        assert statement.ptx is not None
        for item in _advice(statement.ptx):
            if item not in advice:
                advice.append(item)
    more = f"; and {len(advice) - 4} more" if len(advice) > 4 else ""
    return (
        f"inline PTX in {len(statements)} statements across the branches of this if/else "
        f"(lines {lines}), alternatives of one helper that one rewrite covers; it must be "
        "rewritten for AMD: " + "; ".join(advice[:4]) + more
    )


def _rewrite(ptx: Ptx) -> str:
    """inline-ptx-assembly's message: what replaces each instruction in HIP."""
    advice = _advice(ptx)
    if not advice:
        return "inline PTX assembly must be rewritten for AMD GPUs"
    more = f"; and {len(advice) - 4} more" if len(advice) > 4 else ""
    return "inline PTX must be rewritten for AMD: " + "; ".join(advice[:4]) + more


def _advice(ptx: Ptx) -> list[str]:
    """What replaces each of ``ptx``'s instructions and special registers in HIP."""
    advice: list[str] = []
    with_special = {op for op, _ in ptx.special}
    for op, reg in ptx.special:
        advice.append(f"{op} %{reg} → {special_register_hip(reg) or 'no direct HIP equivalent'}")
    for op in ptx.opcodes:
        if op in with_special:
            continue
        hip = ptx_op_hip(op)
        advice.append(f"{op} → {hip}" if hip else f"{op} (no direct HIP equivalent)")
    return advice


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
        message += statement.constraint_note()
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
        message += statement.constraint_note()
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
        message += statement.constraint_note()
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
