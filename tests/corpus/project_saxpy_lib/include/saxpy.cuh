// Public interface of the saxpy library: a launcher taking a stream and an inline device helper.
#pragma once

#include <cuda_runtime.h>

namespace saxpy {

__device__ __forceinline__ float fused(float a, float x, float y) { return fmaf(a, x, y); }

// y = a * x + y on `stream`; returns the launch status.
cudaError_t run(float a, const float* x, float* y, int n, cudaStream_t stream = 0);

// y = a * x + y for `batches` vectors laid out back to back, one stream each.
cudaError_t run_batched(float a, const float* x, float* y, int n, int batches,
                        const cudaStream_t* streams);

}  // namespace saxpy
