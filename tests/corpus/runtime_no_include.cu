// Exercises: a .cu file that calls the runtime API with no #include of cuda_runtime.h at all (nvcc includes it implicitly).
#include <stdio.h>
#include <stdlib.h>

__global__ void vector_add(const float* a, const float* b, float* c, int n) {
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

int main(void) {
    const int n = 50000;
    size_t size = n * sizeof(float);
    float* h_a = (float*)malloc(size);
    float* h_b = (float*)malloc(size);
    float* h_c = (float*)malloc(size);
    for (int i = 0; i < n; ++i) {
        h_a[i] = i * 0.5f;
        h_b[i] = i * 0.25f;
    }
    float *d_a = NULL, *d_b = NULL, *d_c = NULL;
    cudaMalloc((void**)&d_a, size);
    cudaMalloc((void**)&d_b, size);
    cudaMalloc((void**)&d_c, size);
    cudaMemcpy(d_a, h_a, size, cudaMemcpyHostToDevice);
    cudaMemcpy(d_b, h_b, size, cudaMemcpyHostToDevice);

    int threads = 256;
    int blocks = (n + threads - 1) / threads;
    vector_add<<<blocks, threads>>>(d_a, d_b, d_c, n);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) {
        fprintf(stderr, "launch failed: %s\n", cudaGetErrorString(err));
        return 1;
    }
    cudaMemcpy(h_c, d_c, size, cudaMemcpyDeviceToHost);
    printf("c[100] = %f\n", h_c[100]);

    cudaFree(d_a);
    cudaFree(d_b);
    cudaFree(d_c);
    free(h_a);
    free(h_b);
    free(h_c);
    cudaDeviceReset();
    return 0;
}
