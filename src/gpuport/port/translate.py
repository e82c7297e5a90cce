"""CUDA → HIP source translation: whole identifiers in code only, headers, warp intrinsics.

The translator never touches part of a name, a string or a comment (unless asked to), keeps
every other byte as it was (CRLF, non-UTF-8 bytes read with ``surrogateescape``), and gives
the same text back when run on its own output.

Speed comes from looking only at what can matter: one regular expression walks the file and
stops at comments, string and character literals (to step over them), ``#include`` lines and
identifiers with a CUDA-ish spelling (``cu…``, ``CU…``, ``nv…``, ``__…``) or a name from a
short list. Its token rules are the lossless lexer's (:mod:`gpuport.cxx.lexer`), which the
tests check; the lexer itself is used where structure matters (call arguments, directives,
declarations).
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from gpuport.edits import ChangeStatus
from gpuport.files import FileKind, classify
from gpuport.findings import Severity
from gpuport.port.apimap import (
    ApiEntry,
    ApiMap,
    HeaderEntry,
    Version,
    load_api_map,
    parse_version,
    version_text,
)
from gpuport.port.model import Change, FileResult
from gpuport.scan.kernels import analyze as scan_cuda_text
from gpuport.syntax.cxx import CHAR_RE_TEXT as _CHAR
from gpuport.syntax.cxx import COMMENT_RE_TEXT as _COMMENT
from gpuport.syntax.cxx import DIRECTIVE_GAP_RE_TEXT as _DIRECTIVE_GAP
from gpuport.syntax.cxx import ID_CHARS as _ID
from gpuport.syntax.cxx import ID_START_CHARS as _ID_START
from gpuport.syntax.cxx import NUMBER_RE_TEXT as _NUMBER
from gpuport.syntax.cxx import RAW_RE_TEXT as _RAW
from gpuport.syntax.cxx import STRING_RE_TEXT as _STRING
from gpuport.syntax.cxx import Kind, Token, code_only, tokenize

CONVERTED = ChangeStatus.CONVERTED
NEEDS_REVIEW = ChangeStatus.NEEDS_REVIEW
UNCONVERTED = ChangeStatus.UNCONVERTED

HIP_RUNTIME_HEADER = "hip/hip_runtime.h"
FULL_MASK_64 = "0xffffffffffffffffULL"
# What replaces __syncwarp() where HIP has none: the lanes of a wavefront execute in
# lockstep, so a wavefront-level scheduling barrier keeps the compiler from moving memory
# operations across the point (ROCm 7.0's own __syncwarp adds wavefront fences around it).
WAVE_BARRIER = "__builtin_amdgcn_wave_barrier()"

_NOT_AFTER_ID = rf"(?<![{_ID}])"
_INCLUDE = (
    rf"\#{_DIRECTIVE_GAP}(?:include_next|include|import)(?![{_ID}])[ \t]*"
    r"(?P<hdr><[^>\r\n]*>|\"[^\"\r\n]*\")"
)
_CANDIDATE_PREFIXES = ("cu", "CU", "Cu", "nv", "NV", "__", "_C")

# Names without a CUDA-ish prefix that the translator still has to see.
_VECTOR_TYPES = frozenset(
    f"{base}{n}"
    for base in (
        "char",
        "uchar",
        "short",
        "ushort",
        "int",
        "uint",
        "long",
        "ulong",
        "longlong",
        "ulonglong",
        "float",
        "double",
    )
    for n in (1, 2, 3, 4)
)
# Functions HIP's own headers define that CUDA code often defines for itself (CUDA lacks
# float atomicMin/atomicMax; old code adds a double atomicAdd; helper headers add make_*
# overloads): a second definition fails to compile or makes calls ambiguous.
_CLASH_FUNCTIONS = frozenset(
    {"atomicMin", "atomicMax", "atomicAdd", "atomicSub", "atomicExch"}
    | {f"make_{t}" for t in _VECTOR_TYPES}
)
_WARP_BUILTINS = frozenset({"__shfl", "__shfl_up", "__shfl_down", "__shfl_xor", "__ballot"})
_MASKED_WARP = {
    "__shfl_sync": "__shfl",
    "__shfl_up_sync": "__shfl_up",
    "__shfl_down_sync": "__shfl_down",
    "__shfl_xor_sync": "__shfl_xor",
    "__ballot_sync": "__ballot",
    "__any_sync": "__any",
    "__all_sync": "__all",
}
_MATCH_WARP = frozenset({"__match_any_sync", "__match_all_sync"})
_KERNEL_WORDS = frozenset(
    {"__global__", "__device__", "__shared__", "__constant__", "__managed__", "__launch_bounds__"}
)
_KERNEL_BUILTIN_RE = re.compile(r"(?<![A-Za-z0-9_$])(?:threadIdx|blockIdx|blockDim|gridDim)\b")
_ARITH_OPERATORS = frozenset(
    [
        "+",
        "-",
        "*",
        "/",
        "%",
        "+=",
        "-=",
        "*=",
        "/=",
        "%=",
        "==",
        "!=",
        "<",
        ">",
        "<=",
        ">=",
        "&",
        "|",
        "^",
        "~",
        "!",
        "&=",
        "|=",
        "^=",
        "<<",
        ">>",
        "<<=",
        ">>=",
        "++",
        "--",
    ]
)
_EXPRESSION_KEYWORDS = frozenset(
    {
        "return",
        "case",
        "else",
        "do",
        "sizeof",
        "throw",
        "co_return",
        "co_yield",
        "co_await",
        "new",
        "delete",
        "and",
        "or",
        "not",
        "decltype",
        "alignof",
        "typeid",
        "if",
        "while",
        "for",
        "switch",
    }
)
# Kinds of C/C++ file the translator reads; others are left to the file rewriters.
_SOURCE_KINDS = (FileKind.CUDA, FileKind.CXX)


def _trie_pattern(words: Iterable[str]) -> str:
    """A regular expression matching exactly ``words``, shaped as a trie so that a failed
    first character costs one test rather than one per word."""
    trie: dict[str, dict[str, Any]] = {}
    for word in words:
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def build(node: dict[str, Any]) -> str:
        alternatives = [re.escape(ch) + build(node[ch]) for ch in sorted(node) if ch]
        if not alternatives:
            return ""
        body = "|".join(alternatives)
        if "" in node:
            return f"(?:{body})?"
        return body if len(alternatives) == 1 else f"(?:{body})"

    return build(trie)


def _scanner_parts(target: Version, literals: bool) -> tuple[str, str]:
    """The pattern that walks a file: each match is a run of uninteresting text (skipped
    inside the regular-expression engine, token by token like the lexer) followed by one
    thing the translator must look at: an ``#include``, a candidate identifier, or the end.
    With ``literals`` comments and string literals are returned too (--translate-strings)."""
    explicit = set(_CLASH_FUNCTIONS) | {"operator"}
    explicit |= {n for n in _actions(target) if not n.startswith(_CANDIDATE_PREFIXES)}
    prefixes = "|".join(_CANDIDATE_PREFIXES)
    names = _trie_pattern(explicit)
    candidate = rf"(?:{prefixes})[{_ID}]*+|(?:{names})(?![{_ID}])"
    boring_identifier = (
        rf"(?!{candidate})(?!(?:u8|u|U|L)?R\"|(?:u8|u|U|L)[\"'])[{_ID_START}][{_ID}]*+"
    )
    skip = [
        rf"[^/\"'\#{_ID}]++",
        boring_identifier,
        _NUMBER,
        r"/(?![/*])",
        rf"\#(?!{_DIRECTIVE_GAP}(?:include_next|include|import)(?![{_ID}])[ \t]*[<\"])",
    ]
    interesting = [f"(?P<inc>{_INCLUDE})", f"(?P<id>{candidate})"]
    literal_rules = [_COMMENT, _RAW, _STRING, _CHAR]
    if literals:
        interesting += [f"(?P<com>{_COMMENT})", f"(?P<lit>{_RAW}|{_STRING}|{_CHAR})"]
    else:
        skip += literal_rules
    interesting.append(r"(?P<end>\Z)")
    return f"(?:{'|'.join(skip)})*+", f"(?:{'|'.join(interesting)})"


@functools.cache
def _scanner(target: Version, literals: bool) -> re.Pattern[str]:
    skip, interesting = _scanner_parts(target, literals)
    return re.compile(skip + interesting, re.DOTALL)


@functools.cache
def _skip_only(target: Version, literals: bool) -> re.Pattern[str]:
    skip, _ = _scanner_parts(target, literals)
    return re.compile(skip, re.DOTALL)


# One token (when the walk stops at something it cannot classify, e.g. `R"x` without '(').
_ANY_TOKEN_RE = re.compile(rf"[{_ID_START}][{_ID}]*|.", re.DOTALL)


# ----------------------------------------------------------------------------- actions


@dataclass(frozen=True, slots=True)
class _Rename:
    hip: str
    family: str
    note: str = ""


@dataclass(frozen=True, slots=True)
class _Missing:
    family: str
    note: str
    call_only: bool  # plain names (sin, y0, texture...) are reported only when called


_Action = _Rename | _Missing


@functools.cache
def _actions(target: Version) -> dict[str, _Action]:
    """What to do with each known CUDA name when translating for ROCm ``target``."""
    api = load_api_map()
    target_text = version_text(target)
    actions: dict[str, _Action] = {}
    for name, entry in api.entries.items():
        action = _action_for(entry, target, target_text)
        if action is not None:
            actions[name] = action
    return actions


def _action_for(entry: ApiEntry, target: Version, target_text: str) -> _Action | None:
    plain = not entry.cuda.startswith(_CANDIDATE_PREFIXES)
    extra = f"; {entry.note}" if entry.note else ""
    if not entry.hip:
        return _Missing(entry.family, f"no HIP counterpart{extra}", plain)
    if entry.hip_removed is not None and entry.hip_removed <= target:
        return _Missing(
            entry.family,
            f"{entry.hip} was removed in ROCm {version_text(entry.hip_removed)}{extra}",
            plain,
        )
    if entry.hip_added is not None and entry.hip_added > target and entry.hip_before:
        before_added = entry.hip_before_added
        if before_added is not None and before_added > target:
            return _Missing(
                entry.family,
                f"{entry.hip_before} is not in ROCm {target_text} "
                f"(added in {version_text(before_added)}){extra}",
                plain,
            )
        renamed = f"named {entry.hip} from ROCm {version_text(entry.hip_added)}"
        return _Rename(
            entry.hip_before, entry.family, f"{renamed}; {entry.note}" if entry.note else renamed
        )
    if entry.hip_added is not None and entry.hip_added > target:
        return _Missing(
            entry.family,
            f"{entry.hip} is not in ROCm {target_text} "
            f"(added in {version_text(entry.hip_added)}){extra}",
            plain,
        )
    if entry.hip == entry.cuda:
        return None
    note = entry.note
    if entry.hip_deprecated is not None and entry.hip_deprecated <= target:
        deprecated = f"deprecated since ROCm {version_text(entry.hip_deprecated)}"
        note = f"{deprecated}; {note}" if note else deprecated
    return _Rename(entry.hip, entry.family, note)


# ------------------------------------------------------------------------------ options


@dataclass(frozen=True, slots=True)
class TranslateOptions:
    fix_warp_masks: bool = False  # widen full-warp 32-bit masks to 64 bits (ROCm >= 6.4)
    translate_strings: bool = False  # rename CUDA names inside strings and comments too
    diagnostics: bool = True  # add the kernel scanner's findings as changes


# ----------------------------------------------------------------------------- the work


# A queued replacement: (start, end, new text).
_Edit = tuple[int, int, str]
# A change waiting for its line and column: (position, whole line?, family, before, after,
# status, note, rule id). Lines are counted once, at the end, in one pass.
_Pending = tuple[int, bool, str, str, str, ChangeStatus, str, str]


@dataclass(slots=True)
class _Translation:
    rel: str
    text: str
    kind: FileKind
    target: Version
    options: TranslateOptions
    api: ApiMap
    actions: dict[str, _Action]
    edits: list[_Edit] = field(default_factory=list)
    pending: list[_Pending] = field(default_factory=list)
    includes_hip_runtime: bool = False
    uses_gpu_code: bool = False
    widened_definitions: set[int] = field(default_factory=set)
    arch_plan: dict[int, _ArchUse] | None = None  # built at the first __CUDA_ARCH__
    _line_pos: int = 0
    _line_no: int = 1
    _lone_cr: bool = False
    _line_starts: list[int] | None = None
    _code: str | None = None

    @property
    def code(self) -> str:
        """The text with comments and literal insides blanked, computed once per file."""
        if self._code is None:
            self._code = code_only(self.text)
        return self._code

    # -- positions

    def __post_init__(self) -> None:
        self._lone_cr = "\r" in self.text and self.text.count("\r") != self.text.count("\r\n")

    def line_col(self, pos: int) -> tuple[int, int]:
        """1-based line and column of ``pos``, counting \\r\\n, \\r and \\n like the lexer."""
        text = self.text
        if self._lone_cr:
            if self._line_starts is None:
                self._line_starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]
            index = bisect.bisect_right(self._line_starts, pos) - 1
            return index + 1, pos - self._line_starts[index] + 1
        if pos >= self._line_pos:
            self._line_no += text.count("\n", self._line_pos, pos)
        else:
            self._line_no = 1 + text.count("\n", 0, pos)
        self._line_pos = pos
        return self._line_no, pos - (text.rfind("\n", 0, pos) + 1) + 1

    # -- recording

    def edit(self, start: int, end: int, new: str) -> bool:
        """Queue a replacement of ``text[start:end]``; refused when it overlaps a queued one."""
        edits = self.edits
        if not edits or start >= edits[-1][1]:  # the usual case: in file order
            edits.append((start, end, new))
            return True
        index = bisect.bisect_right(edits, (start, end), key=lambda e: (e[0], e[1]))
        if index > 0 and edits[index - 1][1] > start:
            return False
        if index < len(edits) and edits[index][0] < end:
            return False
        edits.insert(index, (start, end, new))
        return True

    def change(
        self,
        pos: int,
        family: str,
        before: str,
        after: str,
        status: ChangeStatus,
        note: str = "",
        *,
        whole_line: bool = False,
        rule_id: str = "",
    ) -> None:
        self.pending.append((pos, whole_line, family, before, after, status, note, rule_id))

    def changes(self) -> list[Change]:
        """Every recorded change with its line and column, in file order."""
        out: list[Change] = []
        self._line_pos, self._line_no = 0, 1
        for pos, whole_line, family, before, after, status, note, rule_id in sorted(
            self.pending, key=lambda p: p[0]
        ):
            line, column = self.line_col(pos)
            out.append(
                Change(
                    line, 0 if whole_line else column, family, before, after, status, note, rule_id
                )
            )
        return out

    # -- the scan

    def run(self) -> None:
        text = self.text
        literals = self.options.translate_strings
        scanner = _scanner(self.target, literals).match
        handle_id = self.identifier
        pos = 0
        n = len(text)
        while pos <= n:
            m = scanner(text, pos)
            if m is None:
                # the walk stopped at a token no rule takes whole (a lone `R"`): step over it
                pos = self.step_over_stuck(pos)
                continue
            group = m.lastgroup
            if group == "id":
                start, end = m.span("id")
                handle_id(text[start:end], start, end)
            elif group == "inc":
                if not self.include(m):
                    pos = m.start("inc") + 1  # a '#' inside a line: go on right after it
                    continue
            elif group == "end":
                break
            else:
                self.literal(m.start(group or ""), m.group(group or ""))
            pos = m.end()
        if "cooperative_groups" in text and self.target < self.api.warp.tile_vote_since:
            _tile_votes(self)
        uses_gpu = self.uses_gpu_code or "<<<" in text or _KERNEL_BUILTIN_RE.search(text)
        if self.kind is FileKind.CUDA and not self.includes_hip_runtime and uses_gpu:
            self.insert_runtime_include()

    def step_over_stuck(self, pos: int) -> int:
        """Where to resume after the walk could not match at ``pos``."""
        stop = _skip_only(self.target, self.options.translate_strings).match(self.text, pos)
        at = stop.end() if stop else pos
        token = _ANY_TOKEN_RE.match(self.text, at)
        return at + (len(token.group()) if token else 1)

    # -- identifiers

    def identifier(self, name: str, start: int, end: int) -> None:
        handler = _SPECIAL.get(name)
        if handler is not None:
            handler(self, name, start, end)
            return
        action = self.actions.get(name)
        if action is None:
            if name in _KERNEL_WORDS:
                self.uses_gpu_code = True
            return
        self.apply_action(name, start, end, action)

    def apply_action(self, name: str, start: int, end: int, action: _Action) -> None:
        if self.is_member_or_foreign(start):
            return
        if isinstance(action, _Rename):
            if self.edit(start, end, action.hip):
                self.change(start, action.family, name, action.hip, CONVERTED, action.note)
                if action.family in ("runtime", "driver", "device"):
                    self.uses_gpu_code = True
            return
        if action.call_only and not self.followed_by(end, "("):
            return
        self.change(start, action.family, name, name, UNCONVERTED, action.note)

    def followed_by(self, pos: int, what: str) -> bool:
        text = self.text
        n = len(text)
        while pos < n and text[pos] in " \t":
            pos += 1
        return text.startswith(what, pos)

    def preceding(self, pos: int) -> str:
        """The two characters before ``pos``, spaces and tabs skipped."""
        text = self.text
        while pos > 0 and text[pos - 1] in " \t":
            pos -= 1
        return text[max(0, pos - 2) : pos]

    def is_member_or_foreign(self, pos: int) -> bool:
        """``obj.name``, ``ptr->name`` or ``ns::name``: a user's member or namespace, not CUDA's."""
        if pos == 0 or self.text[pos - 1] not in ".>: \t":
            return False  # the common case
        before = self.preceding(pos)
        if before.endswith(".") or before == "->":
            return True
        if before == "::":
            # `::cudaMalloc` (global scope) is CUDA's; `mylib::cudaMalloc` is not.
            p = pos
            text = self.text
            while p > 0 and text[p - 1] in " \t":
                p -= 1
            p -= 2
            while p > 0 and text[p - 1] in " \t":
                p -= 1
            return p > 0 and (text[p - 1].isalnum() or text[p - 1] in "_$>")
        return False

    # -- #include

    def include(self, match: re.Match[str]) -> bool:
        """Handle an ``#include``; False when the '#' is not at the start of its line."""
        hash_pos = match.start("inc")
        if not _starts_line(self.text, hash_pos):
            return False
        start, end = match.span("hdr")
        token = match.group("hdr")
        path = token[1:-1].strip()
        entry = self.api.header(path)
        if entry is None:
            if path == HIP_RUNTIME_HEADER:
                self.includes_hip_runtime = True
            elif token.startswith("<"):
                self.unknown_header(start, path)
            return True
        if entry.keep:
            return True
        if entry.drop:
            line_start = _line_start(self.text, hash_pos)
            line_end = self.line_end(end)
            if self.edit(line_start, line_end, ""):
                self.change(
                    line_start,
                    "header",
                    self.text[line_start:line_end].strip(),
                    "",
                    CONVERTED,
                    f"removed: {entry.note}" if entry.note else "removed",
                    whole_line=True,
                )
            return True
        new_path = self.header_path(entry, path, start)
        if new_path is None:
            return True
        if new_path == HIP_RUNTIME_HEADER:
            self.includes_hip_runtime = True
        elif entry.needs_runtime and not self.includes_hip_runtime:
            line_start = _line_start(self.text, hash_pos)
            runtime = f"#include <{HIP_RUNTIME_HEADER}>"
            if self.edit(line_start, line_start, runtime + self.newline()):
                self.includes_hip_runtime = True
                self.change(
                    line_start,
                    "header",
                    "",
                    runtime,
                    CONVERTED,
                    f"added: {entry.hip} needs hip/hip_runtime.h before it",
                    whole_line=True,
                )
        new_token = token[0] + new_path + token[-1]
        if self.edit(start, end, new_token):
            self.change(start, "header", token, new_token, CONVERTED, entry.note)
        return True

    def header_path(self, entry: HeaderEntry, path: str, pos: int) -> str | None:
        """The HIP path for ``entry`` on the target, or None (after reporting why)."""
        token = path
        if not entry.hip:
            self.change(pos, "header", token, token, UNCONVERTED, entry.note)
            return None
        if entry.since is not None and entry.since > self.target:
            note = (
                f"{entry.hip} is not available before ROCm {version_text(entry.since)} "
                f"(target {version_text(self.target)})"
            )
            if entry.note:
                note += f"; {entry.note}"
            self.change(pos, "header", token, token, UNCONVERTED, note)
            return None
        return entry.path_for(self.target)

    def unknown_header(self, pos: int, path: str) -> None:
        """Report a CUDA-looking system header gpuport has no counterpart for."""
        if not _is_toolkit_header(path):
            return
        note = "no HIP counterpart known to gpuport"
        advice = _library_advice(path)
        if advice:
            note += f"; {advice}"
        self.change(pos, "header", path, path, UNCONVERTED, note)

    def line_end(self, pos: int) -> int:
        """The position after the newline that ends the line holding ``pos``."""
        text = self.text
        n = len(text)
        while pos < n and text[pos] not in "\r\n":
            pos += 1
        if text.startswith("\r\n", pos):
            return pos + 2
        return pos + 1 if pos < n else pos

    def newline(self) -> str:
        m = re.search(r"\r\n|\r|\n", self.text)
        return m.group() if m else "\n"

    def insert_runtime_include(self) -> None:
        pos, after_directive = _runtime_include_position(self.text)
        nl = self.newline()
        line = f"#include <{HIP_RUNTIME_HEADER}>"
        new = line + nl
        if after_directive and pos == len(self.text) and not self.text.endswith(("\n", "\r")):
            new = nl + line + nl
        if self.edit(pos, pos, new):
            self.includes_hip_runtime = True
            self.change(
                pos,
                "header",
                "",
                line,
                CONVERTED,
                "added: nvcc includes cuda_runtime.h in every .cu file by itself, hipcc does not",
                whole_line=True,
            )

    # -- strings and comments (--translate-strings)

    def literal(self, base: int, literal: str) -> None:
        for word in _WORD_RE.finditer(literal):
            action = self.actions.get(word.group())
            if isinstance(action, _Rename):
                start = base + word.start()
                if self.edit(start, start + len(word.group()), action.hip):
                    self.change(
                        start,
                        action.family,
                        word.group(),
                        action.hip,
                        CONVERTED,
                        "inside a string or comment (--translate-strings)",
                    )

    # -- calls

    def call_arguments(self, name_end: int) -> _Call | None:
        """Parse ``(a, b, c)`` after a function name: argument spans, or None."""
        return _parse_call(self.text, name_end)


_WORD_RE = re.compile(rf"{_NOT_AFTER_ID}[A-Za-z_$\u00c0-\uffff][{_ID}]*")


# ------------------------------------------------------------------------ call parsing


@dataclass(frozen=True, slots=True)
class _Call:
    open_paren: int
    close_paren: int  # position of ')'
    args: tuple[tuple[int, int], ...]  # (start, end) of each argument, blanks trimmed


_CALL_LOOKAHEAD = 4000  # characters a call may span before gpuport gives up on it


def _parse_call(text: str, pos: int) -> _Call | None:
    chunk = text[pos : pos + _CALL_LOOKAHEAD]
    depth = 0
    offset = 0
    open_paren = -1
    arg_start = -1
    last_end = -1
    args: list[tuple[int, int]] = []
    for tok in tokenize(chunk):
        kind = tok.kind
        start = offset
        offset += len(tok.text)
        if open_paren < 0:
            if kind in (Kind.WS, Kind.NEWLINE, Kind.COMMENT):
                continue
            if tok.text != "(":
                return None
            open_paren = start
            depth = 1
            continue
        if kind in (Kind.WS, Kind.NEWLINE, Kind.COMMENT):
            continue
        if kind is Kind.PUNCT and tok.text in ("(", "[", "{"):
            depth += 1
        elif kind is Kind.PUNCT and tok.text in (")", "]", "}"):
            depth -= 1
            if depth == 0:
                if arg_start >= 0:
                    args.append((pos + arg_start, pos + last_end))
                return _Call(pos + open_paren, pos + start, tuple(args))
        elif kind is Kind.PUNCT and tok.text == "," and depth == 1:
            if arg_start < 0:
                return None
            args.append((pos + arg_start, pos + last_end))
            arg_start = -1
            continue
        if arg_start < 0:
            arg_start = start
        last_end = offset
    return None


# --------------------------------------------------------------------------- warp masks

_SUFFIX = r"[uUlL]*"
_HEX_RE = re.compile(r"^0[xX]0*([fF]+)([uUlL]*)$")
_DEC_RE = re.compile(r"^(\d+)([uUlL]*)$")
_NOT_ZERO_RE = re.compile(r"^~\s*0(?:[xX]0*)?([uUlL]*)$")
_MINUS_ONE_RE = re.compile(r"^-\s*1([uUlL]*)$")
_CAST_RE = re.compile(
    r"^(?:\(\s*(?P<c>[A-Za-z_][\w\s]*?)\s*\)|static_cast\s*<\s*(?P<s>[A-Za-z_][\w\s]*?)\s*>)\s*"
    r"(?P<rest>.+)$",
    re.DOTALL,
)
_TYPES_64 = frozenset(
    {
        "unsigned long long",
        "unsigned long long int",
        "long long",
        "long long int",
        "uint64_t",
        "int64_t",
        "size_t",
        "unsigned long",
        "long",
        "unsigned long int",
        "long int",
        "ulong",
        "uint64",
    }
)
_IDENT_ONLY_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True, slots=True)
class _Mask:
    kind: str  # "full64", "full32" (all 32 lanes: half a wave64), "unknown"
    is_64bit_type: bool = False
    via: str = ""  # the macro or constant it was read from
    definition: tuple[int, int] | None = None  # span of that definition's value
    definition_kind: str = ""  # "define" or "const"


def _strip_parens(expr: str) -> str:
    expr = expr.strip()
    while expr.startswith("(") and expr.endswith(")") and _balanced(expr[1:-1]):
        expr = expr[1:-1].strip()
    return expr


def _balanced(s: str) -> bool:
    depth = 0
    for ch in s:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def _is_64(suffix: str) -> bool:
    return "l" in suffix.lower()


def _classify_literal(expr: str) -> _Mask:
    expr = _strip_parens(expr)
    cast = _CAST_RE.match(expr)
    if cast:
        type_name = " ".join((cast.group("c") or cast.group("s") or "").split())
        inner = _classify_literal(cast.group("rest"))
        if type_name in _TYPES_64:
            if inner.kind == "full64" or (inner.kind == "full32" and inner.via == "minus-one"):
                return _Mask("full64", True)
            return _Mask(inner.kind, True)
        return _Mask("full32" if inner.kind in ("full32", "full64") else inner.kind)
    m = _HEX_RE.match(expr)
    if m:
        digits, suffix = len(m.group(1)), m.group(2)
        if digits == 16:
            return _Mask("full64", True)
        if digits == 8:
            return _Mask("full32", _is_64(suffix))
        return _Mask("unknown")
    m = _DEC_RE.match(expr)
    if m:
        if m.group(1) == "4294967295":
            return _Mask("full32", _is_64(m.group(2)))
        if m.group(1) == "18446744073709551615":
            return _Mask("full64", True)
        return _Mask("unknown")
    m = _NOT_ZERO_RE.match(expr)
    if m:
        return _Mask("full64", True) if _is_64(m.group(1)) else _Mask("full32")
    m = _MINUS_ONE_RE.match(expr)
    if m:
        if _is_64(m.group(1)):
            return _Mask("full64", True)
        return _Mask("full32", False, "minus-one")
    return _Mask("unknown")


def _define_re(name: str) -> re.Pattern[str]:
    return re.compile(
        rf"^[ \t]*#[ \t]*define[ \t]+{re.escape(name)}[ \t]+(?P<v>[^\r\n]*?)[ \t]*(?://[^\r\n]*)?$",
        re.MULTILINE,
    )


def _const_re(name: str) -> re.Pattern[str]:
    return re.compile(
        rf"(?<![\w$])(?:static\s+)?(?:constexpr|const)\s+(?P<t>[A-Za-z_][\w\s]*?)\s+"
        rf"{re.escape(name)}\s*=\s*(?P<v>[^;\r\n]+);"
    )


def _classify_mask(text: str, expr: str) -> _Mask:
    expr = _strip_parens(expr)
    if not _IDENT_ONLY_RE.match(expr):
        return _classify_literal(expr)
    m = _define_re(expr).search(text)
    if m:
        inner = _classify_literal(m.group("v"))
        return _Mask(inner.kind, inner.is_64bit_type, expr, m.span("v"), "define")
    m = _const_re(expr).search(text)
    if m:
        inner = _classify_literal(m.group("v"))
        type_name = " ".join(m.group("t").replace("const", " ").split())
        is64 = type_name in _TYPES_64 or inner.is_64bit_type
        return _Mask(inner.kind, is64, expr, m.span("v"), "const")
    return _Mask("unknown", False, expr)


# ------------------------------------------------------------------------ special names


def _warp_masked(t: _Translation, name: str, start: int, end: int) -> None:
    if t.is_member_or_foreign(start) or _is_definition(t.text, start, end):
        _clash(t, name, start, end)
        return
    call = t.call_arguments(end)
    if call is None or len(call.args) < 2:
        if call is None and not t.followed_by(end, "("):
            return  # the name itself (a macro argument, a function pointer): leave it
        t.change(start, "warp", name, name, UNCONVERTED, "could not read the call's arguments")
        return
    mask_start, mask_end = call.args[0]
    mask_text = t.text[mask_start:mask_end]
    if t.target < t.api.warp.sync_default_since:
        _warp_drop_mask(t, name, start, call, mask_text)
    else:
        _warp_check_mask(t, name, start, mask_start, mask_end, mask_text)


def _warp_drop_mask(t: _Translation, name: str, start: int, call: _Call, mask_text: str) -> None:
    hip = _MASKED_WARP[name]
    second = call.args[1][0]
    new = f"{hip}("
    mask = _classify_mask(t.text, mask_text)
    target = version_text(t.target)
    note = f"mask dropped: HIP in ROCm {target} has only the mask-less form, which acts on all active lanes"
    if t.target >= t.api.warp.sync_preview_since:
        note += " (the _sync forms need -DHIP_ENABLE_WARP_SYNC_BUILTINS before ROCm 6.4)"
    if name == "__ballot_sync":
        note += "; the result is 64-bit on a 64-lane wavefront: keep it in unsigned long long"
    status = CONVERTED
    if mask.kind == "unknown":
        status = NEEDS_REVIEW
        note = (
            f"mask `{mask_text}` dropped: the mask-less HIP form acts on all active lanes; "
            "check that the code does not rely on a partial mask" + note[len("mask dropped") :]
        )
    if t.edit(start, second, new):
        t.change(start, "warp", t.text[start:second], new, status, note)


def _warp_check_mask(
    t: _Translation, name: str, start: int, mask_start: int, mask_end: int, mask_text: str
) -> None:
    mask = _classify_mask(t.text, mask_text)
    if mask.kind == "full64":
        return
    if mask.kind == "unknown":
        t.change(
            start,
            "warp",
            name,
            name,
            NEEDS_REVIEW,
            f"HIP's {name} needs a 64-bit mask (static_assert): check that `{mask_text}` is an "
            "unsigned long long holding every lane you mean (a wave has 64 lanes on CDNA GPUs)",
        )
        return
    # a full-warp mask written for 32 lanes
    where = ""
    if mask.via and mask.definition is not None:
        line, _ = t.line_col(mask.definition[0])
        where = f" ({mask.via} is defined on line {line})"
    if not t.options.fix_warp_masks:
        problem = (
            "compiles, but covers only 32 of a wave64's lanes"
            if mask.is_64bit_type
            else "HIP's _sync functions static_assert a 64-bit mask"
        )
        t.change(
            mask_start,
            "warp",
            mask_text,
            mask_text,
            NEEDS_REVIEW if mask.is_64bit_type else UNCONVERTED,
            f"32-lane full mask `{mask_text}`{where}: {problem}; use {FULL_MASK_64} "
            "(gpuport port --fix-warp-masks does this)",
        )
        return
    if mask.via:
        _widen_definition(t, start, mask, mask_text, where)
        return
    if t.edit(mask_start, mask_end, FULL_MASK_64):
        t.change(
            mask_start,
            "warp",
            mask_text,
            FULL_MASK_64,
            CONVERTED,
            "full-warp mask widened to 64 bits (--fix-warp-masks)",
        )


def _widen_definition(t: _Translation, start: int, mask: _Mask, mask_text: str, where: str) -> None:
    assert mask.definition is not None
    def_start, def_end = mask.definition
    if def_start in t.widened_definitions:
        return
    if mask.definition_kind != "define":
        t.change(
            start,
            "warp",
            mask_text,
            mask_text,
            UNCONVERTED,
            f"32-lane full mask{where}: declare it `unsigned long long {mask.via} = "
            f"{FULL_MASK_64}` (gpuport widens only #define'd masks)",
        )
        return
    t.widened_definitions.add(def_start)
    old = t.text[def_start:def_end]
    if t.edit(def_start, def_end, FULL_MASK_64):
        t.change(
            def_start,
            "warp",
            old,
            FULL_MASK_64,
            NEEDS_REVIEW,
            f"{mask.via} widened to 64 bits for the _sync warp functions (--fix-warp-masks); "
            "check its other uses",
        )


def _warp_match(t: _Translation, name: str, start: int, end: int) -> None:
    if t.is_member_or_foreign(start) or not t.followed_by(end, "("):
        return
    warp = t.api.warp
    if t.target < warp.sync_preview_since:
        t.change(
            start,
            "warp",
            name,
            name,
            UNCONVERTED,
            f"no HIP counterpart before ROCm {version_text(warp.sync_preview_since)}: "
            "compare values with __shfl and __ballot instead",
        )
        return
    if t.target < warp.sync_default_since:
        t.change(
            start,
            "warp",
            name,
            name,
            UNCONVERTED,
            f"ROCm {version_text(t.target)} has {name} only with "
            "-DHIP_ENABLE_WARP_SYNC_BUILTINS, and with a 64-bit mask",
        )
        return
    _warp_masked_check_only(t, name, start, end)


def _warp_masked_check_only(t: _Translation, name: str, start: int, end: int) -> None:
    call = t.call_arguments(end)
    if call is None or not call.args:
        return
    mask_start, mask_end = call.args[0]
    _warp_check_mask(t, name, start, mask_start, mask_end, t.text[mask_start:mask_end])


def _activemask(t: _Translation, name: str, start: int, end: int) -> None:
    if t.is_member_or_foreign(start) or _is_definition(t.text, start, end):
        return
    if t.target >= t.api.warp.sync_default_since:
        return
    call = t.call_arguments(end)
    if call is None or call.args:
        return
    new = "__ballot(1)"
    if t.edit(start, call.close_paren + 1, new):
        t.change(
            start,
            "warp",
            t.text[start : call.close_paren + 1],
            new,
            CONVERTED,
            f"ROCm {version_text(t.target)} has no __activemask; a ballot of true over the active "
            "lanes is the same mask, 64 bits wide",
        )


def _syncwarp(t: _Translation, name: str, start: int, end: int) -> None:
    if t.is_member_or_foreign(start) or _is_definition(t.text, start, end):
        _clash(t, name, start, end)
        return
    call = t.call_arguments(end)
    if call is None:
        return
    if t.target >= t.api.warp.syncwarp_since:
        if call.args:
            mask_start, mask_end = call.args[0]
            _warp_check_mask(
                t, "__syncwarp", start, mask_start, mask_end, t.text[mask_start:mask_end]
            )
        return
    old = t.text[start : call.close_paren + 1]
    if t.edit(start, call.close_paren + 1, WAVE_BARRIER):
        t.change(
            start,
            "warp",
            old,
            WAVE_BARRIER,
            NEEDS_REVIEW,
            f"HIP has __syncwarp only from ROCm {version_text(t.api.warp.syncwarp_since)}: "
            "replaced by a wavefront barrier (a wavefront's lanes run in lockstep); check code "
            "that relied on independent thread scheduling",
        )


@dataclass(frozen=True, slots=True)
class _ArchUse:
    """What one ``__CUDA_ARCH__`` does: ``guard`` (a device-code test: defined(), #ifdef,
    a bare #if), ``define`` (#define/#undef of it), ``value`` (its number, in a directive)
    or ``code`` (its number, in C++ code); ``rewrite`` for a guard that may become
    __HIP_DEVICE_COMPILE__, else ``because``: the position of the value use that stops it."""

    kind: str
    rewrite: bool = False
    because: int = -1


_ARCH_RE = re.compile(r"(?<![\w$])__CUDA_ARCH__(?![\w$])")
_CONDITIONAL_RE = re.compile(
    r"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|elifdef|elifndef|else|endif)(?![\w$])", re.MULTILINE
)


def _arch_use_kind(text: str, start: int, end: int) -> str:
    """How the ``__CUDA_ARCH__`` at ``start`` is used (see _ArchUse.kind)."""
    line_start = _logical_line_start(text, start)
    head = text[line_start:start].lstrip(" \t")
    if not head.startswith("#"):
        return "code"
    directive = re.match(r"#\s*(\w+)", head)
    word = directive.group(1) if directive else ""
    before = _significant_before(text, line_start, start)
    if word in ("define", "undef") and before[-1:] == [word]:
        return "define"
    if word not in ("if", "elif", "ifdef", "ifndef", "elifdef", "elifndef"):
        return "value"  # a #define body or another directive: its number is used
    after = _significant_after(text, end)
    is_defined_test = (
        word in ("ifdef", "ifndef", "elifdef", "elifndef")
        or (before[-1:] == ["defined"])
        or (before[-2:] == ["defined", "("] and after[:1] == [")"])
    )
    if is_defined_test or (word in ("if", "elif") and _is_bare_condition(before, after)):
        return "guard"
    return "value"


def _arch_plan(text: str, code: str) -> dict[int, _ArchUse]:
    """Every ``__CUDA_ARCH__`` of the file and what to do with it, deciding each
    conditional as a unit. A guard becomes ``__HIP_DEVICE_COMPILE__`` only when neither
    its own condition nor the conditional it opens or continues (down to its #endif)
    uses ``__CUDA_ARCH__``'s number: HIP leaves the macro undefined, so such a use reads
    0 in a directive or fails to compile in code, and a rewritten guard would send HIP's
    device pass into code written for a compute capability (e.g. the redefinition of a
    pre-sm_60 double atomicAdd). ``code`` is ``code_only(text)``."""
    kinds = {m.start(): _arch_use_kind(text, m.start(), m.end()) for m in _ARCH_RE.finditer(code)}
    values = sorted(pos for pos, kind in kinds.items() if kind in ("value", "code"))
    # the span each conditional directive governs: from its line to the matching #endif
    region_end: dict[int, int] = {}
    open_groups: list[list[int]] = []
    for m in _CONDITIONAL_RE.finditer(code):
        word = m.group(1)
        if word in ("if", "ifdef", "ifndef"):
            open_groups.append([m.start()])
        elif word == "endif":
            if open_groups:
                for line in open_groups.pop():
                    region_end[line] = m.end()
        elif open_groups:
            open_groups[-1].append(m.start())
    plan: dict[int, _ArchUse] = {}
    for pos, kind in kinds.items():
        if kind != "guard":
            plan[pos] = _ArchUse(kind)
            continue
        line = _logical_line_start(text, pos)
        line_end = _directive_end(text, pos)
        same_line = [v for v in values if line <= v < line_end]
        end = region_end.get(line, len(text))
        in_region = same_line or [v for v in values[bisect.bisect_left(values, line) :] if v < end]
        plan[pos] = _ArchUse(kind, not in_region, in_region[0] if in_region else -1)
    return plan


def _directive_end(text: str, pos: int) -> int:
    """The end of the (logical) directive line holding ``pos``."""
    while True:
        newline = _NEWLINE_RE.search(text, pos)
        if newline is None:
            return len(text)
        if text[newline.start() - 1] != "\\":
            return newline.start()
        pos = newline.end()


_NEWLINE_RE = re.compile(r"\r\n|\r|\n")


def _cuda_arch(t: _Translation, name: str, start: int, end: int) -> None:
    if t.arch_plan is None:
        t.arch_plan = _arch_plan(t.text, t.code)
    use = t.arch_plan.get(start) or _ArchUse(_arch_use_kind(t.text, start, end))
    if use.kind == "code":
        t.change(
            start,
            "arch",
            "__CUDA_ARCH__",
            "__CUDA_ARCH__",
            UNCONVERTED,
            "the NVIDIA compute capability has no AMD equivalent: use "
            "__HIP_DEVICE_COMPILE__ to test for device code, or the gfx target macros",
        )
        return
    if use.kind == "define":
        t.change(
            start,
            "arch",
            "__CUDA_ARCH__",
            "__CUDA_ARCH__",
            UNCONVERTED,
            "defines __CUDA_ARCH__ itself: decide what it should mean for AMD targets",
        )
        return
    if use.kind == "guard" and use.rewrite:
        new = "__HIP_DEVICE_COMPILE__"
        if t.edit(start, end, new):
            t.change(
                start,
                "arch",
                "__CUDA_ARCH__",
                new,
                CONVERTED,
                "both are defined only while device code is compiled",
            )
        return
    if use.kind == "guard":
        where = (
            "this condition also compares __CUDA_ARCH__'s value"
            if use.because < _directive_end(t.text, start)
            else f"the code under this test uses __CUDA_ARCH__'s value (line "
            f"{t.line_col(use.because)[0]})"
        )
        t.change(
            start,
            "arch",
            "__CUDA_ARCH__",
            "__CUDA_ARCH__",
            NEEDS_REVIEW,
            f"kept: {where}, so the test stays whole; HIP leaves __CUDA_ARCH__ undefined, so "
            "on ROCm it is false in device code too. To give AMD a device path, replace the "
            "value uses with the gfx target macros, then test __HIP_DEVICE_COMPILE__",
        )
        return
    t.change(
        start,
        "arch",
        "__CUDA_ARCH__",
        "__CUDA_ARCH__",
        UNCONVERTED,
        "compares the NVIDIA compute capability, which has no AMD equivalent; HIP leaves "
        "__CUDA_ARCH__ undefined (so this reads as 0): test the gfx target macros "
        "(e.g. __gfx90a__, __gfx942__) or features (__AMDGCN_WAVEFRONT_SIZE) instead",
    )


def _is_bare_condition(before: list[str], after: list[str]) -> bool:
    """``#if __CUDA_ARCH__`` or ``#if !__CUDA_ARCH__``, with && / || around it."""
    prev = before[-1] if before else ""
    nxt = after[0] if after else ""
    ok_before = prev in ("if", "elif", "!", "&&", "||", "(")
    ok_after = nxt in ("", "&&", "||", ")")
    return ok_before and ok_after


def _significant_before(text: str, line_start: int, pos: int) -> list[str]:
    return [t.text for t in tokenize(text[line_start:pos]) if _is_significant(t)]


def _significant_after(text: str, pos: int) -> list[str]:
    out: list[str] = []
    for tok in tokenize(text[pos : pos + 200]):
        if tok.kind is Kind.NEWLINE:
            break
        if _is_significant(tok):
            out.append(tok.text)
            if len(out) == 2:
                break
    return out


def _is_significant(tok: Token) -> bool:
    return tok.kind not in (Kind.WS, Kind.NEWLINE, Kind.COMMENT)


def _logical_line_start(text: str, pos: int) -> int:
    """Start of the line holding ``pos``, going back over backslash continuations."""
    start = max(text.rfind("\n", 0, pos), text.rfind("\r", 0, pos)) + 1
    while start > 0:
        prev_end = start - 1
        if text[prev_end] == "\n" and prev_end > 0 and text[prev_end - 1] == "\r":
            prev_end -= 1
        if prev_end > 0 and text[prev_end - 1] == "\\":
            start = max(text.rfind("\n", 0, prev_end), text.rfind("\r", 0, prev_end - 1)) + 1
            continue
        break
    return start


_HAS_INCLUDE_RE = re.compile(r"\s*\(\s*(<[^>\r\n]*>|\"[^\"\r\n]*\")\s*\)")


def _has_include(t: _Translation, name: str, start: int, end: int) -> None:
    """``__has_include(<cuda_fp16.h>)``: the header inside takes the #include mapping."""
    m = _HAS_INCLUDE_RE.match(t.text, end)
    if not m:
        return
    token = m.group(1)
    entry = t.api.header(token[1:-1].strip())
    if entry is None or entry.keep or entry.drop or not entry.hip:
        return
    if entry.since is not None and entry.since > t.target:
        return
    new_token = token[0] + entry.path_for(t.target) + token[-1]
    start = m.start(1)
    if t.edit(start, m.end(1), new_token):
        t.change(start, "header", token, new_token, CONVERTED, entry.note)


def _cub_namespace(t: _Translation, name: str, start: int, end: int) -> None:
    text = t.text
    qualified = t.followed_by(end, "::")
    in_using = re.search(r"\bnamespace\s+$", text[max(0, start - 40) : start]) is not None
    if not (qualified or in_using) or t.is_member_or_foreign(start):
        return
    if t.edit(start, end, "hipcub"):
        t.change(
            start, "cub", "cub", "hipcub", CONVERTED, "hipCUB keeps CUB's API in namespace hipcub"
        )


def _clash(t: _Translation, name: str, start: int, end: int) -> None:
    """A definition of a function HIP's headers already define."""
    if not _is_definition(t.text, start, end):
        return
    if name.startswith("make_"):
        if not _is_hip_make_signature(t.text, name, end):
            return  # a new overload (make_float3(float4)): nothing of HIP's clashes
        why = "HIP's hip_vector_types.h defines the make_* functions for its vector types"
    elif name.startswith("atomic"):
        why = (
            f"HIP defines {name} for int, unsigned, unsigned long long, float and double "
            "(CUDA lacks some of these, so CUDA code often adds its own)"
        )
    elif name == "__syncwarp":
        why = "ROCm 7.0 and later define __syncwarp"
    else:
        why = f"HIP defines {name} for the built-in types"
    t.change(
        start,
        "clash",
        name,
        name,
        NEEDS_REVIEW,
        f"defines {name}, which HIP already provides: {why}; a second definition with the "
        "same signature does not compile and a near one makes calls ambiguous — remove it, "
        "guard it with #ifndef __HIPCC__, or rename it",
    )


def _is_hip_make_signature(text: str, name: str, end: int) -> bool:
    """Does ``make_float3(...)`` declared at ``end`` take what HIP's does: one scalar per
    component (three here), no vector type?"""
    call = _parse_call(text, end)
    if call is None:
        return True  # cannot tell: report it
    params = [text[a:b] for a, b in call.args]
    components = int(name[-1])
    if len(params) != components:
        return False
    return not any(word in _VECTOR_TYPES for p in params for word in re.findall(r"\w+", p))


_CALL_CONTEXT = frozenset("=(,[{};!?:+-/%^|<~")


_CONTINUATION_RE = re.compile(r"\\(?:\r\n|\r|\n)")


def _starts_line(text: str, pos: int) -> bool:
    """Is ``pos`` the first non-blank character of its (logical) line?"""
    before = text[_line_start(text, pos) : pos]
    if before.strip(" \t\f\v"):
        return False
    start = _logical_line_start(text, pos)
    return not _CONTINUATION_RE.sub("", text[start:pos]).strip(" \t\f\v")


def _line_start(text: str, pos: int) -> int:
    return max(text.rfind("\n", 0, pos), text.rfind("\r", 0, pos)) + 1


def _is_definition(text: str, start: int, end: int) -> bool:
    """Is the name at ``start`` being declared or defined (a function or macro), not called?"""
    n = len(text)
    p = end
    while p < n and text[p] in " \t":
        p += 1
    if p >= n or text[p] != "(":
        return False
    q = start
    while q > 0 and text[q - 1] in " \t\r\n" and start - q < 200:
        q -= 1
    if q == 0 or text[q - 1] in _CALL_CONTEXT:
        return False  # the common case, decided without the lexer: a call in an expression
    line_start = _line_start(text, start)
    toks = _significant_before(text, _line_start(text, max(0, line_start - 1)), start)
    if not toks:
        return False
    if len(toks) >= 2 and toks[-1] == "define" and toks[-2] == "#":
        return True
    prev = toks[-1]
    if prev.isidentifier() and prev not in _EXPRESSION_KEYWORDS:
        return not (len(toks) >= 2 and toks[-2] in (".", "->"))
    if prev in ("*", "&", "&&") and len(toks) >= 2:
        prev2 = toks[-2]
        if not prev2.isidentifier() or prev2 in _EXPRESSION_KEYWORDS:
            return False
        prev3 = toks[-3] if len(toks) >= 3 else ""
        return prev3 in ("", ";", "{", "}", ">") or (
            prev3.isidentifier() and prev3 not in _EXPRESSION_KEYWORDS
        )
    return False


def _operator(t: _Translation, name: str, start: int, end: int) -> None:
    """``operator+(float4, float4)`` and friends: HIP's vector types already have them."""
    chunk = t.text[end : end + 2000]
    op = ""
    depth = 0
    params: list[str] = []
    seen_paren = False
    for tok in tokenize(chunk):
        if not _is_significant(tok):
            continue
        if not seen_paren:
            if tok.text == "(" and op:
                seen_paren = True
                depth = 1
                continue
            if tok.kind is Kind.PUNCT or (tok.kind is Kind.IDENT and not op):
                op += tok.text
                if len(op) > 4:
                    return
                continue
            return
        if tok.text == "(":
            depth += 1
        elif tok.text == ")":
            depth -= 1
            if depth == 0:
                break
        params.append(tok.text)
    else:
        return
    if op not in _ARITH_OPERATORS:
        return
    vector = next((p for p in params if p in _VECTOR_TYPES), None)
    if vector is None or any("stream" in p for p in params):
        return
    t.change(
        start,
        "clash",
        f"operator{op}",
        f"operator{op}",
        NEEDS_REVIEW,
        f"defines operator{op} on {vector}: HIP's hip_vector_types.h already defines arithmetic "
        "and comparison operators for its vector types, so this one is a redefinition or makes "
        "calls ambiguous — remove it for HIP (e.g. #ifndef __HIPCC__) or move it into a namespace",
    )


def _clash_or_rename(t: _Translation, name: str, start: int, end: int) -> None:
    """Names that HIP defines and CUDA code sometimes defines too (atomicMax, make_float4)."""
    if _is_definition(t.text, start, end):
        _clash(t, name, start, end)
        return
    action = t.actions.get(name)
    if action is not None:
        t.apply_action(name, start, end, action)


def _cudart_cb(t: _Translation, name: str, start: int, end: int) -> None:
    """``static void CUDART_CB callback(...)``: the calling-convention macro is empty on Linux
    and HIP has none, so it goes (with the blank after it)."""
    stop = end
    while stop < len(t.text) and t.text[stop] in " \t":
        stop += 1
    if t.edit(start, stop, ""):
        t.change(
            start,
            "runtime",
            name,
            "",
            CONVERTED,
            "removed: HIP host callbacks need no calling-convention macro",
        )


# HIP functions whose pointer parameter has no C++ template overload (CUDA's runtime has
# one, so CUDA code passes `&float_ptr` or the kernel itself): argument index and the type
# to cast it to. Checked against HIP 5.2's hip_runtime_api.h; a cast stays correct where
# later releases add the overloads.
_CAST_ARGUMENTS: dict[str, tuple[int, str]] = {
    "cudaHostAlloc": (0, "void**"),
    "cudaMallocHost": (0, "void**"),
    "cudaMallocPitch": (0, "void**"),
    "cudaHostGetDevicePointer": (0, "void**"),
    "cudaFuncGetAttributes": (1, "const void*"),
    "cudaFuncSetAttribute": (0, "const void*"),
    "cudaFuncSetCacheConfig": (0, "const void*"),
    "cudaFuncSetSharedMemConfig": (0, "const void*"),
}


def _cast_argument(t: _Translation, name: str, start: int, end: int) -> None:
    """Rename the call, and cast the argument HIP takes as ``void**``/``const void*``."""
    action = t.actions.get(name)
    if action is None or t.is_member_or_foreign(start):
        return
    t.apply_action(name, start, end, action)
    if not isinstance(action, _Rename):
        return
    call = t.call_arguments(end)
    index, cast_to = _CAST_ARGUMENTS[name]
    if call is None or len(call.args) <= index:
        return
    arg_start, arg_end = call.args[index]
    arg = t.text[arg_start:arg_end]
    if "void" in arg or "cast" in arg:
        return  # already the pointer type the C API takes
    new = f"reinterpret_cast<{cast_to}>({arg})"
    if t.edit(arg_start, arg_end, new):
        t.change(
            arg_start,
            action.family,
            arg,
            new,
            CONVERTED,
            f"HIP's {action.hip} takes {cast_to} here (no template overload, unlike CUDA's)",
        )


def _graph_instantiate(t: _Translation, name: str, start: int, end: int) -> None:
    """``cudaGraphInstantiate(&exec, graph, flags)`` is CUDA 12's three-argument form; HIP's
    hipGraphInstantiate keeps the older five-argument one, and names the three-argument
    call hipGraphInstantiateWithFlags."""
    if t.is_member_or_foreign(start):
        return
    call = t.call_arguments(end)
    action = t.actions.get(name)
    if call is None or len(call.args) != 3:
        if action is not None:
            t.apply_action(name, start, end, action)
        return
    with_flags = t.actions.get("cudaGraphInstantiateWithFlags")
    if not isinstance(with_flags, _Rename):
        if with_flags is not None:
            t.apply_action(name, start, end, with_flags)
        return
    if t.edit(start, end, with_flags.hip):
        t.change(
            start,
            "runtime",
            name,
            with_flags.hip,
            CONVERTED,
            "CUDA 12's three-argument cudaGraphInstantiate is HIP's hipGraphInstantiateWithFlags",
        )


_THRUST_QUALIFIER_RE = re.compile(r"(?<![\w$])thrust\s*::\s*$")


def _thrust_cuda(t: _Translation, name: str, start: int, end: int) -> None:
    """``thrust::cuda::par``: rocThrust's device system is ``thrust::hip``."""
    if not _THRUST_QUALIFIER_RE.search(t.text[max(0, start - 40) : start]):
        return
    if not t.followed_by(end, "::"):
        return
    if t.edit(start, end, "hip"):
        t.change(
            start,
            "thrust",
            "thrust::cuda",
            "thrust::hip",
            CONVERTED,
            "rocThrust's execution policies live in thrust::hip (par, par_nosync)",
        )


# Variables that hold a cooperative-groups tile or coalesced group: declared with the type,
# or with auto from the call that makes one.
_TILE_VARIABLE_RE = re.compile(
    r"(?:\bthread_block_tile\s*<[^<>;{}()]*>|\bcoalesced_group)\s*&{0,2}\s*([A-Za-z_]\w*)"
    r"|\bauto\s*&{0,2}\s*([A-Za-z_]\w*)\s*=\s*(?:\w+\s*::\s*)*"
    r"(?:tiled_partition\s*<|coalesced_threads\s*\(|binary_partition\s*\()"
)
_TILE_VOTES = ("any", "all", "ballot", "match_any", "match_all")


def _tile_votes(t: _Translation) -> None:
    """``tile.any(p)``, ``tile.ballot(p)``, ``tile.match_any(v)``...: HIP's cooperative
    groups have them only from ROCm 6.2 (5.2's thread_block_tile has the shuffles alone)."""
    code = t.code
    names = {a or b for a, b in _TILE_VARIABLE_RE.findall(code)}
    if not names:
        return
    calls = re.compile(
        rf"(?<![\w$])(?:{'|'.join(map(re.escape, sorted(names)))})\s*(?:\.|->)\s*"
        rf"({'|'.join(_TILE_VOTES)})\s*\("
    )
    since = version_text(t.api.warp.tile_vote_since)
    for m in calls.finditer(code):
        member = m.group(1)
        wave_wide = {"any": "__any", "all": "__all", "ballot": "__ballot"}.get(member)
        instead = (
            f"use the wave-wide {wave_wide}() and keep the tile's own lanes of the result"
            if wave_wide
            else "compare values with the tile's shfl() instead"
        )
        before = code[m.start() : m.start(1) + len(member)]
        t.change(
            m.start(1),
            "device",
            before,
            before,
            UNCONVERTED,
            f"cooperative groups' {member}() on a tile is not in ROCm {version_text(t.target)} "
            f"(added in {since}): {instead}",
        )


_Handler = Callable[[_Translation, str, int, int], None]
_SPECIAL: dict[str, _Handler] = {
    "__CUDA_ARCH__": _cuda_arch,
    "__has_include": _has_include,
    "__activemask": _activemask,
    "__syncwarp": _syncwarp,
    "cub": _cub_namespace,
    "cuda": _thrust_cuda,
    "CUDART_CB": _cudart_cb,
    **{name: _cast_argument for name in _CAST_ARGUMENTS},
    "cudaGraphInstantiate": _graph_instantiate,
    "operator": _operator,
    **{name: _warp_masked for name in _MASKED_WARP},
    **{name: _warp_match for name in _MATCH_WARP},
    **{name: _clash_or_rename for name in _CLASH_FUNCTIONS | _WARP_BUILTINS},
}


# ------------------------------------------------------------------ include placement


def _runtime_include_position(text: str) -> tuple[int, bool]:
    """Where nvcc's implicit ``#include`` belongs: after leading comments, ``#pragma once``
    and an include guard; before anything else. Returns (position, after_a_directive)."""
    pos = 0
    after_directive = False
    state = "start"  # start -> pragma -> ifndef -> (guard found)
    guard = ""
    guard_line = 0
    for line_start, line_end, sig in _line_tokens(text):
        if not sig:
            continue  # blank or comment-only line
        words = [tok.text for tok in sig]
        if words[0] == "#" and len(words) >= 2:
            if state == "start" and words[1:3] == ["pragma", "once"]:
                pos, after_directive, state = line_end, True, "pragma"
                continue
            if state in ("start", "pragma") and words[1] == "ifndef" and len(words) == 3:
                guard, guard_line, state = words[2], line_start, "ifndef"
                continue
            if state == "ifndef" and words[1] == "define" and words[2:3] == [guard]:
                return line_end, True
        if state == "ifndef":
            return guard_line, False  # an #ifndef that guards nothing: go before it
        return (pos if after_directive else line_start), after_directive
    return pos, after_directive


def _line_tokens(text: str) -> Iterator[tuple[int, int, list[Token]]]:
    """(line start, position after its newline, significant tokens) for the first lines."""
    offset = 0
    line_start = 0
    sig: list[Token] = []
    for tok in tokenize(text[:20000]):
        offset += len(tok.text)
        if tok.kind is Kind.NEWLINE:
            yield line_start, offset, sig
            line_start, sig = offset, []
        elif _is_significant(tok):
            sig.append(tok)
    yield line_start, offset, sig


# Headers of the CUDA toolkit and its libraries (as installed by CUDA 12/13 in
# /usr/local/cuda/include): an #include <...> of one gpuport cannot map is reported, while
# a project's own headers (even ones named cuda_utils.h) are left alone.
_TOOLKIT_HEADER_RE = re.compile(
    r"^(?:cuda_(?:runtime|runtime_api|fp16|bf16|fp8|fp6|fp4|occupancy|pipeline\w*|awbarrier\w*"
    r"|device_runtime_api|stdint|surface_types|texture_types|gl_interop|egl_interop"
    r"|vdpau_interop|profiler_api)\.h(?:pp)?"
    r"|cuda(?:EGL|GL|VDPAU|Profiler|Typedefs)\w*\.h|cuda\.h|builtin_types\.h|common_functions\.h"
    r"|device_(?:atomic_functions|double_functions|launch_parameters|types)\.h(?:pp)?"
    r"|driver_functions\.h|host_(?:config|defines)\.h|math_constants\.h"
    r"|sm_\d+_(?:atomic_functions|intrinsics)\.h(?:pp)?|(?:surface|texture)_\w+\.h|mma\.h"
    r"|(?:cublas|cufft|curand|cusparse|cusolver|cudnn|cutensor|nvrtc|nvjpeg|npp|cufile|nvshmem"
    r"|nvml|cupti|nvtx|nccl)\w*\.h"
    r"|(?:cuda|crt|nvtx3|cutlass|cute|cooperative_groups|cub|thrust|nv)/.*)$"
)


def _is_toolkit_header(path: str) -> bool:
    return _TOOLKIT_HEADER_RE.match(path) is not None


# ---------------------------------------------------------------------- diagnostics


def _library_advice(header: str) -> str:
    try:
        from gpuport.kb import library_for_header
    except ImportError:  # pragma: no cover - the KB ships with gpuport
        return ""
    try:
        library = library_for_header(header)
    except Exception:  # the KB's own problem must not stop a translation
        return ""
    if library is None:
        return ""
    counterpart = getattr(library, "amd_counterpart", "") or ""
    notes = getattr(library, "notes", "") or ""
    return "; ".join(
        x for x in (f"AMD counterpart: {counterpart}" if counterpart else "", notes) if x
    )


def _scanner_findings(rel: str, text: str, code: str) -> list[Change]:
    """The kernel scanner's findings, as changes a person must make (not mechanical ones)."""
    findings = scan_cuda_text(rel, text, code=code, renames=False)
    lines = text.splitlines()
    out: list[Change] = []
    for item in findings:
        if item.fix is not None and item.fix.mechanical:
            continue  # what gpuport port does itself
        if item.severity is Severity.INFO:
            continue
        loc = item.location
        status = UNCONVERTED if item.severity >= Severity.HIGH else NEEDS_REVIEW
        snippet = ""
        if 0 < loc.line <= len(lines):
            line_text = lines[loc.line - 1]
            word = (
                re.match(rf"[{_ID}]+", line_text[max(0, loc.column - 1) :]) if loc.column else None
            )
            snippet = word.group() if word else line_text.strip()[:120]
        note = item.message
        if item.fix is not None and item.fix.text:
            note += f" — {item.fix.text}"
        out.append(
            Change(loc.line, loc.column, "kernel", snippet, snippet, status, note, item.rule_id)
        )
    return out


# ------------------------------------------------------------------------------- api


def translate_source(
    rel: str,
    text: str,
    rocm_version: str,
    *,
    fix_warp_masks: bool = False,
    translate_strings: bool = False,
    diagnostics: bool = True,
    kind: FileKind | None = None,
) -> FileResult:
    """Translate one CUDA or C++ file's text for ROCm ``rocm_version`` (e.g. "6.4").

    ``rel`` is the path shown in reports (forward slashes); ``text`` may hold undecodable
    bytes as surrogate escapes, which come back unchanged. Raises ``ValueError`` for a
    malformed version; never for bad input text.
    """
    target = parse_version(rocm_version)
    file_kind = kind or classify(PurePosixPath(rel).name) or FileKind.CUDA
    options = TranslateOptions(fix_warp_masks, translate_strings, diagnostics)
    work = _Translation(
        rel=rel,
        text=text,
        kind=file_kind,
        target=target,
        options=options,
        api=load_api_map(),
        actions=_actions(target),
    )
    work.run()
    changes = work.changes()
    if diagnostics and file_kind in _SOURCE_KINDS:
        taken = {(c.line, c.column) for c in changes}
        found = _scanner_findings(rel, text, work.code)
        changes.extend(c for c in found if (c.line, c.column) not in taken)
    changes.sort(key=lambda c: (c.line, c.column, c.family, c.before))
    translated = _apply(text, work.edits) if work.edits else None
    if translated == text:
        translated = None
    return FileResult(
        path=rel,
        new_path=rel,
        kind=file_kind.value,
        original=text,
        translated=translated,
        changes=changes,
    )


def _apply(text: str, edits: list[_Edit]) -> str:
    parts: list[str] = []
    pos = 0
    for start, end, new in sorted(edits, key=lambda e: (e[0], e[1])):
        parts.append(text[pos:start])
        parts.append(new)
        pos = end
    parts.append(text[pos:])
    return "".join(parts)


def candidate_identifiers(text: str, rocm_version: str) -> list[tuple[int, str]]:
    """(offset, name) of every identifier the fast walk stops at, in file order.

    The translator looks at nothing else in code, so this is what the tests compare with the
    lexer's own view of the file (same identifiers, none inside comments or literals).
    """
    target = parse_version(rocm_version)
    scanner = _scanner(target, False).match
    out: list[tuple[int, str]] = []
    pos = 0
    n = len(text)
    while pos <= n:
        m = scanner(text, pos)
        if m is None:
            stop = _skip_only(target, False).match(text, pos)
            at = stop.end() if stop else pos
            token = _ANY_TOKEN_RE.match(text, at)
            pos = at + (len(token.group()) if token else 1)
            continue
        if m.lastgroup == "end":
            break
        if m.lastgroup == "id":
            out.append((m.start("id"), m.group("id")))
        elif m.lastgroup == "inc" and not _starts_line(text, m.start("inc")):
            pos = m.start("inc") + 1
            continue
        pos = m.end()
    return out


def is_candidate_name(name: str, rocm_version: str) -> bool:
    """Would the walk stop at an identifier spelled ``name``?"""
    target = parse_version(rocm_version)
    if name.startswith(_CANDIDATE_PREFIXES):
        return True
    return (
        name in _CLASH_FUNCTIONS
        or name == "operator"
        or (name in _actions(target) and not name.startswith(_CANDIDATE_PREFIXES))
    )
