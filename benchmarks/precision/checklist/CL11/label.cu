// Broadcasts the running label of the warp's last lane to every lane.
#include <cuda_runtime.h>

__global__ void carry_label_kernel(int* label, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lbl = i < n ? label[i] : 0;
    const int last = __shfl(lbl, 31);
    if (i < n) label[i] = max(lbl, last);
}
