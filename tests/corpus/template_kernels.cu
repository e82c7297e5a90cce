// Exercises: template-heavy kernels: type traits, if constexpr, functor policies, non-type parameters, variadic launch helpers, explicit instantiation and cudaLaunchKernel.
#include <cstdio>
#include <type_traits>
#include <utility>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

template <typename T>
struct Accumulator {
    using type = T;
};
template <>
struct Accumulator<__half> {
    using type = float;
};

template <typename T>
__device__ __forceinline__ typename Accumulator<T>::type widen(T v) {
    if constexpr (std::is_same_v<T, __half>) {
        return __half2float(v);
    } else {
        return static_cast<typename Accumulator<T>::type>(v);
    }
}

struct SumOp {
    template <typename T>
    __device__ T operator()(T a, T b) const { return a + b; }
    template <typename T>
    __host__ __device__ static constexpr T identity() { return T(0); }
};

struct MaxOp {
    template <typename T>
    __device__ T operator()(T a, T b) const { return a > b ? a : b; }
    template <typename T>
    __host__ __device__ static constexpr T identity() { return T(-1e30); }
};

template <typename T, typename Op, int BLOCK, int ITEMS>
__global__ void __launch_bounds__(BLOCK) block_reduce(const T* __restrict__ in, int n,
                                                      typename Accumulator<T>::type* out) {
    using Acc = typename Accumulator<T>::type;
    static_assert(BLOCK % 32 == 0, "block must be whole warps");
    __shared__ Acc shared[BLOCK];
    Op op;
    Acc acc = Op::template identity<Acc>();
    const int base = blockIdx.x * BLOCK * ITEMS + threadIdx.x;
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        int i = base + k * BLOCK;
        if (i < n) acc = op(acc, widen(in[i]));
    }
    shared[threadIdx.x] = acc;
    __syncthreads();
#pragma unroll
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) shared[threadIdx.x] = op(shared[threadIdx.x], shared[threadIdx.x + s]);
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = shared[0];
}

template <typename Kernel, typename... Args>
cudaError_t launch(Kernel kernel, dim3 grid, dim3 block, cudaStream_t stream, Args&&... args) {
    kernel<<<grid, block, 0, stream>>>(std::forward<Args>(args)...);
    return cudaGetLastError();
}

template <typename T, typename Op>
cudaError_t reduce(const T* in, int n, typename Accumulator<T>::type* partial, cudaStream_t s) {
    constexpr int kBlock = 256, kItems = std::is_same_v<T, double> ? 2 : 4;
    const int grid = (n + kBlock * kItems - 1) / (kBlock * kItems);
    return launch(block_reduce<T, Op, kBlock, kItems>, dim3(grid), dim3(kBlock), s, in, n, partial);
}

template cudaError_t reduce<float, SumOp>(const float*, int, float*, cudaStream_t);
template cudaError_t reduce<__half, MaxOp>(const __half*, int, float*, cudaStream_t);

int main() {
    const int n = 1 << 20;
    float *x, *partial;
    double *dx, *dpartial;
    cudaMalloc(&x, n * sizeof(float));
    cudaMalloc(&partial, 4096 * sizeof(float));
    cudaMalloc(&dx, n * sizeof(double));
    cudaMalloc(&dpartial, 4096 * sizeof(double));
    cudaStream_t s;
    cudaStreamCreate(&s);
    cudaError_t e1 = reduce<float, SumOp>(x, n, partial, s);
    cudaError_t e2 = reduce<double, MaxOp>(dx, n, dpartial, s);
    cudaError_t e3 = reduce<__half, MaxOp>(reinterpret_cast<const __half*>(x), n, partial, s);

    // The same kernel through the untyped launch API.
    const float* in = x;
    int count = n;
    float* out = partial;
    void* args[] = {&in, &count, &out};
    cudaError_t e4 = cudaLaunchKernel(reinterpret_cast<const void*>(&block_reduce<float, SumOp, 128, 8>),
                                      dim3(n / 1024), dim3(128), args, 0, s);
    cudaStreamSynchronize(s);
    std::printf("%d %d %d %d\n", e1, e2, e3, e4);
    cudaStreamDestroy(s);
    cudaFree(x); cudaFree(partial); cudaFree(dx); cudaFree(dpartial);
    return 0;
}
