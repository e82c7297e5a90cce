// Exercises: cuFFT (cufftPlan1d R2C, cufftPlanMany batched C2C, cufftSetStream, cufftExecR2C/C2C/C2R, cufftDestroy) for a power spectrum and round trip.
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>
#include <cufft.h>

#define CUFFT_CHECK(call)                                                            \
    do {                                                                             \
        cufftResult r = (call);                                                      \
        if (r != CUFFT_SUCCESS) {                                                    \
            fprintf(stderr, "%s:%d cuFFT error %d\n", __FILE__, __LINE__, (int)r);    \
            exit(EXIT_FAILURE);                                                      \
        }                                                                            \
    } while (0)

__global__ void power_spectrum(const cufftComplex* spectrum, float* power, int bins) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < bins) power[i] = spectrum[i].x * spectrum[i].x + spectrum[i].y * spectrum[i].y;
}

__global__ void normalize(cufftReal* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] /= n;
}

int main() {
    const int n = 4096, bins = n / 2 + 1, batch = 8;
    cufftReal* signal;
    cufftComplex* spectrum;
    float* power;
    cudaMalloc(&signal, n * sizeof(cufftReal));
    cudaMalloc(&spectrum, bins * sizeof(cufftComplex));
    cudaMalloc(&power, bins * sizeof(float));
    cudaMemset(signal, 0, n * sizeof(cufftReal));

    cudaStream_t stream;
    cudaStreamCreate(&stream);
    cufftHandle forward, inverse;
    CUFFT_CHECK(cufftPlan1d(&forward, n, CUFFT_R2C, 1));
    CUFFT_CHECK(cufftPlan1d(&inverse, n, CUFFT_C2R, 1));
    CUFFT_CHECK(cufftSetStream(forward, stream));
    CUFFT_CHECK(cufftSetStream(inverse, stream));
    CUFFT_CHECK(cufftExecR2C(forward, signal, spectrum));
    power_spectrum<<<(bins + 255) / 256, 256, 0, stream>>>(spectrum, power, bins);
    CUFFT_CHECK(cufftExecC2R(inverse, spectrum, signal));
    normalize<<<(n + 255) / 256, 256, 0, stream>>>(signal, n);

    // Batched complex transforms with an explicit layout.
    cufftComplex* many;
    cudaMalloc(&many, batch * n * sizeof(cufftComplex));
    cudaMemset(many, 0, batch * n * sizeof(cufftComplex));
    int dims[1] = {n};
    cufftHandle batched;
    CUFFT_CHECK(cufftPlanMany(&batched, 1, dims, nullptr, 1, n, nullptr, 1, n, CUFFT_C2C, batch));
    size_t work = 0;
    CUFFT_CHECK(cufftGetSize(batched, &work));
    CUFFT_CHECK(cufftExecC2C(batched, many, many, CUFFT_FORWARD));
    CUFFT_CHECK(cufftExecC2C(batched, many, many, CUFFT_INVERSE));

    cudaStreamSynchronize(stream);
    printf("work area %zu bytes\n", work);
    CUFFT_CHECK(cufftDestroy(forward));
    CUFFT_CHECK(cufftDestroy(inverse));
    CUFFT_CHECK(cufftDestroy(batched));
    cudaFree(signal); cudaFree(spectrum); cudaFree(power); cudaFree(many);
    cudaStreamDestroy(stream);
    return 0;
}
