// Exercises: user-defined atomicMin/atomicMax for float (CUDA has none) that clash with HIP's built-in float overloads.
#include <cfloat>
#include <cstdio>

#include <cuda_runtime.h>

// The usual trick: for non-negative floats the int ordering matches; for negatives use
// unsigned ordering on the flipped bits.
__device__ __forceinline__ float atomicMin(float* address, float val) {
    return val >= 0.f
               ? __int_as_float(atomicMin(reinterpret_cast<int*>(address), __float_as_int(val)))
               : __uint_as_float(
                     atomicMax(reinterpret_cast<unsigned int*>(address), __float_as_uint(val)));
}

__device__ __forceinline__ float atomicMax(float* address, float val) {
    return val >= 0.f
               ? __int_as_float(atomicMax(reinterpret_cast<int*>(address), __float_as_int(val)))
               : __uint_as_float(
                     atomicMin(reinterpret_cast<unsigned int*>(address), __float_as_uint(val)));
}

__global__ void bounding_box(const float2* points, int n, float* box /* xmin ymin xmax ymax */) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float2 p = points[i];
    atomicMin(&box[0], p.x);
    atomicMin(&box[1], p.y);
    atomicMax(&box[2], p.x);
    atomicMax(&box[3], p.y);
}

int main() {
    const int n = 100000;
    float2* points;
    float* box;
    cudaMalloc(&points, n * sizeof(float2));
    cudaMalloc(&box, 4 * sizeof(float));
    cudaMemset(points, 0, n * sizeof(float2));
    const float init[4] = {FLT_MAX, FLT_MAX, -FLT_MAX, -FLT_MAX};
    cudaMemcpy(box, init, sizeof(init), cudaMemcpyHostToDevice);
    bounding_box<<<(n + 255) / 256, 256>>>(points, n, box);
    float result[4];
    cudaMemcpy(result, box, sizeof(result), cudaMemcpyDeviceToHost);
    std::printf("box: (%g, %g) - (%g, %g)\n", result[0], result[1], result[2], result[3]);
    cudaFree(points);
    cudaFree(box);
    return 0;
}
