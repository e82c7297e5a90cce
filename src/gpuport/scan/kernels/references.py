"""The documentation pages the kernel rules (GP3xx) cite, each named once (checked 2026-11)."""

from __future__ import annotations

_HIP_DOCS = "https://rocm.docs.amd.com/projects/HIP/en/latest"
HIP_EXTENSIONS = f"{_HIP_DOCS}/how-to/hip_cpp_language_extensions.html"
HIP_WARP_FUNCTIONS = f"{HIP_EXTENSIONS}#warp-cross-lane-functions"
HIP_WARP_SIZE = f"{HIP_EXTENSIONS}#warpsize"
ROCM_7_RELEASE_NOTES = "https://rocm.docs.amd.com/en/docs-7.0.0/about/release-notes.html"
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
