// Exercises: cuSPARSE generic SpSM (triangular solve with several right-hand sides): CSR and dense descriptors, bufferSize, analysis and a solve that hipSPARSE wants the external buffer for.
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>
#include <cusparse.h>

#define CHECK_CUSPARSE(call)                                                   \
    do {                                                                       \
        cusparseStatus_t status_ = (call);                                     \
        if (status_ != CUSPARSE_STATUS_SUCCESS) {                              \
            std::fprintf(stderr, "cuSPARSE %d at line %d\n", (int)status_, __LINE__); \
            std::exit(1);                                                      \
        }                                                                      \
    } while (0)

int main() {
    // lower-triangular 3x3 A in CSR, B and C dense 3x2 column-major
    const int n = 3, nrhs = 2, nnz = 5;
    int h_rows[] = {0, 1, 3, 5};
    int h_cols[] = {0, 0, 1, 1, 2};
    float h_vals[] = {1.f, 2.f, 3.f, 4.f, 5.f};
    float h_b[] = {1.f, 2.f, 3.f, 4.f, 5.f, 6.f};
    int *d_rows, *d_cols;
    float *d_vals, *d_b, *d_c;
    cudaMalloc(&d_rows, sizeof(h_rows));
    cudaMalloc(&d_cols, sizeof(h_cols));
    cudaMalloc(&d_vals, sizeof(h_vals));
    cudaMalloc(&d_b, sizeof(h_b));
    cudaMalloc(&d_c, sizeof(h_b));
    cudaMemcpy(d_rows, h_rows, sizeof(h_rows), cudaMemcpyHostToDevice);
    cudaMemcpy(d_cols, h_cols, sizeof(h_cols), cudaMemcpyHostToDevice);
    cudaMemcpy(d_vals, h_vals, sizeof(h_vals), cudaMemcpyHostToDevice);
    cudaMemcpy(d_b, h_b, sizeof(h_b), cudaMemcpyHostToDevice);

    cusparseHandle_t handle;
    CHECK_CUSPARSE(cusparseCreate(&handle));
    cusparseSpMatDescr_t mat_a;
    cusparseDnMatDescr_t mat_b, mat_c;
    CHECK_CUSPARSE(cusparseCreateCsr(&mat_a, n, n, nnz, d_rows, d_cols, d_vals,
                                     CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                     CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
    cusparseFillMode_t fill = CUSPARSE_FILL_MODE_LOWER;
    cusparseDiagType_t diag = CUSPARSE_DIAG_TYPE_NON_UNIT;
    CHECK_CUSPARSE(cusparseSpMatSetAttribute(mat_a, CUSPARSE_SPMAT_FILL_MODE, &fill, sizeof(fill)));
    CHECK_CUSPARSE(cusparseSpMatSetAttribute(mat_a, CUSPARSE_SPMAT_DIAG_TYPE, &diag, sizeof(diag)));
    CHECK_CUSPARSE(cusparseCreateDnMat(&mat_b, n, nrhs, n, d_b, CUDA_R_32F, CUSPARSE_ORDER_COL));
    CHECK_CUSPARSE(cusparseCreateDnMat(&mat_c, n, nrhs, n, d_c, CUDA_R_32F, CUSPARSE_ORDER_COL));

    cusparseSpSMDescr_t spsm;
    CHECK_CUSPARSE(cusparseSpSM_createDescr(&spsm));
    const float alpha = 1.f;
    size_t buffer_size = 0;
    CHECK_CUSPARSE(cusparseSpSM_bufferSize(handle, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                           CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mat_a, mat_b,
                                           mat_c, CUDA_R_32F, CUSPARSE_SPSM_ALG_DEFAULT, spsm,
                                           &buffer_size));
    void* work = nullptr;
    cudaMalloc(&work, buffer_size);
    CHECK_CUSPARSE(cusparseSpSM_analysis(handle, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                         CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mat_a, mat_b,
                                         mat_c, CUDA_R_32F, CUSPARSE_SPSM_ALG_DEFAULT, spsm, work));
    CHECK_CUSPARSE(cusparseSpSM_solve(handle, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                      CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mat_a, mat_b,
                                      mat_c, CUDA_R_32F, CUSPARSE_SPSM_ALG_DEFAULT, spsm));

    float h_c[6];
    cudaMemcpy(h_c, d_c, sizeof(h_c), cudaMemcpyDeviceToHost);
    std::printf("x = %g %g %g\n", h_c[0], h_c[1], h_c[2]);

    CHECK_CUSPARSE(cusparseSpSM_destroyDescr(spsm));
    CHECK_CUSPARSE(cusparseDestroyDnMat(mat_b));
    CHECK_CUSPARSE(cusparseDestroyDnMat(mat_c));
    CHECK_CUSPARSE(cusparseDestroySpMat(mat_a));
    CHECK_CUSPARSE(cusparseDestroy(handle));
    cudaFree(work);
    cudaFree(d_rows);
    cudaFree(d_cols);
    cudaFree(d_vals);
    cudaFree(d_b);
    cudaFree(d_c);
    return 0;
}
