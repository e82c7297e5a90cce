"""Compiles the extension on first import with the arch of the visible GPUs."""

import os

import torch
from torch.utils.cpp_extension import load


def _arch_list():
    archs = []
    for i in range(torch.cuda.device_count()):
        props = torch.cuda.get_device_properties(i)
        archs.append(
            props.gcnArchName.split(":")[0] if torch.version.hip else f"{props.major}.{props.minor}"
        )
    return archs


arch_list = _arch_list()
os.environ["PYTORCH_ROCM_ARCH"] = arch_list[0]

ext_c = load(name="ext_c", sources=["ext/bindings.cpp", "ext/kernels.cu"], verbose=False)
