"""GP411 pip-build-isolation: ``pip install`` of a PyTorch extension without
``--no-build-isolation``, which builds it against PyPI's CUDA torch instead of the ROCm one."""

from __future__ import annotations

import re
from collections.abc import Sequence

from gpuport.edits import ChangeStatus, Hit
from gpuport.findings import Category, Confidence, Severity
from gpuport.rules import rule
from gpuport.scan.containers.common import ContainerContext
from gpuport.syntax.pep508 import normalize
from gpuport.syntax.shell import Word

# PyTorch extensions whose PyPI release is a source distribution compiled against the torch in
# the build environment; their own install notes ask for --no-build-isolation (flash-attention,
# mamba and causal-conv1d READMEs; PyG's extension packages build the same way).
TORCH_EXTENSION_SOURCES = frozenset(
    {
        "flash-attn",
        "mamba-ssm",
        "causal-conv1d",
        "apex",
        "torch-scatter",
        "torch-sparse",
        "torch-cluster",
        "torch-spline-conv",
        "grouped-gemm",
    }
)
# The same projects in a VCS or archive URL (git+https://github.com/Dao-AILab/flash-attention).
_EXTENSION_URL_RE = re.compile(
    r"(?i)github\.com/(?:Dao-AILab/(?:flash-attention|causal-conv1d)|state-spaces/mamba"
    r"|NVIDIA/apex|ROCm/apex|rusty1s/pytorch_(?:scatter|sparse|cluster|spline_conv))\b"
)
_NAME_RE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)")

PIP_BUILD_ISOLATION = rule(
    id="GP411",
    slug="pip-build-isolation",
    category=Category.CONTAINERS,
    severity=Severity.MEDIUM,
    confidence=Confidence.MEDIUM,
    summary="pip builds a PyTorch extension in isolation, against PyPI's CUDA torch",
    what=(
        "Finds `pip install` (also `python -m pip`, `uv pip`) of PyTorch extensions that pip "
        "builds from source (flash-attn, mamba-ssm, causal-conv1d, apex, torch-scatter…, by "
        "name or GitHub URL) without `--no-build-isolation`, in Dockerfiles, CI steps, shell "
        "scripts and notebook `!pip` lines."
    ),
    why=(
        "Without --no-build-isolation pip creates a fresh build environment and installs the "
        "build's torch there from PyPI, a CUDA build on Linux: the extension is compiled with "
        "nvcc against CUDA torch (or fails without a CUDA toolkit) instead of with hipcc "
        "against the ROCm torch the image already has."
    ),
    example="RUN pip install flash-attn==2.7.4\n",
    instead="RUN pip install --no-build-isolation flash-attn==2.7.4\n",
    fix="Install ROCm torch first, then add `--no-build-isolation` to this pip install.",
    mechanical=False,
    references=(
        "https://pip.pypa.io/en/stable/cli/pip_install/#cmdoption-no-build-isolation",
        "https://github.com/Dao-AILab/flash-attention#installation-and-features",
    ),
    needles=("pip",),
)


def pip_build_isolation(ctx: ContainerContext, args: Sequence[Word]) -> None:
    """GP411 for the arguments of one ``pip install``."""
    if not args or args[0].text != "install":
        return
    words = [word.text for word in args[1:]]
    if "--no-build-isolation" in words or "--only-binary=:all:" in words:
        return
    for word in args[1:]:
        text = word.text
        if text.startswith("-"):
            continue
        name_match = _NAME_RE.match(text)
        named = normalize(name_match.group(1)) if name_match and "://" not in text else ""
        if named in TORCH_EXTENSION_SOURCES or _EXTENSION_URL_RE.search(text):
            shown = named or text
            ctx.add(
                Hit(
                    PIP_BUILD_ISOLATION,
                    word.start,
                    word.end,
                    f"pip builds {shown} in an isolated environment with PyPI's torch (a CUDA "
                    "build): add --no-build-isolation after installing ROCm torch",
                    "pip-build",
                    ChangeStatus.UNCONVERTED,
                    note="install ROCm torch first, then build against it",
                    fix="Add --no-build-isolation (after installing ROCm torch).",
                )
            )
            return  # one finding per command: one option fixes every package in it
