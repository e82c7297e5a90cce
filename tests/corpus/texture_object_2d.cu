// Exercises: texture objects over a CUDA array (cudaMallocArray, cudaMemcpy2DToArray, cudaCreateTextureObject, tex2D<float> with linear filtering) for bilinear image resize.
#include <cstdio>
#include <vector>

#include <cuda_runtime.h>

__global__ void resize_bilinear(cudaTextureObject_t tex, float* out, int out_w, int out_h,
                                float sx, float sy) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= out_w || y >= out_h) return;
    float u = (x + 0.5f) * sx;
    float v = (y + 0.5f) * sy;
    out[y * out_w + x] = tex2D<float>(tex, u, v);
}

int main() {
    const int w = 512, h = 256, out_w = 1024, out_h = 512;
    std::vector<float> image(w * h, 0.5f);

    cudaChannelFormatDesc channel = cudaCreateChannelDesc<float>();
    cudaArray_t array;
    cudaMallocArray(&array, &channel, w, h);
    cudaMemcpy2DToArray(array, 0, 0, image.data(), w * sizeof(float), w * sizeof(float), h,
                        cudaMemcpyHostToDevice);

    cudaResourceDesc resource = {};
    resource.resType = cudaResourceTypeArray;
    resource.res.array.array = array;
    cudaTextureDesc texture = {};
    texture.addressMode[0] = cudaAddressModeClamp;
    texture.addressMode[1] = cudaAddressModeClamp;
    texture.filterMode = cudaFilterModeLinear;
    texture.readMode = cudaReadModeElementType;
    texture.normalizedCoords = 0;
    cudaTextureObject_t tex = 0;
    cudaCreateTextureObject(&tex, &resource, &texture, nullptr);

    float* out;
    cudaMalloc(&out, out_w * out_h * sizeof(float));
    dim3 block(16, 16);
    dim3 grid((out_w + 15) / 16, (out_h + 15) / 16);
    resize_bilinear<<<grid, block>>>(tex, out, out_w, out_h, float(w) / out_w, float(h) / out_h);
    cudaDeviceSynchronize();
    std::printf("%s\n", cudaGetErrorString(cudaGetLastError()));
    cudaDestroyTextureObject(tex);
    cudaFreeArray(array);
    cudaFree(out);
    return 0;
}
