"""Installs PyTorch for the GPU the user asked for."""

import subprocess
import sys


def install_torch(gpu: str, rocm_version: str = "6.1") -> None:
    packages = ["torch", "torchvision", "torchaudio"]
    if gpu == "amd":
        extra = ["--extra-index-url", f"https://download.pytorch.org/whl/rocm{rocm_version}"]
    else:
        extra = ["--extra-index-url", "https://download.pytorch.org/whl/cu121"]
    subprocess.check_call([sys.executable, "-m", "pip", "install", *packages, *extra])
