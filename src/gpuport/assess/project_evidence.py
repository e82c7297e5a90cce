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
from functools import cache
from pathlib import Path

from gpuport.files import FileKind, ProjectFile, SourceText, WalkOptions, read_text, walk
from gpuport.findings import Tier
from gpuport.kb.decision_factors import InstanceType, decision_factors, instance_types
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
    text, line, counted = source.text, 1, 0
    for match in _IMPORT.finditer(text):
        module = match.group(1) or match.group(2)
        line += text.count("\n", counted, match.start())  # from the last match on, not from 0
        counted = match.start()
        found.imports[module].append(Place(source.file.rel, line, f"import {module}"))


def _may_match(pattern: re.Pattern[str], text: str, lowered: str | None) -> bool:
    """False only where no line of ``text`` can match ``pattern``: one look at the whole file.

    The look is for a looser pattern (:func:`_loose`): whatever matches inside a line matches
    it inside the text, so a file it misses holds no match; a file it finds is read line by
    line as before. ``lowered`` is ``text`` in lower case where ``text`` is ASCII.
    """
    loose, folded = _loose(pattern)
    if folded:
        if lowered is None:
            return _multiline(pattern).search(text) is not None
        return loose.search(lowered) is not None
    return loose.search(text) is not None


@cache
def _multiline(pattern: re.Pattern[str]) -> re.Pattern[str]:
    return re.compile(pattern.pattern, pattern.flags | re.MULTILINE)


@cache
def _loose(pattern: re.Pattern[str]) -> tuple[re.Pattern[str], bool]:
    """A pattern that matches wherever ``pattern`` matches inside some line, fast to search.

    ``^`` and ``$`` mean a line's ends (re.MULTILINE); a leading ``\\b`` or look-behind goes
    (it only narrows, and it keeps re from skipping ahead to the first literal). An ASCII
    IGNORECASE pattern becomes its lower case without the flag, for lower-cased ASCII text
    (second value True). Anything looking at the string's own ends (\\A, \\Z) keeps the
    pattern as it is.
    """
    source, flags = pattern.pattern, pattern.flags | re.MULTILINE
    if "\\A" in source or "\\Z" in source:
        return _multiline(pattern), False
    source = _without_leading_assertion(source)
    folded = bool(flags & re.IGNORECASE and source.isascii() and not re.search(r"\\[A-Z]", source))
    if folded:
        source, flags = source.lower(), flags & ~re.IGNORECASE
    try:
        return re.compile(source, flags), folded
    except re.error:  # what is left does not stand alone: search with the pattern itself
        return _multiline(pattern), False


def _without_leading_assertion(source: str) -> str:
    """``source`` less a leading ``\\b`` or ``(?<!...)`` / ``(?<=...)``, as often as they come."""
    while True:
        if source.startswith("\\b"):
            source = source[2:]
        elif source.startswith(("(?<!", "(?<=")):
            end = _group_end(source)
            if end is None:
                return source
            source = source[end:]
        else:
            return source


def _group_end(source: str) -> int | None:
    """The index just past the group that opens ``source``; None where it cannot tell."""
    depth, index, in_class = 0, 0, False
    while index < len(source):
        char = source[index]
        if char == "\\":
            index += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            if source[index + 1 : index + 2] == "]":  # "[]...]": a literal ] first
                index += 1
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return index + 1
        index += 1
    return None


def _read_lines(
    source: SourceText,
    found: ProjectEvidence,
    factors: list[tuple[str, tuple[re.Pattern[str], ...]]],
) -> None:
    rel, text = source.file.rel, source.text
    python = source.file.kind is FileKind.PYTHON
    lowered = text.lower() if text.isascii() else None
    # Most files hold no marker and no GPU target: those are not read line by line at all.
    factors = [
        (factor_id, kept)
        for factor_id, patterns in factors
        if (kept := tuple(p for p in patterns if _may_match(p, text, lowered)))
    ]
    targets = None if python else _Targets.of(text, lowered)
    if not factors and targets is None:
        return
    for number, line in enumerate(text.splitlines(), 1):
        for factor_id, patterns in factors:
            hit = next((p for p in patterns if p.search(line)), None)
            if hit is not None:
                found.markers[factor_id].append(Place(rel, number, _short(line)))
        if targets is not None:  # GPU targets live in build, container and deployment files
            _read_targets(rel, number, line, found, targets)


@dataclass(frozen=True, slots=True)
class _Targets:
    """Which of the GPU-target patterns can match somewhere in a file."""

    arch_list: bool
    sm: bool
    node_label: bool
    instances: tuple[InstanceType, ...]

    @staticmethod
    def of(text: str, lowered: str | None) -> _Targets | None:
        """None where no line of ``text`` can name a GPU target."""
        found = _Targets(
            _may_match(_ARCH_LIST, text, lowered),
            _may_match(_SM, text, lowered),
            _may_match(_NODE_LABEL, text, lowered),
            tuple(i for i in instance_types() if _may_match(i.pattern, text, lowered)),
        )
        if not (found.arch_list or found.sm or found.node_label or found.instances):
            return None
        return found


def _read_targets(
    rel: str, number: int, line: str, found: ProjectEvidence, targets: _Targets
) -> None:
    text = _short(line)
    match = _ARCH_LIST.search(line) if targets.arch_list else None
    if match:
        for arch in _arch_numbers(match.group(1)):
            found.current_gpus[f"sm_{arch}"].append(Place(rel, number, text))
    for sm in _SM.finditer(line) if targets.sm else ():
        found.current_gpus[f"sm_{sm.group(1)}"].append(Place(rel, number, text))
    label = _NODE_LABEL.search(line) if targets.node_label else None
    if label:
        word = _GPU_WORD.search(label.group(1))
        gpu = find_gpu(word.group(1).lower().removesuffix("g")) if word else None
        if gpu is not None and gpu.vendor == "nvidia":
            found.current_gpus[gpu.id].append(Place(rel, number, text))
    for instance in targets.instances:
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
