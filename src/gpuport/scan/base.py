"""What a scanner is: a function from one file's text (and the enabled rules) to findings and input problems.

Scanner modules register themselves with :func:`scanner`; the engine dispatches each file
to the scanners of its kind. A scanner never prints and never raises for bad input: it
yields a :class:`~gpuport.findings.Skipped` naming the file and line instead.
"""

from __future__ import annotations

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


def scanner(*kinds: FileKind, name: str | None = None) -> Callable[[ScanFunction], ScanFunction]:
    """Register ``function`` as the scanner for files of ``kinds``."""

    def register(function: ScanFunction) -> ScanFunction:
        _SCANNERS.append(FileScanner(name or function.__name__, frozenset(kinds), function))
        return function

    return register


def scanners_for(kind: FileKind) -> list[FileScanner]:
    return [s for s in _SCANNERS if kind in s.kinds]
