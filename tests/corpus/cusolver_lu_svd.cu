// Exercises: cuSOLVER dense LU with pivoting (getrf/getrs) and SVD (gesvd) in double precision.
#include <cstdio>

#include <cuda_runtime.h>
#include <cusolverDn.h>

int main() {
    const int m = 128, n = 128;
    double *A, *B, *S, *U, *VT, *work;
    int *pivots, *info;
    cudaMalloc(&A, m * n * sizeof(double));
    cudaMalloc(&B, m * sizeof(double));
    cudaMalloc(&S, n * sizeof(double));
    cudaMalloc(&U, m * m * sizeof(double));
    cudaMalloc(&VT, n * n * sizeof(double));
    cudaMalloc(&pivots, n * sizeof(int));
    cudaMalloc(&info, sizeof(int));
    cudaMemset(A, 0, m * n * sizeof(double));

    cusolverDnHandle_t solver;
    if (cusolverDnCreate(&solver) != CUSOLVER_STATUS_SUCCESS) return 1;
    int lwork = 0, svd_lwork = 0;
    cusolverDnDgetrf_bufferSize(solver, m, n, A, m, &lwork);
    cusolverDnDgesvd_bufferSize(solver, m, n, &svd_lwork);
    if (svd_lwork > lwork) lwork = svd_lwork;
    cudaMalloc(&work, lwork * sizeof(double));

    cusolverStatus_t st = cusolverDnDgetrf(solver, m, n, A, m, work, pivots, info);
    if (st == CUSOLVER_STATUS_SUCCESS)
        st = cusolverDnDgetrs(solver, CUBLAS_OP_N, n, 1, A, m, pivots, B, m, info);
    if (st == CUSOLVER_STATUS_SUCCESS) {
        double* rwork = nullptr;
        st = cusolverDnDgesvd(solver, 'A', 'A', m, n, A, m, S, U, m, VT, n, work, lwork, rwork,
                              info);
    }
    int host_info = 0;
    cudaMemcpy(&host_info, info, sizeof(int), cudaMemcpyDeviceToHost);
    printf("status %d info %d\n", static_cast<int>(st), host_info);
    cusolverDnDestroy(solver);
    cudaFree(A); cudaFree(B); cudaFree(S); cudaFree(U); cudaFree(VT); cudaFree(work);
    cudaFree(pivots); cudaFree(info);
    return 0;
}
