// Exercises: unified memory (cudaMallocManaged, prefetch and advice), with the CUDA 13 cudaMemLocation signatures behind CUDART_VERSION.
#include <cstdio>

#include <cuda_runtime.h>

#define CHECK(x)                                                                   \
    do {                                                                           \
        cudaError_t status = (x);                                                  \
        if (status != cudaSuccess) {                                               \
            std::printf("CUDA error %s at %s:%d\n", cudaGetErrorName(status),      \
                        __FILE__, __LINE__);                                       \
            return 1;                                                              \
        }                                                                          \
    } while (false)

__global__ void histogram(const unsigned char* data, size_t n, unsigned int* bins) {
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += static_cast<size_t>(gridDim.x) * blockDim.x) {
        atomicAdd(&bins[data[i]], 1u);
    }
}

int main() {
    const size_t n = 1 << 22;
    unsigned char* data = nullptr;
    unsigned int* bins = nullptr;
    CHECK(cudaMallocManaged(&data, n));
    CHECK(cudaMallocManaged(&bins, 256 * sizeof(unsigned int), cudaMemAttachGlobal));
    for (size_t i = 0; i < n; ++i) data[i] = static_cast<unsigned char>((i * 2654435761u) >> 24);
    for (int b = 0; b < 256; ++b) bins[b] = 0;

    int device = 0;
    CHECK(cudaGetDevice(&device));
    int concurrent = 0;
    CHECK(cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, device));
    cudaStream_t stream;
    CHECK(cudaStreamCreate(&stream));
    if (concurrent) {
#if CUDART_VERSION >= 13000
        cudaMemLocation where{};
        where.type = cudaMemLocationTypeDevice;
        where.id = device;
        CHECK(cudaMemAdvise(data, n, cudaMemAdviseSetReadMostly, where));
        CHECK(cudaMemPrefetchAsync(data, n, where, 0, stream));
#else
        CHECK(cudaMemAdvise(data, n, cudaMemAdviseSetReadMostly, device));
        CHECK(cudaMemPrefetchAsync(data, n, device, stream));
#endif
    }
    histogram<<<256, 256, 0, stream>>>(data, n, bins);
    CHECK(cudaGetLastError());
    CHECK(cudaStreamSynchronize(stream));

    unsigned long long total = 0;
    for (int b = 0; b < 256; ++b) total += bins[b];
    std::printf("counted %llu of %zu bytes\n", total, n);

    CHECK(cudaStreamDestroy(stream));
    CHECK(cudaFree(bins));
    CHECK(cudaFree(data));
    return 0;
}
