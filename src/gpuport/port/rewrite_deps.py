"""``gpuport port`` for dependency files: the GP1xx rules' text edits, applied in place.

Each rewriter reads the file with its ``gpuport.syntax`` reader, asks the dependency scanner for
its hits (``gpuport.scan.deps.analyze``), and applies the edits of those the port converts:
comments, order, quoting and line endings stay as they were. Dropped requirements are commented
out with a note, never deleted. What cannot be converted is listed as an UNCONVERTED change with
the reason. A rewritten file produces no further mechanical hit, so rewriting it again changes
nothing.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import tomllib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import yaml

from gpuport.edits import ChangeStatus, TextEdit
from gpuport.files import FileKind
from gpuport.kb.loader import KbError, load_toml, table_entry
from gpuport.kb.rocm import PLATFORM_TOML
from gpuport.port.model import Change, FileResult, Rewriter
from gpuport.scan.deps import NOTE_PREFIX, DependencyHit, analyze
from gpuport.syntax.conda import parse_conda_env
from gpuport.syntax.dependencies import DependencyFile, FileFormat, Reader, Requirement
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
    hits = [_installable(hit, dep) for hit in analyze(dep, rocm_version)]
    torch_version = _torch_written(dep, hits)
    hits = [_paired(hit, dep, torch_version) for hit in hits]
    for hit in sorted(hits, key=lambda h: (h.line, -h.column)):
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


# --- pins that can be installed ---------------------------------------------------------------

# The label of PyTorch's ROCm wheels, "+rocm6.4", as the cuda-local-version rule writes it.
_ROCM_LABEL = re.compile(r"\+rocm(\d+(?:\.\d+)*)$")


@functools.cache
def torch_releases() -> Mapping[str, tuple[str, ...]]:
    """torch release (major.minor) -> ROCm versions whose stable index has its wheels (KB)."""
    entry = table_entry(load_toml(PLATFORM_TOML), "pytorch_rocm", PLATFORM_TOML).table("releases")
    return {release: entry.texts(release, required=True) for release in entry.raw}


def _release_key(version: str) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in version.split("."))
    except ValueError:
        raise KbError(f"not a version: {version!r}") from None


def _installable(hit: DependencyHit, dep: DependencyFile) -> DependencyHit:
    """``hit`` as one whose torch pin the knowledge base says has a wheel on its ROCm index.

    The cuda-local-version rule swaps ``+cu121`` for ``+rocm6.4`` and keeps the version, and
    the conda rule moves ``pytorch=2.3.0`` to pip as ``torch==2.3.0+rocm6.4``; a torch release
    is built only for the ROCm versions current when it came out, so that pin may not exist.
    Then the nearest release the KB lists on that index is pinned instead and the note says
    so; with none, nothing is written.
    """
    if hit.status is ChangeStatus.UNCONVERTED:
        return hit
    if hit.pip_line:
        return _installable_pip_line(hit)
    if hit.rule.id != "GP101":
        return hit
    requirement = _torch_requirement(dep, hit.line)
    if requirement is None:
        return hit
    labelled = [e for e in hit.edits if _ROCM_LABEL.fullmatch(e.text)]
    version = _pinned_version(requirement.specifier)
    if len(labelled) != 1 or not version:
        return hit
    edit = labelled[0]
    found = _ROCM_LABEL.fullmatch(edit.text)
    assert found is not None
    start = edit.start - len(version)
    if dep.text[start : edit.start] != version:
        return hit  # the version is not written right before the label: leave the rule's edit
    return _repinned(
        hit,
        _nearest_release(version, found.group(1)),
        lambda wanted: {"edits": _with_version(hit.edits, edit, start, wanted)},
    )


def _installable_pip_line(hit: DependencyHit) -> DependencyHit:
    """A conda-to-pip move's ``torch==V+rocmR`` line, checked as :func:`_installable` does."""
    found = re.fullmatch(r"torch==(\d+(?:\.\d+)*)\+rocm(\d+(?:\.\d+)*)", hit.pip_line)
    if found is None:
        return hit
    version, rocm = found.groups()
    return _repinned(
        hit,
        _nearest_release(version, rocm),
        lambda wanted: {
            "pip_line": f"torch=={wanted}+rocm{rocm}",
            "status": ChangeStatus.NEEDS_REVIEW,
        },
    )


def _repinned(
    hit: DependencyHit,
    choice: tuple[str, str] | None,
    changes: Callable[[str], dict[str, Any]],
) -> DependencyHit:
    """``hit`` after the knowledge base's ``choice`` of version: as it was when the KB has no
    objection (None); left unconverted for review when there is no version to pin (""); else
    with ``changes(version)`` applied and the choice's note."""
    if choice is None:
        return hit
    wanted, note = choice
    if not wanted:
        return dataclasses.replace(hit, status=ChangeStatus.UNCONVERTED, edits=(), note=note)
    return dataclasses.replace(hit, **changes(wanted), note=_with_kept_advice(note, hit.note))


def _with_version(
    edits: tuple[TextEdit, ...], label: TextEdit, start: int, version: str
) -> tuple[TextEdit, ...]:
    """``edits`` with the label edit widened back to ``start`` to write ``version`` before it."""
    return tuple(TextEdit(start, e.end, f"{version}{e.text}") if e is label else e for e in edits)


def _nearest_release(version: str, rocm: str) -> tuple[str, str] | None:
    """None when the KB lists torch ``version`` on ROCm ``rocm``'s index; else the version to
    pin instead ("" when the index carries no release at all) and the note that says why."""
    release = ".".join(version.split(".")[:2])
    releases = torch_releases()
    if rocm in releases.get(release, ()):
        return None
    listed = [r for r, rocms in releases.items() if rocm in rocms]
    index = f"https://download.pytorch.org/whl/rocm{rocm}"
    if not listed:
        return "", (
            f"the knowledge base lists no torch release with wheels on {index}: "
            "choose the ROCm version and the torch release together"
        )
    wanted = _release_key(release)
    nearest = min(
        listed,
        key=lambda r: (
            abs(_release_key(r)[0] - wanted[0]) * 1000 + abs(_release_key(r)[-1] - wanted[-1]),
            tuple(-n for n in _release_key(r)),
        ),
    )
    new_version = f"{nearest}.0"
    return new_version, (
        f"torch {version} has no wheel on {index} (the knowledge base lists "
        f"{', '.join(listed)} there): pinned the nearest release it lists, {new_version}; "
        "test the upgrade"
    )


# --- torchvision and torchaudio pins that go with the torch pin -------------------------------

COMPANIONS = ("torchvision", "torchaudio")
_PIP_PIN = re.compile(r"(torch|torchvision|torchaudio)==(\d+(?:\.\d+)*)\+(rocm\d+(?:\.\d+)*)")


@functools.cache
def torch_companions() -> Mapping[str, Mapping[str, str]]:
    """Package -> torch version -> its release built against that torch (KB)."""
    entry = table_entry(load_toml(PLATFORM_TOML), "pytorch_rocm", PLATFORM_TOML).table("companions")
    entry.sources()
    entry.date()
    return {name: entry.text_table(name) for name in COMPANIONS}


def companion_version(package: str, torch_version: str) -> str:
    """The ``package`` version that installs with torch ``torch_version``; "" when the KB has
    no pair ("2.8" reads as "2.8.0")."""
    parts = torch_version.split(".")
    whole = ".".join([*parts, "0"][:3]) if len(parts) == 2 else torch_version
    return torch_companions()[package].get(whole, "")


def _torch_written(dep: DependencyFile, hits: list[DependencyHit]) -> str:
    """The torch version the port pins in this file (after :func:`_installable`); "" if none."""
    for hit in hits:
        if hit.status is ChangeStatus.UNCONVERTED:
            continue
        found = _PIP_PIN.fullmatch(hit.pip_line) if hit.pip_line else None
        if found is not None and found.group(1) == "torch":
            return found.group(2)
        requirement = _torch_requirement(dep, hit.line) if hit.rule.id == "GP101" else None
        if requirement is None:
            continue
        for edit in hit.edits:
            if _ROCM_LABEL.fullmatch(edit.text):
                return _pinned_version(requirement.specifier)  # the version is kept
            bumped = re.fullmatch(r"(\d+(?:\.\d+)*)\+rocm[\d.]+", edit.text)
            if bumped:
                return bumped.group(1)
    return ""


def _paired(hit: DependencyHit, dep: DependencyFile, torch_version: str) -> DependencyHit:
    """A torchvision/torchaudio pin changed to the release built for the torch pinned here.

    torch 2.8.0 cannot be installed with torchvision 0.18.0 (which requires torch 2.3): when
    the port pins torch, its companions get the release PyTorch pairs with it
    (kb/platform.toml [pytorch_rocm.companions]); with no pair in the KB, the line is left as
    it was for review, and the note says so.
    """
    if not torch_version or hit.status is ChangeStatus.UNCONVERTED:
        return hit
    if hit.pip_line:
        found = _PIP_PIN.fullmatch(hit.pip_line)
        if found is None or found.group(1) not in COMPANIONS:
            return hit
        package, version, label = found.groups()
        return _repinned(
            hit,
            _companion_choice(package, version, torch_version),
            lambda wanted: {
                "pip_line": f"{package}=={wanted}+{label}",
                "status": ChangeStatus.NEEDS_REVIEW,
            },
        )
    if hit.rule.id != "GP101":
        return hit
    requirement = next(
        (
            r
            for r in dep.requirements
            if r.line == hit.line and r.key in COMPANIONS and r.path == dep.path
        ),
        None,
    )
    labelled = [e for e in hit.edits if _ROCM_LABEL.fullmatch(e.text)]
    version = _pinned_version(requirement.specifier) if requirement is not None else ""
    if requirement is None or len(labelled) != 1 or not version:
        return hit
    edit = labelled[0]
    start = edit.start - len(version)
    if dep.text[start : edit.start] != version:
        return hit
    return _repinned(
        hit,
        _companion_choice(requirement.key, version, torch_version),
        lambda wanted: {
            "edits": _with_version(hit.edits, edit, start, wanted),
            "status": ChangeStatus.NEEDS_REVIEW,
        },
    )


def _companion_choice(package: str, version: str, torch_version: str) -> tuple[str, str] | None:
    """None when ``package`` ``version`` goes with torch ``torch_version``; else the version to
    pin ("" when the KB has no pair) and the note that says why."""
    wanted = companion_version(package, torch_version)
    if wanted and _release_key(wanted) == _release_key(version):
        return None
    if not wanted:
        return "", (
            f"the knowledge base does not say which {package} release goes with torch "
            f"{torch_version}: left as it was; pin the one PyTorch's compatibility table pairs "
            "with it"
        )
    return wanted, (
        f"{package} {version} cannot be installed with torch {torch_version}: pinned "
        f"{wanted}, the release built for it (PyTorch's compatibility table)"
    )


def _with_kept_advice(note: str, rule_note: str) -> str:
    """``note`` and the rule's own, less its question about the old version's build."""
    kept = [part for part in rule_note.split("; ") if part and not part.startswith("check that")]
    return "; ".join([note, *kept])


def _torch_requirement(dep: DependencyFile, line: int) -> Requirement | None:
    for requirement in dep.requirements:
        if requirement.line == line and requirement.key == "torch" and requirement.path == dep.path:
            return requirement
    return None


def _pinned_version(specifier: str) -> str:
    """``2.3.0`` from ``==2.3.0+cu121``; "" for anything but one exact pin."""
    found = re.fullmatch(r"\s*===?\s*v?(\d+(?:\.\d+)*)\+[A-Za-z0-9.]+\s*", specifier)
    return found.group(1) if found else ""


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
