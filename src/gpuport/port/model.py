"""Result types of ``gpuport port``, shared by the source translator and the file rewriters."""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field

from gpuport.edits import ChangeStatus


@dataclass(frozen=True, slots=True)
class Change:
    """One thing the port did (or could not do) at one place in one file."""

    line: int  # 1-based line in the original file
    column: int  # 1-based column; 0 for whole-line changes
    family: (
        str  # API family or file aspect: "runtime", "cublas", "header", "warp", "docker-base"...
    )
    before: str  # the original text (an identifier, a line, an image name)
    after: str  # the new text; equal to ``before`` when unconverted
    status: ChangeStatus
    note: str = ""  # why review is needed, or why it could not be converted
    rule_id: str = ""  # the scan rule this relates to, when there is one


@dataclass(slots=True)
class FileResult:
    """The port of one file: its new text (None when unchanged or skipped) and the changes."""

    path: str  # relative to the project root, forward slashes
    new_path: str  # where the translation goes (".cu" stays ".cu"; may be renamed with --rename)
    kind: str  # FileKind value: "cuda", "cxx", "requirements", "dockerfile", ...
    original: str
    translated: str | None
    changes: list[Change] = field(default_factory=list)
    skipped: str = ""  # reason, when the file was not translated at all
    bom: bool = False  # the file begins with a UTF-8 byte-order mark, kept out of both texts
    # whether the texts differed, kept by release_texts() once they are gone
    changed_when_released: bool | None = field(default=None, repr=False)

    @property
    def changed(self) -> bool:
        if self.changed_when_released is not None:
            return self.changed_when_released
        return self.translated is not None and self.translated != self.original

    def release_texts(self) -> None:
        """Drop the original and the translation (written already), keeping ``changed``, so that
        a streamed port holds one file's texts at a time (issue 10)."""
        self.changed_when_released = self.changed
        self.original = ""
        self.translated = None

    def count(self, status: ChangeStatus) -> int:
        return sum(1 for c in self.changes if c.status is status)


# `(rel, text, rocm_version) -> FileResult`: how a file around the sources is ported (the
# dependency rewriters' and the container/build rewriters' shared signature).
Rewriter = Callable[[str, str, str], FileResult]


class CheckStatus(enum.StrEnum):
    BOTH_COMPILE = "both-compile"
    TRANSLATION_FAILS = "translation-fails"
    ORIGINAL_FAILS = "original-fails"  # not our fault
    NOT_COMPILED = "not-compiled"  # compiler or a header missing: says which


@dataclass(frozen=True, slots=True)
class CompileCheck:
    path: str
    status: CheckStatus
    original_error: str = ""  # first error line of nvcc, if any
    translation_error: str = ""  # first error line of hipcc, if any
    detail: str = ""  # e.g. "hipcc not found", "header hipblas/hipblas.h unavailable"


@dataclass(slots=True)
class PortResult:
    """Everything one ``gpuport port`` run did, in path order."""

    root: str
    rocm_version: str
    files: list[FileResult] = field(default_factory=list)
    checks: list[CompileCheck] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # input problems: "path:line: why"
    # What the reader must know about the run as a whole, e.g. that --check retargeted the
    # translation to the older ROCm release of the hipcc it compiles with.
    notes: list[str] = field(default_factory=list)
