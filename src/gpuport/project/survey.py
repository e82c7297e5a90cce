"""One bounded walk of a project's folders that lists the files the project model reads.

Only names are looked at here (no file is opened): the build files, CI workflows, Dockerfiles,
READMEs, C/C++ headers and HIP sources, and the folders that look like a ROCm backend.
Symbolic links are not followed, and the walk stops after :data:`MAX_ENTRIES` entries.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from gpuport.files import DEFAULT_EXCLUDED_DIRS, is_port_artifact
from gpuport.findings import Tier
from gpuport.project.tiers import tier_by_name
from gpuport.project.twins import amd_twin

MAX_ENTRIES = 200_000  # a tree larger than this is surveyed in part (the model says so)
_BUILD_DEPTH = 3  # setup.py / pyproject.toml / CMakeLists.txt this deep or less (root: 1)
_HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".cuh", ".hxx", ".inl")
_SOURCE_SUFFIXES = (".cu", ".cpp", ".cc", ".cxx")
# Folders whose names say they hold a ROCm backend: Composable Kernel sources (flash-attention's
# csrc/flash_attn_ck), a Triton AMD path (flash_attn/flash_attn_triton_amd), a ROCm patch set
# (mamba's rocm_patch), a hip/ or rocm/ backend folder.
_BACKEND_DIR_RE = re.compile(
    r"(?:^ck$|_ck$|^ck_|composable_kernel|triton_amd|^rocm$|^rocm_|_rocm$|^hip$|_hip$|^hip_)",
    re.IGNORECASE,
)
# Build helpers the root setup.py imports (DeepSpeed's op_builder/, TransformerEngine's
# build_tools/): read like setup.py for ROCm evidence, macros and architectures.
_BUILD_HELPER_DIRS = frozenset({"op_builder", "build_tools", "build_utils", "cmake"})


@dataclass(slots=True)
class Survey:
    """What one walk found, as paths relative to the root (forward slashes), in walk order."""

    setup_pys: list[str] = field(default_factory=list)
    pyprojects: list[str] = field(default_factory=list)
    cmake_files: list[str] = field(default_factory=list)
    build_helpers: list[str] = field(default_factory=list)
    workflows: list[str] = field(default_factory=list)
    dockerfiles: list[str] = field(default_factory=list)
    readmes: list[str] = field(default_factory=list)
    headers: list[str] = field(default_factory=list)
    hip_sources: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)  # C++/CUDA sources (.cu, .cpp, .cc, .cxx)
    backend_dirs: list[str] = field(default_factory=list)
    packages: list[str] = field(default_factory=list)  # folders with __init__.py, root or src/
    modules: list[str] = field(default_factory=list)  # top-level .py modules
    # every .py file outside test, example and benchmark folders (by name), in walk order
    python_files: list[str] = field(default_factory=list)
    # (NVIDIA-named module, its AMD-named twin in the same folder), by name (project/twins.py)
    vendor_twins: list[tuple[str, str]] = field(default_factory=list)
    gitmodules: bool = False
    truncated: bool = False


def survey(root: Path) -> Survey:
    """Walk ``root`` once, by name only, and sort what matters to the model."""
    found = Survey()
    entries = 0
    top = os.fspath(root)
    for current, dirs, files in os.walk(top):
        rel_dir = os.path.relpath(current, top).replace(os.sep, "/")
        rel_dir = "" if rel_dir == "." else rel_dir
        depth = rel_dir.count("/") + 1 if rel_dir else 0
        dirs[:] = sorted(d for d in dirs if d not in DEFAULT_EXCLUDED_DIRS)
        files.sort()
        entries += len(dirs) + len(files)
        if entries > MAX_ENTRIES:
            found.truncated = True
            dirs[:] = []
        _sort_files(found, rel_dir, depth, files)
        for name in dirs:
            rel = f"{rel_dir}/{name}" if rel_dir else name
            if _BACKEND_DIR_RE.search(name) and _product_or_ci(rel + "/x"):
                found.backend_dirs.append(rel)
            if (depth == 0 or rel_dir == "src") and "__init__.py" in _listing(current, name):
                found.packages.append(name)
    return found


def _listing(parent: str, name: str) -> frozenset[str]:
    try:
        return frozenset(os.listdir(os.path.join(parent, name)))
    except OSError:
        return frozenset()


def _product_or_ci(rel: str) -> bool:
    return tier_by_name(rel) in (None, Tier.CI, Tier.DEV)


def _sort_files(found: Survey, rel_dir: str, depth: int, files: list[str]) -> None:
    first = rel_dir.split("/", 1)[0] if rel_dir else ""
    siblings = frozenset(files)
    for name in files:
        if is_port_artifact(name, siblings=siblings):
            continue  # gpuport's own backups and temp files: never read, never a component
        rel = f"{rel_dir}/{name}" if rel_dir else name
        lower = name.lower()
        if depth == 0:
            if lower == ".gitmodules":
                found.gitmodules = True
            elif lower.endswith(".py") and lower != "setup.py":
                found.modules.append(name[:-3])
        if lower.endswith(".py") and tier_by_name(rel) is None:
            found.python_files.append(rel)
        if lower.endswith(".py") and "_" in lower:
            twin = amd_twin(name, siblings)
            if twin is not None:
                found.vendor_twins.append((rel, f"{rel_dir}/{twin}" if rel_dir else twin))
        if lower.endswith(_HEADER_SUFFIXES):
            found.headers.append(rel)
        elif lower.endswith(".hip"):
            found.hip_sources.append(rel)
        elif lower.endswith(_SOURCE_SUFFIXES):
            found.sources.append(rel)
        elif rel_dir.startswith(".github/workflows") and lower.endswith((".yml", ".yaml")):
            found.workflows.append(rel)
        elif (
            lower == "dockerfile" or lower.startswith("dockerfile") or lower.endswith(".dockerfile")
        ):
            found.dockerfiles.append(rel)
        elif (depth <= 1 and lower.startswith("readme")) or (
            first in ("docs", "doc") and "install" in lower and lower.endswith((".md", ".rst"))
        ):
            found.readmes.append(rel)
        elif depth < _BUILD_DEPTH and tier_by_name(rel) is None:
            if lower == "setup.py":
                found.setup_pys.append(rel)
            elif lower == "pyproject.toml":
                found.pyprojects.append(rel)
            elif lower == "cmakelists.txt" or (depth == 0 and lower.endswith(".cmake")):
                found.cmake_files.append(rel)
            elif depth == 1 and first in _BUILD_HELPER_DIRS and lower.endswith((".py", ".cmake")):
                found.build_helpers.append(rel)
