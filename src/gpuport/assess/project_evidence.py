"""What the decision reads from the project's own files: dependencies, imports, GPU targets.

The scan reports what breaks; the decision also needs what the project *is*: which packages it
depends on (tensorrt-llm, vllm, tensorflow...), what it imports, which NVIDIA GPUs it targets
today (``TORCH_CUDA_ARCH_LIST``, ``CMAKE_CUDA_ARCHITECTURES``, ``-arch=sm_XX``, Kubernetes node
selectors, cloud instance types) and where its training and serving code live. Product files
only (the project model's tiers); read through the same walk and read policy as the scan, never
executed, with a cap on what is read.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from gpuport.files import FileKind, ProjectFile, SourceText, WalkOptions, read_text, walk
from gpuport.findings import Tier
from gpuport.kb.decision_factors import decision_factors, instance_types
from gpuport.kb.packages import normalize_name
from gpuport.plan.catalog import catalog, find_gpu
from gpuport.project.model import EMPTY_MODEL, ProjectModel
from gpuport.scan.deps.analyze import DEPENDENCY_KINDS as SCANNED_DEPENDENCY_KINDS
from gpuport.scan.deps.analyze import parse_source

# Past these, the rest of the project is not read for the decision (it still is for the scan):
# the evidence it needs shows in the first files of any size.
MAX_FILES = 5000
MAX_FILE_BYTES = 2 * 1024 * 1024
DEPENDENCY_KINDS = frozenset(SCANNED_DEPENDENCY_KINDS)  # the files the dependency scanner reads
TEXT_KINDS = DEPENDENCY_KINDS | {
    FileKind.PYTHON,
    FileKind.DOCKERFILE,
    FileKind.COMPOSE,
    FileKind.YAML,
    FileKind.SHELL,
    FileKind.CMAKE,
    FileKind.MAKEFILE,
    FileKind.CUDA,
    FileKind.CXX,
}
_IMPORT = re.compile(r"^\s*(?:from\s+([A-Za-z_]\w*)[\w.]*\s+import|import\s+([A-Za-z_]\w*))", re.M)
# NVIDIA targets as build files spell them: "8.0;9.0+PTX", "80;90a", sm_90a, compute_80.
_ARCH_LIST = re.compile(
    r"\b(?:TORCH_CUDA_ARCH_LIST|CMAKE_CUDA_ARCHITECTURES|CUDA_ARCHITECTURES)\b[\s=:\"'(]*"
    r"([0-9][0-9.;, +a-zA-Z]*)"
)
_SM = re.compile(r"\b(?:sm|compute)_(\d{2,3})[af]?\b")
_NODE_LABEL = re.compile(
    r"(?:nvidia\.com/gpu\.product|cloud\.google\.com/gke-accelerator|"
    r"karpenter\.k8s\.aws/instance-gpu-name|accelerator)\s*[:=]\s*[\"']?([\w.-]+)",
    re.IGNORECASE,
)
_GPU_WORD = re.compile(r"(h200|h100|h20|a100|a10g?|l40s|l4|b200|b300)", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Place:
    """Where something was read: a product file and line, and the words that show it."""

    path: str
    line: int
    text: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.text}" if self.line else f"{self.path}: {self.text}"

    @property
    def top(self) -> str:
        """The top-level folder the file sits in ("" for the project root)."""
        head, sep, _ = self.path.partition("/")
        return head if sep else ""


@dataclass(slots=True)
class ProjectEvidence:
    """What the decision found in the project's product files."""

    requirements: dict[str, list[Place]] = field(default_factory=lambda: defaultdict(list))
    imports: dict[str, list[Place]] = field(default_factory=lambda: defaultdict(list))
    markers: dict[str, list[Place]] = field(default_factory=lambda: defaultdict(list))
    # NVIDIA GPUs targeted today: catalog id or "sm_90" -> where it was read
    current_gpus: dict[str, list[Place]] = field(default_factory=lambda: defaultdict(list))
    cloud_instances: list[Place] = field(default_factory=list)
    cuda_files: list[str] = field(default_factory=list)  # product .cu/.cuh files
    files_read: int = 0
    capped: bool = False  # stopped at MAX_FILES

    def packages(self, names: Iterable[str]) -> list[Place]:
        """Where any of ``names`` is required."""
        return [p for n in names for p in self.requirements.get(normalize_name(n), [])]

    def imported(self, modules: Iterable[str]) -> list[Place]:
        return [p for m in modules for p in self.imports.get(m, [])]


def collect(
    root: Path, project: ProjectModel | None = None, exclude: tuple[str, ...] = ()
) -> ProjectEvidence:
    """Read the product files under ``root`` for what the decision needs."""
    model = project or EMPTY_MODEL
    found = ProjectEvidence()
    factors = [(f.id, f.markers) for f in decision_factors().values() if f.markers]
    for item in walk(root, WalkOptions(exclude=exclude, max_file_bytes=MAX_FILE_BYTES)):
        if not isinstance(item, ProjectFile) or item.kind not in TEXT_KINDS:
            continue
        if model.tier_of(item.rel) is not Tier.PRODUCT:
            continue
        if found.files_read >= MAX_FILES:
            found.capped = True
            break
        source = read_text(item, MAX_FILE_BYTES)
        if not isinstance(source, SourceText):
            continue
        found.files_read += 1
        if item.kind is FileKind.CUDA:
            found.cuda_files.append(item.rel)
        if item.kind in DEPENDENCY_KINDS:
            _read_dependencies(source, found)
        if item.kind is FileKind.PYTHON:
            _read_imports(source, found)
        _read_lines(source, found, factors)
    return found


def _read_dependencies(source: SourceText, found: ProjectEvidence) -> None:
    try:
        parsed = parse_source(source)
    except (ValueError, RecursionError):  # a file the scan reports as broken
        return
    for dep in parsed.walk():
        for requirement in dep.requirements:
            if requirement.key:
                shown = requirement.text or requirement.name
                place = Place(requirement.path or dep.path, requirement.line, shown)
                found.requirements[requirement.key].append(place)


def _read_imports(source: SourceText, found: ProjectEvidence) -> None:
    for match in _IMPORT.finditer(source.text):
        module = match.group(1) or match.group(2)
        line = source.text.count("\n", 0, match.start()) + 1
        found.imports[module].append(Place(source.file.rel, line, f"import {module}"))


def _read_lines(
    source: SourceText,
    found: ProjectEvidence,
    factors: list[tuple[str, tuple[re.Pattern[str], ...]]],
) -> None:
    rel = source.file.rel
    python = source.file.kind is FileKind.PYTHON
    for number, line in enumerate(source.text.splitlines(), 1):
        for factor_id, patterns in factors:
            hit = next((p for p in patterns if p.search(line)), None)
            if hit is not None:
                found.markers[factor_id].append(Place(rel, number, _short(line)))
        if python:
            continue  # GPU targets live in build, container and deployment files
        _read_targets(rel, number, line, found)


def _read_targets(rel: str, number: int, line: str, found: ProjectEvidence) -> None:
    text = _short(line)
    match = _ARCH_LIST.search(line)
    if match:
        for arch in _arch_numbers(match.group(1)):
            found.current_gpus[f"sm_{arch}"].append(Place(rel, number, text))
    for sm in _SM.finditer(line):
        found.current_gpus[f"sm_{sm.group(1)}"].append(Place(rel, number, text))
    label = _NODE_LABEL.search(line)
    if label:
        word = _GPU_WORD.search(label.group(1))
        gpu = find_gpu(word.group(1).lower().removesuffix("g")) if word else None
        if gpu is not None and gpu.vendor == "nvidia":
            found.current_gpus[gpu.id].append(Place(rel, number, text))
    for instance in instance_types():
        if instance.pattern.search(line):
            found.current_gpus[instance.gpu].append(Place(rel, number, text))
            found.cloud_instances.append(Place(rel, number, text))
            break


def _arch_numbers(text: str) -> list[str]:
    """ "8.0;9.0+PTX" -> ["80", "90"]; "80;90a" -> ["80", "90"]."""
    numbers = []
    for part in re.split(r"[;, ]+", text):
        part = part.strip().removesuffix("+PTX").rstrip("afPTX+")
        if re.fullmatch(r"\d\.\d", part):
            numbers.append(part.replace(".", ""))
        elif re.fullmatch(r"\d{2,3}", part):
            numbers.append(part)
    return numbers


def gpus_for_sm(sm: str) -> list[str]:
    """The catalog's NVIDIA GPUs of an ``sm_XX`` target, by short name."""
    return [g.short for g in catalog().values() if g.vendor == "nvidia" and g.arch_id == sm]


def _short(line: str, width: int = 100) -> str:
    text = " ".join(line.split())
    return text if len(text) <= width else text[: width - 1] + "…"
