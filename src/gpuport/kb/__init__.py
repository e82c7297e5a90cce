"""The knowledge base: what each CUDA-side package, library, variable, tool and image becomes on ROCm.

The facts live in data files beside this package (``packages.toml``, ``cuda_libraries.toml``,
``platform.toml``, ``gpu_arch.toml``, ...); every entry carries its sources and the date it was
checked. ``loader`` reads them; one small module per file turns its entries into frozen
dataclasses, once, and answers look-ups: ``packages``, ``libraries``, ``platform`` (with the
ROCm defaults and version templates in ``rocm``) and ``archs``. This module re-exports their
public names, so callers write ``from gpuport import kb; kb.find_package(...)``.
``tests/kb/test_kb_schema.py`` validates every entry.
"""

from __future__ import annotations

from gpuport.kb.archs import GpuArch, find_gpu_arch, gpu_architectures
from gpuport.kb.libraries import (
    CudaLibrary,
    LibraryStatus,
    cuda_libraries,
    library_for_cmake_target,
    library_for_header,
    library_for_link_name,
)
from gpuport.kb.loader import KbError
from gpuport.kb.packages import (
    Package,
    PackageStatus,
    find_package,
    normalize_name,
    package_for_import,
    packages,
)
from gpuport.kb.platform import (
    ROCM_DEV_UBUNTU_RELEASES,
    DockerFlag,
    DockerImage,
    EnvVar,
    HostedNotebook,
    PipIndex,
    ToolCommand,
    commands,
    docker_flags,
    docker_images,
    env_vars,
    find_command,
    find_docker_flag,
    find_docker_image,
    find_env_var,
    find_pip_index,
    hosted_notebooks,
    pip_indexes,
)
from gpuport.kb.rocm import (
    DEFAULT_CHECK_OFFLOAD_ARCH,
    DEFAULT_OFFLOAD_ARCHS,
    DEFAULT_ROCM_VERSION,
    pytorch_rocm_index,
    pytorch_rocm_versions,
)

__all__ = [
    "DEFAULT_CHECK_OFFLOAD_ARCH",
    "DEFAULT_OFFLOAD_ARCHS",
    "DEFAULT_ROCM_VERSION",
    "ROCM_DEV_UBUNTU_RELEASES",
    "CudaLibrary",
    "DockerFlag",
    "DockerImage",
    "EnvVar",
    "GpuArch",
    "HostedNotebook",
    "KbError",
    "LibraryStatus",
    "Package",
    "PackageStatus",
    "PipIndex",
    "ToolCommand",
    "commands",
    "cuda_libraries",
    "docker_flags",
    "docker_images",
    "env_vars",
    "find_command",
    "find_docker_flag",
    "find_docker_image",
    "find_env_var",
    "find_gpu_arch",
    "find_package",
    "find_pip_index",
    "gpu_architectures",
    "hosted_notebooks",
    "library_for_cmake_target",
    "library_for_header",
    "library_for_link_name",
    "normalize_name",
    "package_for_import",
    "packages",
    "pip_indexes",
    "pytorch_rocm_index",
    "pytorch_rocm_versions",
]
