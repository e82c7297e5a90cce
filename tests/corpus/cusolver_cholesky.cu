// Exercises: cuSOLVER dense Cholesky (cusolverDnCreate, cusolverDnSpotrf_bufferSize, cusolverDnSpotrf, cusolverDnSpotrs) with devInfo checks.
#include <cstdio>
#include <vector>

#include <cuda_runtime.h>
#include <cusolverDn.h>

#define CUSOLVER_CHECK(err)                                                          \
    do {                                                                             \
        cusolverStatus_t err_ = (err);                                               \
        if (err_ != CUSOLVER_STATUS_SUCCESS) {                                       \
            printf("cusolver error %d at %s:%d\n", err_, __FILE__, __LINE__);         \
            return 1;                                                                \
        }                                                                            \
    } while (0)

int main() {
    const int n = 64, nrhs = 4;
    std::vector<float> A(n * n, 0.f);
    for (int i = 0; i < n; ++i) A[i * n + i] = 4.f;  // SPD
    float *dA, *dB, *work;
    int* dev_info;
    cudaMalloc(&dA, n * n * sizeof(float));
    cudaMalloc(&dB, n * nrhs * sizeof(float));
    cudaMalloc(&dev_info, sizeof(int));
    cudaMemcpy(dA, A.data(), n * n * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemset(dB, 0, n * nrhs * sizeof(float));

    cusolverDnHandle_t handle;
    CUSOLVER_CHECK(cusolverDnCreate(&handle));
    cudaStream_t stream;
    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    CUSOLVER_CHECK(cusolverDnSetStream(handle, stream));

    int lwork = 0;
    CUSOLVER_CHECK(cusolverDnSpotrf_bufferSize(handle, CUBLAS_FILL_MODE_LOWER, n, dA, n, &lwork));
    cudaMalloc(&work, lwork * sizeof(float));
    CUSOLVER_CHECK(cusolverDnSpotrf(handle, CUBLAS_FILL_MODE_LOWER, n, dA, n, work, lwork, dev_info));
    int info = 0;
    cudaMemcpyAsync(&info, dev_info, sizeof(int), cudaMemcpyDeviceToHost, stream);
    cudaStreamSynchronize(stream);
    if (info != 0) {
        printf("potrf: leading minor %d is not positive definite\n", info);
        return 1;
    }
    CUSOLVER_CHECK(cusolverDnSpotrs(handle, CUBLAS_FILL_MODE_LOWER, n, nrhs, dA, n, dB, n, dev_info));
    cudaStreamSynchronize(stream);
    printf("solved %d right-hand sides\n", nrhs);
    CUSOLVER_CHECK(cusolverDnDestroy(handle));
    cudaStreamDestroy(stream);
    cudaFree(dA); cudaFree(dB); cudaFree(work); cudaFree(dev_info);
    return 0;
}
