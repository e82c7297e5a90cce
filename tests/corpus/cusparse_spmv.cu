// Exercises: cuSPARSE generic API SpMV (cusparseCreateCsr, cusparseCreateDnVec, cusparseSpMV_bufferSize, cusparseSpMV) on a CSR Laplacian.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>
#include <cusparse.h>

#define CHECK_CUSPARSE(func)                                                          \
    {                                                                                 \
        cusparseStatus_t status = (func);                                             \
        if (status != CUSPARSE_STATUS_SUCCESS) {                                      \
            printf("cuSPARSE failed at line %d: %s (%d)\n", __LINE__,                 \
                   cusparseGetErrorString(status), status);                           \
            return EXIT_FAILURE;                                                      \
        }                                                                             \
    }

int main() {
    // 1-D Laplacian: 2 on the diagonal, -1 beside it.
    const int n = 1000;
    std::vector<int> offsets(n + 1), columns;
    std::vector<float> values;
    for (int r = 0; r < n; ++r) {
        offsets[r] = static_cast<int>(columns.size());
        if (r > 0) { columns.push_back(r - 1); values.push_back(-1.f); }
        columns.push_back(r); values.push_back(2.f);
        if (r + 1 < n) { columns.push_back(r + 1); values.push_back(-1.f); }
    }
    offsets[n] = static_cast<int>(columns.size());
    const int nnz = offsets[n];

    int *d_offsets, *d_columns;
    float *d_values, *d_x, *d_y;
    cudaMalloc(&d_offsets, (n + 1) * sizeof(int));
    cudaMalloc(&d_columns, nnz * sizeof(int));
    cudaMalloc(&d_values, nnz * sizeof(float));
    cudaMalloc(&d_x, n * sizeof(float));
    cudaMalloc(&d_y, n * sizeof(float));
    cudaMemcpy(d_offsets, offsets.data(), (n + 1) * sizeof(int), cudaMemcpyHostToDevice);
    cudaMemcpy(d_columns, columns.data(), nnz * sizeof(int), cudaMemcpyHostToDevice);
    cudaMemcpy(d_values, values.data(), nnz * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemset(d_x, 0, n * sizeof(float));

    cusparseHandle_t handle = nullptr;
    CHECK_CUSPARSE(cusparseCreate(&handle));
    cusparseSpMatDescr_t mat;
    cusparseDnVecDescr_t vec_x, vec_y;
    CHECK_CUSPARSE(cusparseCreateCsr(&mat, n, n, nnz, d_offsets, d_columns, d_values,
                                     CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                     CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
    CHECK_CUSPARSE(cusparseCreateDnVec(&vec_x, n, d_x, CUDA_R_32F));
    CHECK_CUSPARSE(cusparseCreateDnVec(&vec_y, n, d_y, CUDA_R_32F));
    const float alpha = 1.0f, beta = 0.0f;
    size_t buffer_size = 0;
    CHECK_CUSPARSE(cusparseSpMV_bufferSize(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mat,
                                           vec_x, &beta, vec_y, CUDA_R_32F,
                                           CUSPARSE_SPMV_ALG_DEFAULT, &buffer_size));
    void* buffer = nullptr;
    cudaMalloc(&buffer, buffer_size);
    CHECK_CUSPARSE(cusparseSpMV(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mat, vec_x,
                                &beta, vec_y, CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT, buffer));
    CHECK_CUSPARSE(cusparseDestroySpMat(mat));
    CHECK_CUSPARSE(cusparseDestroyDnVec(vec_x));
    CHECK_CUSPARSE(cusparseDestroyDnVec(vec_y));
    CHECK_CUSPARSE(cusparseDestroy(handle));
    float y0 = 0.f;
    cudaMemcpy(&y0, d_y, sizeof(float), cudaMemcpyDeviceToHost);
    printf("y[0] = %f\n", y0);
    cudaFree(buffer); cudaFree(d_offsets); cudaFree(d_columns); cudaFree(d_values);
    cudaFree(d_x); cudaFree(d_y);
    return 0;
}
