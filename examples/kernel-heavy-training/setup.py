import os

from setuptools import find_packages, setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "8.0;9.0")

setup(
    name="kernel-heavy-training",
    packages=find_packages(),
    ext_modules=[
        CUDAExtension(
            name="trainer._fused",
            sources=[
                "csrc/binding.cpp",
                "csrc/fused_attention.cu",
                "csrc/rmsnorm.cu",
                "csrc/rotary.cu",
                "csrc/fused_adam.cu",
            ],
            extra_compile_args={"nvcc": ["-O3", "-gencode=arch=compute_80,code=sm_80"]},
        )
    ],
    cmdclass={"build_ext": BuildExtension},
)
