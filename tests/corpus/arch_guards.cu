// Exercises: __CUDA_ARCH__ guards: host/device dual paths, a pre-sm_60 double atomicAdd fallback, per-architecture tuning constants and __CUDACC__ checks.
#include <cstdio>

#include <cuda_runtime.h>

#ifdef __CUDACC__
#define HOST_DEVICE __host__ __device__
#else
#define HOST_DEVICE
#endif

// The classic fallback: native double atomicAdd only exists from sm_60 on.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 600
__device__ double atomicAdd(double* address, double val) {
    unsigned long long int* address_as_ull = (unsigned long long int*)address;
    unsigned long long int old = *address_as_ull, assumed;
    do {
        assumed = old;
        old = atomicCAS(address_as_ull, assumed,
                        __double_as_longlong(val + __longlong_as_double(assumed)));
    } while (assumed != old);
    return __longlong_as_double(old);
}
#endif

// Tuning by architecture, resolved in the device pass only.
#if defined(__CUDA_ARCH__)
#if __CUDA_ARCH__ >= 800
#define ITEMS_PER_THREAD 8
#elif __CUDA_ARCH__ >= 700
#define ITEMS_PER_THREAD 4
#else
#define ITEMS_PER_THREAD 2
#endif
#else
#define ITEMS_PER_THREAD 1
#endif

HOST_DEVICE inline int where_am_i() {
#ifdef __CUDA_ARCH__
    return __CUDA_ARCH__;
#else
    return 0;
#endif
}

HOST_DEVICE inline float fast_reciprocal(float x) {
#if defined(__CUDA_ARCH__)
    return __frcp_rn(x);
#else
    return 1.0f / x;
#endif
}

__global__ void sum_reciprocals(const float* x, int n, double* out, int* arch) {
    int base = (blockIdx.x * blockDim.x + threadIdx.x) * ITEMS_PER_THREAD;
    double local = 0.0;
#pragma unroll
    for (int k = 0; k < ITEMS_PER_THREAD; ++k) {
        int i = base + k;
        if (i < n) local += fast_reciprocal(x[i]);
    }
    atomicAdd(out, local);
    if (base == 0) *arch = where_am_i();
#if __CUDA_ARCH__ >= 700
    __nanosleep(10);
#endif
}

int main() {
    const int n = 1 << 20;
    float* x;
    double* out;
    int* arch;
    cudaMalloc(&x, n * sizeof(float));
    cudaMalloc(&out, sizeof(double));
    cudaMalloc(&arch, sizeof(int));
    cudaMemset(out, 0, sizeof(double));
    int per_thread = 8;  // upper bound of ITEMS_PER_THREAD over all architectures
    sum_reciprocals<<<(n / per_thread + 255) / 256 * per_thread, 256>>>(x, n, out, arch);
    int host_arch = 0;
    cudaMemcpy(&host_arch, arch, sizeof(int), cudaMemcpyDeviceToHost);
    std::printf("ran on __CUDA_ARCH__ %d, host says %d, %g\n", host_arch, where_am_i(),
                fast_reciprocal(4.f));
    cudaFree(x); cudaFree(out); cudaFree(arch);
    return 0;
}
