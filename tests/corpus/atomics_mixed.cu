// Exercises: the atomic family (atomicAdd on float/double, atomicCAS loops, atomicExch, atomicInc/Dec, bitwise atomics, _block/_system scopes) and fences.
#include <cstdio>

#include <cuda_runtime.h>

struct Counters {
    unsigned long long total;
    unsigned int ring_head;
    unsigned int flags;
    int max_seen;
    int min_seen;
};

// Multiplication has no atomic: build it from atomicCAS.
__device__ float atomic_mul(float* address, float factor) {
    unsigned int* bits = reinterpret_cast<unsigned int*>(address);
    unsigned int old = *bits, assumed;
    do {
        assumed = old;
        old = atomicCAS(bits, assumed, __float_as_uint(__uint_as_float(assumed) * factor));
    } while (assumed != old);
    return __uint_as_float(old);
}

__global__ void accumulate(const int* values, int n, Counters* c, float* fsum, double* dsum,
                           float* product, int* ring, unsigned int ring_size) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int v = values[i];
    atomicAdd(&c->total, static_cast<unsigned long long>(v));
    atomicAdd(fsum, static_cast<float>(v) * 0.5f);
    atomicAdd(dsum, static_cast<double>(v) * 0.25);
    atomicMax(&c->max_seen, v);
    atomicMin(&c->min_seen, v);
    atomicOr(&c->flags, 1u << (v & 31));
    atomicAnd(&c->flags, ~(1u << 31));
    atomicXor(&c->flags, 0u);
    unsigned int slot = atomicInc(&c->ring_head, ring_size - 1);
    atomicExch(&ring[slot], v);
    if ((v & 1023) == 0) atomic_mul(product, 1.0001f);
    atomicAdd_block(fsum + 1, 1.0f);
    atomicAdd_system(reinterpret_cast<int*>(&c->max_seen) + 0, 0);
    __threadfence();
}

__global__ void drain(Counters* c) {
    if (threadIdx.x == 0) {
        unsigned int before = atomicDec(&c->ring_head, 0xffffffffu);
        atomicSub(&c->min_seen, static_cast<int>(before));
        __threadfence_block();
    }
}

int main() {
    const int n = 1 << 20;
    int *values, *ring;
    Counters* counters;
    float *fsum, *product;
    double* dsum;
    cudaMalloc(&values, n * sizeof(int));
    cudaMalloc(&ring, 1024 * sizeof(int));
    cudaMalloc(&counters, sizeof(Counters));
    cudaMalloc(&fsum, 2 * sizeof(float));
    cudaMalloc(&dsum, sizeof(double));
    cudaMalloc(&product, sizeof(float));
    cudaMemset(values, 0, n * sizeof(int));
    cudaMemset(counters, 0, sizeof(Counters));
    accumulate<<<n / 256, 256>>>(values, n, counters, fsum, dsum, product, ring, 1024);
    drain<<<1, 32>>>(counters);
    Counters host;
    cudaMemcpy(&host, counters, sizeof(host), cudaMemcpyDeviceToHost);
    std::printf("total=%llu max=%d\n", host.total, host.max_seen);
    cudaFree(values);
    cudaFree(ring);
    cudaFree(counters);
    cudaFree(fsum);
    cudaFree(dsum);
    cudaFree(product);
    return 0;
}
