"""Builds the attention extension; on ROCm the Composable Kernel backend."""

import os

from setuptools import setup


def rocm_archs():
    archs = os.getenv("GPU_ARCHS", "native").split(";")
    allowed_archs = ["native", "gfx90a", "gfx942"]
    assert all(a in allowed_archs for a in archs), (
        f"Invalid archs: {archs}. Allowed: {allowed_archs}"
    )
    return [f"--offload-arch={a}" for a in archs]


setup(
    name="attn_kernels",
    version="0.3.0",
    packages=["attn_kernels"],
)
