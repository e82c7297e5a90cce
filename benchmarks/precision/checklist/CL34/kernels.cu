// Small-blocksize 4-bit quantisation: each warp quantises two blocks, half a warp per block.
#include <cub/cub.cuh>

#if defined(__HIP_PLATFORM_AMD__)
#define WARP_THREADS 64
#else
#define WARP_THREADS 32
#endif

template <typename T>
__global__ void kQuantizeSmall(const T* A, float* absmax, unsigned char* out, int n)
{
    constexpr int BLOCK_SIZE = WARP_THREADS;
    constexpr int THREADS_PER_QBLOCK = WARP_THREADS / 2;
    using HalfWarpReduce = cub::WarpReduce<float, THREADS_PER_QBLOCK>;
    __shared__ typename HalfWarpReduce::TempStorage storage[2];

    const int qblock = threadIdx.x / THREADS_PER_QBLOCK;
    const int first = (blockIdx.x * 2 + qblock) * BLOCK_SIZE + (threadIdx.x % THREADS_PER_QBLOCK) * 2;
    float local = 0.0f;
    for (int j = 0; j < 2; ++j)
        if (first + j < n) local = fmaxf(local, fabsf((float)A[first + j]));
    const float block_max = HalfWarpReduce(storage[qblock]).Reduce(local, cub::Max());
    if (threadIdx.x % THREADS_PER_QBLOCK == 0) absmax[blockIdx.x * 2 + qblock] = block_max;
}

void quantize_4bit(const float* A, float* absmax, unsigned char* out, int blocksize, int n)
{
    if (blocksize == 32) {
        const int grid = (n + 63) / 64;
        kQuantizeSmall<float><<<grid, 32>>>(A, absmax, out, n);
    }
}
