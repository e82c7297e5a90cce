"""The CUDA/C++ kernel rules (GP3xx), declared once with their documentation.

The scanner that finds them lives in :mod:`gpuport.scan.kernels`. Facts in these docs come
from the pages listed in each rule's references (checked 2026-11).
"""

from __future__ import annotations

from gpuport.findings import Category, Confidence, Severity
from gpuport.rules import rule

_HIP_DOCS = "https://rocm.docs.amd.com/projects/HIP/en/latest"
HIP_EXTENSIONS = f"{_HIP_DOCS}/how-to/hip_cpp_language_extensions.html"
HIP_WARP_FUNCTIONS = f"{HIP_EXTENSIONS}#warp-cross-lane-functions"
HIP_WARP_SIZE = f"{HIP_EXTENSIONS}#warpsize"
HIP_PORTING_GUIDE = f"{_HIP_DOCS}/how-to/hip_porting_guide.html"
HIP_COOPERATIVE_GROUPS = f"{_HIP_DOCS}/how-to/hip_runtime_api/cooperative_groups.html"
HIP_TEXTURES = (
    f"{_HIP_DOCS}/how-to/hip_runtime_api/memory_management/device_memory/texture_fetching.html"
)
HIP_RTC = f"{_HIP_DOCS}/how-to/hip_rtc.html"
HIP_GRAPHS = f"{_HIP_DOCS}/how-to/hip_runtime_api/hipgraph.html"
HIP_STREAM_ORDERED = (
    f"{_HIP_DOCS}/how-to/hip_runtime_api/memory_management/stream_ordered_allocator.html"
)
HIP_FP8 = f"{_HIP_DOCS}/reference/fp8_numbers.html"
HIP_WARP_SYNC_HEADER = (
    "https://github.com/ROCm/clr/blob/develop/hipamd/include/hip/amd_detail/"
    "amd_warp_sync_functions.h"
)
HIPIFY_APIS = "https://rocm.docs.amd.com/projects/HIPIFY/en/latest/reference/supported_apis.html"
HIPBLASLT = "https://rocm.docs.amd.com/projects/hipBLASLt/en/latest/"
MIOPEN_PORTING = "https://rocm.docs.amd.com/projects/MIOpen/en/latest/MIOpen_Porting_Guide.html"
COMPOSABLE_KERNEL = "https://rocm.docs.amd.com/projects/composable_kernel/en/latest/"
ROCWMMA = "https://rocm.docs.amd.com/projects/rocWMMA/en/latest/"
LIBHIPCXX = "https://rocm.docs.amd.com/projects/libhipcxx/en/latest/what-is-libhipcxx.html"
ROCTX = (
    "https://rocm.docs.amd.com/projects/rocprofiler-sdk/en/latest/how-to/"
    "using-rocprofiler-sdk-roctx.html"
)
AMDGPU_BUILTINS = "https://clang.llvm.org/docs/AMDGPUBuiltins.html"
NVIDIA_INLINE_PTX = "https://docs.nvidia.com/cuda/inline-ptx-assembly/"
CUDA_12_RELEASE_NOTES = "https://docs.nvidia.com/cuda/archive/12.0.0/cuda-toolkit-release-notes/"


CUDA_API_RENAMES = rule(
    id="GP300",
    slug="cuda-api-renames",
    category=Category.KERNELS,
    severity=Severity.LOW,
    confidence=Confidence.HIGH,
    summary="CUDA runtime, driver or library API references that gpuport port renames to HIP",
    what=(
        "Counts, once per file, the CUDA runtime (`cuda*`), driver (`cu*`, `CU*`) and library "
        "(cuBLAS, cuRAND, cuFFT, cuSPARSE, cuSOLVER, CUB) identifiers and CUDA headers that "
        "have a one-to-one HIP counterpart, and lists the most frequent ones. APIs with their "
        "own rule (cuDNN, cuBLASLt, NVRTC, NVTX, texture references, clusters, TMA) are not "
        "counted here."
    ),
    why=(
        "None of these names exist on ROCm, so the file does not build until they are renamed "
        "(`cudaMalloc` → `hipMalloc`, `cublasSgemm` → `hipblasSgemm`, `cuda_runtime.h` → "
        "`hip/hip_runtime.h`). The rename is mechanical, which is why this finding is low: "
        "it exists so that an assessment can count the mechanical part of the work."
    ),
    example=(
        "#include <cuda_runtime.h>\n"
        "cudaMalloc(&p, n);\n"
        "cudaMemcpy(p, h, n, cudaMemcpyHostToDevice);\n"
    ),
    instead=(
        "#include <hip/hip_runtime.h>\nhipMalloc(&p, n);\nhipMemcpy(p, h, n, hipMemcpyHostToDevice);\n"
    ),
    fix="Run `gpuport port`: it renames every counted reference to its HIP equivalent.",
    mechanical=True,
    references=(HIPIFY_APIS, HIP_PORTING_GUIDE),
)

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
)

LANE_MATH_WARP_32 = rule(
    id="GP302",
    slug="lane-math-assumes-warp-32",
    category=Category.KERNELS,
    severity=Severity.MEDIUM,
    confidence=Confidence.MEDIUM,
    summary="Lane or warp index computed from a thread index with a hard-coded warp size of 32",
    what=(
        "Finds `& 31`, `& 0x1f`, `% 32`, `/ 32` and `>> 5` applied to `threadIdx.*`, to "
        "a variable assigned from it, or to a parenthesised expression that contains it. The "
        "same operators on other values (sizes, counters) are not reported; `% warpSize` and "
        "`& (warpSize - 1)` are the portable spelling and are fine."
    ),
    why=(
        "AMD Instinct GPUs (CDNA, gfx9) run 64-wide wavefronts; RDNA GPUs run 32-wide. With a "
        "wavefront of 64, `threadIdx.x & 31` gives two threads of the same wavefront the same "
        "'lane', and `threadIdx.x / 32` puts one wavefront in two 'warps', so per-warp "
        "reductions, ballots and shared-memory slots silently mix results."
    ),
    example="int lane = threadIdx.x & 31;\nint warp = threadIdx.x >> 5;\n",
    instead="int lane = threadIdx.x % warpSize;   // or __lane_id()\nint warp = threadIdx.x / warpSize;\n",
    fix=(
        "Use `warpSize` (or `__lane_id()`) instead of 32, 31 and 5, and check that every buffer "
        "sized per warp follows; a template parameter chosen on the host works where a "
        "compile-time constant is needed."
    ),
    mechanical=False,
    references=(HIP_WARP_SIZE, HIP_WARP_FUNCTIONS),
)

WARP_MASK_32_BIT = rule(
    id="GP303",
    slug="warp-mask-32-bit",
    category=Category.KERNELS,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="A 32-bit full-warp mask is passed to a *_sync warp function; HIP masks are 64-bit",
    what=(
        "Finds `0xffffffff`, `0xFFFFFFFFu`, `~0u`, `-1` and the like as the mask argument of "
        "`__shfl*_sync`, `__ballot_sync`, `__any_sync`, `__all_sync` and `__match_*_sync`, and "
        "`#define`/`constexpr` mask constants with that value that such calls use. 64-bit full "
        "masks (`0xffffffffffffffffULL`, `~0ull`) are fine."
    ),
    why=(
        "HIP's `*_sync` warp functions (ROCm 6.2 behind `HIP_ENABLE_WARP_SYNC_BUILTINS`, on by "
        "default in later releases) take a 64-bit mask and `static_assert` that it is one, so "
        "a 32-bit mask does not compile. A 32-bit value "
        "widened to 64 bits (`0xffffffffULL`) compiles but names only lanes 0-31 of a 64-wide "
        "wavefront, so half of the wavefront is left out."
    ),
    example="v += __shfl_xor_sync(0xffffffff, v, o);\n",
    instead="v += __shfl_xor_sync(0xffffffffffffffffULL, v, o);   // or __shfl_xor(v, o)\n",
    fix=(
        "Opt-in mechanical fix (`gpuport port` applies it when the mask is exactly the "
        "full-warp constant): write the 64-bit full mask `0xffffffffffffffffULL`. For ROCm "
        "older than 6.2, which has no `*_sync` forms, call the mask-less form instead "
        "(`__shfl_xor(v, o)`, `__ballot(p)`); a mask built at run time needs a 64-bit type."
    ),
    mechanical=True,
    references=(HIP_WARP_FUNCTIONS, HIP_WARP_SYNC_HEADER),
)

BALLOT_RESULT_32_BIT = rule(
    id="GP304",
    slug="ballot-result-32-bit",
    category=Category.KERNELS,
    severity=Severity.MEDIUM,
    confidence=Confidence.MEDIUM,
    summary="A ballot or active-lane mask is kept or counted in 32 bits; HIP returns 64 bits",
    what=(
        "Finds results of `__ballot_sync`, `__ballot`, `__activemask` and `__match_*_sync` "
        "stored in `unsigned`, `unsigned int`, `uint32_t` or `int`, and `__popc`, `__ffs`, "
        "`__clz`, `__brev` applied to such a result (directly or through the variable that "
        "holds it)."
    ),
    why=(
        "On AMD these functions return `unsigned long long`, one bit per lane of a wavefront "
        "of up to 64. Storing the result in 32 bits drops lanes 32-63, and `__popc` counts only "
        "the low 32 bits, so votes and counts are silently wrong on 64-wide wavefronts."
    ),
    example=("unsigned votes = __ballot_sync(0xffffffff, pred);\nint n = __popc(votes);\n"),
    instead=(
        "unsigned long long votes = __ballot_sync(0xffffffffffffffffULL, pred);\n"
        "int n = __popcll(votes);\n"
    ),
    fix=(
        "Keep masks in `unsigned long long` (or `auto`) and use the 64-bit bit functions "
        "(`__popcll`, `__ffsll`, `__clzll`, `__brevll`)."
    ),
    mechanical=False,
    references=(HIP_WARP_FUNCTIONS,),
)

WARP_SIZE_HARDCODED = rule(
    id="GP305",
    slug="warp-size-hardcoded",
    category=Category.KERNELS,
    severity=Severity.MEDIUM,
    confidence=Confidence.MEDIUM,
    summary="A warp-size constant is defined as 32",
    what=(
        "Finds `#define WARP_SIZE 32`, `constexpr int kWarpSize = 32`, enumerators and "
        "template defaults of that kind, for names that say warp size, threads per warp or "
        "lanes per warp. Files that also define the same name as 64 (per-architecture "
        "selection) are left alone."
    ),
    why=(
        "Everything sized or indexed with the constant (shuffle loops, per-warp shared memory, "
        "lane masks) then assumes 32 lanes, while CDNA GPUs run 64. The code usually still "
        "compiles and runs, with wrong results or half the hardware idle."
    ),
    example="#define WARP_SIZE 32\n",
    instead=(
        "#if defined(__GFX8__) || defined(__GFX9__)\n#define WARP_SIZE 64\n#else\n"
        "#define WARP_SIZE 32\n#endif\n"
    ),
    fix=(
        "Use `warpSize` in device code, query `hipDeviceAttributeWarpSize` on the host and "
        "pass it as a template argument where a constant is needed, or select 64 for gfx8/gfx9 "
        "targets and 32 otherwise as HIP's documentation shows."
    ),
    mechanical=False,
    references=(HIP_WARP_SIZE,),
)

WARPSIZE_NOT_CONSTEXPR = rule(
    id="GP306",
    slug="warpsize-not-constexpr",
    category=Category.KERNELS,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="warpSize is used where a compile-time constant is required",
    what=(
        "Finds `warpSize` in array bounds of declarations, template arguments, `constexpr` "
        "initialisers, `static_assert`, `alignas`, `__launch_bounds__` and `case` labels."
    ),
    why=(
        "`warpSize` is a run-time value in CUDA (nvcc rejects it in constant expressions), "
        "but HIP before ROCm 7.0 made it a compile-time constant, so code ported to older ROCm "
        "releases often uses it in array bounds and template arguments. Since ROCm 7.0 it is "
        "no longer constant: these uses stop compiling, and before that they baked in one "
        "target's wavefront size (64 on gfx9, 32 on gfx10 and later)."
    ),
    example="__shared__ float partial[warpSize];\n",
    instead=(
        "template <int WarpSize> __global__ void k(...) { __shared__ float partial[WarpSize]; }\n"
        "// host: query hipDeviceAttributeWarpSize, launch k<64> or k<32>\n"
    ),
    fix=(
        "Make the warp size a template parameter chosen on the host from "
        "`hipDeviceAttributeWarpSize`, or size buffers for the largest case (64)."
    ),
    mechanical=False,
    references=(HIP_WARP_SIZE,),
)

PER_WARP_ARRAY_32 = rule(
    id="GP307",
    slug="lane-indexed-array-32",
    category=Category.KERNELS,
    severity=Severity.MEDIUM,
    confidence=Confidence.MEDIUM,
    summary="A shared array of 32 elements is indexed by lane",
    what=(
        "Finds `__shared__` arrays declared with exactly 32 elements that are indexed by a lane "
        "variable (one computed from `threadIdx` with `& 31`, `% 32`, `% warpSize`, "
        "`__lane_id()`, or named `lane`, `lane_id`, `laneId`)."
    ),
    why=(
        "With 64-wide wavefronts a portable lane index runs to 63 and writes past the end of "
        "the array; a lane computed with `& 31` instead makes two lanes share a slot. Either "
        "way the per-warp scratch buffer is corrupted."
    ),
    example="__shared__ float scratch[32];\nscratch[lane] = v;\n",
    instead="__shared__ float scratch[64];   // the largest wavefront\nscratch[lane] = v;\n",
    fix="Size per-lane buffers for 64 lanes (or a warp-size template parameter).",
    mechanical=False,
    references=(HIP_WARP_SIZE,),
)

SHUFFLE_FROM_16 = rule(
    id="GP308",
    slug="shuffle-reduction-32-lanes",
    category=Category.KERNELS,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="A shuffle reduction covers only 32 lanes (starts at offset 16 or stops below 32)",
    what=(
        "Finds loops such as `for (int o = 16; o > 0; o >>= 1)` or `for (int o = 1; o < 32; "
        "o <<= 1)` whose body calls `__shfl_xor*`, `__shfl_down*` or `__shfl_up*` without an "
        "explicit width of 32 or less, and unrolled shuffle sequences whose largest offset is "
        "a literal 16."
    ),
    why=(
        "A butterfly or tree reduction must start at half the wavefront. On a 64-wide "
        "wavefront a reduction that starts at 16 combines lanes 0-31 and 32-63 separately, so "
        "lane 0 holds the sum of only half the wavefront."
    ),
    example="for (int o = 16; o > 0; o >>= 1)\n  v += __shfl_xor_sync(0xffffffff, v, o);\n",
    instead="for (int o = warpSize / 2; o > 0; o >>= 1)\n  v += __shfl_xor(v, o);\n",
    fix=(
        "Start at `warpSize / 2` (or loop while `o < warpSize`), or pass an explicit width of "
        "32 if the code really means groups of 32 lanes."
    ),
    mechanical=False,
    references=(HIP_WARP_FUNCTIONS,),
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
        "dependent launch, Blackwell `tcgen05`, and CuTe's SM90/SM100 atoms."
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
)

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
)

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
)

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
)

CUDNN = rule(
    id="GP314",
    slug="cudnn",
    category=Category.KERNELS,
    severity=Severity.HIGH,
    confidence=Confidence.HIGH,
    summary="cuDNN is used; MIOpen is the counterpart but not one-to-one",
    what=(
        "Reports, once per file, cuDNN calls, types and constants (`cudnn*`, `CUDNN_*`), "
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
)

TEXTURE_REFERENCE = rule(
    id="GP315",
    slug="texture-surface-reference",
    category=Category.KERNELS,
    severity=Severity.HIGH,
    confidence=Confidence.HIGH,
    summary="Legacy texture or surface references (removed in CUDA 12, deprecated in HIP)",
    what=(
        "Finds `texture<...> name;` and `surface<...> name;` reference declarations and the "
        "reference APIs (`cudaBindTexture*`, `cudaUnbindTexture`, `cudaBindSurfaceToArray`, "
        "`cudaGetTextureReference`, `cuTexRef*`). Texture and surface objects "
        "(`cudaTextureObject_t`) are fine and are not reported."
    ),
    why=(
        "CUDA 12 removed texture and surface references, and HIP marks its reference API "
        "deprecated (`hipBindTexture` since ROCm 3.8, `hipGetTextureReference` since 5.3), so "
        "a port would only move the problem. HIP supports texture objects, on devices that "
        "report image support."
    ),
    example="texture<float, 1, cudaReadModeElementType> tex;\ncudaBindTexture(0, tex, d, n);\n",
    instead=(
        "hipTextureObject_t tex;   // hipCreateTextureObject(&tex, &resDesc, &texDesc, nullptr)\n"
        "float v = tex1Dfetch<float>(tex, i);\n"
    ),
    fix=(
        "Convert to texture objects (`hipCreateTextureObject`, passed to the kernel as an "
        "argument), or to plain global loads; check `hipDeviceAttributeImageSupport` on the "
        "target GPU."
    ),
    mechanical=False,
    references=(HIP_TEXTURES, CUDA_12_RELEASE_NOTES),
)

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
)

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
)

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
)

NANOSLEEP = rule(
    id="GP319",
    slug="nanosleep",
    category=Category.KERNELS,
    severity=Severity.LOW,
    confidence=Confidence.MEDIUM,
    summary="__nanosleep in device code; AMD GPUs sleep in clock ticks, not nanoseconds",
    what="Finds calls of `__nanosleep(ns)` in CUDA code.",
    why=(
        "`__nanosleep` is an sm_70+ CUDA intrinsic, usually in spin-wait back-off loops. "
        "Older HIP releases do not provide it; the AMDGPU instruction behind a sleep "
        "(`__builtin_amdgcn_s_sleep(n)`) waits about 64·n clock cycles, and its argument must "
        "be a constant."
    ),
    example="while (atomicAdd(flag, 0) == 0) __nanosleep(100);\n",
    instead="while (atomicAdd(flag, 0) == 0) __builtin_amdgcn_s_sleep(2);\n",
    fix="Use `__builtin_amdgcn_s_sleep` with a constant, or drop the back-off.",
    mechanical=False,
    references=(AMDGPU_BUILTINS,),
)

INDEPENDENT_THREAD_SCHEDULING = rule(
    id="GP320",
    slug="partial-warp-sync",
    category=Category.KERNELS,
    severity=Severity.MEDIUM,
    confidence=Confidence.LOW,
    summary="__syncwarp with a partial mask relies on independent thread scheduling",
    what=(
        "Finds `__syncwarp(mask)` where the mask is neither empty, the full warp, nor "
        "`__activemask()`: code that synchronises a subset of a diverged warp."
    ),
    why=(
        "Since Volta, NVIDIA threads of a warp can make progress independently, and code may "
        "depend on it (intra-warp locks, partial-warp barriers). AMD GPUs execute a "
        "wavefront in lockstep with no independent thread scheduling, and HIP's documentation "
        "warns that such code can deadlock."
    ),
    example="if (lane < 16) { work(); __syncwarp(0x0000ffff); }\n",
    instead="work_if(lane < 16);\n__syncthreads();   // or restructure so the whole wavefront converges\n",
    fix=(
        "Restructure so that the whole wavefront reaches the synchronisation point; remove "
        "intra-warp spin locks."
    ),
    mechanical=False,
    references=(HIP_COOPERATIVE_GROUPS,),
)

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
)

GRAPH_FEATURES = rule(
    id="GP322",
    slug="cuda-graph-unsupported-feature",
    category=Category.KERNELS,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="A CUDA graph feature without a HIP counterpart (conditional nodes, device launch)",
    what=(
        "Finds conditional graph nodes (`cudaGraphConditionalHandleCreate`, "
        "`cudaGraphCondType*`), device-side graph launch (`cudaGraphInstantiateFlagDeviceLaunch`, "
        "`cudaGraphDeviceNode_t`) and device-updatable kernel nodes. Ordinary graphs and stream "
        "capture are supported by HIP (`hipGraph*`) and are only counted by GP300."
    ),
    why=(
        "HIP graphs cover capture, explicit construction, instantiation, update and launch, but "
        "HIPIFY's support tables list no HIP counterpart for these newer CUDA 12 features."
    ),
    example="cudaGraphConditionalHandleCreate(&handle, graph, 1, cudaGraphCondAssignDefault);\n",
    instead="// decide on the host between launches of separately instantiated graphs\n",
    fix="Move the condition or the launch to the host, or keep the feature on the NVIDIA path.",
    mechanical=False,
    references=(HIP_GRAPHS, HIPIFY_APIS),
)

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
)

CUDA_ARCH_MACRO = rule(
    id="GP324",
    slug="cuda-arch-macro",
    category=Category.KERNELS,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="__CUDA_ARCH__ is never defined by HIP-Clang",
    what="Finds preprocessor conditions that test `__CUDA_ARCH__` (and `__CUDA_ARCH_FEAT_*`).",
    why=(
        "HIP-Clang does not define `__CUDA_ARCH__`. `#ifdef __CUDA_ARCH__` device branches "
        "disappear on AMD (the host branch is compiled for the device instead), and "
        "`__CUDA_ARCH__ >= 800` feature checks always take the fallback path."
    ),
    example="#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\n",
    instead="#if defined(__HIP_DEVICE_COMPILE__)   // device pass; features: __HIP_ARCH_HAS_*__ or __gfx942__\n",
    fix=(
        "Test `__HIP_DEVICE_COMPILE__` for 'compiling device code', and feature macros "
        "(`__HIP_ARCH_HAS_*__`) or target macros (`__gfx90a__`, `__gfx942__`) for hardware "
        "features."
    ),
    mechanical=False,
    references=(HIP_PORTING_GUIDE,),
)

DYNAMIC_PARALLELISM = rule(
    id="GP325",
    slug="dynamic-parallelism",
    category=Category.KERNELS,
    severity=Severity.HIGH,
    confidence=Confidence.MEDIUM,
    summary="A kernel is launched from device code; HIP has no dynamic parallelism",
    what="Finds `<<<...>>>` launches inside `__global__` or `__device__` function bodies.",
    why=(
        "CUDA dynamic parallelism lets a kernel launch kernels. HIP does not support it, so "
        "device-side launches do not compile."
    ),
    example="__global__ void parent() { child<<<1, 64>>>(); }\n",
    instead="parent<<<g, b>>>();\nchild<<<1, 64>>>();   // launched from the host, in stream order\n",
    fix=(
        "Move the launch to the host (or flatten the work into the parent kernel); HIP "
        "graphs can order dependent launches."
    ),
    mechanical=False,
    references=(HIP_EXTENSIONS,),
)

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
)

KERNEL_RULES = (
    CUDA_API_RENAMES,
    INLINE_PTX,
    LANE_MATH_WARP_32,
    WARP_MASK_32_BIT,
    BALLOT_RESULT_32_BIT,
    WARP_SIZE_HARDCODED,
    WARPSIZE_NOT_CONSTEXPR,
    PER_WARP_ARRAY_32,
    SHUFFLE_FROM_16,
    HOPPER_ONLY,
    THREAD_BLOCK_CLUSTERS,
    ASYNC_COPY,
    CUTLASS_CUTE,
    CUBLASLT,
    CUDNN,
    TEXTURE_REFERENCE,
    LIBCUDACXX,
    NVRTC,
    NVTX,
    NANOSLEEP,
    INDEPENDENT_THREAD_SCHEDULING,
    MEMORY_POOLS,
    GRAPH_FEATURES,
    WMMA,
    CUDA_ARCH_MACRO,
    DYNAMIC_PARALLELISM,
    FP8_TYPES,
)
