"""CUDA → HIP source translation: whole identifiers in code only, headers, warp intrinsics.

The translator never touches part of a name, a string or a comment (unless asked to), keeps
every other byte as it was (CRLF, non-UTF-8 bytes read with ``surrogateescape``), and gives
the same text back when run on its own output.

The parts: :mod:`.walk` finds what to look at (fast: one regular expression over the file)
and hands each name to :mod:`.names`, :mod:`.warp`, :mod:`.arch` or :mod:`.includes`, or to
the API map's action (:mod:`.actions`); they record edits and changes on a
:class:`~.translation.Translation`; :mod:`.diagnostics` adds the kernel scanner's findings.
"""

from __future__ import annotations

from collections.abc import Mapping

from gpuport.files import FileKind, classify
from gpuport.port.apimap import load_api_map, parse_version
from gpuport.port.model import FileResult
from gpuport.port.translate.actions import actions
from gpuport.port.translate.clashes import insert_guards
from gpuport.port.translate.diagnostics import scanner_findings
from gpuport.port.translate.includes import INCLUDE_STYLES
from gpuport.port.translate.signatures import cast_printf_builtins
from gpuport.port.translate.translation import TranslateOptions, Translation, apply_edits
from gpuport.port.translate.versions import warp_size_for_target
from gpuport.port.translate.walk import candidate_identifiers, is_candidate_name, walk

__all__ = [
    "TranslateOptions",
    "candidate_identifiers",
    "is_candidate_name",
    "translate_source",
]

# Kinds of C/C++ file the translator reads; others are left to the file rewriters.
_SOURCE_KINDS = (FileKind.CUDA, FileKind.CXX)


def translate_source(
    rel: str,
    text: str,
    rocm_version: str,
    *,
    fix_warp_masks: bool = False,
    translate_strings: bool = False,
    diagnostics: bool = True,
    kind: FileKind | None = None,
    include_style: str = "auto",
    project_files: Mapping[str, tuple[str, ...]] | None = None,
) -> FileResult:
    """Translate one CUDA or C++ file's text for ROCm ``rocm_version`` (e.g. "6.4").

    ``rel`` is the path shown in reports (forward slashes); ``text`` may hold undecodable
    bytes as surrogate escapes, which come back unchanged. Raises ``ValueError`` for a
    malformed version or include style; never for bad input text. ``project_files``
    (:func:`~.includes.project_files`) names the project's own headers, which stay as they are.
    """
    target = parse_version(rocm_version)
    if include_style not in INCLUDE_STYLES:
        raise ValueError(
            f"include style {include_style!r} is not one of {', '.join(INCLUDE_STYLES)}"
        )
    file_kind = kind or classify(rel.rpartition("/")[2]) or FileKind.CUDA
    options = TranslateOptions(fix_warp_masks, translate_strings, diagnostics, include_style)
    work = Translation(rel, text, file_kind, target, options, load_api_map(), actions(target))
    if project_files:
        work.project_files = project_files
    walk(work)
    cast_printf_builtins(work)
    insert_guards(work)
    changes = work.changes()
    if diagnostics and file_kind in _SOURCE_KINDS:
        taken = {(c.line, c.column) for c in changes}
        found = warp_size_for_target(scanner_findings(rel, text, work.code), target)
        changes.extend(c for c in found if (c.line, c.column) not in taken)
    changes.sort(key=lambda c: (c.line, c.column, c.family, c.before))
    translated = apply_edits(text, work.edits)
    return FileResult(
        rel, rel, file_kind.value, text, translated if translated != text else None, changes
    )
