// Exercises: cuBLAS level-1/2 routines (axpy, dot, nrm2, gemv, amax), device pointer mode and strided-batched GEMM.
#include <cstdio>

#include <cublas_v2.h>
#include <cuda_runtime.h>

static const char* status_name(cublasStatus_t s) {
    switch (s) {
        case CUBLAS_STATUS_SUCCESS: return "success";
        case CUBLAS_STATUS_NOT_INITIALIZED: return "not initialized";
        case CUBLAS_STATUS_ALLOC_FAILED: return "alloc failed";
        case CUBLAS_STATUS_INVALID_VALUE: return "invalid value";
        case CUBLAS_STATUS_EXECUTION_FAILED: return "execution failed";
        default: return "other";
    }
}

#define CUBLAS_OK(call)                                                       \
    if (cublasStatus_t st = (call); st != CUBLAS_STATUS_SUCCESS) {            \
        printf("%s -> %s\n", #call, status_name(st));                         \
        return 1;                                                             \
    }

int main() {
    const int n = 1 << 16, rows = 512, cols = 128, batch = 16, dim = 32;
    float *x, *y, *mat, *result;
    cudaMalloc(&x, n * sizeof(float));
    cudaMalloc(&y, n * sizeof(float));
    cudaMalloc(&mat, rows * cols * sizeof(float));
    cudaMalloc(&result, 2 * sizeof(float));
    cudaMemset(x, 0, n * sizeof(float));
    cudaMemset(y, 0, n * sizeof(float));
    cudaMemset(mat, 0, rows * cols * sizeof(float));

    cublasHandle_t h;
    CUBLAS_OK(cublasCreate(&h));
    const float two = 2.0f, zero = 0.0f, one = 1.0f;
    CUBLAS_OK(cublasSaxpy(h, n, &two, x, 1, y, 1));
    float host_dot = 0.f, host_norm = 0.f;
    CUBLAS_OK(cublasSdot(h, n, x, 1, y, 1, &host_dot));
    CUBLAS_OK(cublasSnrm2(h, n, y, 1, &host_norm));
    int argmax = 0;
    CUBLAS_OK(cublasIsamax(h, n, y, 1, &argmax));
    CUBLAS_OK(cublasSgemv(h, CUBLAS_OP_N, rows, cols, &one, mat, rows, x, 1, &zero, y, 1));

    // Results straight into device memory.
    CUBLAS_OK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE));
    CUBLAS_OK(cublasSdot(h, n, x, 1, y, 1, result));
    CUBLAS_OK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));

    double *A, *B, *C;
    cudaMalloc(&A, batch * dim * dim * sizeof(double));
    cudaMalloc(&B, batch * dim * dim * sizeof(double));
    cudaMalloc(&C, batch * dim * dim * sizeof(double));
    const double dalpha = 1.0, dbeta = 0.0;
    const long long stride = static_cast<long long>(dim) * dim;
    CUBLAS_OK(cublasDgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_T, dim, dim, dim, &dalpha, A,
                                        dim, stride, B, dim, stride, &dbeta, C, dim, stride,
                                        batch));
    int version = 0;
    CUBLAS_OK(cublasGetVersion(h, &version));
    printf("cuBLAS %d: dot %f norm %f argmax %d\n", version, host_dot, host_norm, argmax);
    CUBLAS_OK(cublasDestroy(h));
    cudaFree(x); cudaFree(y); cudaFree(mat); cudaFree(result);
    cudaFree(A); cudaFree(B); cudaFree(C);
    return 0;
}
