"""pip requirements and constraints files: logical lines, options, and ``-r``/``-c`` includes.

Read the way pip reads them (``pip/_internal/req/req_file.py``): ``\\`` continuations are
joined first, then comments dropped; a line is either options (``-i``, ``--extra-index-url``,
``-f``, ``-e``, ``-r``, ``-c``...) or a requirement with per-requirement options
(``--hash``). Includes are followed through the caller's ``read`` callback, relative to the
including file, with cycles and missing files reported on the include line.

Kept hand-written rather than delegated to ``pip-requirements-parser``, on measurements
(benchmarks/deps_readers.py, results in benchmarks/results/deps_readers.md): version 32.0.1
reads the same (name, specifier, line) records on 15 of the 16 fixture files (on the sixteenth it
gives a bare wheel URL a ``==`` specifier taken from the file name, where this reader keeps the
URL and its local label) and on a generated 20,000-line file, but is 6-9x slower there (12.1 s
against 1.34 s on a loaded 2-core machine; 3.8 s against 0.63 s on a quiet one), reports no
end line and no column, and reads includes from disk by itself,
where gpuport reads them only through the caller's capped, root-relative ``read``.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass

from gpuport.findings import SkipKind, Skipped
from gpuport.read_policy import ReadRefused
from gpuport.syntax.dependencies import (
    DependencyFile,
    FileFormat,
    Include,
    IndexRole,
    IndexSource,
    Reader,
    make_requirement,
)
from gpuport.syntax.pep508 import URL_RE

# Includes nested deeper than this are almost certainly a loop through symbolic links.
MAX_INCLUDE_DEPTH = 20

# pip strips `#` comments that start a line or follow whitespace (pip/_internal/req/req_file.py)
_COMMENT_RE = re.compile(r"(^|\s+)#.*$")


@dataclass(frozen=True, slots=True)
class LogicalLine:
    """A requirements-file line after joining ``\\`` continuations and removing comments."""

    text: str
    line: int  # first physical line, 1-based
    end_line: int
    column: int  # 1-based column of the first non-blank character on the first line


def logical_lines(text: str, first_line: int = 1) -> Iterator[LogicalLine]:
    """Split a requirements file the way pip does: join continuations, then drop comments."""
    physical = text.splitlines()
    i = 0
    while i < len(physical):
        start = i
        parts: list[str] = []
        current = physical[i]
        # A comment line is never continued (pip's join_lines).
        while current.endswith("\\") and not current.lstrip().startswith("#"):
            parts.append(current[:-1])
            if i + 1 >= len(physical):
                current = ""
                break
            i += 1
            current = physical[i]
        parts.append(current)
        joined = _COMMENT_RE.sub("", "".join(parts)).strip()
        first = physical[start]
        column = len(first) - len(first.lstrip()) + 1
        if joined:
            yield LogicalLine(joined, first_line + start, first_line + i, column)
        i += 1


_VALUE_OPTIONS = {
    "-r": "requirement",
    "--requirement": "requirement",
    "-c": "constraint",
    "--constraint": "constraint",
    "-e": "editable",
    "--editable": "editable",
    "-i": "index-url",
    "--index-url": "index-url",
    "--extra-index-url": "extra-index-url",
    "-f": "find-links",
    "--find-links": "find-links",
    "--trusted-host": "other",
    "--only-binary": "other",
    "--no-binary": "other",
    "--use-feature": "other",
    "--config-settings": "other",
    "--global-option": "other",
    "--install-option": "other",
    "--hash": "other",
}
_FLAG_OPTIONS = {"--no-index", "--pre", "--prefer-binary", "--require-hashes", "--no-deps"}
_HASH_RE = re.compile(r"--hash[=\s]+(\S+)")


def _split_options(text: str) -> list[tuple[str, str]] | str:
    """``-i URL --pre`` -> [("-i", "URL"), ("--pre", "")], or a reason string when invalid."""
    try:
        tokens = shlex.split(text, posix=True)
    except ValueError as exc:
        return f"cannot split the options ({exc})"
    pairs: list[tuple[str, str]] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        name, eq, value = token.partition("=")
        if token in _FLAG_OPTIONS:
            pairs.append((token, ""))
        elif eq and name in _VALUE_OPTIONS and name.startswith("--"):
            pairs.append((name, value))
        elif token in _VALUE_OPTIONS:
            if i + 1 >= len(tokens):
                return f"option {token} needs a value"
            pairs.append((token, tokens[i + 1]))
            i += 1
        elif len(token) > 2 and token[:2] in _VALUE_OPTIONS and not token.startswith("--"):
            pairs.append((token[:2], token[2:]))  # -rbase.txt, -ihttps://...
        else:
            return f"unknown option {token!r}"
        i += 1
    return pairs


def _resolve_include(including: str, target: str) -> str:
    """``-r`` paths are relative to the file that names them."""
    if target.startswith("/"):
        return posixpath.normpath(target)
    return posixpath.normpath(posixpath.join(posixpath.dirname(including), target))


def parse_requirements(
    text: str,
    path: str,
    *,
    read: Reader | None = None,
    section: str = "requirements",
    first_line: int = 1,
    _stack: tuple[str, ...] = (),
    _origin: _Origin | None = None,
) -> DependencyFile:
    """Parse a pip requirements/constraints file, following ``-r``/``-c`` through ``read``."""
    result = DependencyFile(path, FileFormat.PIP, text)
    stack = (*_stack, posixpath.normpath(path))
    for logical in logical_lines(text, first_line):
        parse_logical_line(logical, result, read, section, stack, _origin)
    return result


@dataclass(frozen=True, slots=True)
class _Origin:
    """The top file's include line that led into nested includes: cycles are reported there."""

    file: DependencyFile
    line: int
    written: str  # "-r base.txt"


def parse_logical_line(
    logical: LogicalLine,
    result: DependencyFile,
    read: Reader | None,
    section: str,
    stack: tuple[str, ...],
    origin: _Origin | None = None,
) -> None:
    path = result.path
    body = logical.text
    if body.startswith("-"):
        pairs = _split_options(body)
        if isinstance(pairs, str):
            result.problems.append(Skipped(path, SkipKind.MALFORMED, pairs, logical.line, True))
            return
        for option, value in pairs:
            kind = _VALUE_OPTIONS.get(option, "flag")
            if option == "--no-index":
                result.no_index = True
            elif kind in ("index-url", "extra-index-url", "find-links"):
                role = {
                    "index-url": IndexRole.PRIMARY,
                    "extra-index-url": IndexRole.EXTRA,
                    "find-links": IndexRole.FIND_LINKS,
                }[kind]
                result.indexes.append(
                    IndexSource(value, role, path, logical.line, logical.column, option)
                )
            elif kind == "editable":
                _add_requirement(
                    value, result, logical, section, editable=True, hashes=(), label=option
                )
            elif kind in ("requirement", "constraint"):
                _follow_include(
                    option, value, kind == "constraint", result, logical, read, stack, origin
                )
        return
    # A requirement, perhaps followed by per-requirement options (pip's break_args_options).
    tokens = body.split(" ")
    head: list[str] = []
    for token in tokens:
        if token.startswith("-"):
            break
        head.append(token)
    options = " ".join(tokens[len(head) :])
    hashes = tuple(_HASH_RE.findall(options))
    _add_requirement(" ".join(head), result, logical, section, editable=False, hashes=hashes)


def _add_requirement(
    text: str,
    result: DependencyFile,
    logical: LogicalLine,
    section: str,
    *,
    editable: bool,
    hashes: tuple[str, ...],
    label: str = "",
) -> None:
    try:
        requirement = make_requirement(
            text,
            path=result.path,
            line=logical.line,
            end_line=logical.end_line,
            column=logical.column,
            section=section,
            editable=editable,
            hashes=hashes,
        )
    except ValueError as exc:
        shown = f"{label} {text}".strip()
        result.problems.append(
            Skipped(
                result.path,
                SkipKind.MALFORMED,
                f"{shown!r} is not a valid requirement ({exc})",
                logical.line,
                True,
            )
        )
        return
    result.requirements.append(requirement)


def _follow_include(
    option: str,
    target: str,
    constraint: bool,
    result: DependencyFile,
    logical: LogicalLine,
    read: Reader | None,
    stack: tuple[str, ...],
    origin: _Origin | None,
) -> None:
    path = result.path
    line = logical.line
    if URL_RE.match(target):
        result.problems.append(
            Skipped(
                path,
                SkipKind.UNREADABLE,
                f"{option} {target} is a URL; gpuport never fetches anything, "
                "so its requirements were not checked",
                line,
                True,
            )
        )
        return
    resolved = _resolve_include(path, target)
    result.includes.append(Include(target, resolved, constraint, path, line))
    if read is None:
        return
    if resolved in stack or len(stack) >= MAX_INCLUDE_DEPTH:
        if resolved in stack:
            chain = " -> ".join((*stack[stack.index(resolved) :], resolved))
            what = f"an include cycle ({chain})"
        else:
            what = f"includes nested more than {MAX_INCLUDE_DEPTH} files deep"
        if origin is None:
            reason, owner, owner_line = f"{option} {target} makes {what}", result, line
        else:
            reason = f"{origin.written} leads to {what} at {path}:{line}"
            owner, owner_line = origin.file, origin.line
        owner.problems.append(
            Skipped(
                owner.path,
                SkipKind.MALFORMED,
                f"{reason}; not followed again",
                owner_line,
                True,
            )
        )
        return
    try:
        text = read(resolved)
    except ReadRefused as refused:  # outside the root, not a regular file, too large
        reason = f"{option} {target}: {refused.reason}"
        result.problems.append(Skipped(path, refused.kind, reason, line, True))
        return
    if text is None:
        result.problems.append(
            Skipped(
                path,
                SkipKind.MISSING,
                f"{option} {target}: no such file ({resolved})",
                line,
                True,
            )
        )
        return
    child = parse_requirements(
        text,
        resolved,
        read=read,
        section="constraints" if constraint else "requirements",
        _stack=stack,
        _origin=origin or _Origin(result, line, f"{option} {target}"),
    )
    result.included.append(child)
