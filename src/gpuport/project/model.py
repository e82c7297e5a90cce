"""The shape of the project model: evidence, components and the model itself.

A model is built once per scan from the project's build files (``setup.py``, ``pyproject.toml``,
``CMakeLists.txt``, CI workflows, README) and read by the scanners (through
:class:`~gpuport.files.ProjectFacts`), by the triage that folds findings into components, and by
``assess`` for its verdict. Every conclusion carries the evidence (file and line) it came from.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from gpuport.files import NO_PROJECT_FACTS, ProjectFacts
from gpuport.findings import Tier
from gpuport.project.tiers import tier_by_name


@dataclass(frozen=True, slots=True, order=True)
class Evidence:
    """One fact read from the project, where it was read, and what it shows."""

    path: str  # relative to the project root
    line: int  # 1-based; 0 for the whole file
    what: str  # one sentence: "setup.py builds the extension with hipcc when torch.version.hip"

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.what}"


class ComponentStatus(enum.StrEnum):
    """How a component is built when the project builds for ROCm."""

    ROCM = "built for ROCm"  # the ROCm build compiles it (perhaps through hipify)
    NVIDIA_ONLY = "NVIDIA-only"  # the ROCm build leaves it out; findings in it are not porting work
    OPTIONAL = "optional"  # opt-in (an extra, an environment switch); off unless asked for


@dataclass(frozen=True, slots=True)
class Component:
    """A directory (or file) of the project that its build treats as one unit."""

    path: str  # relative path prefix, "csrc/hopper" or "csrc/hopper/" (a directory) or a file
    status: ComponentStatus
    evidence: tuple[Evidence, ...] = ()
    rocm_alternative: str = (
        ""  # what the project runs on ROCm instead ("csrc/ck (Composable Kernel)")
    )
    # How its GP601 line says why ROCm does without it; "" for "the ROCm build leaves it out".
    summary: str = ""
    # Whether it gets a GP601 line when no finding fell in it (a build's folder does: the reader
    # learns it is not porting work; a module with an AMD twin does not).
    listed_when_empty: bool = True
    # Files elsewhere in the tree that belong to it (the requirements file of the extra that
    # installs an op's dependencies, project/op_builders.py): its findings fold into its line.
    files: tuple[str, ...] = ()

    def contains(self, rel: str) -> bool:
        prefix = self.path.rstrip("/")
        return rel == prefix or rel.startswith(prefix + "/") or rel in self.files


@dataclass(frozen=True, slots=True)
class VendorExtras:
    """The extras of one pyproject that install another vendor's builds, and where they sit."""

    path: str  # the pyproject, relative to the project root
    line: int  # the first requirement line of the first such extra
    extras: tuple[str, ...]  # their names, in file order
    lines: frozenset[int]  # every requirement line inside them
    rocm_extras: tuple[str, ...]  # the same file's ROCm extras (the alternative), in file order
    evidence: tuple[Evidence, ...] = ()

    def holds(self, path: str, line: int) -> bool:
        return path == self.path and line in self.lines


@dataclass(frozen=True, slots=True)
class ProjectModel:
    """What the project is: its name, its own packages, its ROCm path, components and tiers."""

    name: str = ""  # the distribution name from pyproject/setup.py; "" when none was found
    facts: ProjectFacts = NO_PROJECT_FACTS
    # Evidence that the project already builds or ships for ROCm; empty when none was found.
    rocm_support: tuple[Evidence, ...] = ()
    # GPU architectures (gfx…) its ROCm build targets, when the build names them.
    rocm_archs: tuple[str, ...] = ()
    components: tuple[Component, ...] = ()
    # Extras that install another vendor's builds (CUDA, XPU), found when the project has a
    # ROCm path: findings in them are folded into one line per pyproject.
    vendor_extras: tuple[VendorExtras, ...] = ()
    # Where the project builds CUDA extensions through torch.utils.cpp_extension, which
    # hipifies their sources itself on a ROCm PyTorch (project/hipify.py); empty when none.
    torch_hipify: tuple[Evidence, ...] = ()
    # Where the project builds its torch extensions, when it builds them only as CppExtension
    # (project/hipify.py): torch hipifies none of their sources, so their renames stay work.
    torch_cpp_only: tuple[Evidence, ...] = ()
    # Folders a CMake build compiles as CUDA itself ("" for the root): torch never hipifies them.
    native_cuda_dirs: tuple[str, ...] = ()
    # (path prefix, tier) pairs, most specific first; files under none are product code.
    tiers: tuple[tuple[str, Tier], ...] = ()
    notes: tuple[str, ...] = field(default=())  # what the model could not work out, said plainly

    @property
    def supports_rocm(self) -> bool:
        return bool(self.rocm_support)

    def tier_of(self, rel: str) -> Tier:
        """The tier of ``rel``: the model's own prefixes first, then the name table's."""
        for prefix, tier in self.tiers:
            if rel == prefix.rstrip("/") or rel.startswith(prefix.rstrip("/") + "/"):
                return tier
        return tier_by_name(rel) or Tier.PRODUCT

    def hipified_by_torch(self, rel: str) -> bool:
        """Whether torch's hipify renames ``rel``'s CUDA names when the project builds."""
        if not self.torch_hipify:
            return False
        return not any(
            not folder or rel.startswith(folder.rstrip("/") + "/")
            for folder in self.native_cuda_dirs
        )

    def component_of(self, rel: str) -> Component | None:
        """The most specific component ``rel`` belongs to, or None."""
        found = [c for c in self.components if c.contains(rel)]
        return max(found, key=lambda c: len(c.path), default=None)


EMPTY_MODEL = ProjectModel()
