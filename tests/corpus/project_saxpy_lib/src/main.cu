// Exercises: the application translation unit of a multi-file project (includes ../include/common.h and ../include/saxpy.cuh).
#include <vector>

#include "../include/common.h"
#include "../include/saxpy.cuh"

int main() {
    const int n = 1 << 20, batches = 4;
    DeviceBuffer x(static_cast<size_t>(n) * batches), y(static_cast<size_t>(n) * batches);
    SAXPY_CUDA_CHECK(cudaMemset(x.data, 0, x.count * sizeof(float)));
    SAXPY_CUDA_CHECK(cudaMemset(y.data, 0, y.count * sizeof(float)));
    std::vector<cudaStream_t> streams(batches);
    for (auto& s : streams) SAXPY_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    SAXPY_CUDA_CHECK(saxpy::run(2.0f, x.data, y.data, n));
    SAXPY_CUDA_CHECK(saxpy::run_batched(0.5f, x.data, y.data, n, batches, streams.data()));
    SAXPY_CUDA_CHECK(cudaDeviceSynchronize());
    for (auto& s : streams) SAXPY_CUDA_CHECK(cudaStreamDestroy(s));
    std::printf("ok\n");
    return 0;
}
