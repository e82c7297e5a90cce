// Error checking for the runtime API. No runtime include: every .cu file that includes this
// header gets cuda_runtime.h from nvcc before it.
#ifndef IMPLICIT_CHECK_H
#define IMPLICIT_CHECK_H

#include <cstdio>
#include <cstdlib>

#define CHECK_CUDA(call)                                                        \
  do {                                                                          \
    cudaError_t status_ = (call);                                               \
    if (status_ != cudaSuccess) {                                               \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,                   \
                   cudaGetErrorString(status_));                                \
      std::exit(1);                                                             \
    }                                                                           \
  } while (0)

inline int device_count() {
  int count = 0;
  CHECK_CUDA(cudaGetDeviceCount(&count));
  return count;
}

#endif
