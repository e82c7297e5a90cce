"""GP411 pip-build-isolation: ``pip install`` of a PyTorch extension without
``--no-build-isolation``, which builds it against PyPI's CUDA torch instead of the ROCm one."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from gpuport.edits import ChangeStatus, Hit
from gpuport.findings import Category, Confidence, Severity
from gpuport.read_policy import ReadRefused, read_within
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
        "scripts and notebook `!pip` lines; and, on a ROCm base image, `pip install .` (or "
        "`-e ./path`) of a local tree whose build compiles against torch: a HIP build switch "
        "on the command line (`USE_ROCM=1`, `BUILD_WITH_HIP=1`), torch in the project's "
        "`[build-system] requires`, or a setup.py using torch's extension helpers."
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


def pip_build_isolation(
    ctx: ContainerContext, args: Sequence[Word], before: Sequence[Word] = ()
) -> None:
    """GP411 for the arguments of one ``pip install`` (``before``: the words ahead of pip on
    its command line, such as ``BUILD_WITH_HIP=1``)."""
    if not args or args[0].text != "install":
        return
    words = [word.text for word in args[1:]]
    if "--no-build-isolation" in words or "--only-binary=:all:" in words:
        return
    if ctx.rocm_base and _local_tree_build(ctx, args[1:], before):
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


# pip options whose value is not a package to install (a requirements file, an index, a folder).
_VALUED_OPTIONS = frozenset(
    {
        "-r",
        "--requirement",
        "-c",
        "--constraint",
        "-i",
        "--index-url",
        "--extra-index-url",
        "-f",
        "--find-links",
        "-t",
        "--target",
        "--prefix",
        "--root",
        "--cache-dir",
        "--src",
        "--upgrade-strategy",
        "--python-version",
        "--platform",
        "--implementation",
        "--abi",
        "--progress-bar",
        "--report",
        "-C",
        "--config-settings",
        "--global-option",
    }
)
# A HIP/ROCm build switch set for the pip command (BUILD_WITH_HIP=1, USE_ROCM=1, PYTORCH_ROCM_ARCH=…).
_HIP_BUILD_SETTING_RE = re.compile(r"(?i)^[A-Z0-9_]*(?:HIP|ROCM)[A-Z0-9_]*=")
# What says a project's build compiles against torch: torch in [build-system] requires, or a
# setup.py that uses torch's extension helpers.
_BUILD_REQUIRES_RE = re.compile(r"(?s)\[build-system\].*?requires\s*=\s*\[([^\]]*)\]")
_TORCH_WORD_RE = re.compile(r"""["']torch\b""")
_EXTENSION_HELPERS_RE = re.compile(
    r"\b(?:cpp_extension|CUDAExtension|CppExtension|BuildExtension)\b"
)
_BUILD_FILE_BYTES = 1 << 20


def _local_targets(args: Sequence[Word]) -> list[Word]:
    """The local source trees among a ``pip install``'s arguments (``.``, ``-e ./pkg``)."""
    found: list[Word] = []
    skip = False
    for word in args:
        text = word.text
        if skip:
            skip = False
            continue
        if text in _VALUED_OPTIONS:
            skip = True
            continue
        if text.startswith("-"):
            continue
        base = text.split("[", 1)[0]  # .[dev]
        if base in (".", "..") or base.startswith(("./", "../", "/")):
            found.append(word)
    return found


def _project_builds_against_torch(root: Path) -> bool | None:
    """Whether the project at ``root`` compiles against torch when pip builds it: True or
    False from its pyproject.toml / setup.py (read inside the root, never run), None when
    neither can be read."""
    texts: dict[str, str] = {}
    for name in ("pyproject.toml", "setup.py"):
        try:
            data = read_within(root, root / name, _BUILD_FILE_BYTES)
        except (OSError, ReadRefused):
            continue
        texts[name] = data.decode("utf-8", "replace")
    if not texts:
        return None
    requires = _BUILD_REQUIRES_RE.search(texts.get("pyproject.toml", ""))
    if requires is not None and _TORCH_WORD_RE.search(requires.group(1)):
        return True
    return bool(_EXTENSION_HELPERS_RE.search(texts.get("setup.py", "")))


def _local_tree_build(ctx: ContainerContext, args: Sequence[Word], before: Sequence[Word]) -> bool:
    """GP411 for ``pip install .`` on a ROCm base image, when the build compiles against
    torch: a HIP build switch on the command line, or the project's own build files say so.
    True when it reported."""
    targets = _local_targets(args)
    if not targets:
        return False
    switch = next((w.text for w in before if _HIP_BUILD_SETTING_RE.match(w.text)), None)
    builds_torch = ctx.root is not None and _project_builds_against_torch(ctx.root)
    if switch is None and not builds_torch:
        return False
    evidence = (
        f"{switch.split('=', 1)[0]} asks for a HIP build"
        if switch
        else "the project's build compiles against torch"
    )
    word = targets[0]
    ctx.add(
        Hit(
            PIP_BUILD_ISOLATION,
            word.start,
            word.end,
            f"pip builds the local tree {word.text} in an isolated environment on a ROCm image "
            f"({evidence}): pip installs PyPI's torch (a CUDA build) there instead of the "
            "image's ROCm torch; add --no-build-isolation",
            "pip-build",
            ChangeStatus.UNCONVERTED,
            note="build against the image's ROCm torch",
            fix="Add --no-build-isolation (the image already has ROCm torch).",
        )
    )
    return True
