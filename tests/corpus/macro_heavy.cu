// Exercises: macro-heavy CUDA: X-macro kernel tables, launch macros with __VA_ARGS__, stringified error checks, HOST_DEVICE portability macros and CUDA names built inside macro bodies.
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

#if defined(__CUDACC__) || defined(__NVCC__)
#define HD __host__ __device__
#define DEVICE_INLINE __device__ __forceinline__
#else
#define HD
#define DEVICE_INLINE inline
#endif

#define CUDA_CHECK(expr) cuda_check((expr), #expr, __FILE__, __LINE__)
#define CUDA_CHECK_LAST() CUDA_CHECK(cudaPeekAtLastError())
#define CUDA_SYNC_CHECK()                 \
    do {                                  \
        CUDA_CHECK(cudaDeviceSynchronize()); \
        CUDA_CHECK_LAST();                \
    } while (0)

static inline void cuda_check(cudaError_t code, const char* expr, const char* file, int line) {
    if (code != cudaSuccess) {
        std::fprintf(stderr, "%s:%d: %s returned %s (%s)\n", file, line, expr,
                     cudaGetErrorName(code), cudaGetErrorString(code));
        std::abort();
    }
}

#define DIV_UP(a, b) (((a) + (b) - 1) / (b))
#define LAUNCH(kernel, n, stream, ...)                                                   \
    do {                                                                                 \
        kernel<<<DIV_UP((n), 256), 256, 0, (stream)>>>(__VA_ARGS__);                     \
        CUDA_CHECK_LAST();                                                               \
    } while (0)
#define GRID_STRIDE_LOOP(i, n) \
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += blockDim.x * gridDim.x)

// One elementwise kernel per entry: name, expression of x.
#define UNARY_OPS(X)                    \
    X(relu, fmaxf(x, 0.f))              \
    X(sigmoid, 1.f / (1.f + __expf(-x))) \
    X(softplus, log1pf(__expf(x)))      \
    X(square, x * x)

#define DEFINE_UNARY_KERNEL(name, expr)                                   \
    __global__ void name##_kernel(const float* in, float* out, int n) {   \
        GRID_STRIDE_LOOP(idx, n) {                                        \
            float x = in[idx];                                            \
            out[idx] = (expr);                                            \
        }                                                                 \
    }
UNARY_OPS(DEFINE_UNARY_KERNEL)
#undef DEFINE_UNARY_KERNEL

#define ALLOC_DEVICE(ptr, count) CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&(ptr)), (count) * sizeof(*(ptr))))
#define FREE_DEVICE(ptr) CUDA_CHECK(cudaFree(ptr))
#define COPY_TO_HOST(dst, src, count) \
    CUDA_CHECK(cudaMemcpy((dst), (src), (count) * sizeof(*(src)), cudaMemcpyDeviceToHost))

HD inline float lerp(float a, float b, float t) { return a + t * (b - a); }

int main() {
    const int n = 1 << 18;
    float *in = nullptr, *out = nullptr;
    ALLOC_DEVICE(in, n);
    ALLOC_DEVICE(out, n);
    CUDA_CHECK(cudaMemset(in, 0, n * sizeof(float)));
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreate(&stream));
#define RUN_UNARY(name, expr) LAUNCH(name##_kernel, n, stream, in, out, n);
    UNARY_OPS(RUN_UNARY)
#undef RUN_UNARY
    CUDA_SYNC_CHECK();
    float first = 0.f;
    COPY_TO_HOST(&first, out, 1);
    std::printf("%f %f\n", first, lerp(0.f, 1.f, 0.25f));
    CUDA_CHECK(cudaStreamDestroy(stream));
    FREE_DEVICE(in);
    FREE_DEVICE(out);
    return 0;
}
