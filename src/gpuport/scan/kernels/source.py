"""One CUDA/C++ file as the kernel rules read it: its text, its code-only twin, and indexes built on demand."""

from __future__ import annotations

import bisect
import functools
import os
import re
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TypeVar

from gpuport.files import NO_PROJECT_FACTS, HeaderFacts, ProjectFacts
from gpuport.findings import Confidence, Finding, Fix, Severity
from gpuport.rules import Rule, needles_of
from gpuport.scan.kernels.constants import Constant, Constants
from gpuport.scan.kernels.names import Names, tracked_names
from gpuport.scan.kernels.ptx import AsmStatement, asm_statements
from gpuport.syntax.brackets import Brackets
from gpuport.syntax.cxx import code_only
from gpuport.syntax.preprocessor import (
    Conditions,
    can_matter,
    conditions,
    evaluate_for,
    is_nvidia_only,
)
from gpuport.syntax.text import LineIndex

# Starts at the '#' rather than at ``^`` (which Python's regex engine tries at every offset);
# that the '#' opens its line is checked with ``directive_line_start``.
_INCLUDE_RE = re.compile(r"#[ \t]*include(?:_next)?[ \t]*([<\"])([^>\"\r\n]+)[>\"]")

# The CUDA toolkit's version macros: HIP never defines them (kb/cuda_hip_extra.toml,
# "unsupported": HIP has HIP_VERSION instead), so on ROCm `#if CUDART_VERSION >= 13000` takes its
# `#else`. When every such test of a file reads there as it reads for a current toolkit (CUDA
# 12.8, arch_branches._TOOLKIT), the branch ROCm takes is the one current NVIDIA builds take: the
# other is CUDA-only (a newer toolkit's API), like a test of __CUDACC_VER_MAJOR__
# (syntax/preprocessor.py's NVIDIA_ONLY). A test a current toolkit passes (`CUDA_VERSION >=
# 9000`) stays undecided: ROCm's path there is one no current NVIDIA build takes, maybe a stub.
# Not in a PyTorch extension: torch's hipify renames CUDA_VERSION there (to TORCH_HIP_VERSION).
_TOOLKIT_VERSIONS = frozenset({"CUDA_VERSION", "CUDART_VERSION"})
_CURRENT_TOOLKIT = dict.fromkeys(_TOOLKIT_VERSIONS, 12080)
_TOOLKIT_TEST_RE = re.compile(
    r"^[ \t]*#[ \t]*(?:el)?if[ \t](.*\bCUDA(?:RT)?_VERSION\b.*)$", re.MULTILINE
)
_TORCH_HEADER_RE = re.compile(r"(?:torch|ATen|c10)/")


def _toolkit_tests_read_as_current(code: str) -> bool:
    """Does every ``#if`` of ``code`` on the toolkit's version read on ROCm (versions absent)
    as it reads for a current CUDA toolkit? False when there is none, or one cannot be told."""
    found = False
    for m in _TOOLKIT_TEST_RE.finditer(code):
        expr = m.group(1)
        if expr.rstrip().endswith("\\"):
            return False  # continued on the next line: not read here
        on_rocm = evaluate_for(expr, {}, lambda n: n in _TOOLKIT_VERSIONS or is_nvidia_only(n))
        if on_rocm is None or on_rocm != evaluate_for(expr, _CURRENT_TOOLKIT, is_nvidia_only):
            return False
        found = True
    return found


_Hit = TypeVar("_Hit", re.Match[str], tuple[int, int, str])


@functools.lru_cache(maxsize=8)
def _real_root(root: Path) -> str:
    """The scan root with its links resolved, worked out once per root."""
    return os.path.realpath(root)


_HEADER_READ_LIMIT = 1 << 20  # a header larger than this is generated code: not read


@functools.lru_cache(maxsize=256)
def _read_header(
    path: str, rocm_macros: frozenset[str]
) -> tuple[dict[str, Constant], tuple[str, ...]]:
    """(constants defined where ROCm compiles them, the names it ``#include``s) of a header."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read(_HEADER_READ_LIMIT + 1)
    except OSError:
        return {}, ()
    if len(raw) > _HEADER_READ_LIMIT:
        return {}, ()
    code = code_only(raw.decode("utf-8", errors="replace"))
    found = conditions(code, rocm_macros) if can_matter(code, rocm_macros) else None
    constants = Constants(code)
    result: dict[str, Constant] = {}
    for name in set(_DEFINED_NAME_RE.findall(code)):
        constant = constants.get(name)
        if constant is not None and (found is None or not found.is_dead(constant.start)):
            result[name] = constant
    includes = tuple(
        m.group(2).strip()
        for m in _INCLUDE_RE.finditer(code)
        if directive_line_start(code, m.start()) >= 0
    )
    return result, includes


def _inside(root: str, candidate: str) -> bool:
    """Is ``candidate`` (links resolved) a regular file inside ``root``?"""
    try:
        return os.path.commonpath([root, candidate]) == root and stat.S_ISREG(
            os.lstat(candidate).st_mode
        )
    except (OSError, ValueError):
        return False


# How deep header_constant follows the includes of the headers a file includes.
_HEADER_DEPTH = 3


_DEFINED_NAME_RE = re.compile(r"#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]")


def directive_line_start(text: str, pos: int) -> int:
    """Where a ``re.M`` ``^`` before ``pos`` would match, past spaces and tabs only; or -1."""
    while pos > 0 and text[pos - 1] in " \t":
        pos -= 1
    return pos if pos == 0 or text[pos - 1] == "\n" else -1


class KernelSource:
    """One file's text, its code-only twin, and per-file indexes built once, on demand.

    ``code`` is the text with comments and the insides of string literals blanked
    (:func:`gpuport.syntax.cxx.code_only`), at the same offsets.
    """

    __slots__ = (
        "_asm",
        "_body",
        "_brackets",
        "_conditions",
        "_constants",
        "_dead_lines",
        "_include_spans",
        "_included",
        "_includes",
        "_lines",
        "_mentioned",
        "_names",
        "_quoted",
        "code",
        "facts",
        "path",
        "rel",
        "root",
        "text",
    )

    def __init__(
        self,
        rel: str,
        text: str,
        code: str,
        facts: ProjectFacts = NO_PROJECT_FACTS,
        *,
        path: Path | None = None,
        root: Path | None = None,
    ) -> None:
        self.rel = rel
        self.path = path  # where the file is, to tell the project's own headers: None in tests
        self.root = root
        self.text = text
        self.code = code
        self.facts = facts
        self._conditions: Conditions | bool | None = False  # False: not read yet
        self._dead_lines: tuple[list[int], list[int]] | None = None
        self._lines: LineIndex | None = None
        self._includes: list[tuple[str, int]] | None = None
        self._included: HeaderFacts | None = None
        self._include_spans: list[tuple[int, int]] = []
        self._quoted: set[int] = set()
        self._body: str | None = None
        self._brackets: Brackets | None = None
        self._names: Names | None = None
        self._constants: Constants | None = None
        self._asm: list[AsmStatement] | None = None
        self._mentioned: dict[str, bool] = {}

    def position(self, offset: int) -> tuple[int, int]:
        lines = self._lines
        if lines is None:
            lines = self._lines = LineIndex(self.text, lone_cr_breaks=True)
        return lines.position(offset)

    def mentions(self, rule: Rule) -> bool:
        """Whether the code holds one of ``rule``'s needles: else that rule cannot fire.

        Looked for once per rule and file: the pass tests a rule's needles before its check
        does."""
        found = self._mentioned.get(rule.id)
        if found is None:
            found = self._mentioned[rule.id] = needles_of(rule).found_in(self.code)
        return found

    @property
    def conditions(self) -> Conditions | None:
        """The file's ``#if`` stacks read as a ROCm build reads them; None when it has none."""
        if self._conditions is False:
            macros = self.facts.rocm_macros
            cuda_only = self.included.cuda_only_macros
            if (
                "_VERSION" in self.code
                and _toolkit_tests_read_as_current(self.code)
                and not any(_TORCH_HEADER_RE.match(header) for header, _ in self.includes)
            ):
                cuda_only = cuda_only | _TOOLKIT_VERSIONS
            zero = self.included.zero_macros
            self._conditions = (
                conditions(self.code, macros, cuda_only, zero)
                if can_matter(self.code, macros | cuda_only | zero)
                else None
            )
        assert self._conditions is not True
        return self._conditions

    def compiled_on_rocm(self, offset: int) -> bool:
        """False where a ROCm build never compiles the code (a CUDA-only ``#if`` branch)."""
        found = self.conditions
        return found is None or not found.is_dead(offset)

    def compiled_line(self, line: int) -> bool:
        """False when the whole 1-based ``line`` is in a region ROCm never compiles."""
        if self._dead_lines is None:
            found = self.conditions
            spans = [] if found is None else found.dead
            # a dead span starts at a line's start; its last line is the one before its end
            self._dead_lines = (
                [self.line_of(s) for s, _ in spans],
                [self.line_of(max(s, e - 1)) for s, e in spans],
            )
        firsts, lasts = self._dead_lines
        i = bisect.bisect_right(firsts, line) - 1
        return i < 0 or line > lasts[i]

    def rocm_aliases(self) -> frozenset[str]:
        """CUDA names the project maps to HIP forms for ROCm, here or in a compat header."""
        found = self.conditions
        local = found.rocm_aliases() if found is not None else frozenset()
        return local | self.included.rocm_aliases

    @property
    def included(self) -> HeaderFacts:
        """What the project's headers this file includes bring in (ProjectFacts.included)."""
        if self._included is None:
            facts = self.facts
            self._included = (
                facts.included(self.rel, (name for name, _ in self.includes))
                if facts.headers
                else HeaderFacts(self.rel, facts.rocm_aliases, facts.cuda_only_macros)
            )
        return self._included

    def line_of(self, offset: int) -> int:
        return self.position(offset)[0]

    def finding(
        self,
        rule: Rule,
        start: int,
        end: int | None = None,
        *,
        message: str | None = None,
        fix: Fix | None = None,
        confidence: Confidence | None = None,
        severity: Severity | None = None,
    ) -> Finding:
        line, column = self.position(start)
        end_line, end_column = self.position(end) if end is not None else (line, 0)
        return rule.finding(
            self.rel,
            line,
            column,
            message=message,
            fix=fix,
            end_line=end_line,
            end_column=end_column,
            confidence=confidence,
            severity=severity,
        )

    def once_per_line(self, hits: Iterable[_Hit]) -> Iterator[_Hit]:
        """The first of ``hits`` (matches, or tuples starting with an offset) on each line."""
        seen: set[int] = set()
        for hit in hits:
            line = self.line_of(hit.start() if isinstance(hit, re.Match) else hit[0])
            if line not in seen:
                seen.add(line)
                yield hit

    def _index_includes(self) -> list[tuple[str, int]]:
        code = self.code
        includes: list[tuple[str, int]] = []
        if "include" in code:
            for m in _INCLUDE_RE.finditer(code):
                start = directive_line_start(code, m.start())
                if start >= 0:
                    includes.append((m.group(2).strip(), start))
                    self._include_spans.append((start, m.end()))
                    if m.group(1) == '"':
                        self._quoted.add(start)
        self._includes = includes
        return includes

    def project_header(self, header: str, offset: int) -> bool:
        """Is the ``#include "header"`` at ``offset`` a file of the project beside this one?

        Quoted names are looked up next to the including file first, so a project's own
        ``"cuda/foo.cuh"`` is not a library's ``<cuda/...>``. Only a regular file inside the
        scan root counts (links resolved before that test), and nothing is opened."""
        if self.path is None or self.root is None:
            return False
        if self._includes is None:
            self._index_includes()
        if offset not in self._quoted:
            return False
        try:
            root = _real_root(self.root)
            # realpath: a folder on the way that links out of the root does not count either
            candidate = os.path.realpath(os.path.join(os.path.dirname(self.path), header))
            if os.path.commonpath([root, candidate]) != root:
                return False
            return stat.S_ISREG(os.lstat(candidate).st_mode)
        except (OSError, ValueError):
            return False

    def header_constant(self, name: str) -> tuple[str, Constant] | None:
        """(header as included, its definition) of a constant this file uses but does not
        define, from the project headers it includes (``FULL_MASK`` from ``#include
        "utils.cuh"``), where a ROCm build compiles that definition. A header is looked up
        beside the including file (quoted names), then in the project's include folders
        (ProjectFacts.include_dirs); the headers those include are followed
        :data:`_HEADER_DEPTH` levels deep. Each header is read once per scan process."""
        if self.path is None or self.root is None:
            return None
        root = _real_root(self.root)
        here = os.path.dirname(self.path)
        level = [
            (header, path)
            for header, offset in self.includes
            if (path := self._include_path(root, here, header, offset in self._quoted))
        ]
        seen = {path for _, path in level}
        for _depth in range(_HEADER_DEPTH):
            deeper: list[tuple[str, str]] = []
            for header, path in level:
                constants, includes = _read_header(path, self.facts.rocm_macros)
                found = constants.get(name)
                if found is not None:
                    return header, found
                folder = os.path.dirname(path)
                for include in includes:
                    nested = self._include_path(root, folder, include, True)
                    if nested is not None and nested not in seen:
                        seen.add(nested)
                        deeper.append((header, nested))
            level = deeper
        return None

    def _include_path(self, root: str, folder: str, header: str, quoted: bool) -> str | None:
        """The project file an include names: beside ``folder`` (quoted names), then in each of
        the project's include folders, nearest to ``folder`` first; None when none is."""
        if quoted:
            beside = os.path.realpath(os.path.join(folder, header))
            if _inside(root, beside):
                return beside
        dirs = self.facts.include_dirs
        if not dirs or os.path.isabs(header):
            return None
        here = os.path.relpath(os.path.realpath(folder), root).split(os.sep)

        def nearness(rel: str) -> int:
            shared = 0
            for a, b in zip(rel.split("/"), here, strict=False):
                if a != b:
                    break
                shared += 1
            return -shared

        for rel in sorted(dirs, key=nearness):
            candidate = os.path.realpath(os.path.join(root, rel, header))
            if _inside(root, candidate):
                return candidate
        return None

    @property
    def includes(self) -> list[tuple[str, int]]:
        """(header as written, offset of the directive) for every ``#include``."""
        if self._includes is None:
            return self._index_includes()
        return self._includes

    @property
    def body(self) -> str:
        """The code with ``#include`` lines blanked, so header names do not look like calls."""
        if self._body is None:
            if self._includes is None:
                self._index_includes()
            code = self.code
            pieces: list[str] = []
            done = 0
            for start, end in self._include_spans:
                pieces.append(code[done:start])
                pieces.append(" " * (end - start))
                done = end
            self._body = "".join(pieces) + code[done:] if pieces else code
        return self._body

    @property
    def brackets(self) -> Brackets:
        """The code's brackets, paired in one pass that the rules' questions share."""
        if self._brackets is None:
            self._brackets = Brackets(self.code, header_names=False)
            # read the whole file now: the rules ask in file order one after another, and a
            # pass that started at one rule's first bracket would start again at the next's
            self._brackets.closing(0, len(self.code))
        return self._brackets

    @property
    def names(self) -> Names:
        """The variables holding thread indices and lane numbers."""
        if self._names is None:
            self._names = tracked_names(self.code)
        return self._names

    @property
    def constants(self) -> Constants:
        """The file's named constants, looked up on demand."""
        if self._constants is None:
            self._constants = Constants(self.code)
        return self._constants

    @property
    def asm(self) -> list[AsmStatement]:
        """Every inline-assembly statement, with its PTX read."""
        if self._asm is None:
            self._asm = asm_statements(self.text, self.code, self.brackets)
        return self._asm
