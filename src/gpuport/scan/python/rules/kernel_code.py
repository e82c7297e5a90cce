"""GP210 to GP214: GPU kernels and profiling written from Python.

PyTorch CUDA extensions, PTX in Triton or CUDA source strings, warp sizes of 32, NVTX markers
and the jiterator.
"""

from __future__ import annotations

import ast
import re

from gpuport.findings import Category, Confidence, Severity
from gpuport.rules import rule
from gpuport.scan.python import guards, reach
from gpuport.scan.python.checks import Assignment, looks_at
from gpuport.scan.python.context import PythonContext
from gpuport.scan.python.nodes import (
    argument,
    called_name,
    is_false,
    is_int,
    is_none,
    keyword_value,
    literal,
    strings_in,
    target_name,
)

_CPP_EXTENSION = "torch.utils.cpp_extension."
# nvcc options that name NVIDIA architectures.
_NVIDIA_ARCH_FLAG_RE = re.compile(
    r"-gencode|--generate-code|arch=(?:sm|compute)_|-arch[= ]?(?:sm|compute)_|code=sm_|"
    r"--gpu-architecture"
)

CUDA_EXTENSION_BUILD = rule(
    id="GP210",
    slug="cuda-extension-build",
    category=Category.PYTHON,
    severity=Severity.LOW,
    confidence=Confidence.HIGH,
    summary="Builds a PyTorch CUDA extension with nvcc flags that name NVIDIA architectures",
    what=(
        "Finds `torch.utils.cpp_extension.CUDAExtension(...)`, `load(...)` with .cu sources "
        "or `with_cuda=True`, and `load_inline(..., cuda_sources=...)` whose nvcc flags "
        "(`extra_compile_args={'nvcc': …}`, `extra_cuda_cflags=…`) name NVIDIA architectures "
        "(-gencode, -arch=sm_XX, --gpu-architecture), and names the kernel files when the "
        "sources are written as a literal list. A build without such flags is not reported: "
        "on a ROCm PyTorch it hipifies and compiles as it is, and its kernel files get their "
        "own findings (GP3xx). Calls under a ROCm test (`if not torch.version.hip:`) are left "
        "alone."
    ),
    why=(
        "On a ROCm build of PyTorch these helpers run hipify over the CUDA sources (writing "
        ".hip copies) and compile them with hipcc, so the extension itself needs no change. "
        "The nvcc flags, though, are handed to hipcc there: NVIDIA architecture flags do not "
        "apply (ROCm targets come from PYTORCH_ROCM_ARCH) and break or mistarget the build."
    ),
    example=(
        "CUDAExtension('fused_ops', ['csrc/ops.cpp', 'csrc/ops_kernel.cu'],\n"
        "              extra_compile_args={'nvcc': ['-gencode=arch=compute_80,code=sm_80']})\n"
    ),
    instead=(
        "CUDAExtension('fused_ops', ['csrc/ops.cpp', 'csrc/ops_kernel.cu'],\n"
        "              extra_compile_args={'nvcc': [] if torch.version.hip else NVCC_ARCH_FLAGS})\n"
        "# build with PYTORCH_ROCM_ARCH=gfx942 (for example)\n"
    ),
    fix=(
        "Keep NVIDIA-only nvcc flags out of the ROCm build, set PYTORCH_ROCM_ARCH, and review "
        "the kernel files for GP3xx findings."
    ),
    mechanical=False,
    references=(
        "https://github.com/ROCm/pytorch/wiki/Enabling-PyTorch-CUDA-extensions-for-ROCm",
        "https://github.com/pytorch/pytorch/blob/main/torch/utils/cpp_extension.py",
    ),
    needles=("cpp_extension",),
)


def _extension_sources(
    ctx: PythonContext, node: ast.Call
) -> tuple[str, list[str], list[str], list[str]] | None:
    """(function, source files, kernel files, NVIDIA arch flags) of a torch extension call
    that builds CUDA code; None for any other call of torch.utils.cpp_extension."""
    function = (ctx.qual(node.func) or "").rsplit(".", 1)[1]
    if function in ("CUDAExtension", "load"):
        sources = argument(node, 1, "sources")
    elif function == "load_inline":
        cuda = argument(node, 2, "cuda_sources")
        if cuda is None or is_none(cuda):
            return None
        sources = None
    else:
        return None
    files = strings_in([sources]) if sources is not None else []
    kernels = [f for f in files if f.endswith((".cu", ".cuh"))]
    with_cuda = keyword_value(node, "with_cuda")
    if function == "load" and not kernels and not (with_cuda and not is_false(with_cuda)):
        return None
    flags: list[str] = []  # the nvcc flags, from extra_compile_args or extra_cuda_cflags
    for kw in node.keywords:
        if kw.arg == "extra_compile_args" and isinstance(kw.value, ast.Dict):
            for key, value in zip(kw.value.keys, kw.value.values, strict=True):
                if literal(key) == "nvcc":
                    flags += strings_in([value])
        elif kw.arg == "extra_cuda_cflags":
            flags += strings_in([kw.value])
    return function, files, kernels, [f for f in flags if _NVIDIA_ARCH_FLAG_RE.search(f)]


@looks_at(CUDA_EXTENSION_BUILD, call_prefixes=(_CPP_EXTENSION,))
def cuda_extension_build(ctx: PythonContext, node: ast.Call) -> None:
    found = _extension_sources(ctx, node)
    if found is None:
        return
    function, files, kernels, arch_flags = found
    if not arch_flags:
        # Built as it is on a ROCm PyTorch: cpp_extension hipifies the sources and compiles
        # them with hipcc. What hipify cannot translate is in the kernel files (GP3xx).
        return
    if guards.rocm_guarded(ctx.parents, node):
        return
    name = literal(argument(node, 0, "name")) or "…"
    if function == "load_inline":
        built = "inline CUDA sources (cuda_sources=…)"
    elif kernels:
        built = "the kernel files " + ", ".join(kernels)
    elif files:
        built = "sources " + ", ".join(files)
    else:
        built = "sources not written as a literal list"
    ctx.report(
        CUDA_EXTENSION_BUILD,
        node,
        f"{function}({name!r}) builds {built} with the nvcc flags {', '.join(arch_flags[:3])}, "
        "which target NVIDIA GPUs: on ROCm PyTorch hands them to hipcc, whose gfx targets come "
        "from PYTORCH_ROCM_ARCH",
    )


_INLINE_ASM = (
    "triton.language.inline_asm_elementwise",
    "triton.language.core.inline_asm_elementwise",
)
# PTX: typed opcodes (mov.u32, cvt.rn.f16x2.f32, ld.global.b64) and special registers.
_PTX_RE = re.compile(
    r"%(?:laneid|warpid|nwarpid|smid|nsmid|lanemask_\w+|clock(?:64)?|globaltimer|"
    r"(?:n?tid|n?ctaid)\.[xyz])\b"
    r"|\b[a-z][a-z0-9]*(?:\.[a-z0-9]+)*\.(?:[usbf]|bf|e4m3|e5m2)(?:8|16|32|64)(?:x[24])?\b"
)
# asm("…"), asm volatile("…") in CUDA C++, and what may follow "asm" there in Python source
# (blanks, an escaped newline, "volatile", "__volatile__", the parenthesis).
_ASM_CALL_RE = re.compile(r"\basm\s*(?:volatile\s*|__volatile__\s*)?\(")
_ASM_NEEDLES = (
    *(f"asm{after}" for after in ("(", " ", "\t", "\n", "\r", "\f", "\v", "\\", "v")),
    "asm_",  # also in inline_asm_elementwise, the Triton call
)

INLINE_PTX = rule(
    id="GP211",
    slug="inline-ptx",
    category=Category.PYTHON,
    severity=Severity.HIGH,
    confidence=Confidence.HIGH,
    summary="Embeds NVIDIA PTX assembly (Triton inline_asm_elementwise or CUDA source strings)",
    what=(
        "Finds `triton.language.inline_asm_elementwise` whose asm text is PTX (typed opcodes "
        "such as `mov.u32`, `cvt.rn.f16.f32`, special registers such as `%laneid`), and "
        "CUDA source strings in Python (for `load_inline`, CuPy `RawKernel`…) that contain "
        '`asm("…")` with PTX. When the asm text is not a literal it still reports, with low '
        'confidence. PTX in several branches of one if/elif (`if sem == "relaxed": … elif '
        'sem == "acq_rel": …`, variants of one operation picked by a constexpr) is one '
        "finding, on the first branch, whose message names the other branches' lines."
    ),
    why=(
        "PTX is NVIDIA's virtual instruction set; AMD GPUs run AMDGCN code. Triton on ROCm and "
        "hipcc cannot assemble PTX, so the kernel fails to compile. The same operation needs "
        "AMDGCN assembly, a portable `tl` expression, or a HIP intrinsic."
    ),
    example=(
        "y = tl.inline_asm_elementwise('cvt.rn.f16x2.f32 $0, $2, $1;', '=r,r,r', [a, b],\n"
        "                              dtype=tl.float16, is_pure=True, pack=2)\n"
    ),
    instead=(
        "y = b.to(tl.float16)  # let Triton pick the instruction on each backend\n"
        "# or branch on the backend and give AMDGCN asm (v_cvt_pkrtz_f16_f32) on ROCm\n"
    ),
    fix=(
        "Replace the PTX with a portable Triton expression, or branch on the backend and "
        "supply AMDGCN assembly or a HIP intrinsic for ROCm."
    ),
    mechanical=False,
    references=(
        "https://triton-lang.org/main/python-api/generated/triton.language.inline_asm_elementwise.html",
        "https://docs.nvidia.com/cuda/inline-ptx-assembly/index.html",
        "https://rocm.docs.amd.com/projects/HIP/en/latest/reference/cpp_language_extensions.html",
    ),
    needles=_ASM_NEEDLES,
)


@looks_at(INLINE_PTX, calls=_INLINE_ASM, nodes=(ast.Constant,))
def inline_ptx(ctx: PythonContext, node: ast.Call | ast.Constant) -> None:
    if isinstance(node, ast.Constant):  # a CUDA source string: asm("mov.u32 …")
        text = node.value
        if not isinstance(text, str) or "asm" not in text:
            return
        call = _ASM_CALL_RE.search(text)
        ptx = _PTX_RE.search(text, call.end()) if call is not None else None
        if call is not None and ptx is not None:
            ctx.report(
                INLINE_PTX,
                (node.lineno + text.count("\n", 0, call.start()), 0),
                f"CUDA source string with inline PTX ({ptx.group(0)!r}): hipcc and hiprtc cannot "
                "assemble PTX",
            )
        return
    # The PTX runs only where ROCm never goes: under a ROCm test's CUDA side, or under a flag
    # parameter every caller sets per platform (`if USE_PTX:` with `USE_PTX=not IS_ROCM`).
    if guards.rocm_guarded(ctx.parents, node) or reach.under_flag_set_per_platform(
        ctx.parents, node
    ):
        return
    asm = ctx.string_value(argument(node, 0, "asm"))  # tl.inline_asm_elementwise(asm, …)
    if asm is None:
        ctx.report(
            INLINE_PTX,
            node,
            "inline_asm_elementwise with asm text gpuport cannot read; if it is PTX it will "
            "not compile on ROCm",
            severity=Severity.MEDIUM,
            confidence=Confidence.LOW,
        )
        return
    match = _PTX_RE.search(asm)
    if not match:
        return
    earlier, later = _ptx_in_other_branches(ctx, node)
    if earlier:
        return  # counted on the first branch's line
    message = (
        f"inline_asm_elementwise with PTX ({match.group(0)!r}): Triton on ROCm cannot "
        "assemble NVIDIA PTX"
    )
    if later:
        shown = ", ".join(str(line) for line in later)
        message += (
            f" (and the PTX of the same if/elif's other branch(es), line {shown}: the "
            "variants of one operation, rewritten together)"
        )
    ctx.report(INLINE_PTX, node, message)


def _is_ptx_asm(ctx: PythonContext, call: ast.AST) -> bool:
    if not (isinstance(call, ast.Call) and called_name(call).endswith("inline_asm_elementwise")):
        return False
    asm = ctx.string_value(argument(call, 0, "asm"))
    return asm is not None and _PTX_RE.search(asm) is not None


def _ptx_in_other_branches(ctx: PythonContext, node: ast.Call) -> tuple[list[int], list[int]]:
    """The lines of PTX ``inline_asm_elementwise`` calls in the other branches of the nearest
    if/elif/else chain holding ``node`` (in its function), before and after ``node``'s branch:
    ``if sem == "relaxed": <PTX> elif sem == "acq_rel": <PTX>`` picks one variant of one
    operation (a constexpr parameter's value, compiled one at a time), and a port rewrites
    them together, so the first branch's finding counts the others."""
    parents = ctx.parents
    chain: ast.If | None = None
    for child, parent in guards.ancestors(parents, node):
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            break
        if isinstance(parent, ast.If) and child is not parent.test:
            chain = parent
            break
    if chain is None:
        return [], []
    up = parents.get(chain)
    while isinstance(up, ast.If) and up.orelse == [chain]:
        chain, up = up, parents.get(up)
    branches: list[list[ast.stmt]] = []
    step: ast.If = chain
    while True:
        branches.append(step.body)
        if len(step.orelse) == 1 and isinstance(step.orelse[0], ast.If):
            step = step.orelse[0]
            continue
        if step.orelse:
            branches.append(step.orelse)
        break
    if len(branches) < 2:
        return [], []
    own = next(
        (
            i
            for i, branch in enumerate(branches)
            if any(sub is node for statement in branch for sub in ast.walk(statement))
        ),
        None,
    )
    if own is None:
        return [], []
    lines: tuple[list[int], list[int]] = ([], [])
    for i, branch in enumerate(branches):
        if i == own:
            continue
        for statement in branch:
            for sub in ast.walk(statement):
                if _is_ptx_asm(ctx, sub):
                    lines[0 if i < own else 1].append(getattr(sub, "lineno", 0))
    return lines


_WARP_SIZE_NAME_RE = re.compile(
    r"(?i)^_*(?:k_?)?(?:warp_?(?:size|sz|threads|width|lanes)|threads_?per_?warp|lanes_?per_?warp)$"
)

HARDCODED_WARP_SIZE = rule(
    id="GP212",
    slug="hardcoded-warp-size",
    category=Category.PYTHON,
    severity=Severity.MEDIUM,
    confidence=Confidence.MEDIUM,
    summary="Hard-codes a warp size of 32 in Python-side kernel configuration",
    what=(
        "Finds `WARP_SIZE = 32`-style constants (warp_size, threads_per_warp, warp_threads…), "
        "keyword arguments and dict keys with those names set to 32, `num_warps * 32`, and "
        "`num_warps = threads // 32`. A `num_warps * 32` that only skips a candidate while "
        "autotune configurations are listed (`if … : continue` in a loop, a comprehension's "
        "filter) is left alone: Triton sizes the launch itself, and with 64-thread wavefronts "
        "the filter only keeps a few more configurations, each of which still runs."
    ),
    why=(
        "AMD's CDNA GPUs (MI100 to MI355) execute wavefronts of 64 threads; RDNA runs 32 or 64. "
        "In Triton on ROCm one 'warp' of `num_warps` is a 64-thread wavefront. A block size "
        "computed as `num_warps * 32`, or a warp-synchronous reduction sized for 32 lanes, "
        "launches half the threads it should or reads the wrong lanes."
    ),
    example="WARP_SIZE = 32\nblock = num_warps * 32\n",
    instead=(
        "props = torch.cuda.get_device_properties(0)\n"
        "WARP_SIZE = props.warp_size  # 64 on CDNA, 32 on NVIDIA\n"
        "block = num_warps * WARP_SIZE\n"
    ),
    fix=(
        "Query the warp size from the device (`torch.cuda.get_device_properties(i).warp_size`"
        ", Triton's target info) instead of writing 32."
    ),
    mechanical=False,
    references=(
        "https://rocm.docs.amd.com/projects/HIP/en/docs-6.1.2/understand/hardware_implementation.html",
        "https://github.com/pytorch/pytorch/pull/128449",
        "https://github.com/ROCm/pytorch/pull/1417",
    ),
    needles=("warp", "Warp", "WARP"),
)


@looks_at(
    HARDCODED_WARP_SIZE,
    events=(Assignment,),
    nodes=(ast.BinOp, ast.Dict),
    every_call=True,
)
def hardcoded_warp_size(
    ctx: PythonContext, subject: Assignment | ast.BinOp | ast.Dict | ast.Call
) -> None:
    def report(node: ast.AST, shown: str) -> None:
        placed = subject.node if isinstance(subject, Assignment) and subject.node else node
        if guards.rocm_guarded(ctx.parents, placed):
            return  # the ROCm branch itself (warp_size = 32 for RDNA under torch.version.hip)
        if ctx.imports_nvidia_only_dsl():
            return  # CuTe DSL kernels never run on ROCm: GP201 reports the import, once
        ctx.report(
            HARDCODED_WARP_SIZE,
            node,
            f"{shown} assumes 32-thread warps; AMD CDNA GPUs run 64-thread wavefronts",
        )

    if isinstance(subject, ast.Call):  # make_kernel(warp_size=32)
        for kw in subject.keywords:
            if kw.arg and _WARP_SIZE_NAME_RE.match(kw.arg) and is_int(kw.value, 32):
                report(kw.value, f"{kw.arg}=32")
    elif isinstance(subject, ast.Dict):  # {"warp_size": 32}
        for key, value in zip(subject.keys, subject.values, strict=True):
            name = literal(key)
            if name and _WARP_SIZE_NAME_RE.match(name) and is_int(value, 32):
                report(value, f"{name!r}: 32")
    elif isinstance(subject, ast.BinOp):  # num_warps * 32
        if not isinstance(subject.op, ast.Mult) or _prunes_candidates(ctx, subject):
            return
        for number, other in ((subject.left, subject.right), (subject.right, subject.left)):
            name = target_name(other)
            if is_int(number, 32) and name and "warps" in name.lower():
                report(subject, f"{name} * 32")
                return
    else:  # WARP_SIZE = 32; num_warps = threads // 32
        name = target_name(subject.target)
        value = subject.value
        if name is None:
            return
        if _WARP_SIZE_NAME_RE.match(name) and is_int(value, 32):
            report(value, f"{name} = 32")
        elif "warps" in name.lower() and (
            (
                isinstance(value, ast.BinOp)
                and isinstance(value.op, (ast.FloorDiv, ast.Div))
                and is_int(value.right, 32)
            )
            or (
                isinstance(value, ast.Call)
                and len(value.args) == 2
                and is_int(value.args[1], 32)
                and called_name(value) == "cdiv"
            )
        ):
            report(value, f"{name} = … / 32")


def _prunes_candidates(ctx: PythonContext, node: ast.AST) -> bool:
    """``node`` sits in a test that only skips a candidate while configurations are listed:
    ``if 32 * num_warps * 32 > block_m * block_n: continue`` in a loop, or the filter of a
    comprehension (``[c for c in configs if c.num_warps * 32 <= c.BLOCK]``).

    Such a test only chooses which configurations the autotuner tries; Triton sizes the launch
    from ``num_warps`` itself, 64 threads a warp on CDNA, so with wave64 the filter is merely
    looser and every configuration it keeps still runs correctly.
    """
    for child, parent in guards.ancestors(ctx.parents, node):
        if isinstance(parent, ast.comprehension):
            return child in parent.ifs
        if isinstance(parent, ast.If):
            return (
                parent.test is child
                and not parent.orelse
                and all(isinstance(statement, ast.Continue) for statement in parent.body)
            )
        if isinstance(parent, ast.stmt):
            return False
    return False


NVTX_MARKERS = rule(
    id="GP213",
    slug="nvtx-markers",
    category=Category.PYTHON,
    severity=Severity.INFO,
    confidence=Confidence.HIGH,
    summary="Uses NVIDIA's nvtx package for profiler markers, which ROCm's profilers do not see",
    what=(
        "Reports the first call into NVIDIA's `nvtx` package (`nvtx.annotate`, "
        "`nvtx.push_range`, `nvtx.start_range`…) in a file, once. PyTorch's own "
        "`torch.cuda.nvtx.*` is left alone: on a ROCm build it calls rocTX."
    ),
    why=(
        "PyTorch's `torch.cuda.nvtx` calls rocTX on a ROCm build (torch/csrc/cuda/shared/"
        "nvtx.cpp: `#ifdef USE_ROCM return roctxRangePushA(…)`), so its ranges reach rocprofv3 "
        "/ rocprof-sys traces unchanged; only NVTX domains, categories and colours are "
        "dropped. The standalone `nvtx` package calls NVTX itself, whose ranges reach a tool "
        "only through NVTX's injection interface (Nsight implements it); ROCm's profilers "
        "trace rocTX markers, so these ranges are missing from a ROCm trace."
    ),
    example="import nvtx\n\n@nvtx.annotate('forward', color='blue')\ndef forward(x): ...\n",
    instead="torch.cuda.nvtx.range_push('forward')  # rocTX on ROCm: rocprofv3 --marker-trace\n",
    fix="Use torch.cuda.nvtx (rocTX on ROCm) or roctx, and profile with rocprofv3 or rocprof-sys.",
    mechanical=False,
    references=(
        "https://github.com/pytorch/pytorch/pull/92199",
        "https://github.com/NVIDIA/NVTX",
        "https://rocm.docs.amd.com/projects/rocprofiler-sdk/en/latest/how-to/using-rocprofv3.html",
    ),
    needles=("nvtx",),
)

_TORCH_NVTX = "torch.cuda.nvtx."


@looks_at(NVTX_MARKERS, call_prefixes=(_TORCH_NVTX, "nvtx."))
def nvtx_markers(ctx: PythonContext, node: ast.Call) -> None:
    qual = ctx.qual(node.func) or ""
    if qual.startswith(_TORCH_NVTX):
        return  # rocTX on a ROCm build of PyTorch: the markers keep working
    if ctx.first_time(NVTX_MARKERS, "nvtx"):
        ctx.report(
            NVTX_MARKERS,
            node,
            f"{qual}: NVIDIA's nvtx package; ROCm's profilers do not see its ranges "
            "(torch.cuda.nvtx is rocTX there)",
        )


JITERATOR = rule(
    id="GP214",
    slug="jiterator",
    category=Category.PYTHON,
    severity=Severity.INFO,
    confidence=Confidence.MEDIUM,
    summary="Compiles a CUDA C++ string at run time with torch.cuda.jiterator",
    what=(
        "Finds calls to `torch.cuda.jiterator._create_jit_fn` and its siblings, unless the "
        "code string (a literal, or a module-level constant) is plain C++: no `__` intrinsics, "
        "inline `asm`, `#include`, or CUDA/CUB names."
    ),
    why=(
        "PyTorch enabled the jiterator on ROCm (it compiles with hiprtc instead of nvrtc), so "
        "simple element-wise code works. CUDA-only intrinsics or headers in the code string "
        "fail to compile at the first call, on the GPU, not at import time."
    ),
    example="fn = torch.cuda.jiterator._create_jit_fn('template <typename T> T f(T x) { return x; }')\n",
    instead="# keep it, and run it once on the ROCm machine; or write the op in torch / Triton\n",
    fix="Run the jitted function on ROCm early (a unit test) and keep the code string portable.",
    mechanical=False,
    references=("https://github.com/pytorch/pytorch/pull/77982",),
    needles=("jiterator",),
)


# What only CUDA C++ has: intrinsics and builtins (__shfl_sync, __ldg, __nv_*), inline
# assembly, headers, CUDA or CUB names. Code without any of them is plain C++ that hiprtc
# compiles as it is.
_CUDA_ONLY_CODE_RE = re.compile(r"\b__\w+|\basm\b|#\s*include|(?i:\bcuda\w*|\bcub::|\bnv\w*::)")


@looks_at(JITERATOR, call_prefixes=("torch.cuda.jiterator.",))
def jiterator(ctx: PythonContext, node: ast.Call) -> None:
    code = guards.module_string(ctx.parents, argument(node, 0, "code_string"), node)
    if code is not None and not _CUDA_ONLY_CODE_RE.search(code):
        return  # plain C++ (template <typename T> T f(T x) {…}): hiprtc compiles it as it is
    qual = ctx.qual(node.func)
    ctx.report(
        JITERATOR,
        node,
        f"{qual} compiles CUDA C++ at run time: hiprtc on ROCm; keep the code portable",
    )
