// Scaled FP8 GEMM through the Lt API, with a per-tensor scale on A and B.
#include <cublasLt.h>

void scaled_gemm(cublasLtHandle_t handle, int m, int n, int k, const void* a, const void* b, void* c,
                 const float* scale_a, const float* scale_b, cudaStream_t stream)
{
    cublasLtMatmulDesc_t desc;
    cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &scale_a, sizeof(scale_a));
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &scale_b, sizeof(scale_b));
    cublasLtMatmulDescDestroy(desc);
}
