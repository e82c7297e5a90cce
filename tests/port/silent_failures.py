"""No silent failure: which hipcc errors of a translation a port diagnostic explains.

Read by tests/port/test_corpus.py, which runs it on every corpus program's translation.
"""

from __future__ import annotations

import difflib
import re

from gpuport.port.model import ChangeStatus, PortResult

_IDENT_RE = re.compile(r"(?<![A-Za-z0-9_$])[A-Za-z_$][A-Za-z0-9_$]*")
_HIPCC_ERROR_RE = re.compile(
    r"^(?P<path>.+?):(?P<line>\d+):(?:\d+:)?\s*(?:fatal )?error:\s*(?P<message>.*)$"
)
_QUOTED_RE = re.compile(r"'([^']+)'")


def _diagnostics(result: PortResult) -> list[tuple[str, int, set[str], str]]:
    """Every change gpuport left for a person: file, line, the names it shows, its note."""
    found = []
    for file in result.files:
        for change in file.changes:
            if change.status is ChangeStatus.CONVERTED:
                continue
            names = {change.before, change.after}
            names |= set(_IDENT_RE.findall(f"{change.before} {change.after}"))
            found.append((file.path, change.line, names, change.note))
    return found


_DEFINE_RE = re.compile(
    r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(?:[^\n]*\\\n)*[^\n]*", re.MULTILINE
)


def _flagged_macros(
    result: PortResult, diagnostics: list[tuple[str, int, set[str], str]]
) -> set[str]:
    """Macros whose definition holds a diagnostic: an error where one is used is explained."""
    lines_by_file: dict[str, set[int]] = {}
    for path, line, _, _ in diagnostics:
        lines_by_file.setdefault(path, set()).add(line)
    flagged = set()
    for file in result.files:
        lines = lines_by_file.get(file.path)
        if not lines:
            continue
        for match in _DEFINE_RE.finditer(file.original):
            first = file.original.count("\n", 0, match.start()) + 1
            last = first + match.group().count("\n")
            if any(first <= line <= last for line in lines):
                flagged.add(match.group(1))
    return flagged


def silent_errors(result: PortResult, errors: list[str]) -> list[str]:
    """The hipcc errors no diagnostic of gpuport's explains: a diagnostic on the error's line
    (its line in the original, for a translated file) or one naming something the error quotes
    (an unknown name, a missing header, a function that HIP's headers define)."""
    diagnostics = _diagnostics(result)
    flagged_macros = _flagged_macros(result, diagnostics)
    by_new_path = {f.new_path: f for f in result.files}
    line_maps: dict[str, dict[int, int]] = {}
    silent = []
    for error in errors:
        match = _HIPCC_ERROR_RE.match(error)
        if match is None:
            silent.append(error)
            continue
        file = by_new_path.get(match.group("path"))
        line = int(match.group("line"))
        if file is not None:
            original_line: int | None = line
            if file.translated is not None:
                if file.new_path not in line_maps:
                    line_maps[file.new_path] = line_map(file.original, file.translated)
                original_line = line_maps[file.new_path].get(line)  # None: a line port added
            if original_line is not None and any(
                p == file.path and _same_statement(file.original, n, original_line)
                for p, n, _, _ in diagnostics
            ):
                continue
            if original_line is not None and flagged_macros:
                used = set(_IDENT_RE.findall(file.original.splitlines()[original_line - 1]))
                if used & flagged_macros:
                    continue  # the error is in a macro's expansion, reported where it is defined
        quoted = _QUOTED_RE.findall(match.group("message"))
        words = {w for q in quoted for w in _IDENT_RE.findall(q) if len(w) >= 3}
        words |= {f"operator{q}" for q in quoted if not _IDENT_RE.search(q)}
        texts = [q for q in quoted if len(q) >= 4]  # a header, a type: named in a note
        if any(words & names or any(t in note for t in texts) for _, _, names, note in diagnostics):
            continue
        silent.append(error)
    return silent


def _same_statement(original: str, diagnostic_line: int, error_line: int) -> bool:
    """Is ``error_line`` the diagnostic's own line or inside a call opened there whose
    arguments run over several lines (a parenthesis still open)? Up to 8 lines."""
    if not 0 <= error_line - diagnostic_line <= 8:
        return False
    before = "\n".join(original.splitlines()[diagnostic_line - 1 : error_line - 1])
    return error_line == diagnostic_line or before.count("(") > before.count(")")


def line_map(original: str, translated: str) -> dict[int, int]:
    """Translated line number -> original line number, for lines the port kept or edited."""
    a, b = original.splitlines(), translated.splitlines()
    mapping: dict[int, int] = {}
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
            for k in range(i2 - i1):
                mapping[j1 + k + 1] = i1 + k + 1
    return mapping
