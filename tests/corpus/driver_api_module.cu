// Exercises: the CUDA driver API (cuInit, cuDeviceGet, primary context, cuModuleLoadData, cuModuleGetFunction, cuMemAlloc/cuMemcpyHtoD, cuLaunchKernel, cuGetErrorString).
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <cuda.h>

#define CU_CHECK(call)                                                                  \
    do {                                                                                \
        CUresult res = (call);                                                          \
        if (res != CUDA_SUCCESS) {                                                      \
            const char* msg = nullptr;                                                  \
            cuGetErrorString(res, &msg);                                                \
            std::fprintf(stderr, "%s:%d %s -> %s\n", __FILE__, __LINE__, #call,         \
                         msg ? msg : "unknown");                                        \
            std::exit(1);                                                               \
        }                                                                               \
    } while (0)

static std::string read_file(const char* path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

int main(int argc, char** argv) {
    const char* image_path = argc > 1 ? argv[1] : "scale.cubin";
    std::string image = read_file(image_path);

    CU_CHECK(cuInit(0));
    int count = 0;
    CU_CHECK(cuDeviceGetCount(&count));
    CUdevice device;
    CU_CHECK(cuDeviceGet(&device, 0));
    char name[256];
    CU_CHECK(cuDeviceGetName(name, sizeof(name), device));
    int major = 0, minor = 0;
    CU_CHECK(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device));
    CU_CHECK(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device));
    std::printf("%d device(s); using %s (sm_%d%d)\n", count, name, major, minor);

    CUcontext context;
    CU_CHECK(cuDevicePrimaryCtxRetain(&context, device));
    CU_CHECK(cuCtxSetCurrent(context));

    CUmodule module;
    CU_CHECK(cuModuleLoadData(&module, image.data()));
    CUfunction scale;
    CU_CHECK(cuModuleGetFunction(&scale, module, "scale"));

    const int n = 1 << 20;
    const size_t bytes = n * sizeof(float);
    float* host = static_cast<float*>(std::malloc(bytes));
    for (int i = 0; i < n; ++i) host[i] = 1.0f;
    CUdeviceptr dev;
    CU_CHECK(cuMemAlloc(&dev, bytes));
    CU_CHECK(cuMemcpyHtoD(dev, host, bytes));

    CUstream stream;
    CU_CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    float factor = 3.0f;
    int len = n;
    void* params[] = {&dev, &factor, &len};
    CU_CHECK(cuLaunchKernel(scale, (n + 255) / 256, 1, 1, 256, 1, 1, 0, stream, params, nullptr));
    CU_CHECK(cuStreamSynchronize(stream));
    CU_CHECK(cuMemcpyDtoH(host, dev, bytes));
    std::printf("host[0] = %f\n", host[0]);

    size_t free_mem = 0, total_mem = 0;
    CU_CHECK(cuMemGetInfo(&free_mem, &total_mem));
    CU_CHECK(cuStreamDestroy(stream));
    CU_CHECK(cuMemFree(dev));
    CU_CHECK(cuModuleUnload(module));
    CU_CHECK(cuDevicePrimaryCtxRelease(device));
    std::free(host);
    return 0;
}
