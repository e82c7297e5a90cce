"""What a dependency rule found, and the fix: :class:`DependencyHit`, a Hit with what dependency files need.

A dependency rule's verdict on one requirement, index or conda entry is a
:class:`~gpuport.edits.Hit` whose ``edits`` fix it in place. Three things about dependency files
do not fit a plain Hit, so :class:`DependencyHit` adds them:

- the location as the reader reports it (``line``, ``column``, ``end_line``, and ``path``, which
  is an included file's own path for records found there), because a reader may know only the
  line (TOML sources: column 0) and the finding keeps saying so;
- ``mechanical``: whether the rule's fix here is an edit gpuport knows. The finding says so even
  where the port must leave this one place alone (a TOML array element sharing its line with
  others), which the hit tells with status UNCONVERTED and a note saying why;
- ``pip_line`` and ``pip_index``: a conda package that moves to pip (PyTorch, which conda has no
  ROCm build of) is commented out by its edits, and the port adds ``pip_line`` to the
  environment's ``pip:`` section, one section for all of them, after ``pip_index`` (the index
  option that section still needs).

The builders below make the three kinds of hit the rules produce: left to a person
(:func:`unconverted`), substrings replaced (:func:`replacing`) and lines commented out with a
note above (:func:`commenting_out`).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass

from gpuport.edits import ChangeStatus, Hit, TextEdit
from gpuport.findings import Confidence, Finding, Fix, Severity
from gpuport.rules import Rule
from gpuport.syntax.dependencies import (
    CondaPackage,
    DependencyFile,
    FileFormat,
    Form,
    IndexSource,
    Requirement,
)
from gpuport.syntax.text import SplitLines

# A commented-out line gets a note above it that starts with this.
NOTE_PREFIX = "gpuport:"


@dataclass(frozen=True, slots=True)
class DependencyHit(Hit):
    """A :class:`~gpuport.edits.Hit` in a dependency file (see the module's docstring).

    ``start``/``end`` span the record's lines in the text of ``path``; ``after`` is the record's
    first line as the fix leaves it (the finding's replacement); for UNCONVERTED hits ``note`` is
    the message, or why the port leaves a mechanical fix alone here.
    """

    path: str = ""
    line: int = 0
    column: int = 0  # 1-based; 0 when the reader knows only the line
    end_line: int = 0
    subject: str = ""  # the package or URL the hit is about
    severity: Severity | None = None  # the rule's own when None
    mechanical: bool = False
    pip_line: str = ""  # conda -> pip: the pip requirement that replaces the conda package
    pip_index: str = ""  # conda -> pip: the index option the pip section needs ("" if it has one)

    def finding(self) -> Finding:
        """The scan's finding: the reader's location, and the fixed line as the replacement."""
        return self.rule.finding(
            self.path,
            self.line,
            self.column,
            message=self.message,
            fix=Fix(self.fix, self.mechanical, self.after or None),
            end_line=self.end_line or self.line,
            severity=self.severity,
            confidence=self.confidence,
        )


class Source:
    """A dependency file and its lines: what the rules read and what hits point into."""

    def __init__(self, file: DependencyFile) -> None:
        self.file = file
        self.lines = SplitLines(file.text)


@dataclass(frozen=True, slots=True)
class Place:
    """Where a hit is: a record of one dependency file, and what it is about."""

    file: DependencyFile
    lines: SplitLines  # the file's lines, as counted by its reader
    line: int
    column: int
    end_line: int
    family: str  # what aspect of the file: "local-version", "index", "package", "conda"...
    subject: str
    form: Form | None = None  # how a requirement is written; None for indexes and conda entries

    @classmethod
    def of_requirement(cls, source: Source, record: Requirement, family: str) -> Place:
        return cls(
            source.file,
            source.lines,
            record.line,
            record.column,
            record.end_line,
            family,
            record.key,
            record.form,
        )

    @classmethod
    def of_index(cls, source: Source, record: IndexSource, family: str) -> Place:
        return cls(
            source.file, source.lines, record.line, record.column, record.line, family, record.url
        )

    @classmethod
    def of_conda(cls, source: Source, record: CondaPackage, family: str) -> Place:
        return cls(
            source.file, source.lines, record.line, record.column, record.line, family, record.name
        )


def _span(place: Place) -> tuple[int, int]:
    lines = place.lines
    start = lines.start(place.line) + min(max(place.column - 1, 0), len(lines.line(place.line)))
    return start, max(start, lines.end(max(place.end_line, place.line)))


def _hit(
    rule: Rule,
    place: Place,
    message: str,
    status: ChangeStatus,
    edits: tuple[TextEdit, ...] = (),
    *,
    note: str,
    fix: str,
    after: str = "",
    confidence: Confidence | None,
    severity: Severity | None = None,
    mechanical: bool = False,
    pip_line: str = "",
    pip_index: str = "",
) -> DependencyHit:
    """A hit spanning ``place``'s record, located where its reader says it is."""
    start, end = _span(place)
    return DependencyHit(
        rule,
        start,
        end,
        message,
        place.family,
        status,
        edits,
        note=note,
        fix=fix,
        after=after,
        confidence=confidence,
        path=place.file.path,
        line=place.line,
        column=place.column,
        end_line=place.end_line,
        subject=place.subject,
        severity=severity,
        mechanical=mechanical,
        pip_line=pip_line,
        pip_index=pip_index,
    )


def unconverted(
    rule: Rule,
    place: Place,
    message: str,
    fix: str,
    *,
    severity: Severity | None = None,
    confidence: Confidence | None = None,
) -> DependencyHit:
    """A hit a person has to fix: the port lists it, with the message as its note."""
    return _hit(
        rule,
        place,
        message,
        ChangeStatus.UNCONVERTED,
        note=message,
        fix=fix,
        confidence=confidence,
        severity=severity,
    )


def replacing(
    rule: Rule,
    place: Place,
    message: str,
    fix: str,
    replacements: tuple[tuple[str, str], ...],
    *,
    review: str = "",
    confidence: Confidence | None = None,
) -> DependencyHit:
    """A hit fixed by replacing each ``before`` with ``after``, first found from the record on.

    NEEDS_REVIEW when ``review`` says what to check; UNCONVERTED (the fix still mechanical)
    when a ``before`` is not in the record's lines.
    """
    lines = place.lines
    first = lines.line(place.line)
    shown = first
    for before, after in replacements:
        shown = shown.replace(before, after, 1)
    edits: list[TextEdit] = []
    note = review
    status = ChangeStatus.NEEDS_REVIEW if review else ChangeStatus.CONVERTED
    for before, after in replacements:
        found = _find_in_lines(lines, place, before)
        if found < 0 or any(found < e.end and e.start < found + len(before) for e in edits):
            edits, status = [], ChangeStatus.UNCONVERTED
            note = f"could not find {before!r} on line {place.line}; left as it was"
            break
        edits.append(TextEdit(found, found + len(before), after))
    return _hit(
        rule,
        place,
        message,
        status,
        tuple(edits),
        note=note,
        fix=fix,
        after=shown if first else "",
        confidence=confidence,
        mechanical=True,
    )


def _find_in_lines(lines: SplitLines, place: Place, before: str) -> int:
    """Offset of ``before`` in the record's lines, from its column on the first; -1 if absent."""
    for number in range(place.line, max(place.end_line, place.line) + 1):
        text = lines.line(number)
        skip = max(place.column - 1, 0) if number == place.line else 0
        found = text.find(before, skip)
        if found >= 0:
            return lines.start(number) + found
    return -1


def commenting_out(
    rule: Rule,
    place: Place,
    message: str,
    fix: str,
    note: str,
    *,
    review: str = "",
    pip_line: str = "",
    pip_index: str = "",
    confidence: Confidence | None = None,
) -> DependencyHit:
    """A hit fixed by commenting the record's lines out, with ``# gpuport: note`` above them.

    UNCONVERTED (the fix still mechanical) where commenting out would break the file.
    """
    lines = place.lines
    first = lines.line(place.line)
    indent = first[: len(first) - len(first.lstrip())]
    problem = _cannot_comment_out(place, first)
    edits: tuple[TextEdit, ...] = ()
    if not problem:
        line_start = lines.start(place.line)
        marks = [TextEdit(line_start, line_start, f"{indent}# {NOTE_PREFIX} {note}{lines.newline}")]
        for number in range(place.line, max(place.end_line, place.line) + 1):
            text = lines.line(number)
            own_indent = len(text) - len(text.lstrip())
            at = lines.start(number) + own_indent
            marks.append(TextEdit(at, at, "# "))
        edits = tuple(marks)
    if problem:
        status = ChangeStatus.UNCONVERTED
    else:
        status = ChangeStatus.NEEDS_REVIEW if review else ChangeStatus.CONVERTED
    return _hit(
        rule,
        place,
        message,
        status,
        edits,
        note=problem or review,
        fix=fix,
        after=f"{indent}# {first.lstrip()}" if first else "",
        confidence=confidence,
        mechanical=True,
        pip_line=pip_line,
        pip_index=pip_index,
    )


_TOML_ELEMENT_TAIL_RE = re.compile(r"^\s*,?\s*(#.*)?$")


def _cannot_comment_out(place: Place, line: str) -> str:
    """Why commenting the record's lines out would break the file; "" when it is safe."""
    if place.file.format is FileFormat.YAML and not line.lstrip().startswith("- "):
        return "the entry is not on a line of its own in a block list; remove it by hand"
    if place.file.format is not FileFormat.TOML:
        return ""
    # TOML lines may be commented out only when they hold one key or one array element.
    if place.form is Form.PEP508:
        body = line[place.column - 1 :] if place.column > 0 else ""
        end = body.find(body[0], 1) if body[:1] in ("'", '"') else -1
        rest = body[end + 1 :] if end > 0 else "?"
        if not line[: place.column - 1].strip() and _TOML_ELEMENT_TAIL_RE.match(rest):
            return ""
        return "other array elements share its line; remove it by hand"
    try:
        tomllib.loads(line.strip())
    except tomllib.TOMLDecodeError:
        return "its value spans several lines; remove it by hand"
    return ""
