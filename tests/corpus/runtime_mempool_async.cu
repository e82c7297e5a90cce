// Exercises: stream-ordered allocation (cudaMallocAsync/cudaFreeAsync) and memory pools (default pool, release threshold, usage attributes).
#include <cstdint>
#include <cstdio>

#include <cuda_runtime.h>

#define CUDA_TRY(call)                                                                     \
    {                                                                                      \
        cudaError_t status_ = (call);                                                      \
        if (status_ != cudaSuccess) {                                                      \
            fprintf(stderr, "CUDA_TRY(%s) -> %s\n", #call, cudaGetErrorString(status_));   \
            return 2;                                                                      \
        }                                                                                  \
    }

__global__ void prefix_double(float* v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] = 2.0f * v[i] + 1.0f;
}

int main() {
    int device = 0;
    int pools_supported = 0;
    CUDA_TRY(cudaDeviceGetAttribute(&pools_supported, cudaDevAttrMemoryPoolsSupported, device));
    if (!pools_supported) {
        printf("no memory pools on this device\n");
        return 0;
    }

    cudaMemPool_t pool;
    CUDA_TRY(cudaDeviceGetDefaultMemPool(&pool, device));
    uint64_t threshold = UINT64_MAX;  // keep freed memory in the pool
    CUDA_TRY(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));

    cudaStream_t stream;
    CUDA_TRY(cudaStreamCreate(&stream));
    for (int iteration = 0; iteration < 16; ++iteration) {
        const int n = 1 << (12 + iteration % 6);
        float* scratch = nullptr;
        CUDA_TRY(cudaMallocAsync(reinterpret_cast<void**>(&scratch), n * sizeof(float), stream));
        CUDA_TRY(cudaMemsetAsync(scratch, 0, n * sizeof(float), stream));
        prefix_double<<<(n + 255) / 256, 256, 0, stream>>>(scratch, n);
        CUDA_TRY(cudaFreeAsync(scratch, stream));
    }
    CUDA_TRY(cudaStreamSynchronize(stream));

    uint64_t reserved = 0, used = 0;
    CUDA_TRY(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
    CUDA_TRY(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
    printf("pool reserved %llu bytes, in use %llu\n", (unsigned long long)reserved,
           (unsigned long long)used);
    CUDA_TRY(cudaMemPoolTrimTo(pool, 0));
    CUDA_TRY(cudaStreamDestroy(stream));
    return 0;
}
