// Dequantizes one row per warp; the warp count per block comes from the build-time warp size.
#include <hip/hip_runtime.h>

#if defined(__HIP_PLATFORM_AMD__)
#define BNB_WARP_SIZE 64
#else
#define BNB_WARP_SIZE 32
#endif

__global__ void dequant_rows(const unsigned char* q, const float* absmax, float* out, int rows, int cols);

void dequantize(const unsigned char* q, const float* absmax, float* out, int rows, int cols, hipStream_t stream)
{
    const int rows_per_block = 256 / BNB_WARP_SIZE;
    const int blocks = (rows + rows_per_block - 1) / rows_per_block;
    hipLaunchKernelGGL(dequant_rows, dim3(blocks), dim3(256), 0, stream, q, absmax, out, rows, cols);
}
