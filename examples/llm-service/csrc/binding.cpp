// PyTorch binding for the fused softmax kernel.
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>

extern "C" int launch_fused_softmax(const float* in, float* out, int rows, int cols, float scale,
                                    void* stream_handle);

torch::Tensor fused_softmax(torch::Tensor scores, double scale) {
  TORCH_CHECK(scores.is_cuda(), "scores must be on the GPU");
  TORCH_CHECK(scores.scalar_type() == torch::kFloat32, "scores must be float32");
  auto x = scores.contiguous();
  auto out = torch::empty_like(x);
  const int cols = static_cast<int>(x.size(-1));
  const int rows = static_cast<int>(x.numel() / cols);
  int rc = launch_fused_softmax(x.data_ptr<float>(), out.data_ptr<float>(), rows, cols,
                                static_cast<float>(scale), at::cuda::getCurrentCUDAStream().stream());
  TORCH_CHECK(rc == 0, "fused_softmax kernel failed");
  return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("fused_softmax", &fused_softmax, "Fused scaled softmax (CUDA)");
}
