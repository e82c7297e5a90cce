// Exercises: mapped (zero-copy) host memory: cudaHostAlloc with cudaHostAllocMapped, cudaHostRegister, cudaHostGetDevicePointer, cudaSetDeviceFlags.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cuda_runtime.h>

static void check(cudaError_t result, const char* what, int line) {
    if (result != cudaSuccess) {
        std::fprintf(stderr, "line %d: %s -> %s\n", line, what, cudaGetErrorString(result));
        std::exit(1);
    }
}
#define CHECK_CUDA(expr) check((expr), #expr, __LINE__)

__global__ void count_positive(const int* values, int n, unsigned int* counter) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && values[i] > 0) atomicAdd(counter, 1u);
}

int main() {
    CHECK_CUDA(cudaSetDeviceFlags(cudaDeviceMapHost | cudaDeviceScheduleBlockingSync));
    const int n = 1 << 18;

    // Memory the application already owns, pinned after the fact.
    int* values = static_cast<int*>(std::malloc(n * sizeof(int)));
    for (int i = 0; i < n; ++i) values[i] = (i % 3) - 1;
    CHECK_CUDA(cudaHostRegister(values, n * sizeof(int), cudaHostRegisterMapped));
    int* values_dev = nullptr;
    CHECK_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(&values_dev), values, 0));

    unsigned int* counter = nullptr;
    CHECK_CUDA(cudaHostAlloc(reinterpret_cast<void**>(&counter), sizeof(unsigned int),
                             cudaHostAllocMapped | cudaHostAllocPortable));
    *counter = 0;
    unsigned int* counter_dev = nullptr;
    CHECK_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(&counter_dev), counter, 0));

    count_positive<<<(n + 511) / 512, 512>>>(values_dev, n, counter_dev);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());
    std::printf("%u positive values\n", *counter);

    unsigned int flags = 0;
    CHECK_CUDA(cudaHostGetFlags(&flags, counter));
    CHECK_CUDA(cudaHostUnregister(values));
    CHECK_CUDA(cudaFreeHost(counter));
    std::free(values);
    return 0;
}
