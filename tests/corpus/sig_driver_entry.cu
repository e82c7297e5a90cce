// Exercises: driver entry points looked up at run time: cudaGetDriverEntryPoint (CUDA 12 form with a status) and cuGetProcAddress with a CUDA version.
#include <cstdio>

#include <cuda.h>
#include <cuda_runtime.h>

typedef CUresult (*DeviceCountFn)(int*);

int main() {
    void* by_runtime = nullptr;
    cudaDriverEntryPointQueryResult runtime_status;
    cudaGetDriverEntryPoint("cuDeviceGetCount", &by_runtime, cudaEnableDefault, &runtime_status);

    cuInit(0);
    void* by_driver = nullptr;
    CUdriverProcAddressQueryResult driver_status;
    cuGetProcAddress("cuDeviceGetCount", &by_driver, 12000, CU_GET_PROC_ADDRESS_DEFAULT,
                     &driver_status);

    int count = 0;
    if (by_driver != nullptr) reinterpret_cast<DeviceCountFn>(by_driver)(&count);
    std::printf("%d device(s); found by runtime: %s\n", count, by_runtime ? "yes" : "no");
    return 0;
}
