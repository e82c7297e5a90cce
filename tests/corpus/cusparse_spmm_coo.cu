// Exercises: cuSPARSE generic SpMM with a COO matrix and dense matrices (cusparseCreateCoo, cusparseCreateDnMat, cusparseSpMM_bufferSize/cusparseSpMM), on a stream.
#include <cstdio>

#include <cuda_runtime.h>
#include <cusparse.h>

#define SPARSE_OK(x) if ((x) != CUSPARSE_STATUS_SUCCESS) { printf("fail: %s\n", #x); return 1; }

int main() {
    const int rows = 256, cols = 256, nnz = 1024, dense_cols = 64;
    int *coo_rows, *coo_cols;
    float *coo_vals, *B, *C;
    cudaMalloc(&coo_rows, nnz * sizeof(int));
    cudaMalloc(&coo_cols, nnz * sizeof(int));
    cudaMalloc(&coo_vals, nnz * sizeof(float));
    cudaMalloc(&B, cols * dense_cols * sizeof(float));
    cudaMalloc(&C, rows * dense_cols * sizeof(float));
    cudaMemset(coo_rows, 0, nnz * sizeof(int));
    cudaMemset(coo_cols, 0, nnz * sizeof(int));

    cudaStream_t stream;
    cudaStreamCreate(&stream);
    cusparseHandle_t handle;
    SPARSE_OK(cusparseCreate(&handle));
    SPARSE_OK(cusparseSetStream(handle, stream));

    cusparseSpMatDescr_t A;
    cusparseDnMatDescr_t matB, matC;
    SPARSE_OK(cusparseCreateCoo(&A, rows, cols, nnz, coo_rows, coo_cols, coo_vals,
                                CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
    SPARSE_OK(cusparseCreateDnMat(&matB, cols, dense_cols, cols, B, CUDA_R_32F, CUSPARSE_ORDER_COL));
    SPARSE_OK(cusparseCreateDnMat(&matC, rows, dense_cols, rows, C, CUDA_R_32F, CUSPARSE_ORDER_COL));
    float alpha = 1.f, beta = 0.f;
    size_t bytes = 0;
    SPARSE_OK(cusparseSpMM_bufferSize(handle, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                      CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, matB, &beta,
                                      matC, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, &bytes));
    void* work = nullptr;
    cudaMalloc(&work, bytes);
    SPARSE_OK(cusparseSpMM(handle, CUSPARSE_OPERATION_NON_TRANSPOSE,
                           CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, matB, &beta, matC,
                           CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, work));
    int64_t r = 0, c = 0, z = 0;
    SPARSE_OK(cusparseSpMatGetSize(A, &r, &c, &z));
    cudaStreamSynchronize(stream);
    printf("%lld x %lld with %lld nonzeros\n", (long long)r, (long long)c, (long long)z);
    SPARSE_OK(cusparseDestroySpMat(A));
    SPARSE_OK(cusparseDestroyDnMat(matB));
    SPARSE_OK(cusparseDestroyDnMat(matC));
    SPARSE_OK(cusparseDestroy(handle));
    cudaFree(work); cudaFree(coo_rows); cudaFree(coo_cols); cudaFree(coo_vals);
    cudaFree(B); cudaFree(C);
    cudaStreamDestroy(stream);
    return 0;
}
