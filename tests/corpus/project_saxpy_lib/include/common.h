// Shared error-checking helpers for the saxpy library (runtime API types in a plain .h header).
#pragma once

#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

#define SAXPY_CUDA_CHECK(call)                                                         \
    do {                                                                               \
        cudaError_t status_ = (call);                                                  \
        if (status_ != cudaSuccess) {                                                  \
            std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,                    \
                         cudaGetErrorString(status_));                                 \
            std::exit(EXIT_FAILURE);                                                   \
        }                                                                              \
    } while (0)

struct DeviceBuffer {
    float* data = nullptr;
    size_t count = 0;
    explicit DeviceBuffer(size_t n) : count(n) {
        SAXPY_CUDA_CHECK(cudaMalloc(&data, n * sizeof(float)));
    }
    ~DeviceBuffer() { cudaFree(data); }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};
