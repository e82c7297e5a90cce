#include <torch/extension.h>

torch::Tensor fused_attention(torch::Tensor q, torch::Tensor k, torch::Tensor v);
torch::Tensor rmsnorm(torch::Tensor x, torch::Tensor weight, double eps);
void rotary_(torch::Tensor x, torch::Tensor cos, torch::Tensor sin);
void fused_adam_(torch::Tensor p, torch::Tensor g, torch::Tensor m, torch::Tensor v, double lr);

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("fused_attention", &fused_attention);
  m.def("rmsnorm", &rmsnorm);
  m.def("rotary_", &rotary_);
  m.def("fused_adam_", &fused_adam_);
}
