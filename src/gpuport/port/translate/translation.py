"""One file's translation in progress: its text, the edits queued and the changes recorded.

The walk and the handlers of special names (warp, arch, includes, names) all work through a
:class:`Translation`: they queue edits (refused when they overlap one already queued) and
record changes at offsets, given their lines and columns as they come (mostly in file
order, so counting lines goes on from the previous change).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from operator import attrgetter
from typing import TYPE_CHECKING

from gpuport.edits import ChangeStatus, TextEdit
from gpuport.files import FileKind
from gpuport.port.apimap import ApiMap, Version
from gpuport.port.model import Change
from gpuport.port.translate.actions import Action, Rename
from gpuport.port.translate.syntax import Call, CodeIndex, parse_call
from gpuport.syntax.text import LineIndex

if TYPE_CHECKING:
    from gpuport.port.translate.arch import ArchUse
    from gpuport.port.translate.warp import MaskDefinitions

CONVERTED = ChangeStatus.CONVERTED
NEEDS_REVIEW = ChangeStatus.NEEDS_REVIEW
UNCONVERTED = ChangeStatus.UNCONVERTED

# Families whose renamed names show that a file is GPU code (and so needs hip_runtime.h).
_GPU_FAMILIES = ("runtime", "driver", "device")


@dataclass(frozen=True, slots=True)
class TranslateOptions:
    fix_warp_masks: bool = False  # also widen 32-lane masks of 64-bit types (32-bit ones always)
    translate_strings: bool = False  # rename CUDA names inside strings and comments too
    diagnostics: bool = True  # add the kernel scanner's findings as changes
    include_style: str = "auto"  # library headers: "nested", "flat" or "auto" (by target)


_SPAN = attrgetter("start", "end")


@dataclass(slots=True)
class Translation:
    rel: str
    text: str
    kind: FileKind
    target: Version
    options: TranslateOptions
    api: ApiMap
    actions: dict[str, Action]
    edits: list[TextEdit] = field(default_factory=list)  # in file order, never overlapping
    # the changes recorded, each with its offset (recorded mostly, not always, in file order)
    recorded: list[Change] = field(default_factory=list)
    recorded_at: list[int] = field(default_factory=list)
    includes_hip_runtime: bool = False
    uses_gpu_code: bool = False
    # the project's files by file name (includes.project_files): its own headers stay as they are
    project_files: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    hip_headers: dict[str, int] = field(default_factory=dict)  # HIP header -> where included
    widened_definitions: set[int] = field(default_factory=set)
    arch_plan: dict[int, ArchUse] | None = None  # built at the first __CUDA_ARCH__
    mask_definitions: MaskDefinitions | None = None  # built at the first mask that is a name
    no_angle_close_before: int = -1  # a '<' before this has no '>' on its line
    legacy_cublas: bool | None = None  # includes <cublas.h>, not <cublas_v2.h> (signatures.py)
    handled: set[int] = field(default_factory=set)  # names a call's rewrite already translated
    pending_inserts: list[tuple[int, str]] = field(default_factory=list)  # clashes.py's guards
    _line_pos: int = 0
    _line_no: int = 1
    _line_begins: int = 0  # where the line holding _line_pos starts
    _lone_cr: bool = False
    _line_starts: list[int] | None = None
    # code text, lines and brackets of the file, each made at first use
    index: CodeIndex = field(init=False)

    @property
    def code(self) -> str:
        """The text with comments and literal insides blanked (computed once per file)."""
        return self.index.code

    # -- positions

    def __post_init__(self) -> None:
        self.index = CodeIndex(self.text)
        self._lone_cr = "\r" in self.text and self.text.count("\r") != self.text.count("\r\n")

    def line_col(self, pos: int) -> tuple[int, int]:
        """1-based line and column of ``pos``, counting \\r\\n, \\r and \\n like the lexer.

        Changes come mostly in file order, so lines are counted on from the previous one (and
        the column from the last line break between them: reading back to the line's start
        for each change was quadratic on one long line); a line index (LineIndex, built once)
        answers the others, and every position of a text with lone \\r line breaks.
        """
        text = self.text
        if self._lone_cr or pos < self._line_pos:
            if self._line_starts is None:
                self._line_starts = LineIndex(text, lone_cr_breaks=True).starts
            index = bisect.bisect_right(self._line_starts, pos) - 1
            return index + 1, pos - self._line_starts[index] + 1
        since = self._line_pos
        newline = text.rfind("\n", since, pos)
        if newline >= 0:
            self._line_no += text.count("\n", since, newline + 1)
            self._line_begins = newline + 1
        self._line_pos = pos
        return self._line_no, pos - self._line_begins + 1

    # -- recording

    def edit(self, start: int, end: int, new: str) -> bool:
        """Queue a replacement of ``text[start:end]``; refused when it overlaps a queued one."""
        edits = self.edits
        if not edits or start >= edits[-1].end:  # the usual case: in file order
            edits.append(TextEdit(start, end, new))
            return True
        index = bisect.bisect_right(edits, (start, end), key=_SPAN)
        if index > 0 and edits[index - 1].end > start:
            return False
        if index < len(edits) and edits[index].start < end:
            return False
        edits.insert(index, TextEdit(start, end, new))
        return True

    def change(
        self,
        pos: int,
        family: str,
        before: str,
        after: str,
        status: ChangeStatus,
        note: str = "",
        *,
        whole_line: bool = False,
        rule_id: str = "",
    ) -> None:
        """Record a change at offset ``pos`` (at column 0 when it is about the whole line)."""
        line, column = self.line_col(pos)
        self.recorded.append(
            Change(line, 0 if whole_line else column, family, before, after, status, note, rule_id)
        )
        self.recorded_at.append(pos)

    def report(
        self, pos: int, family: str, text: str, status: ChangeStatus, note: str = ""
    ) -> None:
        """Record a change at ``pos`` that leaves ``text`` as it is (for a person to make)."""
        self.change(pos, family, text, text, status, note)

    def changes(self) -> list[Change]:
        """Every recorded change, in file order (in the order recorded at one offset)."""
        offsets = self.recorded_at
        if offsets == sorted(offsets):  # the usual case
            return list(self.recorded)
        order = sorted(range(len(offsets)), key=offsets.__getitem__)
        return [self.recorded[i] for i in order]

    def apply_action(self, name: str, start: int, end: int, action: Action) -> None:
        """Rename the CUDA name at ``start``, or report that it has no counterpart."""
        if self.is_member_or_foreign(start) or (self.handled and start in self.handled):
            return
        if isinstance(action, Rename):
            if self.edit(start, end, action.hip):
                self.change(start, action.family, name, action.hip, CONVERTED, action.note)
                if action.family in _GPU_FAMILIES:
                    self.uses_gpu_code = True
            return
        if action.call_only and not self.followed_by(end, "("):
            return
        self.report(start, action.family, name, UNCONVERTED, action.note)

    # -- looking around a name

    def followed_by(self, pos: int, what: str) -> bool:
        text = self.text
        n = len(text)
        while pos < n and text[pos] in " \t":
            pos += 1
        return text.startswith(what, pos)

    def is_member_or_foreign(self, pos: int) -> bool:
        """``obj.name``, ``ptr->name`` or ``ns::name``: a user's member or namespace, not CUDA's."""
        text = self.text
        if pos == 0 or text[pos - 1] not in ".>: \t":
            return False  # the common case
        p = pos
        while p > 0 and text[p - 1] in " \t":
            p -= 1
        before = text[max(0, p - 2) : p]  # the two characters before the name, blanks skipped
        if before.endswith(".") or before == "->":
            return True
        if before == "::":
            # `::cudaMalloc` (global scope) is CUDA's; `mylib::cudaMalloc` is not.
            p -= 2
            while p > 0 and text[p - 1] in " \t":
                p -= 1
            return p > 0 and (text[p - 1].isalnum() or text[p - 1] in "_$>")
        return False

    def call_arguments(self, name_end: int) -> Call | None:
        """Parse ``(a, b, c)`` after a function name: argument spans, or None."""
        return parse_call(self.index, name_end)

    def newline(self) -> str:
        m = re.search(r"\r\n|\r|\n", self.text)
        return m.group() if m else "\n"


def apply_edits(text: str, edits: list[TextEdit]) -> str:
    """``text`` with every queued edit made (``edits`` in file order, as queued)."""
    parts: list[str] = []
    pos = 0
    for edit in edits:
        parts.append(text[pos : edit.start])
        parts.append(edit.text)
        pos = edit.end
    parts.append(text[pos:])
    return "".join(parts)
