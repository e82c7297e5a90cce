// Blockwise 4-bit quantisation: one thread block per quantisation block.
#include <cub/cub.cuh>

template <typename T, int BLOCK_SIZE, int NUM_PER_TH>
__global__ void kQuantizeBlockwise(const T* A, float* absmax, unsigned char* out, int n)
{
    using WarpReduce = cub::WarpReduce<float>;
    __shared__ typename WarpReduce::TempStorage storage;
    const int base = blockIdx.x * BLOCK_SIZE;
    float local = 0.0f;
    for (int j = 0; j < NUM_PER_TH; ++j) local = fmaxf(local, fabsf((float)A[base + threadIdx.x * NUM_PER_TH + j]));
    const float block_max = WarpReduce(storage).Reduce(local, cub::Max());
    if (threadIdx.x == 0) absmax[blockIdx.x] = block_max;
}

void quantize_blockwise_fp32(const float* A, float* absmax, unsigned char* out, int blocksize, int n)
{
    const int num_blocks = (n + blocksize - 1) / blocksize;
    if (blocksize == 64) kQuantizeBlockwise<float, 64, 2><<<num_blocks, 32>>>(A, absmax, out, n);
    if (blocksize == 32) kQuantizeBlockwise<float, 32, 1><<<num_blocks, 32>>>(A, absmax, out, n);
}
