// Exercises: a source file saved as Latin-1 (non-UTF-8 bytes in comments) that calls the runtime API and warp shuffles.
// Auteur : François Müller, © 2019 - encodage ISO-8859-1 (été, naïve, µs).
#include <cstdio>

#include <cuda_runtime.h>

// Température moyenne par bloc, en °C.
__global__ void moyenne(const float* t, int n, float* somme) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? t[i] : 0.f;
    for (int d = 16; d > 0; d >>= 1) v += __shfl_down_sync(0xffffffff, v, d);  // réduction
    if ((threadIdx.x & 31) == 0) atomicAdd(somme, v);
}

int main() {
    const int n = 1 << 16;
    float *t, *somme;
    cudaMalloc(&t, n * sizeof(float));
    cudaMalloc(&somme, sizeof(float));
    cudaMemset(t, 0, n * sizeof(float));
    cudaMemset(somme, 0, sizeof(float));
    moyenne<<<n / 256, 256>>>(t, n, somme);
    float h = 0.f;
    cudaMemcpy(&h, somme, sizeof(float), cudaMemcpyDeviceToHost);
    std::printf("moyenne : %.2f C\n", h / n);
    cudaFree(t);
    cudaFree(somme);
    return 0;
}
