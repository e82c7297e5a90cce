"""What a scanner is: a function from one file's text (and the enabled rules) to findings and input problems.

Scanner modules register themselves with :func:`scanner`; the engine dispatches each file
to the scanners of its kind. A scanner module is imported the first time a file of one of its
kinds is scanned (:data:`SCANNER_MODULES`): a tree of Python files never loads the CUDA, build
and container rules, about a fifth of ``gpuport scan``'s start-up
(benchmarks/results/python_vs_bandit.md). A scanner never prints and never raises for bad
input: it yields a :class:`~gpuport.findings.Skipped` naming the file and line instead.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from gpuport.files import FileKind, SourceText
from gpuport.findings import CallFacts, Finding, Skipped

ScanOutput = Iterable[Finding | Skipped | CallFacts]
# (the file's text, the ids of the enabled rules): a scanner may skip work no enabled rule
# needs; the engine drops findings of rules that are not enabled either way.
ScanFunction = Callable[[SourceText, frozenset[str]], ScanOutput]


@dataclass(frozen=True, slots=True)
class FileScanner:
    name: str
    kinds: frozenset[FileKind]
    function: ScanFunction


_SCANNERS: list[FileScanner] = []

# Each kind of file -> the modules whose scanners read it, in the order they run.
# tests/core/test_lazy_scanners.py checks that every registered scanner's kinds list its module.
_TARGETS = "gpuport.scan.build.gpu_targets"
_BUILD = ("gpuport.scan.build.analyze", _TARGETS)
_CONTAINERS = "gpuport.scan.containers.analyze"
_DEPS = ("gpuport.scan.deps.analyze",)
_PYTHON = "gpuport.scan.python.scanner"
SCANNER_MODULES: dict[FileKind, tuple[str, ...]] = {
    FileKind.PYTHON: (_TARGETS, _PYTHON),
    FileKind.SETUP_PY: (*_DEPS, _TARGETS, _PYTHON),
    FileKind.NOTEBOOK: (_PYTHON,),
    FileKind.CUDA: ("gpuport.scan.kernels",),
    FileKind.CXX: ("gpuport.scan.kernels",),
    FileKind.REQUIREMENTS: _DEPS,
    FileKind.PYPROJECT: _DEPS,
    FileKind.SETUP_CFG: _DEPS,
    FileKind.CONDA_ENV: _DEPS,
    FileKind.PIPFILE: _DEPS,
    FileKind.DOCKERFILE: (_TARGETS, _CONTAINERS),
    FileKind.COMPOSE: (_CONTAINERS,),
    FileKind.YAML: (_TARGETS, _CONTAINERS),
    FileKind.SHELL: (*_BUILD, _CONTAINERS),
    FileKind.CMAKE: _BUILD,
    FileKind.MAKEFILE: _BUILD,
}
_LOADED: set[FileKind] = set()  # the kinds whose scanner modules were imported


def scanner(*kinds: FileKind, name: str | None = None) -> Callable[[ScanFunction], ScanFunction]:
    """Register ``function`` as the scanner for files of ``kinds``."""

    def register(function: ScanFunction) -> ScanFunction:
        _SCANNERS.append(FileScanner(name or function.__name__, frozenset(kinds), function))
        return function

    return register


def scanners_for(kind: FileKind) -> list[FileScanner]:
    """The scanners of ``kind``, their modules imported on first use, in a fixed order."""
    modules = SCANNER_MODULES.get(kind, ())
    if kind not in _LOADED:
        for name in modules:
            importlib.import_module(name)
        _LOADED.add(kind)
    found = [s for s in _SCANNERS if kind in s.kinds]
    found.sort(key=lambda s: _module_rank(s, modules))  # about 1 µs a file: no cache kept
    return found


def _module_rank(found: FileScanner, modules: tuple[str, ...]) -> int:
    module = found.function.__module__
    for rank, name in enumerate(modules):
        if module == name or module.startswith(name + "."):
            return rank
    return len(modules)
