"""gpuport: assess, port and plan ML projects moving between NVIDIA CUDA and AMD ROCm."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("gpuport")
except PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0.0.0+source"
