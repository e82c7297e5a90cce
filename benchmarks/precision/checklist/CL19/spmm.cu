// Row-wise sparse x dense product; lanes of a warp share one sparse row.
#include "utils.cuh"

template <typename scalar_t>
__global__ void spmm_row_kernel(const int64_t* rowptr, const int64_t* col, const scalar_t* val,
                                const scalar_t* mat, scalar_t* out, int k)
{
    const int row = blockIdx.x;
    scalar_t acc = (scalar_t)0;
    for (int64_t e = rowptr[row] + threadIdx.x; e < rowptr[row + 1]; e += 32)
        acc += val[e] * mat[col[e] * k];
    for (int i = 16; i > 0; i /= 2)
        acc += __shfl_down_sync(FULL_MASK, acc, i);
    if (threadIdx.x == 0) out[row] = acc;
}

template __global__ void spmm_row_kernel<at::Half>(const int64_t*, const int64_t*, const at::Half*,
                                                   const at::Half*, at::Half*, int);
