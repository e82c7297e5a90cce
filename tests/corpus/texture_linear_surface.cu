// Exercises: a texture object over linear device memory (cudaResourceTypeLinear, tex1Dfetch) and a surface object (cudaCreateSurfaceObject, surf2Dwrite/surf2Dread).
#include <cstdio>
#include <cstring>

#include <cuda_runtime.h>

__global__ void gather_lut(cudaTextureObject_t lut, const int* indices, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1Dfetch<float>(lut, indices[i]);
}

__global__ void write_gradient(cudaSurfaceObject_t surface, int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) {
        float4 px = make_float4(x / float(width), y / float(height), 0.f, 1.f);
        surf2Dwrite(px, surface, x * sizeof(float4), y);
    }
}

__global__ void invert(cudaSurfaceObject_t surface, int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) {
        float4 px;
        surf2Dread(&px, surface, x * sizeof(float4), y);
        px.x = 1.f - px.x;
        surf2Dwrite(px, surface, x * sizeof(float4), y);
    }
}

int main() {
    const int entries = 4096, n = 1 << 16;
    float* table;
    int* indices;
    float* out;
    cudaMalloc(&table, entries * sizeof(float));
    cudaMalloc(&indices, n * sizeof(int));
    cudaMalloc(&out, n * sizeof(float));
    cudaMemset(indices, 0, n * sizeof(int));

    cudaResourceDesc res;
    memset(&res, 0, sizeof(res));
    res.resType = cudaResourceTypeLinear;
    res.res.linear.devPtr = table;
    res.res.linear.desc = cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindFloat);
    res.res.linear.sizeInBytes = entries * sizeof(float);
    cudaTextureDesc td;
    memset(&td, 0, sizeof(td));
    td.readMode = cudaReadModeElementType;
    cudaTextureObject_t lut;
    cudaCreateTextureObject(&lut, &res, &td, NULL);
    gather_lut<<<n / 256, 256>>>(lut, indices, out, n);

    const int width = 256, height = 256;
    cudaChannelFormatDesc rgba = cudaCreateChannelDesc<float4>();
    cudaArray_t image;
    cudaMallocArray(&image, &rgba, width, height, cudaArraySurfaceLoadStore);
    cudaResourceDesc sres = {};
    sres.resType = cudaResourceTypeArray;
    sres.res.array.array = image;
    cudaSurfaceObject_t surface;
    cudaCreateSurfaceObject(&surface, &sres);
    dim3 block(16, 16), grid(width / 16, height / 16);
    write_gradient<<<grid, block>>>(surface, width, height);
    invert<<<grid, block>>>(surface, width, height);
    cudaDeviceSynchronize();

    cudaDestroySurfaceObject(surface);
    cudaDestroyTextureObject(lut);
    cudaFreeArray(image);
    cudaFree(table); cudaFree(indices); cudaFree(out);
    std::printf("done\n");
    return 0;
}
