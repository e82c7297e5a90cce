"""Reading dependency declarations (pip, PEP 621, Poetry, uv, PDM, setuptools, conda, Pipenv).

Every parser turns one file's text into a :class:`DependencyFile`: requirement records with
the line they were written on, the package indexes and channels the file names, and the
input problems met on the way (as :class:`~gpuport.findings.Skipped`, never exceptions).
Nothing is executed: ``setup.py`` is read with :mod:`ast`, and includes are read from disk
only through the ``read`` callback the caller passes in. The scanner (``scan/deps.py``) and
the port rewriter (``port/rewrite_deps.py``) share these records.
"""

from __future__ import annotations

import ast
import configparser
import enum
import fnmatch
import posixpath
import re
import shlex
import tomllib
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import unquote, urlsplit

import yaml
from packaging.markers import Marker
from packaging.requirements import InvalidRequirement
from packaging.requirements import Requirement as Pep508Requirement
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion

from gpuport.findings import SkipKind, Skipped

# Includes nested deeper than this are almost certainly a loop through symbolic links.
MAX_INCLUDE_DEPTH = 20

# Reads an included file by its path relative to the scan root; None when it does not exist.
Reader = Callable[[str], str | None]


class IndexRole(enum.StrEnum):
    """How an index takes part in resolution; decides whether PyPI's CUDA wheel can win."""

    PRIMARY = "primary"  # replaces PyPI, or is searched first and wins (pip -i, uv, Poetry primary)
    EXTRA = "extra"  # searched beside PyPI; the highest version wins (pip --extra-index-url)
    FIND_LINKS = "find-links"  # a page of links searched beside the indexes
    NAMED = "named"  # used only by requirements that name it (uv/Poetry explicit, Pipenv)
    CHANNEL = "channel"  # a conda channel


class Form(enum.StrEnum):
    """How a requirement is written, which decides how a rewriter may edit it."""

    PEP508 = "pep508"  # one requirement string: a requirements line, an array item, a literal
    TABLE = "table"  # `name = "version"` or `name = {...}` in a TOML table (Poetry, Pipfile)


@dataclass(frozen=True, slots=True)
class Requirement:
    """One declared dependency, where it was written and what it asks for."""

    name: str  # as written ("" when a URL or path names no package)
    key: str  # PEP 503 normalized name
    extras: tuple[str, ...]
    specifier: str  # version constraint as written ("==2.3.0+cu121", Poetry's "^2.3"); "" if none
    marker: str  # environment marker as written; "" if none
    url: str  # direct reference, VCS URL or local path; "" if none
    path: str  # file it was declared in, relative to the scan root
    line: int  # 1-based line of the requirement text
    end_line: int
    column: int  # 1-based column where the requirement starts; 0 when unknown
    section: str  # "requirements", "project.dependencies", "tool.poetry.dependencies", ...
    form: Form = Form.PEP508
    text: str = ""  # the requirement string as written (PEP 508 forms only)
    editable: bool = False
    hashes: tuple[str, ...] = ()
    index: str = ""  # name of the index/source this requirement is tied to (uv, Poetry, Pipenv)
    local_version: str = ""  # local label of a pinned version: "cu121" in "==2.3.0+cu121"
    on_linux: bool = True  # False when the marker rules Linux out (ROCm wheels are Linux-only)


@dataclass(frozen=True, slots=True)
class IndexSource:
    """A package index, find-links page or conda channel that a file names."""

    url: str
    role: IndexRole
    path: str
    line: int
    column: int = 0
    option: str = ""  # as written: "--extra-index-url", "-i", "url", "channels", "dependency_links"
    name: str = ""  # the source's name (Poetry, uv, PDM, Pipenv)


@dataclass(frozen=True, slots=True)
class CondaPackage:
    """A conda (not pip) dependency of an environment file."""

    name: str  # lower case
    spec: str  # everything after the name, as written ("=12.1", ">=2.1,<2.2=*cuda*")
    channel: str  # "nvidia" in "nvidia::cuda-toolkit"; "" when none
    build: str  # build string ("py3.11_cuda12.1_cudnn8.9.2_0"); "" when none
    text: str
    path: str
    line: int
    column: int


@dataclass(frozen=True, slots=True)
class Include:
    """A ``-r``/``-c`` line and the file it names."""

    target: str  # as written
    resolved: str  # relative to the scan root
    constraint: bool
    path: str
    line: int


@dataclass(frozen=True, slots=True)
class CondaLayout:
    """Where an environment file's dependency list and ``pip:`` subsection sit (1-based lines)."""

    dependencies_line: int  # the `dependencies:` key
    last_item_line: int  # last line of the last dependency item (0 when the list is empty)
    item_column: int  # column of the items' dashes (1-based)
    pip_line: int = 0  # the `- pip:` item, 0 when there is none
    pip_last_line: int = 0  # last line of the last pip item
    pip_item_column: int = 0  # column of the pip items' dashes (1-based)


@dataclass(slots=True)
class DependencyFile:
    """Everything one dependency file declares, with the files it includes."""

    path: str
    requirements: list[Requirement] = field(default_factory=list)
    indexes: list[IndexSource] = field(default_factory=list)
    conda_packages: list[CondaPackage] = field(default_factory=list)
    includes: list[Include] = field(default_factory=list)
    included: list[DependencyFile] = field(default_factory=list)
    problems: list[Skipped] = field(default_factory=list)
    no_index: bool = False  # pip's --no-index: only find-links pages are searched
    conda_layout: CondaLayout | None = None

    def walk(self) -> Iterator[DependencyFile]:
        """This file and every file it includes, depth first."""
        yield self
        for child in self.included:
            yield from child.walk()

    def all_requirements(self) -> list[Requirement]:
        return [r for f in self.walk() for r in f.requirements]

    def all_indexes(self) -> list[IndexSource]:
        return [i for f in self.walk() for i in f.indexes]


# ---------------------------------------------------------------------------------------------
# Requirement strings

# pip strips `#` comments that start a line or follow whitespace (pip/_internal/req/req_file.py)
_COMMENT_RE = re.compile(r"(^|\s+)#.*$")
_URL_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://|^file:")
_ARCHIVE_RE = re.compile(r"\.(whl|zip|tar\.gz|tgz|tar\.bz2|tar\.xz|tar)$", re.IGNORECASE)
_SDIST_RE = re.compile(r"^(?P<name>.+?)-(?P<version>\d[^-]*)\.(zip|tar\.gz|tgz|tar\.bz2|tar\.xz)$")
_EGG_RE = re.compile(r"[#&]egg=([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?")
_EXTRA_IN_MARKER_RE = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")
_LOCAL_RE = re.compile(r"\+([A-Za-z0-9][A-Za-z0-9._-]*)")

# Environments in which a ROCm wheel could be installed: Linux on x86-64, any recent CPython.
_LINUX_BASE = {
    "os_name": "posix",
    "sys_platform": "linux",
    "platform_system": "Linux",
    "platform_machine": "x86_64",
    "platform_release": "",
    "platform_version": "",
    "implementation_name": "cpython",
    "platform_python_implementation": "CPython",
    "implementation_version": "3.12.0",
}
_PYTHONS = ("3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "3.14")


def normalize(name: str) -> str:
    """PEP 503 normalized distribution name."""
    return str(canonicalize_name(name)) if name else ""


def marker_allows_linux(marker: str) -> bool:
    """Whether ``marker`` can be true on Linux x86-64 (unknown or odd markers count as yes)."""
    if not marker.strip():
        return True
    try:
        parsed = Marker(marker)
    except Exception:
        return True
    extras = _EXTRA_IN_MARKER_RE.findall(marker) or [""]
    for python in _PYTHONS:
        for extra in extras:
            env = dict(_LINUX_BASE, python_version=python, python_full_version=python + ".0")
            env["extra"] = extra
            try:
                if parsed.evaluate(env):
                    return True
            except Exception:
                return True
    return False


def local_label(version_text: str) -> str:
    """The local version label in ``2.3.0+cu121`` ("cu121"), or ""."""
    match = _LOCAL_RE.search(version_text)
    return match.group(1) if match else ""


def _name_from_url(url: str) -> tuple[str, str]:
    """(distribution name, local label) that a wheel/sdist/VCS URL names, as far as it says."""
    egg = _EGG_RE.search(url)
    parts = urlsplit(url)
    filename = unquote(posixpath.basename(parts.path.rstrip("/")))
    if filename.lower().endswith(".whl"):
        try:
            name, version, _build, _tags = parse_wheel_filename(filename)
        except (InvalidWheelFilename, InvalidVersion):
            pass
        else:
            return str(name), version.local or ""
    sdist = _SDIST_RE.match(filename)
    if sdist:
        return sdist.group("name"), local_label(sdist.group("version"))
    if egg:
        return egg.group(1), ""
    return "", ""


@dataclass(frozen=True, slots=True)
class ParsedSpec:
    """The parts of one requirement string."""

    name: str
    extras: tuple[str, ...]
    specifier: str
    marker: str
    url: str
    local_version: str


def parse_requirement_string(text: str) -> ParsedSpec:
    """Parse a PEP 508 string, or a pip-style URL/path requirement.

    Raises ValueError with a short reason when it is neither.
    """
    stripped = text.strip()
    if not stripped:
        raise ValueError("empty requirement")
    looks_like_location = (
        bool(_URL_RE.match(stripped))
        or stripped.startswith(("git+", "hg+", "svn+", "bzr+", ".", "/", "~"))
        or bool(_ARCHIVE_RE.search(stripped.split(";", 1)[0].strip()))
    )
    if looks_like_location:
        # pip splits a URL's marker at "; " (semicolon after whitespace) or at ";" + space
        pieces = re.split(r"\s+;\s*|;\s+", stripped, maxsplit=1)
        location = pieces[0].strip()
        marker = pieces[1].strip() if len(pieces) > 1 else ""
        name, local = _name_from_url(location)
        egg = _EGG_RE.search(location)
        extras = (
            tuple(e.strip() for e in egg.group(2)[1:-1].split(",") if e.strip())
            if egg and egg.group(2)
            else ()
        )
        return ParsedSpec(name, extras, "", marker, location, local)
    try:
        req = Pep508Requirement(stripped)
    except InvalidRequirement as exc:
        reason = str(exc).splitlines()[0] if str(exc) else "not a valid requirement"
        raise ValueError(reason) from None
    local = ""
    for spec in req.specifier:
        if spec.operator in ("==", "===") and "+" in spec.version:
            local = local_label(spec.version)
    url = req.url or ""
    if url and not local:
        local = _name_from_url(url)[1]
    return ParsedSpec(
        req.name,
        tuple(sorted(req.extras)),
        str(req.specifier),
        str(req.marker) if req.marker else "",
        url,
        local,
    )


def make_requirement(
    text: str,
    *,
    path: str,
    line: int,
    section: str,
    end_line: int = 0,
    column: int = 0,
    editable: bool = False,
    hashes: tuple[str, ...] = (),
    index: str = "",
) -> Requirement:
    """A PEP 508 requirement record (raises ValueError for a malformed string)."""
    spec = parse_requirement_string(text)
    return Requirement(
        name=spec.name,
        key=normalize(spec.name),
        extras=spec.extras,
        specifier=spec.specifier,
        marker=spec.marker,
        url=spec.url,
        path=path,
        line=line,
        end_line=end_line or line,
        column=column,
        section=section,
        form=Form.PEP508,
        text=text.strip(),
        editable=editable,
        hashes=hashes,
        index=index,
        local_version=spec.local_version,
        on_linux=marker_allows_linux(spec.marker),
    )


# ---------------------------------------------------------------------------------------------
# requirements.txt / constraints.txt


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
    result = DependencyFile(path)
    stack = (*_stack, posixpath.normpath(path))
    for logical in logical_lines(text, first_line):
        _parse_logical_line(logical, result, read, section, stack, _origin)
    return result


@dataclass(frozen=True, slots=True)
class _Origin:
    """The top file's include line that led into nested includes: cycles are reported there."""

    file: DependencyFile
    line: int
    written: str  # "-r base.txt"


def _parse_logical_line(
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
    if _URL_RE.match(target):
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
    text = read(resolved)
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


# ---------------------------------------------------------------------------------------------
# TOML: values come from tomllib; line numbers from a light scan of the text.

_TOML_LINE_RE = re.compile(r"at line (\d+), column (\d+)")
_HEADER_RE = re.compile(r"^\s*\[(\[?)\s*(.+?)\s*\]\]?\s*(?:#.*)?$")


def _toml_error(path: str, text: str, exc: tomllib.TOMLDecodeError) -> Skipped:
    message = str(exc)
    match = _TOML_LINE_RE.search(message)
    if match:
        line = int(match.group(1))
    else:  # "at end of document": the file stops in the middle of something
        line = max(1, len(text.splitlines())) if "end of document" in message else 0
    return Skipped(path, SkipKind.MALFORMED, f"TOML does not parse: {message}", line)


def _load_toml(text: str, result: DependencyFile) -> dict[str, Any] | None:
    """The parsed document, or None with the parse error noted in ``result``."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        result.problems.append(_toml_error(result.path, text, exc))
        return None


def _key_parts(text: str) -> tuple[str, ...]:
    """``tool."uv" . index`` -> ("tool", "uv", "index")."""
    parts = re.findall(r'"((?:[^"\\]|\\.)*)"|\'([^\']*)\'|([A-Za-z0-9_-]+)', text)
    return tuple(a or b or c for a, b, c in parts)


class TomlLocator:
    """Finds the lines where TOML keys and string values were written."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.line_starts = [0]
        for match in re.finditer(r"\n", text):
            self.line_starts.append(match.end())
        # (header key parts, is array-of-tables, offset of the header line, offset of the end)
        self.tables: list[tuple[tuple[str, ...], bool, int, int]] = []
        in_multiline: str | None = None
        # TOML lines end at "\n" only, as tomllib counts them.
        for number, line in enumerate(text.split("\n")):
            header = _HEADER_RE.match(line) if in_multiline is None else None
            if header:
                start = self.line_starts[number]
                self.tables.append((_key_parts(header.group(2)), bool(header.group(1)), start, 0))
            for quote in ('"""', "'''"):
                if line.count(quote) % 2 == 1:
                    if in_multiline is None:
                        in_multiline = quote
                    elif in_multiline == quote:
                        in_multiline = None
        ends = [t[2] for t in self.tables[1:]] + [len(text)] if self.tables else []
        self.tables = [(k, a, s, e) for (k, a, s, _), e in zip(self.tables, ends, strict=True)]

    def line_of(self, offset: int) -> int:
        """1-based line number of a character offset."""
        lo, hi = 0, len(self.line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.line_starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1

    def ranges(self, header: tuple[str, ...]) -> list[tuple[int, int]]:
        """Text ranges of the tables with this header (several for arrays of tables)."""
        if not header:
            end = self.tables[0][2] if self.tables else len(self.text)
            return [(0, end)]
        return [(s, e) for k, _a, s, e in self.tables if k == header]

    def key_offset(self, path: tuple[str, ...], occurrence: int = 0) -> int | None:
        """Offset just after the ``=`` of the key at ``path`` (table header + dotted key)."""
        for split in range(len(path) - 1, -1, -1):
            header, key = path[:split], path[split:]
            ranges = self.ranges(header)
            if not ranges:
                continue
            start, end = ranges[min(occurrence, len(ranges) - 1)]
            pattern = r"\s*\.\s*".join(
                rf"""(?:"{re.escape(part)}"|'{re.escape(part)}'|{re.escape(part)})"""
                for part in key
            )
            match = re.compile(rf"^[ \t]*{pattern}[ \t]*=", re.MULTILINE).search(
                self.text, start, end
            )
            if match:
                return match.end()
        return None

    def header_line(self, header: tuple[str, ...], occurrence: int = 0) -> int:
        ranges = self.ranges(header)
        if not ranges:
            return 1
        return self.line_of(ranges[min(occurrence, len(ranges) - 1)][0])

    def string_after(self, value: str, offset: int) -> int | None:
        """Offset of the quoted string ``value`` at or after ``offset`` (basic or literal)."""
        best: int | None = None
        escaped = value.replace("\\", "\\\\").replace('"', '\\"')
        for quoted in (f'"{escaped}"', f"'{value}'"):
            found = self.text.find(quoted, offset)
            if found >= 0 and (best is None or found < best):
                best = found
        return best


def _toml_strings(
    locator: TomlLocator,
    path: str,
    key_path: tuple[str, ...],
    values: list[Any],
    section: str,
    result: DependencyFile,
    sources: dict[str, str] | None = None,
) -> None:
    """Requirement records for an array of PEP 508 strings at ``key_path``."""
    anchor = locator.key_offset(key_path)
    cursor = anchor if anchor is not None else 0
    fallback_line = locator.line_of(anchor) if anchor is not None else 1
    for value in values:
        if not isinstance(value, str):
            continue  # {include-group = "..."} and other tables
        found = locator.string_after(value, cursor)
        if found is not None:
            line = locator.line_of(found)
            column = found - locator.line_starts[line - 1] + 1
            cursor = found + len(value) + 2
        else:
            line, column = fallback_line, 0
        requirement = _string_requirement(value, result, line, column, section)
        if requirement is None:
            continue
        if sources and requirement.key in sources:
            requirement = _with_index(requirement, sources[requirement.key])
        result.requirements.append(requirement)


def _string_requirement(
    text: str, result: DependencyFile, line: int, column: int, section: str
) -> Requirement | None:
    """The record of a requirement string in ``section``, or None with the problem noted."""
    try:
        return make_requirement(text, path=result.path, line=line, column=column, section=section)
    except ValueError as exc:
        result.problems.append(
            Skipped(
                result.path,
                SkipKind.MALFORMED,
                f"{text!r} in {section} is not a valid requirement ({exc})",
                line,
                True,
            )
        )
        return None


def _with_index(requirement: Requirement, index: str) -> Requirement:
    return replace(requirement, index=index)


def _table_requirement(
    locator: TomlLocator,
    path: str,
    header: tuple[str, ...],
    name: str,
    value: Any,
    section: str,
) -> Requirement | None:
    """A Poetry/Pipfile ``name = "spec"`` / ``name = {version=..., ...}`` entry."""
    offset = locator.key_offset((*header, name))
    line = locator.line_of(offset) if offset is not None else locator.header_line(header)
    column = 1
    if offset is not None:
        line_start = locator.line_starts[line - 1]
        text = locator.text[line_start:offset]
        column = len(text) - len(text.lstrip()) + 1
    specifier = ""
    extras: tuple[str, ...] = ()
    marker = ""
    url = ""
    index = ""
    if isinstance(value, str):
        specifier = value
    elif isinstance(value, list):
        # Poetry's multiple-constraint form: [{version=..., markers=...}, ...]; the first counts.
        first = next((v for v in value if isinstance(v, dict)), {})
        value = first
    if isinstance(value, dict):
        specifier = str(value.get("version", ""))
        raw_extras = value.get("extras", [])
        if isinstance(raw_extras, list):
            extras = tuple(str(e) for e in raw_extras)
        marker = str(value.get("markers", value.get("marker", "")))
        for url_key in ("url", "git", "path", "file"):
            if isinstance(value.get(url_key), str):
                url = str(value[url_key])
                break
        index = str(value.get("source", value.get("index", "")))
    if specifier == "*":
        specifier = ""
    local = local_label(specifier)
    if url and not local:
        local = _name_from_url(url)[1]
    return Requirement(
        name=name,
        key=normalize(name),
        extras=extras,
        specifier=specifier,
        marker=marker,
        url=url,
        path=path,
        line=line,
        end_line=line,
        column=column,
        section=section,
        form=Form.TABLE,
        index=index,
        local_version=local,
        on_linux=marker_allows_linux(marker),
    )


def _table(data: Any, *keys: str) -> dict[str, Any]:
    for key in keys:
        if not isinstance(data, dict):
            return {}
        data = data.get(key, {})
    return data if isinstance(data, dict) else {}


def parse_pyproject(text: str, path: str) -> DependencyFile:
    """PEP 621 / PEP 735 / build-system, Poetry, uv and PDM dependencies and indexes."""
    result = DependencyFile(path)
    data = _load_toml(text, result)
    if data is None:
        return result
    locator = TomlLocator(text)
    uv_sources = _uv_sources(_table(data, "tool", "uv", "sources"))
    project = _table(data, "project")
    if isinstance(project.get("dependencies"), list):
        _toml_strings(
            locator,
            path,
            ("project", "dependencies"),
            project["dependencies"],
            "project.dependencies",
            result,
            uv_sources,
        )
    for extra, values in _table(project, "optional-dependencies").items():
        if isinstance(values, list):
            _toml_strings(
                locator,
                path,
                ("project", "optional-dependencies", extra),
                values,
                f"project.optional-dependencies.{extra}",
                result,
                uv_sources,
            )
    for group, values in _table(data, "dependency-groups").items():
        if isinstance(values, list):
            _toml_strings(
                locator,
                path,
                ("dependency-groups", group),
                values,
                f"dependency-groups.{group}",
                result,
                uv_sources,
            )
    build_requires = _table(data, "build-system").get("requires")
    if isinstance(build_requires, list):
        _toml_strings(
            locator,
            path,
            ("build-system", "requires"),
            build_requires,
            "build-system.requires",
            result,
        )
    _parse_poetry(data, locator, path, result)
    _parse_uv_indexes(data, locator, path, result)
    _parse_pdm(data, locator, path, result)
    return result


def _uv_sources(table: dict[str, Any]) -> dict[str, str]:
    """Normalized package name -> uv index name, from [tool.uv.sources]."""
    sources: dict[str, str] = {}
    for name, value in table.items():
        entries = value if isinstance(value, list) else [value]
        for entry in entries:
            if isinstance(entry, dict) and isinstance(entry.get("index"), str):
                sources[normalize(name)] = entry["index"]
                break
    return sources


def _parse_poetry(
    data: dict[str, Any], locator: TomlLocator, path: str, result: DependencyFile
) -> None:
    poetry = _table(data, "tool", "poetry")
    if not poetry:
        return
    tables: list[tuple[tuple[str, ...], str]] = [
        (("tool", "poetry", "dependencies"), "tool.poetry.dependencies"),
        (("tool", "poetry", "dev-dependencies"), "tool.poetry.dev-dependencies"),
    ]
    for group in _table(poetry, "group"):
        tables.append(
            (("tool", "poetry", "group", group, "dependencies"), f"tool.poetry.group.{group}")
        )
    for header, section in tables:
        for name, value in _table(data, *header).items():
            if name.lower() == "python":
                continue
            requirement = _table_requirement(locator, path, header, name, value, section)
            if requirement is not None:
                result.requirements.append(requirement)
    raw_sources = poetry.get("source", [])
    for occurrence, source in enumerate(raw_sources if isinstance(raw_sources, list) else []):
        if not isinstance(source, dict) or not isinstance(source.get("url"), str):
            continue
        priority = str(source.get("priority", "")).lower()
        if source.get("default") is True:
            priority = "primary"
        elif source.get("secondary") is True:
            priority = "supplemental"
        # https://python-poetry.org/docs/repositories/#project-configuration
        role = {
            "explicit": IndexRole.NAMED,
            "supplemental": IndexRole.EXTRA,
            "secondary": IndexRole.EXTRA,
        }.get(priority, IndexRole.PRIMARY)
        result.indexes.append(
            _toml_index(locator, path, ("tool", "poetry", "source"), occurrence, source, role)
        )


def _toml_index(
    locator: TomlLocator,
    path: str,
    header: tuple[str, ...],
    occurrence: int,
    source: dict[str, Any],
    role: IndexRole,
    key: str = "url",
) -> IndexSource:
    offset = locator.key_offset((*header, key), occurrence)
    line = (
        locator.line_of(offset) if offset is not None else locator.header_line(header, occurrence)
    )
    return IndexSource(str(source[key]), role, path, line, 0, key, str(source.get("name", "")))


def _parse_uv_indexes(
    data: dict[str, Any], locator: TomlLocator, path: str, result: DependencyFile
) -> None:
    uv = _table(data, "tool", "uv")
    raw = uv.get("index", [])
    for occurrence, index in enumerate(raw if isinstance(raw, list) else []):
        if not isinstance(index, dict) or not isinstance(index.get("url"), str):
            continue
        # https://docs.astral.sh/uv/concepts/indexes/ : explicit indexes serve only the
        # packages pinned to them; others are searched before PyPI, first match wins.
        role = IndexRole.NAMED if index.get("explicit") is True else IndexRole.PRIMARY
        result.indexes.append(
            _toml_index(locator, path, ("tool", "uv", "index"), occurrence, index, role)
        )
    # The older spellings: [tool.uv] index-url / extra-index-url / find-links.
    for key, role in (
        ("index-url", IndexRole.PRIMARY),
        ("extra-index-url", IndexRole.EXTRA),
        ("find-links", IndexRole.FIND_LINKS),
    ):
        value = uv.get(key)
        urls = value if isinstance(value, list) else [value] if isinstance(value, str) else []
        offset = locator.key_offset(("tool", "uv", key))
        cursor = offset or 0
        for url in urls:
            if not isinstance(url, str):
                continue
            found = locator.string_after(url, cursor)
            line = locator.line_of(found if found is not None else cursor)
            if found is not None:
                cursor = found + len(url)
            result.indexes.append(IndexSource(url, role, path, line, 0, key))


def _parse_pdm(
    data: dict[str, Any], locator: TomlLocator, path: str, result: DependencyFile
) -> None:
    pdm = _table(data, "tool", "pdm")
    raw = pdm.get("source", [])
    for occurrence, source in enumerate(raw if isinstance(raw, list) else []):
        if not isinstance(source, dict) or not isinstance(source.get("url"), str):
            continue
        # https://pdm-project.org/latest/usage/config/#configure-the-package-indexes :
        # a source named "pypi" replaces PyPI; the others are searched beside it.
        if source.get("type") == "find_links":
            role = IndexRole.FIND_LINKS
        elif source.get("name") == "pypi":
            role = IndexRole.PRIMARY
        else:
            role = IndexRole.EXTRA
        result.indexes.append(
            _toml_index(locator, path, ("tool", "pdm", "source"), occurrence, source, role)
        )
    for group, values in _table(pdm, "dev-dependencies").items():
        if isinstance(values, list):
            _toml_strings(
                locator,
                path,
                ("tool", "pdm", "dev-dependencies", group),
                values,
                f"tool.pdm.dev-dependencies.{group}",
                result,
            )
    for source in raw if isinstance(raw, list) else []:
        if isinstance(source, dict):
            _tie_pdm_packages(source, result)


def _tie_pdm_packages(source: dict[str, Any], result: DependencyFile) -> None:
    """Tie the requirements a source's ``include_packages`` names to that source.

    https://pdm-project.org/latest/usage/config/#specify-index-for-individual-packages :
    packages matching ``include_packages`` are searched in that source only.
    """
    patterns = source.get("include_packages")
    name = source.get("name")
    if not isinstance(patterns, list) or not isinstance(name, str):
        return
    globs = [normalize(p) if "*" not in p else p.lower() for p in patterns if isinstance(p, str)]
    result.requirements[:] = [
        _with_index(r, name)
        if not r.index and any(fnmatch.fnmatchcase(r.key, g) for g in globs)
        else r
        for r in result.requirements
    ]


def parse_pipfile(text: str, path: str) -> DependencyFile:
    """Pipenv's Pipfile: [[source]] indexes and [packages] / [dev-packages] tables."""
    result = DependencyFile(path)
    data = _load_toml(text, result)
    if data is None:
        return result
    locator = TomlLocator(text)
    raw = data.get("source", [])
    for occurrence, source in enumerate(raw if isinstance(raw, list) else []):
        if not isinstance(source, dict) or not isinstance(source.get("url"), str):
            continue
        # Pipenv installs from the first source unless a package names another (index = ...).
        role = IndexRole.PRIMARY if occurrence == 0 else IndexRole.NAMED
        result.indexes.append(_toml_index(locator, path, ("source",), occurrence, source, role))
    for section in ("packages", "dev-packages"):
        for name, value in _table(data, section).items():
            requirement = _table_requirement(locator, path, (section,), name, value, section)
            if requirement is not None:
                result.requirements.append(requirement)
    return result


# ---------------------------------------------------------------------------------------------
# setup.py (ast only) and setup.cfg

_SETUP_KEYWORDS = ("install_requires", "extras_require", "setup_requires", "tests_require")


def parse_setup_py(text: str, path: str) -> DependencyFile:
    """Literal dependency lists of ``setup(...)`` calls; computed values are noted, not run."""
    result = DependencyFile(path)
    try:
        with warnings.catch_warnings():
            # Odd literals in user code raise SyntaxWarning on stderr; a stage never prints.
            warnings.simplefilter("ignore")
            tree = ast.parse(text, filename=path)
    except SyntaxError as exc:
        line = exc.lineno or 0
        result.problems.append(
            Skipped(path, SkipKind.SYNTAX, f"Python syntax error: {exc.msg}", line)
        )
        return result
    except ValueError as exc:  # NUL bytes and the like
        result.problems.append(Skipped(path, SkipKind.SYNTAX, f"cannot parse: {exc}", 0))
        return result
    assignments = _module_assignments(tree)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not _is_setup_call(node.func):
            continue
        for keyword in node.keywords:
            if keyword.arg in _SETUP_KEYWORDS:
                _setup_value(keyword.arg, keyword.value, assignments, path, result)
            elif keyword.arg == "dependency_links":
                for element, line, column in _literal_strings(keyword.value, assignments) or []:
                    result.indexes.append(
                        IndexSource(
                            element, IndexRole.FIND_LINKS, path, line, column, "dependency_links"
                        )
                    )
    return result


def _is_setup_call(func: ast.expr) -> bool:
    if isinstance(func, ast.Name):
        return func.id == "setup"
    return isinstance(func, ast.Attribute) and func.attr == "setup"


def _module_assignments(tree: ast.Module) -> dict[str, ast.expr]:
    """Module-level ``NAME = <expr>`` as later ``+=``/append/extend leave it; never run."""
    found: dict[str, ast.expr] = {}
    for statement in tree.body:
        if isinstance(statement, ast.Assign):
            for target in statement.targets:
                if isinstance(target, ast.Name):
                    found[target.id] = statement.value
        elif (
            isinstance(statement, ast.AnnAssign)
            and isinstance(statement.target, ast.Name)
            and statement.value is not None
        ):
            found[statement.target.id] = statement.value
        elif (
            isinstance(statement, ast.AugAssign)
            and isinstance(statement.target, ast.Name)
            and statement.target.id in found
        ):
            name = statement.target.id
            found[name] = (
                _extended(found[name], statement.value)
                if isinstance(statement.op, ast.Add)
                else statement.value  # not a list any more: read as computed
            )
        elif (
            isinstance(statement, ast.Expr)
            and isinstance(call := statement.value, ast.Call)
            and isinstance(method := call.func, ast.Attribute)
            and isinstance(method.value, ast.Name)
            and method.value.id in found
        ):
            # REQS.append("x") / REQS.extend([...]) change the list setup() will see.
            name = method.value.id
            if method.attr in ("append", "extend") and len(call.args) == 1 and not call.keywords:
                added = call.args[0]
                if method.attr == "append":
                    added = ast.copy_location(ast.List(elts=[added], ctx=ast.Load()), added)
                found[name] = _extended(found[name], added)
            else:
                found[name] = call  # changed in a way gpuport does not follow: computed
    return found


def _extended(value: ast.expr, added: ast.expr) -> ast.expr:
    """``value + added``, merged into one literal list when both are literal lists."""
    if isinstance(value, (ast.List, ast.Tuple)) and isinstance(added, (ast.List, ast.Tuple)):
        return ast.copy_location(ast.List(elts=[*value.elts, *added.elts], ctx=ast.Load()), value)
    return ast.copy_location(ast.BinOp(left=value, op=ast.Add(), right=added), value)


def _literal_strings(
    node: ast.expr, assignments: dict[str, ast.expr], depth: int = 0
) -> list[tuple[str, int, int]] | None:
    """(string, line, column) for a literal list/tuple/str (or a name bound to one); else None."""
    if depth > 5:
        return None
    if isinstance(node, ast.Name) and node.id in assignments:
        return _literal_strings(assignments[node.id], assignments, depth + 1)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        # A multi-line string of requirements, one per line.
        items = []
        for offset, text in enumerate(node.value.splitlines()):
            if text.strip() and not text.strip().startswith("#"):
                items.append((text.strip(), node.lineno + offset, node.col_offset + 1))
        return items
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        items = []
        for element in node.elts:
            if isinstance(element, ast.Constant) and isinstance(element.value, str):
                items.append((element.value, element.lineno, element.col_offset + 1))
            else:
                return None
        return items
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left = _literal_strings(node.left, assignments, depth + 1)
        right = _literal_strings(node.right, assignments, depth + 1)
        if left is None or right is None:
            return None
        return left + right
    return None


def _setup_value(
    keyword: str,
    value: ast.expr,
    assignments: dict[str, ast.expr],
    path: str,
    result: DependencyFile,
) -> None:
    if keyword == "extras_require":
        mapping = value
        if isinstance(mapping, ast.Name) and mapping.id in assignments:
            mapping = assignments[mapping.id]
        if isinstance(mapping, ast.Dict):
            for key_node, item in zip(mapping.keys, mapping.values, strict=True):
                if isinstance(key_node, ast.Constant) and isinstance(key_node.value, str):
                    _setup_list(f"extras_require.{key_node.value}", item, assignments, path, result)
                else:
                    _note_computed("an extras_require key", item, path, result)
            return
        _note_computed(keyword, value, path, result)
        return
    _setup_list(keyword, value, assignments, path, result)


def _setup_list(
    section: str,
    value: ast.expr,
    assignments: dict[str, ast.expr],
    path: str,
    result: DependencyFile,
) -> None:
    items = _literal_strings(value, assignments)
    if items is None:
        _note_computed(section, value, path, result)
        return
    for text, line, column in items:
        requirement = _string_requirement(text, result, line, column, section)
        if requirement is not None:
            result.requirements.append(requirement)


def _note_computed(section: str, value: ast.expr, path: str, result: DependencyFile) -> None:
    source = ast.unparse(value)
    shown = source if len(source) <= 60 else source[:57] + "..."
    result.problems.append(
        Skipped(
            path,
            SkipKind.UNREADABLE,
            f"{section} is computed ({shown}); setup.py is never run, so "
            "these dependencies were not checked (list them in pyproject.toml or a "
            "requirements file to have them checked)",
            value.lineno,
            True,
        )
    )


def parse_setup_cfg(text: str, path: str) -> DependencyFile:
    """``[options] install_requires`` and ``[options.extras_require]`` of a setup.cfg."""
    result = DependencyFile(path)
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text, source=path)
    except configparser.Error as exc:
        line = int(getattr(exc, "lineno", 0) or 0)
        if not line and isinstance(exc, configparser.ParsingError) and exc.errors:
            line = int(exc.errors[0][0])
        message = " ".join(str(exc).split())
        result.problems.append(
            Skipped(path, SkipKind.MALFORMED, f"INI does not parse: {message}", line)
        )
        return result
    section = ""
    key = ""
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        header = re.match(r"^\[\s*([^\]]+?)\s*\]", raw)
        if header:
            section, key = header.group(1).lower(), ""
            continue
        if not stripped or stripped.startswith(("#", ";")):
            continue
        continuation = raw[:1] in (" ", "\t") and key
        if not continuation:
            name, sep, value = raw.partition("=")
            if not sep:
                name, sep, value = raw.partition(":")
            key = name.strip().lower().replace("-", "_")
            target = _cfg_target(section, key)
            if target is None:
                key = ""
                continue
            if value.strip() and not value.strip().startswith("file:"):
                column = raw.index(value.strip()) + 1
                _cfg_requirement(value.strip(), target, number, column, result)
            elif value.strip().startswith("file:"):
                result.problems.append(
                    Skipped(
                        path,
                        SkipKind.UNREADABLE,
                        f"{key} reads {value.strip()}; scan that file on its own "
                        "(it is not followed)",
                        number,
                        True,
                    )
                )
            continue
        target = _cfg_target(section, key)
        if target is not None:
            _cfg_requirement(stripped, target, number, raw.index(stripped) + 1, result)
    return result


def _cfg_target(section: str, key: str) -> str | None:
    if section == "options" and key in ("install_requires", "setup_requires", "tests_require"):
        return key
    if section == "options.extras_require" and key:
        return f"extras_require.{key}"
    return None


def _cfg_requirement(
    text: str, section: str, line: int, column: int, result: DependencyFile
) -> None:
    text = re.sub(r"\s+[#;].*$", "", text).strip()
    if not text:
        return
    requirement = _string_requirement(text, result, line, column, section)
    if requirement is not None:
        result.requirements.append(requirement)


# ---------------------------------------------------------------------------------------------
# conda environment.yml

_CONDA_SPEC_RE = re.compile(
    r"^(?:(?P<channel>[A-Za-z0-9_./:-]+?)::)?(?P<name>[A-Za-z0-9_][A-Za-z0-9_.-]*)(?P<rest>.*)$"
)


def parse_conda_spec(text: str) -> tuple[str, str, str, str] | None:
    """``nvidia::cuda-toolkit=12.1=h1`` -> (channel, name, spec, build); None if not a spec."""
    match = _CONDA_SPEC_RE.match(text.strip())
    if not match:
        return None
    rest = match.group("rest").strip()
    build = ""
    bracket = re.search(r"\[([^\]]*)\]", rest)
    if bracket:
        b = re.search(r"""build\s*=\s*['"]?([^'",\]]+)""", bracket.group(1))
        build = b.group(1) if b else ""
    else:
        pieces = re.split(r"[=\s]+", rest.lstrip("=").strip()) if rest else []
        # `name=version=build` or `name version build`
        if len(pieces) >= 2 and (rest.count("=") >= 2 or " " in rest.strip()):
            build = pieces[-1]
    return match.group("channel") or "", match.group("name").lower(), rest, build


def parse_conda_env(text: str, path: str, *, read: Reader | None = None) -> DependencyFile:
    """A conda environment file: channels, conda packages and the ``pip:`` subsection."""
    result = DependencyFile(path)
    try:
        documents = list(yaml.compose_all(text, Loader=yaml.SafeLoader))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = mark.line + 1 if mark is not None else 0
        message = " ".join(str(getattr(exc, "problem", "") or exc).split())
        result.problems.append(
            Skipped(path, SkipKind.MALFORMED, f"YAML does not parse: {message}", line)
        )
        return result
    root = documents[0] if documents else None
    if not isinstance(root, yaml.MappingNode):
        return result
    for key_node, value_node in root.value:
        key = key_node.value if isinstance(key_node, yaml.ScalarNode) else ""
        if key == "channels" and isinstance(value_node, yaml.SequenceNode):
            for item in value_node.value:
                if isinstance(item, yaml.ScalarNode) and item.value:
                    result.indexes.append(
                        IndexSource(
                            str(item.value),
                            IndexRole.CHANNEL,
                            path,
                            item.start_mark.line + 1,
                            item.start_mark.column + 1,
                            "channels",
                        )
                    )
        elif key == "dependencies" and isinstance(value_node, yaml.SequenceNode):
            pip_line = pip_last = pip_column = 0
            for item in value_node.value:
                if isinstance(item, yaml.ScalarNode):
                    _conda_item(item, path, result)
                elif isinstance(item, yaml.MappingNode):
                    for sub_key, sub_value in item.value:
                        if (
                            isinstance(sub_key, yaml.ScalarNode)
                            and sub_key.value == "pip"
                            and isinstance(sub_value, yaml.SequenceNode)
                        ):
                            _conda_pip(sub_value, path, result, read)
                            pip_line = sub_key.start_mark.line + 1
                            if sub_value.value:
                                pip_last = _last_line(sub_value.value[-1])
                                pip_column = _dash_column(text, sub_value.value[0])
            items = value_node.value
            result.conda_layout = CondaLayout(
                dependencies_line=key_node.start_mark.line + 1,
                last_item_line=_last_line(items[-1]) if items else 0,
                item_column=_dash_column(text, items[0]) if items else 0,
                pip_line=pip_line,
                pip_last_line=pip_last,
                pip_item_column=pip_column,
            )
    return result


def _last_line(node: yaml.Node) -> int:
    """1-based last line a node's text covers.

    A block collection's end mark sits at the next token (maybe after comments), so the last
    scalar inside it decides.
    """
    if isinstance(node, yaml.SequenceNode) and node.value:
        return _last_line(node.value[-1])
    if isinstance(node, yaml.MappingNode) and node.value:
        return _last_line(node.value[-1][1])
    end = node.end_mark
    return end.line + 1 if end.column > 0 else end.line


def _dash_column(text: str, node: yaml.Node) -> int:
    """1-based column of the ``-`` that starts a block sequence item."""
    line = text.splitlines()[node.start_mark.line]
    before = line[: node.start_mark.column]
    dash = before.rfind("-")
    return dash + 1 if dash >= 0 else node.start_mark.column + 1


def _conda_item(node: yaml.ScalarNode, path: str, result: DependencyFile) -> None:
    text = str(node.value)
    parsed = parse_conda_spec(text)
    line, column = node.start_mark.line + 1, node.start_mark.column + 1
    if parsed is None:
        result.problems.append(
            Skipped(
                path,
                SkipKind.MALFORMED,
                f"{text!r} is not a conda package spec",
                line,
                True,
            )
        )
        return
    channel, name, spec, build = parsed
    result.conda_packages.append(CondaPackage(name, spec, channel, build, text, path, line, column))


def _conda_pip(
    node: yaml.SequenceNode, path: str, result: DependencyFile, read: Reader | None
) -> None:
    for item in node.value:
        if not isinstance(item, yaml.ScalarNode):
            continue
        line = item.start_mark.line + 1
        logical = LogicalLine(str(item.value).strip(), line, line, item.start_mark.column + 1)
        if not logical.text or logical.text.startswith("#"):
            continue
        _parse_logical_line(logical, result, read, "conda.pip", (posixpath.normpath(path),))
