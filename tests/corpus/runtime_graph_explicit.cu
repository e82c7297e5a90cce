// Exercises: CUDA graphs built node by node (kernel, memset and memcpy nodes, dependencies, exec-graph parameter updates).
#include <cstdio>
#include <vector>

#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); return 1; } } while (0)

__global__ void fill_iota(int* out, int n, int start) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = start + i;
}

__global__ void square_inplace(int* v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] *= v[i];
}

int main() {
    const int n = 4096;
    int* dev = nullptr;
    CK(cudaMalloc(&dev, n * sizeof(int)));
    std::vector<int> host(n);

    cudaGraph_t graph;
    CK(cudaGraphCreate(&graph, 0));

    cudaMemsetParams memset_params = {};
    memset_params.dst = dev;
    memset_params.value = 0;
    memset_params.elementSize = sizeof(int);
    memset_params.width = n;
    memset_params.height = 1;
    cudaGraphNode_t memset_node;
    CK(cudaGraphAddMemsetNode(&memset_node, graph, nullptr, 0, &memset_params));

    int count = n, start = 10;
    void* fill_args[] = {&dev, &count, &start};
    cudaKernelNodeParams fill = {};
    fill.func = reinterpret_cast<void*>(fill_iota);
    fill.gridDim = dim3((n + 127) / 128);
    fill.blockDim = dim3(128);
    fill.sharedMemBytes = 0;
    fill.kernelParams = fill_args;
    fill.extra = nullptr;
    cudaGraphNode_t fill_node;
    CK(cudaGraphAddKernelNode(&fill_node, graph, &memset_node, 1, &fill));

    void* square_args[] = {&dev, &count};
    cudaKernelNodeParams square = fill;
    square.func = reinterpret_cast<void*>(square_inplace);
    square.kernelParams = square_args;
    cudaGraphNode_t square_node;
    CK(cudaGraphAddKernelNode(&square_node, graph, &fill_node, 1, &square));

    cudaGraphNode_t copy_node;
    CK(cudaGraphAddMemcpyNode1D(&copy_node, graph, &square_node, 1, host.data(), dev,
                                n * sizeof(int), cudaMemcpyDeviceToHost));

    cudaGraphExec_t exec;
    CK(cudaGraphInstantiate(&exec, graph, cudaGraphInstantiateFlagUpload));
    CK(cudaGraphLaunch(exec, 0));
    CK(cudaDeviceSynchronize());
    printf("host[3] = %d\n", host[3]);

    // Change the start value of the fill kernel without rebuilding the graph.
    start = 100;
    CK(cudaGraphExecKernelNodeSetParams(exec, fill_node, &fill));
    CK(cudaGraphLaunch(exec, 0));
    CK(cudaDeviceSynchronize());
    printf("host[3] = %d\n", host[3]);

    CK(cudaGraphExecDestroy(exec));
    CK(cudaGraphDestroy(graph));
    CK(cudaFree(dev));
    return 0;
}
