// Portability macros shared by the kernels.
#pragma once
#ifdef USE_ROCM
  #include <hip/hip_runtime.h>
#endif

#ifndef USE_ROCM
  #define WARP_SIZE 32
#else
  #define WARP_SIZE warpSize
#endif
