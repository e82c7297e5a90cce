// Exercises: cuBLAS's _v2 entry points (cublasCreate_v2, cublasSgemm_v2, cublasDestroy_v2) and cublasGemmEx, whose hipBLAS names differ between hipBLAS 2 (ROCm 6) and hipBLAS 3 (ROCm 7).
#include <cstdio>

#include <cublas_v2.h>
#include <cuda_runtime.h>

int main() {
    const int n = 64;
    float *a = nullptr, *b = nullptr, *c = nullptr;
    cudaMalloc(&a, n * n * sizeof(float));
    cudaMalloc(&b, n * n * sizeof(float));
    cudaMalloc(&c, n * n * sizeof(float));

    cublasHandle_t handle;
    if (cublasCreate_v2(&handle) != CUBLAS_STATUS_SUCCESS) return 1;
    const float alpha = 1.0f, beta = 0.0f;
    cublasStatus_t status = cublasSgemm_v2(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a,
                                           n, b, n, &beta, c, n);
    if (status == CUBLAS_STATUS_SUCCESS) {
        status = cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_T, n, n, n, &alpha, a, CUDA_R_32F, n,
                              b, CUDA_R_32F, n, &beta, c, CUDA_R_32F, n, CUBLAS_COMPUTE_32F,
                              CUBLAS_GEMM_DEFAULT);
    }
    std::printf("status %d\n", static_cast<int>(status));
    cublasDestroy_v2(handle);
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    return 0;
}
