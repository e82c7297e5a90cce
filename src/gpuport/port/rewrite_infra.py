"""Rewrite the files around the code for ROCm: Dockerfiles, compose, Kubernetes, shell, CMake, Make.

Each rewriter asks the scan stage's analysis for its hits (what is wrong, and the exact text
edits that fix it), applies the edits as minimal textual changes (comments and layout stay
as they were; YAML is edited as text, never re-dumped) and reports one
:class:`~gpuport.port.model.Change` per hit. What cannot be converted stays as written and is
reported UNCONVERTED with the reason. Rewriting a rewritten file changes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from gpuport import kb
from gpuport.edits import ChangeStatus, Hit, TextEdit, hit_after
from gpuport.files import FileKind
from gpuport.port.model import Change, FileResult, Rewriter
from gpuport.scan.build import analyze_cmake, analyze_makefile, analyze_shell_build
from gpuport.scan.containers import analyze_dockerfile, analyze_shell_containers, analyze_yaml
from gpuport.syntax.text import LineIndex


@dataclass(frozen=True, slots=True)
class InputProblem:
    """A part of the input that could not be read, reported as an UNCONVERTED change."""

    line: int
    reason: str


def apply_hits(
    rel: str, kind: str, text: str, hits: Iterable[Hit], problems: Iterable[InputProblem] = ()
) -> FileResult:
    """Apply the edits of ``hits`` to ``text`` and report a change per hit.

    Hits are taken in file order; a hit whose edits would overlap edits already taken (other
    than the very same edit, which several hits may share) is left UNCONVERTED.
    """
    index = LineIndex(text)
    taken: list[TextEdit] = []
    taken_set: set[TextEdit] = set()
    changes: list[Change] = []
    for hit in sorted(hits, key=lambda h: (h.start, h.end, h.rule.id)):
        status = hit.status
        note = hit.note
        if status is not ChangeStatus.UNCONVERTED:
            new_edits = [e for e in hit.edits if e not in taken_set]
            if not hit.edits:
                status = ChangeStatus.UNCONVERTED
                note = note or "nothing to change automatically"
            elif any(_overlaps(edit, other) for edit in new_edits for other in taken):
                status = ChangeStatus.UNCONVERTED
                note = "left as is: it overlaps another change on the same text"
            else:
                taken.extend(new_edits)
                taken_set.update(new_edits)
        line, column = index.position(hit.start)
        before = hit.before or text[hit.start : hit.end]
        after = before if status is ChangeStatus.UNCONVERTED else hit_after(hit, text)
        changes.append(
            Change(
                line=line,
                column=column,
                family=hit.family,
                before=before,
                after=after,
                status=status,
                note=note,
                rule_id=hit.rule.id,
            )
        )
    for problem in problems:
        changes.append(
            Change(problem.line, 0, "input", "", "", ChangeStatus.UNCONVERTED, problem.reason)
        )
    changes.sort(key=lambda c: (c.line, c.column, c.rule_id))
    new_text = _apply_edits(text, taken)
    return FileResult(
        path=rel,
        new_path=rel,
        kind=kind,
        original=text,
        translated=new_text if new_text != text else None,
        changes=changes,
    )


def _overlaps(a: TextEdit, b: TextEdit) -> bool:
    """Two edits touch the same characters; an insertion clashes only strictly inside another."""
    if a.start == a.end and b.start == b.end:
        return False
    if a.start == a.end:
        return b.start < a.start < b.end
    if b.start == b.end:
        return a.start < b.start < a.end
    return a.start < b.end and b.start < a.end


def _apply_edits(text: str, edits: Iterable[TextEdit]) -> str:
    """Apply non-overlapping edits given in original offsets; insertions go before deletions.

    New lines follow the file's own line endings (CRLF files stay CRLF).
    """
    crlf = text.count("\r\n") * 2 > text.count("\n")
    out: list[str] = []
    position = 0
    for edit in sorted(edits, key=lambda e: (e.start, e.end != e.start, e.end)):
        if edit.start < position:  # a second insertion swallowed by a deletion: skip it
            continue
        out.append(text[position : edit.start])
        new = edit.text
        if crlf and "\n" in new and "\r\n" not in new:
            new = new.replace("\n", "\r\n")
        out.append(new)
        position = edit.end
    out.append(text[position:])
    return "".join(out)


def rewrite_dockerfile(
    rel: str,
    text: str,
    rocm_version: str,
    *,
    offload_archs: tuple[str, ...] = kb.DEFAULT_OFFLOAD_ARCHS,
) -> FileResult:
    """CUDA base images, NVIDIA ENV lines, pip indexes and nvcc steps of a Dockerfile."""
    hits = analyze_dockerfile(text, rocm_version, offload_archs)
    return apply_hits(rel, FileKind.DOCKERFILE.value, text, hits)


def _rewrite_yaml(
    rel: str, text: str, rocm_version: str, kind: FileKind, offload_archs: tuple[str, ...]
) -> FileResult:
    hits, problem = analyze_yaml(text, rocm_version, offload_archs)
    problems = []
    if problem is not None:
        problems.append(
            InputProblem(
                problem.line,
                f"YAML does not parse ({problem.reason}); only image and nvidia.com/gpu "
                "lines were looked at",
            )
        )
    return apply_hits(rel, kind.value, text, hits, problems)


def rewrite_compose(
    rel: str,
    text: str,
    rocm_version: str,
    *,
    offload_archs: tuple[str, ...] = kb.DEFAULT_OFFLOAD_ARCHS,
) -> FileResult:
    """``runtime: nvidia`` and NVIDIA device reservations become ROCm devices, group and
    security option; images and NVIDIA environment variables as in Dockerfiles."""
    return _rewrite_yaml(rel, text, rocm_version, FileKind.COMPOSE, offload_archs)


def rewrite_k8s(
    rel: str,
    text: str,
    rocm_version: str,
    *,
    offload_archs: tuple[str, ...] = kb.DEFAULT_OFFLOAD_ARCHS,
) -> FileResult:
    """``nvidia.com/gpu`` becomes ``amd.com/gpu``; node selectors, tolerations, runtime
    classes, images and environment variables of Kubernetes manifests and Helm values."""
    return _rewrite_yaml(rel, text, rocm_version, FileKind.YAML, offload_archs)


def rewrite_shell(
    rel: str,
    text: str,
    rocm_version: str,
    *,
    offload_archs: tuple[str, ...] = kb.DEFAULT_OFFLOAD_ARCHS,
) -> FileResult:
    """``docker run --gpus`` and friends, pip CUDA indexes and nvcc calls in a shell script."""
    hits = analyze_shell_containers(text, rocm_version)
    hits.extend(analyze_shell_build(text, offload_archs))
    return apply_hits(rel, FileKind.SHELL.value, text, hits)


def rewrite_cmake(
    rel: str,
    text: str,
    rocm_version: str,
    *,
    offload_archs: tuple[str, ...] = kb.DEFAULT_OFFLOAD_ARCHS,
) -> FileResult:
    """The CUDA language, CUDA packages and targets, architectures and .cu sources of CMake."""
    del rocm_version  # CMake packages carry no ROCm version
    hits, problem = analyze_cmake(text, offload_archs)
    problems = []
    if problem is not None:
        line, _ = LineIndex(text).position(problem.offset)
        problems.append(
            InputProblem(
                line,
                f"CMake syntax error ({problem.reason}); the rest of the file was left as it is",
            )
        )
    return apply_hits(rel, FileKind.CMAKE.value, text, hits, problems)


def rewrite_makefile(
    rel: str,
    text: str,
    rocm_version: str,
    *,
    offload_archs: tuple[str, ...] = kb.DEFAULT_OFFLOAD_ARCHS,
) -> FileResult:
    """nvcc becomes hipcc, -arch=sm_XX becomes --offload-arch, CUDA libraries and paths ROCm's."""
    del rocm_version
    return apply_hits(rel, FileKind.MAKEFILE.value, text, analyze_makefile(text, offload_archs))


# The rewriter for each kind of file; Kubernetes manifests are the YAML files that matter.
REWRITERS: dict[FileKind, Rewriter] = {
    FileKind.DOCKERFILE: rewrite_dockerfile,
    FileKind.COMPOSE: rewrite_compose,
    FileKind.YAML: rewrite_k8s,
    FileKind.SHELL: rewrite_shell,
    FileKind.CMAKE: rewrite_cmake,
    FileKind.MAKEFILE: rewrite_makefile,
}
