from setuptools import find_packages, setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name="llm-service",
    version="0.4.2",
    packages=find_packages(),
    install_requires=[
        "torch>=2.3",
        "transformers>=4.44",
        "bitsandbytes>=0.43",
        "nvidia-ml-py>=12.535",
    ],
    ext_modules=[
        CUDAExtension(
            name="llm_service._kernels",
            sources=["csrc/binding.cpp", "csrc/fused_softmax.cu"],
            extra_compile_args={"cxx": ["-O3"], "nvcc": ["-O3", "--use_fast_math", "-arch=sm_80"]},
        )
    ],
    cmdclass={"build_ext": BuildExtension},
)
