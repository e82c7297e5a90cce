// Exercises: NVRTC runtime compilation (nvrtcCreateProgram, name expressions, nvrtcCompileProgram, nvrtcGetProgramLog, nvrtcGetPTX) and loading the result with the driver API.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <cuda.h>
#include <nvrtc.h>

#define NVRTC_SAFE_CALL(x)                                                              \
    do {                                                                                \
        nvrtcResult result = x;                                                         \
        if (result != NVRTC_SUCCESS) {                                                  \
            std::fprintf(stderr, "error: %s failed with %s\n", #x,                      \
                         nvrtcGetErrorString(result));                                  \
            std::exit(1);                                                               \
        }                                                                               \
    } while (0)

#define CUDA_SAFE_CALL(x)                                                               \
    do {                                                                                \
        CUresult result = x;                                                            \
        if (result != CUDA_SUCCESS) {                                                   \
            const char* msg;                                                            \
            cuGetErrorName(result, &msg);                                               \
            std::fprintf(stderr, "error: %s failed with %s\n", #x, msg);                \
            std::exit(1);                                                               \
        }                                                                               \
    } while (0)

static const char* kSource = R"(
template <typename T>
__global__ void affine(T* x, T a, T b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = a * x[i] + b;
}
)";

int main() {
    nvrtcProgram prog;
    NVRTC_SAFE_CALL(nvrtcCreateProgram(&prog, kSource, "affine.cu", 0, nullptr, nullptr));
    const char* kernel_name = "affine<float>";
    NVRTC_SAFE_CALL(nvrtcAddNameExpression(prog, kernel_name));
    std::vector<const char*> options = {"--std=c++17", "-default-device"};
    nvrtcResult compiled = nvrtcCompileProgram(prog, static_cast<int>(options.size()), options.data());
    size_t log_size = 0;
    NVRTC_SAFE_CALL(nvrtcGetProgramLogSize(prog, &log_size));
    if (log_size > 1) {
        std::string log(log_size, '\0');
        NVRTC_SAFE_CALL(nvrtcGetProgramLog(prog, &log[0]));
        std::fprintf(stderr, "%s\n", log.c_str());
    }
    if (compiled != NVRTC_SUCCESS) return 1;
    const char* lowered = nullptr;
    NVRTC_SAFE_CALL(nvrtcGetLoweredName(prog, kernel_name, &lowered));
    std::string mangled = lowered;

    size_t ptx_size = 0;
    NVRTC_SAFE_CALL(nvrtcGetPTXSize(prog, &ptx_size));
    std::vector<char> ptx(ptx_size);
    NVRTC_SAFE_CALL(nvrtcGetPTX(prog, ptx.data()));
    NVRTC_SAFE_CALL(nvrtcDestroyProgram(&prog));
    int major = 0, minor = 0;
    NVRTC_SAFE_CALL(nvrtcVersion(&major, &minor));

    CUDA_SAFE_CALL(cuInit(0));
    CUdevice device;
    CUcontext context;
    CUDA_SAFE_CALL(cuDeviceGet(&device, 0));
    CUDA_SAFE_CALL(cuDevicePrimaryCtxRetain(&context, device));
    CUDA_SAFE_CALL(cuCtxSetCurrent(context));
    CUmodule module;
    CUfunction kernel;
    CUDA_SAFE_CALL(cuModuleLoadDataEx(&module, ptx.data(), 0, nullptr, nullptr));
    CUDA_SAFE_CALL(cuModuleGetFunction(&kernel, module, mangled.c_str()));

    int n = 4096;
    CUdeviceptr x;
    CUDA_SAFE_CALL(cuMemAlloc(&x, n * sizeof(float)));
    CUDA_SAFE_CALL(cuMemsetD32(x, 0, n));
    float a = 2.f, b = 1.f;
    void* args[] = {&x, &a, &b, &n};
    CUDA_SAFE_CALL(cuLaunchKernel(kernel, n / 128, 1, 1, 128, 1, 1, 0, nullptr, args, nullptr));
    CUDA_SAFE_CALL(cuCtxSynchronize());
    std::printf("NVRTC %d.%d compiled and ran %s\n", major, minor, kernel_name);
    CUDA_SAFE_CALL(cuMemFree(x));
    CUDA_SAFE_CALL(cuModuleUnload(module));
    CUDA_SAFE_CALL(cuDevicePrimaryCtxRelease(device));
    return 0;
}
