// Exercises: cuBLAS v2 (cublasCreate, cublasSetStream, cublasSgemm, cublasGemmEx with FP16 inputs and FP32 compute, math mode, status checks).
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#define CUDA_CHECK(x)                                                                   \
    do {                                                                                \
        cudaError_t e = (x);                                                            \
        if (e != cudaSuccess) {                                                         \
            fprintf(stderr, "%s:%d CUDA %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

#define CUBLAS_CHECK(x)                                                                 \
    do {                                                                                \
        cublasStatus_t s = (x);                                                         \
        if (s != CUBLAS_STATUS_SUCCESS) {                                               \
            fprintf(stderr, "%s:%d cuBLAS %s\n", __FILE__, __LINE__,                    \
                    cublasGetStatusString(s));                                          \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

int main() {
    const int m = 256, n = 128, k = 64;
    std::vector<float> a(m * k, 1.0f), b(k * n, 0.5f), c(m * n, 0.0f);
    float *da, *db, *dc;
    CUDA_CHECK(cudaMalloc(&da, a.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&db, b.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dc, c.size() * sizeof(float)));
    CUBLAS_CHECK(cublasSetMatrix(m, k, sizeof(float), a.data(), m, da, m));
    CUBLAS_CHECK(cublasSetMatrix(k, n, sizeof(float), b.data(), k, db, k));

    cublasHandle_t handle;
    CUBLAS_CHECK(cublasCreate(&handle));
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreate(&stream));
    CUBLAS_CHECK(cublasSetStream(handle, stream));

    const float alpha = 1.0f, beta = 0.0f;
    // Column-major C = A * B.
    CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, da, m, db, k,
                             &beta, dc, m));

    // Mixed precision: half inputs, float accumulate and output.
    __half *ha, *hb;
    CUDA_CHECK(cudaMalloc(&ha, m * k * sizeof(__half)));
    CUDA_CHECK(cudaMalloc(&hb, k * n * sizeof(__half)));
    CUDA_CHECK(cudaMemset(ha, 0, m * k * sizeof(__half)));
    CUDA_CHECK(cudaMemset(hb, 0, k * n * sizeof(__half)));
    CUBLAS_CHECK(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));
    CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, ha, CUDA_R_16F, k,
                              hb, CUDA_R_16F, k, &beta, dc, CUDA_R_32F, m, CUBLAS_COMPUTE_32F,
                              CUBLAS_GEMM_DEFAULT));

    CUBLAS_CHECK(cublasGetMatrix(m, n, sizeof(float), dc, m, c.data(), m));
    std::printf("c[0] = %f\n", c[0]);

    CUBLAS_CHECK(cublasDestroy(handle));
    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaFree(da)); CUDA_CHECK(cudaFree(db)); CUDA_CHECK(cudaFree(dc));
    CUDA_CHECK(cudaFree(ha)); CUDA_CHECK(cudaFree(hb));
    return 0;
}
