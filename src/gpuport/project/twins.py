"""NVIDIA-only modules with an AMD twin: ``cutedsl_quantize_3d.py`` beside ``flydsl_quantize_3d.py``.

A project that writes one kernel twice, once in an NVIDIA-only kernel DSL or API and once in an
AMD one, names the two files alike: torchao's ``cutedsl_quantize_3d.py`` (CuTe DSL) and
``flydsl_quantize_3d.py`` (FlyDSL, AMD's) sit in one folder, and the module that dispatches
between them picks the FlyDSL one on ROCm. The NVIDIA file is then not porting work: the project
already has its ROCm version, so its findings fold into one GP601 line naming the twin.

By name only, and conservative: a Python module whose name has an NVIDIA word as one of its
``_``-separated parts (``cutedsl_``, ``_cuda``…) and whose same name with that part replaced by an
AMD word (``flydsl_``, ``_hip``, ``_rocm``, ``ck_``, ``aiter_``…) is a file of the same folder.
A file named for CUDA with no such twin stays as it is, and so does a plain ``attention.py``
beside an ``attention_rocm.py`` (the plain file may be the ROCm build's too).
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import PurePosixPath

from gpuport.project.model import Component, ComponentStatus, Evidence
from gpuport.project.tiers import tier_by_name

# Words that name an NVIDIA-only kernel language or API in a module's name: CuTe DSL
# (https://docs.nvidia.com/cutlass/media/docs/pythonDSL/overview.html), CUTLASS, CUDA.
_NVIDIA_WORDS = frozenset({"cutedsl", "cute", "cutlass", "cuda", "nvidia", "nv"})
# Words that name AMD's: FlyDSL (https://rocm.docs.amd.com/projects/FlyDSL), HIP and ROCm,
# Composable Kernel (https://github.com/ROCm/composable_kernel), AITER
# (https://github.com/ROCm/aiter).
_AMD_WORDS = {
    "flydsl": "FlyDSL, AMD's kernel DSL",
    "hip": "HIP",
    "rocm": "ROCm",
    "ck": "Composable Kernel",
    "aiter": "AITER, AMD's kernel library",
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
        if part.lower() not in _NVIDIA_WORDS:
            continue
        for word in _AMD_WORDS:
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
            Component(rel, ComponentStatus.NVIDIA_ONLY, (Evidence(rel, 1, why),), twin)
        )
    return components
