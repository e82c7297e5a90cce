// Exercises: cuComplex.h single and double complex arithmetic (make_cuFloatComplex, cuCmulf, cuCaddf, cuCabsf, cuConj) in a DFT-by-definition kernel.
#include <cstdio>

#include <cuComplex.h>
#include <cuda_runtime.h>

__global__ void naive_dft(const cuFloatComplex* in, cuFloatComplex* out, int n) {
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    cuFloatComplex acc = make_cuFloatComplex(0.f, 0.f);
    for (int t = 0; t < n; ++t) {
        float angle = -2.f * 3.14159265f * k * t / n;
        cuFloatComplex w = make_cuFloatComplex(cosf(angle), sinf(angle));
        acc = cuCaddf(acc, cuCmulf(in[t], w));
    }
    out[k] = acc;
}

__global__ void magnitudes(const cuDoubleComplex* z, double* mag, cuDoubleComplex* conj, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    mag[i] = cuCabs(z[i]);
    cuDoubleComplex c = cuConj(z[i]);
    conj[i] = cuCdiv(cuCsub(c, make_cuDoubleComplex(1.0, 0.0)),
                     make_cuDoubleComplex(cuCreal(z[i]) + 2.0, cuCimag(z[i])));
}

int main() {
    const int n = 1024;
    cuFloatComplex *in, *out;
    cuDoubleComplex *z, *conj;
    double* mag;
    cudaMalloc(&in, n * sizeof(cuFloatComplex));
    cudaMalloc(&out, n * sizeof(cuFloatComplex));
    cudaMalloc(&z, n * sizeof(cuDoubleComplex));
    cudaMalloc(&conj, n * sizeof(cuDoubleComplex));
    cudaMalloc(&mag, n * sizeof(double));
    cudaMemset(in, 0, n * sizeof(cuFloatComplex));
    naive_dft<<<n / 128, 128>>>(in, out, n);
    magnitudes<<<n / 128, 128>>>(z, mag, conj, n);
    cuFloatComplex first;
    cudaMemcpy(&first, out, sizeof(first), cudaMemcpyDeviceToHost);
    std::printf("X[0] = %f%+fi |X[0]| = %f\n", cuCrealf(first), cuCimagf(first), cuCabsf(first));
    cudaFree(in); cudaFree(out); cudaFree(z); cudaFree(conj); cudaFree(mag);
    return 0;
}
