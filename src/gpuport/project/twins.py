"""NVIDIA-only modules with an AMD twin: ``cutedsl_quantize_3d.py`` beside ``flydsl_quantize_3d.py``.

A project that writes one kernel twice, once in an NVIDIA-only kernel DSL or API and once in an
AMD one, names the two files alike: torchao's ``cutedsl_quantize_3d.py`` (CuTe DSL) and
``flydsl_quantize_3d.py`` (FlyDSL, AMD's) sit in one folder, and the module that dispatches
between them picks the FlyDSL one on ROCm. The NVIDIA file is then not porting work: the project
already has its ROCm version, so its findings fold into one GP601 line naming the twin.

By name only, and conservative: a Python module whose name has an NVIDIA word as one of its
``_``-separated parts (``cutedsl_``, ``_cuda``…) and whose same name with that part replaced by the
AMD word for the same kind of thing (``flydsl_``, ``_hip``, ``_rocm``, ``ck_``, ``aiter_``…) is a
file of the same folder; a helper named for one kind beside one named for another
(``cute_utils.py`` beside ``flydsl_utils.py``) is no twin. A twin with no finding in it gets no line.
A file named for CUDA with no such twin stays as it is, and so does a plain ``attention.py``
beside an ``attention_rocm.py`` (the plain file may be the ROCm build's too).
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import PurePosixPath

from gpuport.project.model import Component, ComponentStatus, Evidence
from gpuport.project.tiers import tier_by_name

# The NVIDIA words of a module's name and the AMD words that name the same kind of thing, so that
# a twin names its counterpart: a kernel DSL's (CuTe DSL,
# https://docs.nvidia.com/cutlass/media/docs/pythonDSL/overview.html, and FlyDSL,
# https://rocm.docs.amd.com/projects/FlyDSL), a kernel template library's (CUTLASS and CuTe, and
# Composable Kernel, https://github.com/ROCm/composable_kernel, or AITER,
# https://github.com/ROCm/aiter), a platform's (CUDA, and HIP or ROCm) and a vendor's.
_TWIN_WORDS: dict[str, tuple[str, ...]] = {
    "cutedsl": ("flydsl",),
    "cute": ("ck", "aiter"),
    "cutlass": ("ck", "aiter"),
    "cuda": ("hip", "rocm"),
    "nvidia": ("amd",),
    "nv": ("amd",),
}
_AMD_WORDS = {
    "flydsl": "FlyDSL, AMD's kernel DSL",
    "ck": "Composable Kernel",
    "aiter": "AITER, AMD's kernel library",
    "hip": "HIP",
    "rocm": "ROCm",
    "amd": "AMD",
}


def amd_twin(name: str, siblings: Collection[str]) -> str | None:
    """The AMD-named twin of the module ``name`` among ``siblings`` (its folder's file names),
    or None: ``cutedsl_quantize_3d.py`` -> ``flydsl_quantize_3d.py``."""
    stem, dot, suffix = name.rpartition(".")
    if not dot or suffix != "py":
        return None
    parts = stem.split("_")
    for index, part in enumerate(parts):
        for word in _TWIN_WORDS.get(part.lower(), ()):
            twin = "_".join([*parts[:index], word, *parts[index + 1 :]]) + ".py"
            if twin in siblings:
                return twin
    return None


def twin_components(pairs: list[tuple[str, str]]) -> list[Component]:
    """Each product module with an AMD twin, as an NVIDIA-only component whose alternative is
    the twin (test, benchmark and example files are left to their tiers)."""
    components: list[Component] = []
    for rel, twin in pairs:
        if tier_by_name(rel) is not None or tier_by_name(twin) is not None:
            continue
        name = PurePosixPath(twin).name
        word = name.split("_")[0] if name.split("_")[0] in _AMD_WORDS else ""
        word = word or next(w for w in _AMD_WORDS if f"_{w}_" in f"_{name[:-3]}_")
        why = (
            f"{PurePosixPath(rel).name} has an AMD twin beside it, {name} ({_AMD_WORDS[word]}): "
            "the project runs that one on ROCm"
        )
        components.append(
            Component(
                rel,
                ComponentStatus.NVIDIA_ONLY,
                (Evidence(rel, 1, why),),
                twin,
                summary="the project's ROCm path runs its AMD twin instead",
                listed_when_empty=False,
            )
        )
    return components
