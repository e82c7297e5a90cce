// Exercises: CUDA 13 managed memory with cudaMemLocation (cudaMemAdvise, cudaMemPrefetchAsync with flags), beside the device-id form of cudaMemAdvise.
#include <cstdio>

#include <cuda_runtime.h>

#define CHECK(x)                                                              \
    do {                                                                      \
        cudaError_t status_ = (x);                                            \
        if (status_ != cudaSuccess) {                                         \
            std::printf("error %s at line %d\n", cudaGetErrorName(status_),   \
                        __LINE__);                                            \
            return 1;                                                         \
        }                                                                     \
    } while (false)

__global__ void scale(float* values, size_t n, float factor) {
    size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
    if (i < n) values[i] *= factor;
}

int main() {
    const size_t n = 1 << 20;
    float* values = nullptr;
    CHECK(cudaMallocManaged(&values, n * sizeof(float)));
    for (size_t i = 0; i < n; ++i) values[i] = 1.0f;

    int device = 0;
    CHECK(cudaGetDevice(&device));
    cudaStream_t stream;
    CHECK(cudaStreamCreate(&stream));

    cudaMemLocation gpu{};
    gpu.type = cudaMemLocationTypeDevice;
    gpu.id = device;
    CHECK(cudaMemAdvise(values, n * sizeof(float), cudaMemAdviseSetPreferredLocation, gpu));
    CHECK(cudaMemPrefetchAsync(values, n * sizeof(float), gpu, 0, stream));
    CHECK(cudaMemAdvise(values, n * sizeof(float), cudaMemAdviseSetAccessedBy,
                        cudaMemLocation{cudaMemLocationTypeDevice, device}));

    scale<<<static_cast<unsigned>((n + 255) / 256), 256, 0, stream>>>(values, n, 2.0f);
    CHECK(cudaGetLastError());
    CHECK(cudaStreamSynchronize(stream));
    std::printf("values[0] = %f\n", values[0]);

    CHECK(cudaStreamDestroy(stream));
    CHECK(cudaFree(values));
    return 0;
}
