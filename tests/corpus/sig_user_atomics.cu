// Exercises: user atomics HIP defines itself: atomicAdd(double*, double) behind the usual __CUDA_ARCH__ < 600 guard, atomicMax(double*, double) declared over two lines, and an int overload HIP lacks.
#include <cstdio>

#include <cuda_runtime.h>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 600
__device__ double atomicAdd(double* address, double val) {
    unsigned long long* as_ull = reinterpret_cast<unsigned long long*>(address);
    unsigned long long old = *as_ull, assumed;
    do {
        assumed = old;
        old = atomicCAS(as_ull, assumed,
                        __double_as_longlong(val + __longlong_as_double(assumed)));
    } while (assumed != old);
    return __longlong_as_double(old);
}
#endif

__device__ __forceinline__ double
atomicMax(double* address, double val) {
    unsigned long long* as_ull = reinterpret_cast<unsigned long long*>(address);
    unsigned long long old = *as_ull, assumed;
    do {
        assumed = old;
        if (__longlong_as_double(assumed) >= val) break;
        old = atomicCAS(as_ull, assumed, __double_as_longlong(val));
    } while (assumed != old);
    return __longlong_as_double(old);
}

// Not one of HIP's: a saturating add on int with a cap.
__device__ int atomicAddCapped(int* address, int val, int cap) {
    int old = *address, assumed;
    do {
        assumed = old;
        old = atomicCAS(address, assumed, min(assumed + val, cap));
    } while (assumed != old);
    return old;
}

__global__ void stats(const double* x, int n, double* sum, double* peak, int* count) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    atomicAdd(sum, x[i]);
    atomicMax(peak, x[i]);
    atomicAddCapped(count, 1, 1000);
}

int main() {
    const int n = 4096;
    double *x, *sum, *peak;
    int* count;
    cudaMalloc(&x, n * sizeof(double));
    cudaMalloc(&sum, sizeof(double));
    cudaMalloc(&peak, sizeof(double));
    cudaMalloc(&count, sizeof(int));
    cudaMemset(x, 0, n * sizeof(double));
    stats<<<(n + 255) / 256, 256>>>(x, n, sum, peak, count);
    double host_sum = 0.0;
    cudaMemcpy(&host_sum, sum, sizeof(double), cudaMemcpyDeviceToHost);
    std::printf("sum %g\n", host_sum);
    cudaFree(x);
    cudaFree(sum);
    cudaFree(peak);
    cudaFree(count);
    return 0;
}
