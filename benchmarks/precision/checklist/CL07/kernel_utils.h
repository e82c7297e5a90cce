// Hardware constants shared by the inference kernels.
#pragma once

#ifdef __HIP_PLATFORM_AMD__
constexpr int hw_warp_size = 64;
#else
constexpr int hw_warp_size = 32;
#endif

constexpr int max_threads = 1024;
constexpr int max_warps = max_threads / hw_warp_size;
