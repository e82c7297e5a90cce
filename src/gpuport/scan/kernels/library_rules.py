"""NVIDIA libraries without a drop-in ROCm twin (GP312-GP314, GP316-GP318, GP321, GP323, GP326): each rule, then its check.

Each is reported once per file, at the first use, with a count of the library's identifiers
and headers (:func:`gpuport.scan.kernels.summaries.library_use`); what those look like is
knowledge, in ``kb/cuda_kernel_apis.toml`` (:mod:`gpuport.kb.kernels`).
"""

from __future__ import annotations

from collections.abc import Iterator

from gpuport.findings import Category, Confidence, Finding, Severity
from gpuport.kb.kernels import kernel_libraries
from gpuport.rules import rule
from gpuport.scan.kernels.references import (
    COMPOSABLE_KERNEL,
    HIP_EXTENSIONS,
    HIP_FP8,
    HIP_RTC,
    HIP_STREAM_ORDERED,
    HIPBLASLT,
    HIPIFY_APIS,
    LIBHIPCXX,
    MIOPEN_PORTING,
    ROCTX,
    ROCWMMA,
)
from gpuport.scan.kernels.source import KernelSource
from gpuport.scan.kernels.summaries import library_use

CUTLASS_CUTE = rule(
    id="GP312",
    slug="cutlass-cute",
    category=Category.KERNELS,
    severity=Severity.HIGH,
    confidence=Confidence.HIGH,
    summary="CUTLASS or CuTe is used; it targets NVIDIA tensor cores only",
    what="Reports, once per file, CUTLASS/CuTe includes and `cutlass::` / `cute::` uses.",
    why=(
        "CUTLASS and CuTe are NVIDIA's template libraries for tensor-core GEMMs and "
        "attention; their kernels are written around NVIDIA's MMA, `ldmatrix`, TMA and warp "
        "layout. They do not build for AMD GPUs."
    ),
    example="#include <cutlass/gemm/device/gemm.h>\n",
    instead=(
        "#include <hipblaslt/hipblaslt.h>   // library GEMMs with epilogues\n"
        "// or composable_kernel (ck / ck_tile) for fused custom kernels\n"
    ),
    fix=(
        "Use hipBLASLt for GEMMs with standard epilogues, composable_kernel for fused or "
        "custom kernels; keep CUTLASS on the NVIDIA build path."
    ),
    mechanical=False,
    references=(COMPOSABLE_KERNEL, HIPBLASLT),
    needles=("cutlass", "cute"),
)


def cutlass_cute(src: KernelSource) -> Iterator[Finding]:
    """CUTLASS/CuTe includes and ``cutlass::``/``cute::`` names, once per file."""
    yield from library_use(src, CUTLASS_CUTE, kernel_libraries()[CUTLASS_CUTE.id])


CUBLASLT = rule(
    id="GP313",
    slug="cublaslt",
    category=Category.KERNELS,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="cuBLASLt is used; hipBLASLt is close but not identical",
    what="Reports, once per file, cuBLASLt calls, types and constants (`cublasLt*`, `CUBLASLT_*`).",
    why=(
        "hipBLASLt mirrors the cuBLASLt model (handles, matmul descriptors, layouts, heuristics), "
        "and HIPIFY renames most names, but supported epilogues, FP8 scaling attributes, "
        "workspace needs and algorithm heuristics differ; results of heuristic queries cannot "
        "be carried over."
    ),
    example="cublasLtMatmul(handle, desc, &alpha, A, Adesc, B, Bdesc, &beta, C, Cdesc, D, Ddesc, &algo, ws, wsSize, stream);\n",
    instead="hipblasLtMatmul(handle, desc, &alpha, A, Adesc, B, Bdesc, &beta, C, Cdesc, D, Ddesc, &algo, ws, wsSize, stream);\n",
    fix=(
        "Port to hipBLASLt (`hipblasLt*`), then check each matmul attribute and epilogue "
        "against hipBLASLt's documentation and re-run the heuristic query on the AMD GPU."
    ),
    mechanical=False,
    references=(HIPBLASLT, HIPIFY_APIS),
    needles=("ublasLt", "UBLASLT"),
)


def cublaslt(src: KernelSource) -> Iterator[Finding]:
    """cuBLASLt calls, types and constants, once per file."""
    yield from library_use(src, CUBLASLT, kernel_libraries()[CUBLASLT.id])


CUDNN = rule(
    id="GP314",
    slug="cudnn",
    category=Category.KERNELS,
    severity=Severity.HIGH,
    confidence=Confidence.HIGH,
    summary="cuDNN is used; MIOpen is the counterpart but not one-to-one",
    what=(
        "Reports, once per file, cuDNN calls, types and constants (`cudnnCamelCase`, `CUDNN_*`; "
        "not a project's own snake_case `cudnn_backend`), "
        "including the backend/graph API and cudnn-frontend."
    ),
    why=(
        "MIOpen covers convolutions, pooling, normalisation, activations, RNNs and more, but "
        "its API differs: convolutions require a find step (`miopenFindConvolution*Algorithm`) "
        "before use, algorithm preferences and several tensor formats and modes have no "
        "counterpart, and the cuDNN graph/backend API has no MIOpen equivalent."
    ),
    example="cudnnConvolutionForward(h, &a, xDesc, x, wDesc, w, convDesc, algo, ws, wsSize, &b, yDesc, y);\n",
    instead=(
        "miopenFindConvolutionForwardAlgorithm(...);   // mandatory before the first call\n"
        "miopenConvolutionForward(h, &a, xDesc, x, wDesc, w, convDesc, algo, &b, yDesc, y, ws, wsSize);\n"
    ),
    fix=(
        "Port call by call to MIOpen following its porting guide, or move the operation to a "
        "framework (PyTorch on ROCm) that already does; budget for the API differences."
    ),
    mechanical=False,
    references=(MIOPEN_PORTING, HIPIFY_APIS),
    needles=("cudnn", "CUDNN"),
)


def cudnn(src: KernelSource) -> Iterator[Finding]:
    """cuDNN (and cudnn-frontend) calls, types and constants, once per file."""
    yield from library_use(src, CUDNN, kernel_libraries()[CUDNN.id])


LIBCUDACXX = rule(
    id="GP316",
    slug="libcudacxx",
    category=Category.KERNELS,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="libcu++ (cuda::std, cuda::atomic) is used; libhipcxx is an early-access port",
    what=(
        "Reports, once per file, `#include <cuda/std/...>` and other `<cuda/...>` libcu++ "
        "headers, `cuda::std::` and `cuda::` facilities such as `cuda::atomic` and "
        "`cuda::atomic_ref` (pipelines and barriers are GP311)."
    ),
    why=(
        "libcu++ ships with the CUDA toolkit. ROCm's libhipcxx keeps the same `cuda::` names "
        "but is a technology preview that implements only part of the library, so each use "
        "must be checked, or rewritten with `std::` and HIP atomics."
    ),
    example="#include <cuda/atomic>\ncuda::atomic_ref<int, cuda::thread_scope_device> c(*counter);\n",
    instead="atomicAdd(counter, 1);   // or libhipcxx's cuda::atomic_ref, after checking support\n",
    fix=(
        "Try libhipcxx for the facilities it implements; otherwise use `std::` in host code and "
        "HIP atomics (`atomicAdd`, `__hip_atomic_fetch_add` with a scope) in device code."
    ),
    mechanical=False,
    references=(LIBHIPCXX,),
    needles=("cuda::", "cuda/"),
)


def libcudacxx(src: KernelSource) -> Iterator[Finding]:
    """libcu++ headers and ``cuda::``/``cuda::std::`` names, once per file."""
    yield from library_use(src, LIBCUDACXX, kernel_libraries()[LIBCUDACXX.id])


NVRTC = rule(
    id="GP317",
    slug="nvrtc",
    category=Category.KERNELS,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="NVRTC run-time compilation; hipRTC is the counterpart, the kernel strings need porting too",
    what="Reports, once per file, NVRTC calls, types and constants (`nvrtc*`, `NVRTC_*`).",
    why=(
        "hipRTC offers the same flow (`hiprtcCreateProgram`, `hiprtcCompileProgram`) and the "
        "names map, but it produces AMD code objects rather than PTX (`nvrtcGetPTX` becomes "
        "`hiprtcGetCode`), takes `--offload-arch=gfx…` instead of `-arch=compute_…`, and the "
        "CUDA source strings it compiles need the same porting as any other kernel."
    ),
    example='nvrtcCompileProgram(prog, 1, (const char*[]){"-arch=compute_80"});\nnvrtcGetPTX(prog, ptx);\n',
    instead='hiprtcCompileProgram(prog, 1, (const char*[]){"--offload-arch=gfx942"});\nhiprtcGetCode(prog, code);\n',
    fix=(
        "Rename to hipRTC, replace PTX handling with code objects loaded by `hipModuleLoadData`, "
        "change architecture options, and port the kernel source strings."
    ),
    mechanical=False,
    references=(HIP_RTC,),
    needles=("nvrtc", "NVRTC"),
)


def nvrtc(src: KernelSource) -> Iterator[Finding]:
    """NVRTC calls, types and constants, once per file."""
    yield from library_use(src, NVRTC, kernel_libraries()[NVRTC.id])


NVTX = rule(
    id="GP318",
    slug="nvtx",
    category=Category.KERNELS,
    severity=Severity.LOW,
    confidence=Confidence.HIGH,
    summary="NVTX profiling ranges; ROCTx is the AMD counterpart",
    what="Reports, once per file, NVTX includes and calls (`nvtx*`, `nvtx3::`).",
    why=(
        "NVTX headers are not on ROCm systems. ROCTx provides markers and push/pop and "
        "start/stop ranges (`roctxMark`, `roctxRangePush`, `roctxRangePop`, "
        "`roctxRangeStart`, `roctxRangeStop`); NVTX domains, categories, colours and the "
        "`nvtx3` C++ API have no direct counterpart."
    ),
    example='nvtxRangePushA("forward");\n...\nnvtxRangePop();\n',
    instead='roctxRangePush("forward");\n...\nroctxRangePop();\n',
    fix=(
        "Switch to ROCTx (`rocprofiler-sdk-roctx/roctx.h`, link `rocprofiler-sdk-roctx`), "
        "or hide the calls behind a macro that compiles away on ROCm."
    ),
    mechanical=False,
    references=(ROCTX,),
    needles=("nvtx", "NVTX", "nvToolsExt"),
)


def nvtx(src: KernelSource) -> Iterator[Finding]:
    """NVTX includes and calls, once per file."""
    yield from library_use(src, NVTX, kernel_libraries()[NVTX.id])


MEMORY_POOLS = rule(
    id="GP321",
    slug="stream-ordered-memory-pools",
    category=Category.KERNELS,
    severity=Severity.INFO,
    confidence=Confidence.HIGH,
    summary="Stream-ordered memory pools are used; HIP supports them, check the attributes",
    what=(
        "Reports, once per file, explicit memory-pool use (`cudaMemPool*`, "
        "`cudaDeviceSetMemPool`, `cudaMallocFromPoolAsync`); plain `cudaMallocAsync` is "
        "only counted by GP300."
    ),
    why=(
        "HIP has the stream-ordered allocator (`hipMallocAsync`, `hipMemPool*`, since ROCm "
        "5.2) and the rename is mechanical, but pool attributes, release thresholds and "
        "inter-process sharing of pools are worth checking on the target ROCm version."
    ),
    example="cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold);\n",
    instead="hipMemPoolSetAttribute(pool, hipMemPoolAttrReleaseThreshold, &threshold);\n",
    fix="Let `gpuport port` rename the calls, then check each pool attribute you set.",
    mechanical=False,
    references=(HIP_STREAM_ORDERED,),
    needles=("MemPool", "FromPoolAsync"),
)


def stream_ordered_memory_pools(src: KernelSource) -> Iterator[Finding]:
    """Explicit memory-pool calls and types, once per file."""
    yield from library_use(src, MEMORY_POOLS, kernel_libraries()[MEMORY_POOLS.id])


WMMA = rule(
    id="GP323",
    slug="wmma",
    category=Category.KERNELS,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="Warp matrix functions (nvcuda::wmma) are not supported by HIP; use rocWMMA",
    what="Reports, once per file, `#include <mma.h>`, `nvcuda::wmma` and `wmma::` uses.",
    why=(
        "HIP does not provide warp matrix types or functions. rocWMMA offers a similar "
        "fragment API (`rocwmma::fragment`, `load_matrix_sync`, `mma_sync`) on AMD matrix "
        "cores, but with its own supported shapes, types and architectures, and fragments "
        "spread over 64 lanes on CDNA."
    ),
    example="wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;\n",
    instead="rocwmma::fragment<rocwmma::matrix_a, 16, 16, 16, rocwmma::float16_t, rocwmma::row_major> a;\n",
    fix="Port to rocWMMA and check the shapes and types it supports on the target GPU.",
    mechanical=False,
    references=(HIP_EXTENSIONS, ROCWMMA),
    needles=("wmma", "mma.h"),
)


def wmma(src: KernelSource) -> Iterator[Finding]:
    """``<mma.h>`` and ``nvcuda::wmma``/``wmma::`` names, once per file."""
    yield from library_use(src, WMMA, kernel_libraries()[WMMA.id])


FP8_TYPES = rule(
    id="GP326",
    slug="fp8-formats",
    category=Category.KERNELS,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="CUDA FP8/FP6/FP4 types; HIP's types differ and MI300 uses the FNUZ encodings",
    what=(
        "Reports, once per file, `cuda_fp8.h`/`cuda_fp6.h`/`cuda_fp4.h` and the `__nv_fp8*`, "
        "`__nv_fp6*`, `__nv_fp4*` types and conversions."
    ),
    why=(
        "HIP has its own types in `hip/hip_fp8.h` (`__hip_fp8_e4m3`, `__hip_fp8_e4m3_fnuz`, "
        "…). MI300-class GPUs (gfx940-942) support only the FNUZ variants, whose exponent "
        "bias, maximum value and NaN encoding differ from the OCP formats NVIDIA uses, so "
        "data and scale factors do not carry over bit for bit."
    ),
    example="#include <cuda_fp8.h>\n__nv_fp8_e4m3 q = __nv_fp8_e4m3(x);\n",
    instead="#include <hip/hip_fp8.h>\n__hip_fp8_e4m3_fnuz q(x);   // on gfx942; OCP __hip_fp8_e4m3 on newer GPUs\n",
    fix=(
        "Port to HIP's FP8 types, choose FNUZ or OCP per target architecture, and re-derive "
        "scaling factors (FNUZ e4m3 saturates at 240, OCP e4m3 at 448)."
    ),
    mechanical=False,
    references=(HIP_FP8,),
    needles=("__nv_fp", "__nv_cvt", "cuda_fp8", "cuda_fp6", "cuda_fp4"),
)


def fp8_formats(src: KernelSource) -> Iterator[Finding]:
    """FP8/FP6/FP4 headers, types and conversions, once per file."""
    yield from library_use(src, FP8_TYPES, kernel_libraries()[FP8_TYPES.id])
