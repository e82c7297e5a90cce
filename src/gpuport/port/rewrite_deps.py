"""``gpuport port`` for dependency files: minimal text edits from the GP1xx scanner's advice.

Each rewriter parses the file with ``scan/deps_parse.py``, asks ``scan/deps.py`` for its
advice, and applies only the mechanical edits, in place: comments, order, quoting and line
endings stay as they were. Dropped requirements are commented out with a note, never deleted.
What cannot be converted is listed as an UNCONVERTED change with the reason. A rewritten file
produces no further mechanical advice, so rewriting it again changes nothing.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field

import yaml

from gpuport import kb
from gpuport.edits import ChangeStatus
from gpuport.files import FileKind
from gpuport.port.model import Change, FileResult
from gpuport.scan.deps import (
    CONDA_CUDA_PACKAGE,
    CONDA_NVIDIA_CHANNEL,
    CUDA_RUNTIME_WHEEL,
    Advice,
    Edit,
    advise,
    cuda_index,
    is_rocm_index,
    served_by,
)
from gpuport.syntax.conda import parse_conda_env
from gpuport.syntax.dependencies import DependencyFile, Form, IndexRole, Reader
from gpuport.syntax.pipfile import parse_pipfile
from gpuport.syntax.pyproject import parse_pyproject
from gpuport.syntax.requirements import parse_requirements

NOTE_PREFIX = "gpuport:"

# Why a line was commented out, by rule; the note sits on the line above it.
_DROP_NOTES = {
    CUDA_RUNTIME_WHEEL.id: "not needed on ROCm (CUDA-only package; ROCm torch brings its own libraries)",
    CONDA_NVIDIA_CHANNEL.id: "the nvidia channel only serves CUDA packages",
    CONDA_CUDA_PACKAGE.id: "CUDA package, not used on ROCm",
}
_TO_PIP_NOTE = "conda has no ROCm build of PyTorch; installed with pip from the ROCm index below"


class _Style:
    PIP = "pip"
    TOML = "toml"
    YAML = "yaml"


@dataclass(slots=True)
class _Buffer:
    """The file's lines (without their endings) and the lines to insert before some of them."""

    lines: list[str]
    endings: list[str]
    inserted_before: dict[int, list[str]] = field(default_factory=dict)  # 0-based index
    appended_after: dict[int, list[str]] = field(default_factory=dict)

    @classmethod
    def of(cls, text: str) -> _Buffer:
        raw = text.splitlines(keepends=True)
        lines = [line.rstrip("\r\n") for line in raw]
        endings = [line[len(stripped) :] for line, stripped in zip(raw, lines, strict=True)]
        return cls(lines, endings)

    def newline(self) -> str:
        return next((e for e in self.endings if e), "\n")

    def text(self) -> str:
        out: list[str] = []
        newline = self.newline()
        for index, (line, ending) in enumerate(zip(self.lines, self.endings, strict=True)):
            out.extend(extra + newline for extra in self.inserted_before.get(index, []))
            after = self.appended_after.get(index, [])
            if after and not ending:
                ending = newline
            out.append(line + ending)
            out.extend(extra + newline for extra in after)
        return "".join(out)


def rewrite_requirements(
    rel: str, text: str, rocm_version: str, *, read: Reader | None = None
) -> FileResult:
    """Port a pip requirements or constraints file (``read`` lets ``-r`` includes give context)."""
    dep = parse_requirements(text, rel, read=read)
    return _rewrite(rel, text, FileKind.REQUIREMENTS, dep, rocm_version, _Style.PIP)


def rewrite_pyproject(rel: str, text: str, rocm_version: str) -> FileResult:
    """Port a pyproject.toml: PEP 621 strings, Poetry tables, uv/Poetry/PDM index URLs."""
    dep = parse_pyproject(text, rel)
    return _rewrite(rel, text, FileKind.PYPROJECT, dep, rocm_version, _Style.TOML)


def rewrite_pipfile(rel: str, text: str, rocm_version: str) -> FileResult:
    """Port a Pipfile: [[source]] URLs and [packages] tables."""
    dep = parse_pipfile(text, rel)
    return _rewrite(rel, text, FileKind.PIPFILE, dep, rocm_version, _Style.TOML)


def rewrite_conda_env(
    rel: str, text: str, rocm_version: str, *, read: Reader | None = None
) -> FileResult:
    """Port a conda environment file: CUDA packages out, PyTorch from pip's ROCm index."""
    dep = parse_conda_env(text, rel, read=read)
    return _rewrite(rel, text, FileKind.CONDA_ENV, dep, rocm_version, _Style.YAML)


Rewriter = Callable[[str, str, str], FileResult]

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
    style: str,
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
    buffer = _Buffer.of(text)
    advice = advise(dep, rocm_version)
    # Right to left within a line, so that earlier columns stay valid.
    ordered = sorted(advice, key=lambda a: (a.line, -a.column))
    to_pip: list[Advice] = []
    for item in ordered:
        before = _line_at(text, item.line).strip()
        if item.edit is Edit.NONE:
            result.changes.append(
                _change(item, before, before, ChangeStatus.UNCONVERTED, item.message)
            )
            continue
        if item.edit is Edit.TO_PIP:
            failure = _comment_out(buffer, item, style, _TO_PIP_NOTE)
            if failure:
                result.changes.append(
                    _change(item, before, before, ChangeStatus.UNCONVERTED, failure)
                )
                continue
            to_pip.append(item)
            result.changes.append(
                _change(
                    item,
                    before,
                    f"pip: {item.pip_line}",
                    ChangeStatus.NEEDS_REVIEW if item.review else ChangeStatus.CONVERTED,
                    item.review,
                )
            )
            continue
        if item.edit is Edit.COMMENT_OUT:
            failure = _comment_out(
                buffer, item, style, _DROP_NOTES.get(item.rule.id, "not used on ROCm")
            )
        else:
            failure = _replace(buffer, item)
        if failure:
            result.changes.append(_change(item, before, before, ChangeStatus.UNCONVERTED, failure))
            continue
        after = buffer.lines[item.line - 1].strip()
        status = ChangeStatus.NEEDS_REVIEW if item.review else ChangeStatus.CONVERTED
        result.changes.append(_change(item, before, after, status, item.review))
    if to_pip:
        failure = _add_to_pip_section(buffer, dep, to_pip, rocm_version)
        if failure:
            # Without a place for the pip lines, commenting the conda ones out would lose them.
            return _unconverted_copy(result, text, failure)
    new_text = buffer.text()
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


def _change(item: Advice, before: str, after: str, status: ChangeStatus, note: str) -> Change:
    return Change(item.line, item.column, item.family, before, after, status, note, item.rule.id)


def _line_at(text: str, line: int) -> str:
    lines = text.splitlines()
    return lines[line - 1] if 0 < line <= len(lines) else ""


# ---------------------------------------------------------------------------------------------
# Edits


def _replace(buffer: _Buffer, item: Advice) -> str:
    """Apply the advice's substring replacements; a reason string when one is not found."""
    last = max(item.end_line or item.line, item.line)
    for before, after in item.replacements:
        for number in range(item.line, last + 1):
            text = buffer.lines[number - 1]
            start = max(item.column - 1, 0) if number == item.line else 0
            found = text.find(before, start)
            if found >= 0:
                buffer.lines[number - 1] = text[:found] + after + text[found + len(before) :]
                break
        else:
            return f"could not find {before!r} on line {item.line}; left as it was"
    return ""


_TOML_ELEMENT_TAIL_RE = re.compile(r"^\s*,?\s*(#.*)?$")


def _comment_out(buffer: _Buffer, item: Advice, style: str, note: str) -> str:
    """Comment the advice's lines out with a note above; a reason string when unsafe."""
    first = item.line - 1
    last = max(item.end_line or item.line, item.line) - 1
    line = buffer.lines[first]
    indent = line[: len(line) - len(line.lstrip())]
    if style == _Style.TOML:
        problem = _toml_line_alone(line, item)
        if problem:
            return problem
    if style == _Style.YAML and not line.lstrip().startswith("- "):
        return "the entry is not on a line of its own in a block list; remove it by hand"
    for number in range(first, last + 1):
        text = buffer.lines[number]
        own_indent = text[: len(text) - len(text.lstrip())]
        buffer.lines[number] = f"{own_indent}# {text.lstrip()}"
    buffer.inserted_before.setdefault(first, []).append(f"{indent}# {NOTE_PREFIX} {note}")
    return ""


def _toml_line_alone(line: str, item: Advice) -> str:
    """TOML lines may be commented out only when they hold one key or one array element."""
    stripped = line.strip()
    if item.form is Form.PEP508:
        body = line[item.column - 1 :] if item.column > 0 else ""
        end = body.find(body[0], 1) if body[:1] in ("'", '"') else -1
        rest = body[end + 1 :] if end > 0 else "?"
        if not line[: item.column - 1].strip() and _TOML_ELEMENT_TAIL_RE.match(rest):
            return ""
        return "other array elements share its line; remove it by hand"
    try:
        tomllib.loads(stripped)
    except tomllib.TOMLDecodeError:
        return "its value spans several lines; remove it by hand"
    return ""


def _add_to_pip_section(
    buffer: _Buffer, dep: DependencyFile, items: list[Advice], rocm_version: str
) -> str:
    """Add the PyTorch packages taken out of conda to the ``pip:`` subsection."""
    layout = dep.conda_layout
    if layout is None or not layout.last_item_line:
        return "the environment has no dependency list to add a pip section to"
    torch_index = kb.pytorch_rocm_index(rocm_version)
    wanted = [item.pip_line for item in items]
    index_line = _pip_index_line(dep, wanted, torch_index, rocm_version)
    entries = ([index_line] if index_line else []) + wanted
    if layout.pip_line:
        column = layout.pip_item_column or (layout.item_column + 2)
        anchor = (layout.pip_last_line or layout.pip_line) - 1
        block = [" " * (column - 1) + f"- {entry}" for entry in entries]
    else:
        column = layout.item_column or 1
        anchor = layout.last_item_line - 1
        has_pip = any(p.name == "pip" for p in dep.conda_packages)
        block = [] if has_pip else [" " * (column - 1) + "- pip"]
        block.append(" " * (column - 1) + "- pip:")
        block += [" " * (column + 1) + f"- {entry}" for entry in entries]
    buffer.appended_after.setdefault(anchor, []).extend(block)
    return ""


def _pip_index_line(
    dep: DependencyFile, wanted: list[str], torch_index: str, rocm_version: str
) -> str:
    """The index option the pip section needs for ROCm torch, or "" when it has one already."""
    pip_indexes = [i for i in dep.indexes if i.role is not IndexRole.CHANNEL]
    for index in pip_indexes:
        replaced = cuda_index(index.url, rocm_version)
        url = replaced.replacement if replaced and replaced.replacement else index.url
        if is_rocm_index(url) and "download.pytorch.org" in url:
            return ""
    served = served_by(torch_index)
    others = [r.key for r in dep.requirements if r.section == "conda.pip"]
    only_torch = all(key in served for key in others)
    has_primary = any(i.role is IndexRole.PRIMARY for i in pip_indexes)
    # --index-url only when it cannot cut the other pip packages off from PyPI.
    if only_torch and not has_primary:
        return f"--index-url {torch_index}"
    return f"--extra-index-url {torch_index}"


def _still_parses(text: str, style: str) -> str:
    if style == _Style.TOML:
        try:
            tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            return str(exc)
    elif style == _Style.YAML:
        try:
            list(yaml.compose_all(text, Loader=yaml.SafeLoader))
        except yaml.YAMLError as exc:
            return " ".join(str(exc).split())
    return ""
