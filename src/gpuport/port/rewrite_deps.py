"""``gpuport port`` for dependency files: the GP1xx rules' text edits, applied in place.

Each rewriter reads the file with its ``gpuport.syntax`` reader, asks the dependency scanner for
its hits (``gpuport.scan.deps.analyze``), and applies the edits of those the port converts:
comments, order, quoting and line endings stay as they were. Dropped requirements are commented
out with a note, never deleted. What cannot be converted is listed as an UNCONVERTED change with
the reason. A rewritten file produces no further mechanical hit, so rewriting it again changes
nothing.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence

import yaml

from gpuport.edits import ChangeStatus, TextEdit
from gpuport.files import FileKind
from gpuport.port.model import Change, FileResult, Rewriter
from gpuport.scan.deps import NOTE_PREFIX, DependencyHit, analyze
from gpuport.syntax.conda import parse_conda_env
from gpuport.syntax.dependencies import DependencyFile, FileFormat, Reader
from gpuport.syntax.pipfile import parse_pipfile
from gpuport.syntax.pyproject import parse_pyproject
from gpuport.syntax.requirements import parse_requirements
from gpuport.syntax.text import SplitLines

__all__ = [
    "NOTE_PREFIX",
    "REWRITERS",
    "Rewriter",
    "rewrite_conda_env",
    "rewrite_pipfile",
    "rewrite_pyproject",
    "rewrite_requirements",
]


def rewrite_requirements(
    rel: str, text: str, rocm_version: str, *, read: Reader | None = None
) -> FileResult:
    """Port a pip requirements or constraints file (``read`` lets ``-r`` includes give context)."""
    dep = parse_requirements(text, rel, read=read)
    return _rewrite(rel, text, FileKind.REQUIREMENTS, dep, rocm_version, FileFormat.PIP)


def rewrite_pyproject(rel: str, text: str, rocm_version: str) -> FileResult:
    """Port a pyproject.toml: PEP 621 strings, Poetry tables, uv/Poetry/PDM index URLs."""
    dep = parse_pyproject(text, rel)
    return _rewrite(rel, text, FileKind.PYPROJECT, dep, rocm_version, FileFormat.TOML)


def rewrite_pipfile(rel: str, text: str, rocm_version: str) -> FileResult:
    """Port a Pipfile: [[source]] URLs and [packages] tables."""
    dep = parse_pipfile(text, rel)
    return _rewrite(rel, text, FileKind.PIPFILE, dep, rocm_version, FileFormat.TOML)


def rewrite_conda_env(
    rel: str, text: str, rocm_version: str, *, read: Reader | None = None
) -> FileResult:
    """Port a conda environment file: CUDA packages out, PyTorch from pip's ROCm index."""
    dep = parse_conda_env(text, rel, read=read)
    return _rewrite(rel, text, FileKind.CONDA_ENV, dep, rocm_version, FileFormat.YAML)


REWRITERS: dict[FileKind, Rewriter] = {
    FileKind.REQUIREMENTS: rewrite_requirements,
    FileKind.PYPROJECT: rewrite_pyproject,
    FileKind.PIPFILE: rewrite_pipfile,
    FileKind.CONDA_ENV: rewrite_conda_env,
}


def _rewrite(
    rel: str,
    text: str,
    kind: FileKind,
    dep: DependencyFile,
    rocm_version: str,
    style: FileFormat,
) -> FileResult:
    result = FileResult(path=rel, new_path=rel, kind=kind.value, original=text, translated=None)
    fatal = [p for p in dep.problems if not p.partial]
    if fatal:
        result.skipped = fatal[0].reason + (f" (line {fatal[0].line})" if fatal[0].line else "")
        return result
    for problem in dep.problems:
        if problem.path == rel:
            result.changes.append(
                Change(
                    problem.line,
                    0,
                    "input",
                    _line_at(text, problem.line),
                    _line_at(text, problem.line),
                    ChangeStatus.UNCONVERTED,
                    note=problem.reason,
                )
            )
    lines = _Lines(text)
    applied: list[TextEdit] = []
    to_pip: list[DependencyHit] = []
    # Right to left within a line, as the changes are listed.
    for hit in sorted(analyze(dep, rocm_version), key=lambda h: (h.line, -h.column)):
        before = lines.line(hit.line).strip()
        if hit.status is ChangeStatus.UNCONVERTED:
            result.changes.append(_change(hit, before, before, hit.status, hit.note))
            continue
        if any(e.start < a.end and a.start < e.end for e in hit.edits for a in lines.edits_near(e)):
            note = "another change overlaps this one; left as it was"
            result.changes.append(_change(hit, before, before, ChangeStatus.UNCONVERTED, note))
            continue
        applied.extend(hit.edits)
        lines.add(hit.edits)
        if hit.pip_line:
            to_pip.append(hit)
            after = f"pip: {hit.pip_line}"
        else:
            after = lines.line_after(hit)
        result.changes.append(_change(hit, before, after, hit.status, hit.note))
    first_edits: list[TextEdit] = []
    if to_pip:
        added = _pip_section(text, dep, to_pip)
        if isinstance(added, str):
            # Without a place for the pip lines, commenting the conda ones out would lose them.
            return _unconverted_copy(result, text, added)
        first_edits.append(added)
    new_text = _apply(text, [*first_edits, *applied])
    invalid = _still_parses(new_text, style)
    if invalid:
        return _unconverted_copy(result, text, f"the rewritten file would not parse ({invalid})")
    result.translated = new_text if new_text != text else None
    result.changes.sort(key=lambda c: (c.line, c.column, c.rule_id))
    return result


def _unconverted_copy(result: FileResult, text: str, reason: str) -> FileResult:
    """Give up on the whole file: every change becomes UNCONVERTED with ``reason``."""
    changes = [
        Change(
            c.line,
            c.column,
            c.family,
            c.before,
            c.before,
            ChangeStatus.UNCONVERTED,
            c.note if c.status is ChangeStatus.UNCONVERTED else reason,
            c.rule_id,
        )
        for c in result.changes
    ]
    return FileResult(result.path, result.new_path, result.kind, text, None, changes)


def _change(hit: DependencyHit, before: str, after: str, status: ChangeStatus, note: str) -> Change:
    return Change(hit.line, hit.column, hit.family, before, after, status, note, hit.rule.id)


def _line_at(text: str, line: int) -> str:
    lines = text.splitlines()
    return lines[line - 1] if 0 < line <= len(lines) else ""


# ---------------------------------------------------------------------------------------------
# Edits

# Where str.splitlines ends a line, as the readers count lines.
_LINE_BREAK_RE = re.compile(r"\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


def _apply(text: str, edits: Sequence[TextEdit]) -> str:
    """``text`` with non-overlapping ``edits``; insertions at one place keep their order."""
    out: list[str] = []
    done = 0
    for edit in sorted(edits, key=lambda e: (e.start, e.end)):
        out.append(text[done : edit.start])
        out.append(edit.text)
        done = max(done, edit.end)
    out.append(text[done:])
    return "".join(out)


class _Lines:
    """The original text's lines (as the readers count them) and the edits made so far on each."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.split = SplitLines(text)
        self.raw = self.split.raw
        self.starts = self.split.starts
        self.edits: dict[int, list[TextEdit]] = {}  # by the 1-based line they start on

    def line(self, number: int) -> str:
        return self.raw[number - 1].rstrip("\r\n") if 0 < number <= len(self.raw) else ""

    def number(self, offset: int) -> int:
        return self.split.number(offset)

    def add(self, edits: Sequence[TextEdit]) -> None:
        for edit in edits:
            self.edits.setdefault(self.number(edit.start), []).append(edit)

    def edits_near(self, edit: TextEdit) -> list[TextEdit]:
        """Edits made so far that start on the lines ``edit`` covers, or the line before."""
        first, last = self.number(edit.start), self.number(edit.end)
        return [e for n in range(first - 1, last + 1) for e in self.edits.get(n, ())]

    def line_after(self, hit: DependencyHit) -> str:
        """The hit's first line once the edits made so far are applied, stripped."""
        if not 0 < hit.line <= len(self.raw):
            return ""
        start = self.starts[hit.line - 1]
        end = start + len(self.line(hit.line))
        inside = [e for e in self.edits.get(hit.line, ()) if e.end <= end]
        segment = _apply(
            self.text[start:end], [TextEdit(e.start - start, e.end - start, e.text) for e in inside]
        )
        # The edits before the hit's start move it; its own line is the one it then falls on.
        at = hit.start - start
        at += sum(len(e.text) - (e.end - e.start) for e in inside if e.end <= hit.start)
        breaks = [m.end() for m in _LINE_BREAK_RE.finditer(segment) if m.end() <= at]
        line_start = breaks[-1] if breaks else 0
        found = _LINE_BREAK_RE.search(segment, line_start)
        return segment[line_start : found.start() if found else len(segment)].strip()


def _pip_section(text: str, dep: DependencyFile, items: list[DependencyHit]) -> TextEdit | str:
    """The PyTorch packages taken out of conda, added to the ``pip:`` subsection; or why not."""
    layout = dep.conda_layout
    if layout is None or not layout.last_item_line:
        return "the environment has no dependency list to add a pip section to"
    wanted = [item.pip_line for item in items]
    index_line = items[0].pip_index
    entries = ([index_line] if index_line else []) + wanted
    if layout.pip_line:
        column = layout.pip_item_column or (layout.item_column + 2)
        anchor = layout.pip_last_line or layout.pip_line
        block = [" " * (column - 1) + f"- {entry}" for entry in entries]
    else:
        column = layout.item_column or 1
        anchor = layout.last_item_line
        has_pip = any(p.name == "pip" for p in dep.conda_packages)
        block = [] if has_pip else [" " * (column - 1) + "- pip"]
        block.append(" " * (column - 1) + "- pip:")
        block += [" " * (column + 1) + f"- {entry}" for entry in entries]
    lines = SplitLines(text)
    raw, newline = lines.raw, lines.newline
    at = lines.starts[min(anchor, len(raw))]
    ending = (
        "" if anchor > len(raw) or raw[anchor - 1] != raw[anchor - 1].rstrip("\r\n") else newline
    )
    return TextEdit(at, at, ending + "".join(line + newline for line in block))


def _still_parses(text: str, style: FileFormat) -> str:
    if style is FileFormat.TOML:
        try:
            tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            return str(exc)
    elif style is FileFormat.YAML:
        try:
            list(yaml.compose_all(text, Loader=yaml.SafeLoader))
        except yaml.YAMLError as exc:
            return " ".join(str(exc).split())
    return ""
