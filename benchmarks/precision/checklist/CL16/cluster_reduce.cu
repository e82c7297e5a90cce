// Split-K reduction across the blocks of one cluster through distributed shared memory.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void __cluster_dims__(2, 1, 1) splitk_reduce_kernel(const float* partial, float* out, int n)
{
    __shared__ float tile[256];
    cg::cluster_group cluster = cg::this_cluster();
    tile[threadIdx.x] = partial[blockIdx.x * 256 + threadIdx.x];
    cluster.sync();
    if (cluster.block_rank() == 0) {
        float* peer = cluster.map_shared_rank(tile, 1);
        out[threadIdx.x] = tile[threadIdx.x] + peer[threadIdx.x];
    }
    cluster.sync();
}
