"""Builds the fused kernels for ROCm or CUDA."""

import os

import torch
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension


def target_archs():
    archs = os.getenv("GPU_ARCHS", "native").split(";")
    if archs == ["native"]:
        if not torch.cuda.is_available():
            raise RuntimeError(
                "GPU_ARCHS not set and no GPU detected. Set GPU_ARCHS to cross-compile."
            )
        archs = [torch.cuda.get_device_properties(0).gcnArchName.split(":")[0]]
    return archs


flags = [f"--offload-arch={a}" for a in target_archs()]

setup(
    name="fused_kernels",
    ext_modules=[
        CUDAExtension("fused_kernels._C", ["csrc/fused.cu"], extra_compile_args={"nvcc": flags})
    ],
    cmdclass={"build_ext": BuildExtension},
)
