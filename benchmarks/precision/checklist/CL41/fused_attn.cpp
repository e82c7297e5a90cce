// Reports whether the fused attention kernels can run on the current device.
#include <cuda_runtime.h>
#include <cudnn.h>

bool is_fused_attn_kernel_available()
{
#if (CUDNN_VERSION >= 8901)
    int device = 0;
    cudaGetDevice(&device);
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, device);
    return prop.major >= 8;
#else
    return false;
#endif
}

cudnnHandle_t fused_attn_handle()
{
    static cudnnHandle_t handle = nullptr;
    if (handle == nullptr) cudnnCreate(&handle);
    return handle;
}
