// Exercises: device-side printf and assert, clock64 timing, __trap on corrupt input, __threadfence_system and a volatile spin flag.
#include <cassert>
#include <cstdio>

#include <cuda_runtime.h>

__global__ void checked_normalize(float* v, int n, float total, long long* cycles) {
    long long t0 = clock64();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    assert(total != 0.0f);
    if (i < n) {
        if (isnan(v[i])) {
            printf("block %d thread %d: NaN at %d\n", blockIdx.x, threadIdx.x, i);
            __trap();
        }
        v[i] /= total;
    }
    if (threadIdx.x == 0) cycles[blockIdx.x] = clock64() - t0;
}

__global__ void producer_consumer(volatile int* flag, int* payload) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        *payload = 42;
        __threadfence_system();
        *flag = 1;
    } else if (threadIdx.x == 0) {
        unsigned int spins = 0;
        while (*flag == 0 && spins < (1u << 20)) ++spins;
        printf("consumer %d saw %d after %u spins (clock %d)\n", blockIdx.x, *payload, spins,
               (int)clock());
    }
}

int main() {
    const int n = 4096;
    float* v;
    long long* cycles;
    int *flag, *payload;
    cudaMalloc(&v, n * sizeof(float));
    cudaMalloc(&cycles, (n / 256) * sizeof(long long));
    cudaMalloc(&flag, sizeof(int));
    cudaMalloc(&payload, sizeof(int));
    cudaMemset(v, 0, n * sizeof(float));
    cudaMemset(flag, 0, sizeof(int));
    size_t fifo = 0;
    cudaDeviceGetLimit(&fifo, cudaLimitPrintfFifoSize);
    cudaDeviceSetLimit(cudaLimitPrintfFifoSize, fifo * 2);
    checked_normalize<<<n / 256, 256>>>(v, n, 1.0f, cycles);
    producer_consumer<<<2, 32>>>(flag, payload);
    cudaError_t err = cudaDeviceSynchronize();
    if (err == cudaErrorAssert) std::printf("a device assertion fired\n");
    cudaFree(v); cudaFree(cycles); cudaFree(flag); cudaFree(payload);
    return 0;
}
