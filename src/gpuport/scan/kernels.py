"""The CUDA/C++ scanner: inline PTX, 32-wide warp assumptions, NVIDIA-only features, libraries.

Every check runs regular expressions over ``code_only`` text (comments and string insides
blanked, offsets kept), so nothing fires inside comments or strings. Inline PTX is the one
exception: its template lives in a string, which is read from the original text at the same
offsets. Each check starts with a cheap substring test, because this runs over tens of
thousands of files.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import accumulate

from gpuport.files import FileKind, SourceText
from gpuport.findings import Confidence, Finding, Fix, Skipped
from gpuport.rules import Rule
from gpuport.scan.base import scanner
from gpuport.scan.kernel_rules import (
    ASYNC_COPY,
    BALLOT_RESULT_32_BIT,
    CUBLASLT,
    CUDA_API_RENAMES,
    CUDA_ARCH_MACRO,
    CUDNN,
    CUTLASS_CUTE,
    DYNAMIC_PARALLELISM,
    FP8_TYPES,
    GRAPH_FEATURES,
    HOPPER_ONLY,
    INDEPENDENT_THREAD_SCHEDULING,
    INLINE_PTX,
    LANE_MATH_WARP_32,
    LIBCUDACXX,
    MEMORY_POOLS,
    NANOSLEEP,
    NVRTC,
    NVTX,
    PER_WARP_ARRAY_32,
    SHUFFLE_FROM_16,
    TEXTURE_REFERENCE,
    THREAD_BLOCK_CLUSTERS,
    WARP_MASK_32_BIT,
    WARP_SIZE_HARDCODED,
    WARPSIZE_NOT_CONSTEXPR,
    WMMA,
)
from gpuport.syntax.cxx import code_only
from gpuport.syntax.text import LineIndex

__all__ = ["scan_cuda_text", "uses_cuda"]

FULL_MASK_64 = "0xffffffffffffffffULL"
_PLUS_ONE = (1).__add__

# --------------------------------------------------------------------------------------------
# Source positions and small parsing helpers


# Starts at the '#' rather than at ``^`` (which Python's regex engine tries at every offset);
# that the '#' opens its line is checked in ``_Source._index_includes``.
_INCLUDE_RE = re.compile(r"#[ \t]*include(?:_next)?[ \t]*[<\"]([^>\"\r\n]+)[>\"]")
_OPEN = {"(": ")", "[": "]", "{": "}"}
_CLOSE = {")": "(", "]": "[", "}": "{"}
_BRACKETS_RE = re.compile(r"[()\[\]{}]")
_MAX_SPAN = 20_000  # how far a bracket match may run before we give up (unbalanced input)


def _line_start(text: str, pos: int) -> int:
    """Where a ``re.M`` ``^`` before ``pos`` would match, past spaces and tabs only; or -1."""
    while pos > 0 and text[pos - 1] in " \t":
        pos -= 1
    return pos if pos == 0 or text[pos - 1] == "\n" else -1


class _Source:
    """One file's text, its code-only twin, and per-file indexes built once, on demand."""

    __slots__ = ("_body", "_include_spans", "_includes", "_lines", "code", "rel", "text")

    def __init__(self, rel: str, text: str, code: str) -> None:
        self.rel = rel
        self.text = text
        self.code = code
        self._lines: LineIndex | None = None
        self._includes: list[tuple[str, int]] | None = None
        self._include_spans: list[tuple[int, int]] = []
        self._body: str | None = None

    def position(self, offset: int) -> tuple[int, int]:
        lines = self._lines
        if lines is None:
            lines = self._lines = LineIndex(self.text, lone_cr_breaks=True)
        return lines.position(offset)

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
        )

    def _index_includes(self) -> list[tuple[str, int]]:
        code = self.code
        includes: list[tuple[str, int]] = []
        if "include" in code:
            for m in _INCLUDE_RE.finditer(code):
                start = _line_start(code, m.start())
                if start >= 0:
                    includes.append((m.group(1).strip(), start))
                    self._include_spans.append((start, m.end()))
        self._includes = includes
        return includes

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


def _match_forward(code: str, open_at: int, span: int = _MAX_SPAN) -> int:
    """Offset of the bracket closing the one at ``open_at`` (within ``span``), or -1."""
    depth = 0
    limit = min(len(code), open_at + span)
    for m in _BRACKETS_RE.finditer(code, open_at, limit):
        ch = m.group()
        if ch in _OPEN:
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return m.start()
    return -1


def _match_backward(code: str, close_at: int) -> int:
    """Offset of the bracket opening the one at ``close_at``, or -1."""
    depth = 0
    stop = max(-1, close_at - 2_000)
    for i in range(close_at, stop, -1):
        ch = code[i]
        if ch in _CLOSE:
            depth += 1
        elif ch in _OPEN:
            depth -= 1
            if depth == 0:
                return i
    return -1


def _split_args(code: str, open_at: int, close_at: int) -> list[tuple[int, int]]:
    """(start, end) offsets of the top-level, comma-separated arguments inside brackets."""
    args: list[tuple[int, int]] = []
    depth = 0
    start = open_at + 1
    for i in range(open_at + 1, close_at):
        ch = code[i]
        if ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth -= 1
        elif ch == "," and depth == 0:
            args.append((start, i))
            start = i + 1
    if code[start:close_at].strip() or args:
        args.append((start, close_at))
    return args


def _trimmed(code: str, start: int, end: int) -> tuple[int, int]:
    """The span without surrounding whitespace."""
    while start < end and code[start].isspace():
        start += 1
    while end > start and code[end - 1].isspace():
        end -= 1
    return start, end


def _once_per_line(src: _Source, matches: Iterable[re.Match[str]]) -> Iterator[re.Match[str]]:
    seen: set[int] = set()
    for m in matches:
        line = src.line_of(m.start())
        if line not in seen:
            seen.add(line)
            yield m


# Patterns below start with a literal rather than ``\b`` or a look-behind: Python's regex
# engine then jumps between occurrences of the literal instead of trying every offset,
# which is about a hundred times faster. The word boundary is checked here instead.
def _word_start(text: str, pos: int, also: str = "") -> bool:
    if pos == 0:
        return True
    before = text[pos - 1]
    return not (before.isalnum() or before in "_$" or before in also)


def _words(
    pattern: re.Pattern[str], text: str, start: int = 0, end: int | None = None, also: str = ""
) -> Iterator[re.Match[str]]:
    """Matches of ``pattern`` that start a word (not preceded by an identifier character)."""
    for m in pattern.finditer(text, start, len(text) if end is None else end):
        if _word_start(text, m.start(), also):
            yield m


def _statement_before(code: str, pos: int) -> tuple[int, str]:
    """(start, text) of the statement that runs up to ``pos`` (at most 400 characters)."""
    floor = max(0, pos - 400)
    start = max(
        code.rfind(";", floor, pos), code.rfind("{", floor, pos), code.rfind("}", floor, pos)
    )
    start = max(start + 1, floor)
    return start, code[start:pos]


_PLAIN_ASSIGN_RE = re.compile(r"(?<![=!<>+\-*/%&|^])=(?!=)")
_LAST_NAME_RE = re.compile(r"([A-Za-z_]\w*)\s*$")


def _assigned_name(code: str, pos: int) -> tuple[str, int] | None:
    """The variable that the expression at ``pos`` initialises or is assigned to, and where."""
    start, stmt = _statement_before(code, pos)
    eq = _PLAIN_ASSIGN_RE.search(stmt)
    if eq is None:
        return None
    name = _LAST_NAME_RE.search(stmt, 0, eq.start())
    if name is None or name.group(1) in _CPP_KEYWORDS:
        return None
    return name.group(1), start + name.start(1)


class _Statements:
    """Statement starts (after each ``;``, ``{`` or ``}``) of one file's code, indexed once.

    Answers what ``_statement_before`` and ``_assigned_name`` would, by bisecting instead of
    three ``rfind`` calls per question, and remembers each statement's assignment.
    """

    __slots__ = ("_assigned", "_bounds", "_code")

    def __init__(self, code: str) -> None:
        self._code = code
        # Offsets of every ';', '{' and '}', after a -1 sentinel (and ending with len(code)):
        # piece i of the split ends where boundary i+1 stands. Summed in C, not Python;
        # two replaces and a split on one character are three times faster than re.split.
        pieces = code.replace("{", ";").replace("}", ";").split(";")
        self._bounds = list(accumulate(map(_PLUS_ONE, map(len, pieces)), initial=-1))
        # statement start -> (offset of its first plain '=', what _assigned_name answered)
        self._assigned: dict[int, tuple[int, tuple[str, int] | None]] = {}

    def before(self, pos: int) -> tuple[int, str]:
        """``_statement_before(code, pos)``."""
        bounds = self._bounds
        start = max(bounds[bisect.bisect_left(bounds, pos) - 1] + 1, pos - 400, 0)
        return start, self._code[start:pos]

    def assigned_name(self, pos: int) -> tuple[str, int] | None:
        """``_assigned_name(code, pos)``.

        Every position after a statement's first plain '=' (and the character after it,
        which the look-ahead reads) gets the same answer, so it is worked out once.
        """
        start, stmt = self.before(pos)
        known = self._assigned.get(start)
        if known is not None and known[0] + 1 < pos:
            return known[1]
        eq = _PLAIN_ASSIGN_RE.search(stmt)
        if eq is None:
            return None
        name = _LAST_NAME_RE.search(stmt, 0, eq.start())
        found = None
        if name is not None and name.group(1) not in _CPP_KEYWORDS:
            found = name.group(1), start + name.start(1)
        if start + eq.start() + 1 < pos:
            self._assigned[start] = (start + eq.start(), found)
        return found


def _top(counter: Counter[str], n: int = 3) -> str:
    parts = [f"{name} x{count}" if count > 1 else name for name, count in counter.most_common(n)]
    if len(counter) > n:
        parts.append("…")
    return ", ".join(parts)


# --------------------------------------------------------------------------------------------
# Warp masks: what counts as "the full 32-lane warp" and "the full 64-lane wavefront"

_INT_SUFFIX = r"(?:[uU](?:ll|LL|l|L)?|(?:ll|LL|l|L)[uU]?)?"
# Values whose type is 32 bits wide: a compile error against HIP's 64-bit mask parameter.
_FULL_32_TYPED_RE = re.compile(
    r"^(?:0[xX][fF]{8}[uU]?|4294967295[uU]?|~\s*0[uU]?|-\s*1[uU]?"
    r"|\(\s*(?:unsigned(?:\s+int)?|uint32_t|int)\s*\)\s*(?:-\s*1|~\s*0[uU]?)"
    r"|(?:static_cast\s*<\s*(?:unsigned(?:\s+int)?|uint32_t)\s*>|uint32_t|unsigned)\s*\(\s*-\s*1\s*\)"
    r"|UINT_MAX|UINT32_MAX)$"
)
# 32 one-bits in a 64-bit type: compiles, but leaves lanes 32-63 out.
_FULL_32_WIDE_RE = re.compile(
    r"^(?:0[xX][fF]{8}(?:[uU]?(?:ll|LL|l|L)|(?:ll|LL|l|L)[uU]?)"
    r"|4294967295(?:[uU]?(?:ll|LL|l|L)|(?:ll|LL|l|L)[uU]?)"
    r"|\(\s*(?:unsigned\s+long(?:\s+long)?|uint64_t)\s*\)\s*0[xX][fF]{8}[uU]?)$"
)


def _strip_parens(text: str) -> str:
    text = text.strip()
    while text.startswith("(") and text.endswith(")"):
        inner = text[1:-1].strip()
        if inner.count("(") != inner.count(")"):
            break
        text = inner
    return text


def _full_mask_kind(expr: str) -> str | None:
    """'typed32' / 'wide32' when ``expr`` is a full 32-lane constant; None otherwise."""
    value = _strip_parens(expr)
    if _FULL_32_TYPED_RE.match(value):
        return "typed32"
    if _FULL_32_WIDE_RE.match(value):
        return "wide32"
    return None


@dataclass(frozen=True, slots=True)
class _Constant:
    name: str
    value: str
    value_start: int
    value_end: int
    start: int  # the start of the definition, for the finding
    is_macro: bool


_INTEGER_TYPE_BEFORE_RE = re.compile(
    r"(?:unsigned(?:\s+(?:int|long(?:\s+long)?))?|u?int(?:32|64)_t|int|long\s+long|size_t|auto)"
    r"\s*$"
)


def _find_constant(code: str, name: str) -> _Constant | None:
    """The first ``#define name value`` or ``type name = value;`` in the code."""
    escaped = re.escape(name)
    define = re.compile(r"#[ \t]*define[ \t]+" + escaped + r"[ \t]+([^\r\n]*?)[ \t]*$", re.M)
    for m in define.finditer(code):
        line_start = code.rfind("\n", 0, m.start()) + 1
        if not code[line_start : m.start()].strip() and m.group(1):
            return _Constant(name, m.group(1), m.start(1), m.end(1), m.start(), True)
    decl = re.compile(escaped + r"\s*(?:=\s*([^;,{}]+?)|\{\s*([^;,{}]+?)\s*\})\s*[;,]")
    for m in _words(decl, code):
        if _INTEGER_TYPE_BEFORE_RE.search(code, max(0, m.start() - 40), m.start()) is None:
            continue
        group = 1 if m.group(1) is not None else 2
        start, end = _trimmed(code, m.start(group), m.end(group))
        _, stmt = _statement_before(code, m.start())
        return _Constant(name, code[start:end], start, end, m.start() - len(stmt.lstrip()), False)
    return None


class _Constants:
    """Constant definitions, looked up by name on demand and cached."""

    def __init__(self, code: str) -> None:
        self._code = code
        self._found: dict[str, _Constant | None] = {}

    def get(self, name: str) -> _Constant | None:
        if name not in self._found:
            self._found[name] = _find_constant(self._code, name)
        return self._found[name]


# --------------------------------------------------------------------------------------------
# GP301 inline PTX, and the PTX parts of GP309 / GP310 / GP311

_ASM_RE = re.compile(
    r"(?:asm|__asm__|__asm)\b(?:\s+(?:volatile|__volatile__|__volatile|inline|goto))*\s*\("
)
_STRING_RE = re.compile(r"(?:u8|[uUL])?\"((?:[^\"\\\r\n]|\\.)*)\"")
_STATEMENT_SPLIT_RE = re.compile(r"[;\n]")
_OPCODE_RE = re.compile(r"^(?:@!?%?\w+\s+)?([a-z][a-z0-9_]*(?:\.[\w:]+)*)")
_SPECIAL_REG_RE = re.compile(
    r"%%?(laneid|warpid|nwarpid|smid|nsmid|gridid|globaltimer(?:_lo|_hi)?|clock64|clock_hi|clock"
    r"|lanemask_(?:eq|lt|le|gt|ge)|dynamic_smem_size|total_smem_size|cluster\w*|nclusterid"
    r"|is_explicit_cluster)\b"
)
_PTX_BARE_OPS = frozenset({"trap", "exit", "ret", "brkpt", "bra", "nanosleep", "pmevent"})

# PTX special registers and their HIP replacements.
_SPECIAL_REG_HIP = {
    "laneid": "__lane_id()",
    "warpid": "threadIdx.x / warpSize (AMD has no stable hardware warp slot id)",
    "nwarpid": "no HIP equivalent; derive from blockDim and warpSize",
    "smid": "__smid()",
    "nsmid": "hipDeviceAttributeMultiprocessorCount, queried on the host",
    "gridid": "no HIP equivalent",
    "globaltimer": "wall_clock64() (constant rate: hipDeviceAttributeWallClockRate)",
    "globaltimer_lo": "wall_clock64()",
    "globaltimer_hi": "wall_clock64()",
    "clock": "clock()",
    "clock_hi": "clock64()",
    "clock64": "clock64()",
    "lanemask_eq": "__lanemask_eq()",
    "lanemask_lt": "__lanemask_lt()",
    "lanemask_gt": "__lanemask_gt()",
    "lanemask_le": "__lanemask_lt() | __lanemask_eq()",
    "lanemask_ge": "__lanemask_gt() | __lanemask_eq()",
    "dynamic_smem_size": "pass the size to the kernel as an argument",
    "total_smem_size": "hipDeviceAttributeMaxSharedMemoryPerBlock, queried on the host",
}
_PLAIN_CXX = "plain C++ arithmetic"
_MATH = "HIP math intrinsics (__fsqrt_rn, __frsqrt_rn, __expf, __logf, …)"
# PTX opcodes (the part before the first '.') and what HIP offers instead.
_PTX_OP_HIP = {
    "shfl": "__shfl*_sync with a 64-bit mask, or __shfl/__shfl_xor/__shfl_up/__shfl_down",
    "vote": "__ballot / __any / __all (64-bit results)",
    "activemask": "__activemask() (64-bit)",
    "match": "__match_any_sync / __match_all_sync (64-bit masks)",
    "redux": "a __shfl_xor reduction over warpSize lanes",
    "bar": "__syncthreads()",
    "barrier": "__syncthreads()",
    "membar": "__threadfence() / __threadfence_block() / __threadfence_system()",
    "fence": "__threadfence() or __atomic_thread_fence with a scope",
    "ld": "a plain load (__ldg for read-only data; PTX cache qualifiers have no HIP form)",
    "st": "a plain store",
    "prefetch": "nothing (drop it) or __builtin_prefetch",
    "prefetchu": "nothing (drop it)",
    "createpolicy": "nothing (L2 cache policies have no HIP equivalent)",
    "discard": "nothing (drop it)",
    "applypriority": "nothing (drop it)",
    "prmt": "__byte_perm()",
    "lop3": "plain & | ^ ~ (the compiler chooses the instruction)",
    "bfe": "shifts and masks (or __builtin_amdgcn_ubfe)",
    "bfi": "shifts and masks",
    "brev": "__brev() / __brevll()",
    "popc": "__popc() / __popcll()",
    "clz": "__clz() / __clzll()",
    "bfind": "31 - __clz(x)",
    "fns": "__fns32() / __fns64()",
    "mma": "rocWMMA or MFMA builtins (__builtin_amdgcn_mfma_*)",
    "wmma": "rocWMMA",
    "ldmatrix": "rocWMMA load_matrix_sync, or LDS loads",
    "movmatrix": "rocWMMA, or LDS transposes",
    "cvt": "HIP conversion intrinsics (__float2half_rn, __float2bfloat16, hip_fp8.h)",
    "cvta": "nothing: HIP pointers are generic",
    "isspacep": "__builtin_amdgcn_is_shared / __builtin_amdgcn_is_private",
    "atom": "atomicAdd / atomicCAS / … (or __hip_atomic_* with a scope)",
    "red": "atomicAdd / … with the result unused",
    "nanosleep": "__builtin_amdgcn_s_sleep()",
    "trap": "__builtin_trap() or abort()",
    "exit": "return from the kernel",
    "tex": "texture objects (tex1Dfetch<T>, tex2D<T>)",
    "tld4": "texture objects (tex2Dgather<T>)",
    "suld": "surface objects (surf2Dread)",
    "sust": "surface objects (surf2Dwrite)",
    "dp4a": "plain multiply-adds (the compiler uses dot instructions where they exist)",
    "dp2a": "plain multiply-adds",
    "mov": _PLAIN_CXX,
    "add": _PLAIN_CXX,
    "addc": _PLAIN_CXX,
    "sub": _PLAIN_CXX,
    "subc": _PLAIN_CXX,
    "mul": _PLAIN_CXX,
    "mad": _PLAIN_CXX,
    "madc": _PLAIN_CXX,
    "mul24": _PLAIN_CXX,
    "mad24": _PLAIN_CXX,
    "fma": "fma() / __fmaf_rn()",
    "div": _PLAIN_CXX,
    "rem": _PLAIN_CXX,
    "abs": _PLAIN_CXX,
    "neg": _PLAIN_CXX,
    "min": "min() / fminf()",
    "max": "max() / fmaxf()",
    "and": _PLAIN_CXX,
    "or": _PLAIN_CXX,
    "xor": _PLAIN_CXX,
    "not": _PLAIN_CXX,
    "shl": _PLAIN_CXX,
    "shr": _PLAIN_CXX,
    "shf": "__funnelshift_l() / __funnelshift_r()",
    "selp": _PLAIN_CXX,
    "setp": _PLAIN_CXX,
    "set": _PLAIN_CXX,
    "slct": _PLAIN_CXX,
    "testp": "isnan() / isinf() / isfinite()",
    "copysign": "copysign()",
    "sqrt": _MATH,
    "rsqrt": _MATH,
    "rcp": _MATH,
    "ex2": _MATH,
    "lg2": _MATH,
    "sin": _MATH,
    "cos": _MATH,
    "tanh": _MATH,
}

# Opcode prefixes that belong to other rules (checked before GP301, most specific first).
_HOPPER_OP_PREFIXES = (
    "wgmma.",
    "cp.async.bulk",
    "cp.reduce.async.bulk",
    "setmaxnreg",
    "fence.proxy.async",
    "fence.mbarrier_init",
    "mbarrier.expect_tx",
    "mbarrier.arrive.expect_tx",
    "mbarrier.try_wait",
    "griddepcontrol",
    "tcgen05",
    "tensormap.",
    "elect.sync",
    "stmatrix",
    "multimem",
    "st.async",
    "red.async",
)
_CLUSTER_OP_PREFIXES = ("barrier.cluster", "mapa")
_ASYNC_OP_PREFIXES = ("cp.async", "mbarrier")


@dataclass(frozen=True, slots=True)
class _Ptx:
    opcodes: tuple[str, ...]
    special: tuple[tuple[str, str], ...]  # (opcode, special register) pairs
    is_ptx: bool


def _read_ptx(template: str) -> _Ptx:
    opcodes: list[str] = []
    special: list[tuple[str, str]] = []
    is_ptx = False
    for raw in _STATEMENT_SPLIT_RE.split(template):
        stmt = raw.strip().lstrip("{}").strip()
        if not stmt:
            continue
        if stmt.startswith("."):  # .reg / .pred declarations
            is_ptx = True
            continue
        stmt = re.sub(r"^\$?\w+:\s*", "", stmt)  # labels
        m = _OPCODE_RE.match(stmt)
        if not m:
            continue
        opcode = m.group(1)
        if "." in opcode or opcode in _PTX_BARE_OPS:
            is_ptx = True
        if opcode not in opcodes:
            opcodes.append(opcode)
        for reg in _SPECIAL_REG_RE.finditer(stmt):
            is_ptx = True
            pair = (opcode, reg.group(1))
            if pair not in special:
                special.append(pair)
    return _Ptx(tuple(opcodes), tuple(special), is_ptx)


def _ptx_rule(ptx: _Ptx) -> Rule:
    ops = ptx.opcodes
    if any(op.startswith(_HOPPER_OP_PREFIXES) for op in ops):
        return HOPPER_ONLY
    if any(op.startswith(_CLUSTER_OP_PREFIXES) for op in ops) or any(
        reg.startswith("cluster") or reg in ("nclusterid", "is_explicit_cluster")
        for _, reg in ptx.special
    ):
        return THREAD_BLOCK_CLUSTERS
    if any(op.startswith(_ASYNC_OP_PREFIXES) for op in ops):
        return ASYNC_COPY
    return INLINE_PTX


def _ptx_advice(ptx: _Ptx) -> list[str]:
    items: list[str] = []
    with_special = {op for op, _ in ptx.special}
    for op, reg in ptx.special:
        items.append(f"{op} %{reg} → {_SPECIAL_REG_HIP.get(reg, 'no direct HIP equivalent')}")
    for op in ptx.opcodes:
        if op in with_special:
            continue
        hip = _ptx_op_hip(op)
        items.append(f"{op} → {hip}" if hip else f"{op} (no direct HIP equivalent)")
    return items


_SHFL_MODE_HIP = {
    "bfly": "__shfl_xor_sync (64-bit mask) or __shfl_xor",
    "down": "__shfl_down_sync (64-bit mask) or __shfl_down",
    "up": "__shfl_up_sync (64-bit mask) or __shfl_up",
    "idx": "__shfl_sync (64-bit mask) or __shfl",
}
_VOTE_MODE_HIP = {
    "ballot": "__ballot (64-bit result)",
    "any": "__any",
    "all": "__all",
    "uni": "__all with a 64-bit lane mask",
}


def _ptx_op_hip(op: str) -> str | None:
    base, *qualifiers = op.split(".")
    table = {"shfl": _SHFL_MODE_HIP, "vote": _VOTE_MODE_HIP}.get(base)
    if table is not None:
        for qualifier in qualifiers:
            if qualifier in table:
                return table[qualifier]
    return _PTX_OP_HIP.get(base)


def _ptx_message(rule: Rule, ptx: _Ptx) -> str:
    regs = {op: f"{op} %{reg}" for op, reg in reversed(ptx.special)}
    named = [regs.get(op, op) for op in ptx.opcodes]
    shown = ", ".join(named[:4]) + (", …" if len(named) > 4 else "")
    if rule is HOPPER_ONLY:
        return f"inline PTX uses Hopper-or-newer instructions with no AMD counterpart: {shown}"
    if rule is THREAD_BLOCK_CLUSTERS:
        return f"inline PTX uses thread-block clusters, which AMD Instinct GPUs lack: {shown}"
    if rule is ASYNC_COPY:
        return f"inline PTX uses asynchronous copies or mbarriers with no HIP counterpart: {shown}"
    advice = _ptx_advice(ptx)
    more = f"; and {len(advice) - 4} more" if len(advice) > 4 else ""
    if not advice:
        return "inline PTX assembly must be rewritten for AMD GPUs"
    return "inline PTX must be rewritten for AMD: " + "; ".join(advice[:4]) + more


def _check_asm(src: _Source) -> Iterator[Finding]:
    code = src.code
    if "asm" not in code:
        return
    for m in _words(_ASM_RE, code):
        open_at = m.end() - 1
        close_at = _match_forward(code, open_at)
        if close_at < 0:
            close_at = min(len(code), open_at + 2_000)
        colon = code.find(":", open_at, close_at)
        template_end = colon if colon >= 0 else close_at
        pieces = _STRING_RE.findall(src.text, open_at + 1, template_end)
        if not pieces:
            if code[open_at + 1 : template_end].strip():  # a macro or variable as template
                yield src.finding(
                    INLINE_PTX,
                    m.start(),
                    close_at + 1,
                    message="inline assembly with a template gpuport cannot see (a macro?); "
                    "PTX must be rewritten for AMD GPUs",
                    confidence=Confidence.MEDIUM,
                )
            continue
        template = "".join(pieces).replace("\\n", "\n").replace("\\t", " ")
        if not template.strip():  # asm volatile("" ::: "memory"): a compiler barrier, fine
            continue
        ptx = _read_ptx(template)
        if not ptx.is_ptx:  # host assembly (x86 pause, rdtsc, …) in a CUDA file
            continue
        rule = _ptx_rule(ptx)
        yield src.finding(rule, m.start(), close_at + 1, message=_ptx_message(rule, ptx))


_CUDA_PTX_NS_RE = re.compile(r"cuda::ptx::(\w+)")
_HOPPER_PTX_FN_RE = re.compile(
    r"^(?:wgmma|cp_async_bulk|cp_reduce_async_bulk|tensormap|fence_proxy_async|mbarrier_expect_tx"
    r"|mbarrier_arrive_expect_tx|mbarrier_try_wait|elect_sync|st_async|red_async|tcgen05|multimem"
    r"|griddepcontrol|setmaxnreg|stmatrix)"
)


def _check_cuda_ptx_namespace(src: _Source) -> Iterator[Finding]:
    if "ptx::" not in src.code:
        return
    for m in _once_per_line(src, _words(_CUDA_PTX_NS_RE, src.body, also=":")):
        name = m.group(1)
        if _HOPPER_PTX_FN_RE.match(name):
            yield src.finding(
                HOPPER_ONLY,
                m.start(),
                m.end(),
                message=f"cuda::ptx::{name} is a Hopper-or-newer PTX instruction with no AMD "
                "counterpart",
            )
        else:
            register = name[len("get_sreg_") :] if name.startswith("get_sreg_") else ""
            hip = _SPECIAL_REG_HIP.get(register)
            yield src.finding(
                INLINE_PTX,
                m.start(),
                m.end(),
                message=f"cuda::ptx::{name} wraps a PTX instruction; rewrite it in HIP"
                + (f" ({hip})" if hip else ""),
            )


# --------------------------------------------------------------------------------------------
# Thread-index tracking for GP302 / GP307

_THREAD_SOURCE_RE = re.compile(r"\b(?:threadIdx|blockDim)\s*\.\s*[xyz]\b|\bthread_rank\s*\(")
_LANE_NAME_RE = re.compile(r"^(?:[a-z]+_)?lane(?:_?(?:id|idx|index))?$", re.I)
_CPP_KEYWORDS = frozenset(
    {
        "return",
        "case",
        "else",
        "do",
        "sizeof",
        "delete",
        "throw",
        "new",
        "co_return",
        "co_yield",
        "goto",
        "alignof",
        "decltype",
        "typeid",
    }
)


@dataclass(slots=True)
class _Names:
    thread: set[str]
    lane: set[str]


_THREAD_WORD_RE = re.compile(r"(?:threadIdx|blockDim)\s*\.\s*[xyz]\b|thread_rank\s*\(")
# The same three alternatives, each led by its own literal, which the regex engine finds far
# faster than the alternation (whose first letters, 't' and 'b', are everywhere). Their
# matches cannot overlap, so merging them in offset order gives the alternation's matches.
_THREAD_WORD_PARTS = tuple(
    re.compile(part)
    for part in (r"threadIdx\s*\.\s*[xyz]\b", r"blockDim\s*\.\s*[xyz]\b", r"thread_rank\s*\(")
)


def _thread_words(code: str) -> list[re.Match[str]]:
    """``_words(_THREAD_WORD_RE, code)``, found part by part."""
    found = [
        m
        for part in _THREAD_WORD_PARTS
        for m in part.finditer(code)
        if _word_start(code, m.start())
    ]
    found.sort(key=_match_start)
    return found


def _match_start(m: re.Match[str]) -> int:
    return m.start()


_LANE_HINT_RE = re.compile(
    r"&\s*(?:31|0[xX]1[fF])[uU]?\b|%\s*(?:32[uU]?\b|warpSize\b)|&\s*\(\s*warpSize\s*-\s*1\s*\)"
    r"|__lane_id\s*\(|laneid\b"
)
# _LANE_HINT_RE's alternatives grouped by their leading literal (see _THREAD_WORD_PARTS).
# No match of one part can hold the start of another's, so together they find the same.
_LANE_HINT_PARTS = tuple(
    re.compile(part)
    for part in (
        r"&\s*(?:31|0[xX]1[fF])[uU]?\b|&\s*\(\s*warpSize\s*-\s*1\s*\)",
        r"%\s*(?:32[uU]?\b|warpSize\b)",
        r"__lane_id\s*\(",
        r"laneid\b",
    )
)


_SUBSCRIPT_RE = re.compile(r"\[[^\[\]]*\]")


def _index_assignment(
    code: str,
    pos: int,
    word: re.Pattern[str],
    seen: dict[tuple[int, int, str], bool] | None = None,
    statements: _Statements | None = None,
) -> str | None:
    """The variable assigned an expression of the index at ``pos``, not of data loaded with it.

    ``gtid = blockIdx.x * blockDim.x + tid`` is another index; ``v = values[tid]`` and
    ``v = tid < n ? values[tid] : 0`` are data. ``seen`` remembers right-hand sides already
    judged: several indices in one statement share one.
    """
    found = _assigned_name(code, pos) if statements is None else statements.assigned_name(pos)
    if found is None:
        return None
    eq = code.find("=", found[1])
    end = code.find(";", pos, pos + 400)
    stop = end if end >= 0 else pos + 400
    key = (eq, stop, word.pattern)
    if seen is not None and key in seen:
        return found[0] if seen[key] else None
    rhs = code[eq + 1 : stop]
    if "[" in rhs:
        previous = None
        while previous != rhs:  # drop subscripts, innermost first
            previous, rhs = rhs, _SUBSCRIPT_RE.sub(" ", rhs)
    if "?" in rhs:
        rhs = rhs.split("?", 1)[1]  # the condition of a ternary is not the value
    judged = word.search(rhs) is not None
    if seen is not None:
        seen[key] = judged
    return found[0] if judged else None


def _tracked_names(src: _Source) -> _Names:
    """Variables assigned from thread indices, and those that hold a lane number."""
    code = src.code
    thread: set[str] = set()
    seen: dict[tuple[int, int, str], bool] = {}
    statements = _Statements(code)
    for m in _thread_words(code):
        found = _index_assignment(code, m.start(), _THREAD_WORD_RE, seen, statements)
        if found is not None:
            thread.add(found)
    # One level of propagation: tid = threadIdx.x; gtid = blockIdx.x * blockDim.x + tid
    if thread:
        direct = re.compile("(?:" + "|".join(map(re.escape, sorted(thread))) + r")\b")
        words: dict[str, re.Pattern[str]] = {}
        for m in _words(direct, code, also=".>"):
            name = m.group()
            word = words.get(name)
            if word is None:
                word = words[name] = re.compile(r"(?<![\w.])" + re.escape(name) + r"\b")
            found = _index_assignment(code, m.start(), word, seen, statements)
            if found is not None and found != name:
                thread.add(found)
    lane: set[str] = set()
    for part in _LANE_HINT_PARTS:  # the order does not matter: a set is collected
        for m in part.finditer(code):
            assigned = statements.assigned_name(m.start())
            if assigned is not None:
                lane.add(assigned[0])
    return _Names(thread, lane)


# --------------------------------------------------------------------------------------------
# GP302 lane math with 31 / 32 / 5

_LANE_OP_RE = re.compile(r"(?:&\s*(?:31|0[xX]1[fF])|%\s*32|/\s*32|>>\s*5)[uU]?(?![\w.'])(?!\s*=)")


def _left_operand(code: str, op_at: int) -> str:
    """The expression text just left of a binary operator: a name chain or a bracketed group."""
    i = op_at - 1
    while i >= 0 and code[i] in " \t":
        i -= 1
    if i < 0:
        return ""
    if code[i] == ")":
        open_at = _match_backward(code, i)
        if open_at < 0:
            return ""
        # a call: include the function name
        j = open_at - 1
        while j >= 0 and (code[j].isalnum() or code[j] in "_."):
            j -= 1
        return code[j + 1 : i + 1]
    end = i + 1
    while i >= 0 and (code[i].isalnum() or code[i] in "_."):
        i -= 1
        if i >= 1 and code[i - 1 : i + 1] == "->":
            i -= 2
    return code[i + 1 : end]


def _is_thread_expr(expr: str, names: _Names) -> bool:
    if not expr:
        return False
    if _THREAD_SOURCE_RE.search(expr):
        return True
    return any(w in names.thread for w in re.findall(r"[A-Za-z_]\w*", expr))


def _check_lane_math(src: _Source, names: _Names) -> Iterator[Finding]:
    code = src.code
    for m in _LANE_OP_RE.finditer(code):
        if m.start() > 0 and code[m.start() - 1] in "&|":
            continue  # && and || are not bit operations
        operand = _left_operand(code, m.start())
        if not _is_thread_expr(operand, names):
            continue
        op = " ".join(m.group().split())
        shown = " ".join(operand.split())
        if len(shown) > 40:
            shown = shown[:37] + "…"
        portable = "% warpSize (or __lane_id())" if op[0] in "&%" else "/ warpSize"
        yield src.finding(
            LANE_MATH_WARP_32,
            m.start(),
            m.end(),
            message=f"`{shown} {op}` assumes 32-wide warps; AMD CDNA wavefronts are 64 wide "
            f"— use {portable}",
        )


# --------------------------------------------------------------------------------------------
# GP303 32-bit full masks, GP320 partial __syncwarp

_SYNC_CALL_RE = re.compile(
    r"(__shfl(?:_up|_down|_xor)?_sync|__ballot_sync|__any_sync|__all_sync"
    r"|__match_(?:any|all)_sync)\s*\("
)


def _check_warp_masks(src: _Source, constants: _Constants) -> Iterator[Finding]:
    code = src.code
    if "_sync" not in code:
        return
    reported_constants: set[str] = set()
    for m in _words(_SYNC_CALL_RE, code):
        open_at = m.end() - 1
        close_at = _match_forward(code, open_at)
        if close_at < 0:
            continue
        args = _split_args(code, open_at, close_at)
        if not args:
            continue
        start, end = _trimmed(code, *args[0])
        mask = code[start:end]
        fn = m.group(1)
        kind = _full_mask_kind(mask)
        if kind is not None:
            yield src.finding(
                WARP_MASK_32_BIT,
                start,
                end,
                message=_mask_message(fn, mask, kind),
                fix=Fix(
                    f"Replace `{mask}` with `{FULL_MASK_64}` (HIP's masks are 64-bit); on ROCm "
                    f"before 6.2 call the mask-less form of {fn} instead.",
                    mechanical=True,
                    replacement=FULL_MASK_64,
                ),
            )
            continue
        if not re.fullmatch(r"[A-Za-z_]\w*", mask) or mask in reported_constants:
            continue
        constant = constants.get(mask)
        if constant is None:
            continue
        kind = _full_mask_kind(constant.value)
        if kind is None:
            continue
        reported_constants.add(mask)
        if constant.is_macro:
            fix = Fix(
                f"Define {mask} as `{FULL_MASK_64}` (HIP's masks are 64-bit).",
                mechanical=True,
                replacement=FULL_MASK_64,
            )
            yield src.finding(
                WARP_MASK_32_BIT,
                constant.value_start,
                constant.value_end,
                message=f"{mask} = `{constant.value}` is used as the mask of {fn}: "
                + _mask_reason(kind),
                fix=fix,
            )
        else:
            yield src.finding(
                WARP_MASK_32_BIT,
                constant.start,
                constant.value_end,
                message=f"{mask} = `{constant.value}` is used as the mask of {fn}: "
                + _mask_reason(kind)
                + "; give it type unsigned long long and the value "
                + FULL_MASK_64,
                fix=Fix(
                    f"Declare {mask} as `unsigned long long` with value `{FULL_MASK_64}`.",
                    mechanical=False,
                ),
            )


def _mask_reason(kind: str) -> str:
    if kind == "wide32":
        return "it names only lanes 0-31 of a 64-lane wavefront"
    return "HIP's mask parameter is 64-bit and a 32-bit mask fails its static_assert"


def _mask_message(fn: str, mask: str, kind: str) -> str:
    return f"{fn} with mask `{mask}`: {_mask_reason(kind)}; use {FULL_MASK_64}"


_SYNCWARP_RE = re.compile(r"__syncwarp\s*\(")


def _check_syncwarp(src: _Source, constants: _Constants) -> Iterator[Finding]:
    code = src.code
    if "__syncwarp" not in code:
        return
    for m in _words(_SYNCWARP_RE, code):
        open_at = m.end() - 1
        close_at = _match_forward(code, open_at)
        if close_at < 0:
            continue
        start, end = _trimmed(code, open_at + 1, close_at)
        arg = code[start:end]
        if not arg or "__activemask" in arg or _is_full_mask_expr(arg, constants):
            continue
        yield src.finding(
            INDEPENDENT_THREAD_SCHEDULING,
            m.start(),
            close_at + 1,
            message=f"__syncwarp({' '.join(arg.split())}) synchronises part of a warp; AMD "
            "wavefronts run in lockstep without independent thread scheduling",
        )


_FULL_64_RE = re.compile(
    r"^(?:0[xX][fF]{16}" + _INT_SUFFIX + r"|~\s*0(?:[uU]?(?:ll|LL|l|L)|(?:ll|LL|l|L)[uU]?)"
    r"|ULLONG_MAX|UINT64_MAX|\(\s*(?:unsigned\s+long\s+long|uint64_t)\s*\)\s*(?:-\s*1|~\s*0))$"
)


def _is_full_mask_expr(expr: str, constants: _Constants) -> bool:
    value = _strip_parens(expr)
    if _full_mask_kind(value) or _FULL_64_RE.match(value):
        return True
    constant = constants.get(value) if re.fullmatch(r"[A-Za-z_]\w*", value) else None
    return constant is not None and bool(
        _full_mask_kind(constant.value) or _FULL_64_RE.match(_strip_parens(constant.value))
    )


# --------------------------------------------------------------------------------------------
# GP304 ballots kept in 32 bits

_BALLOT_CALL_RE = re.compile(
    r"(__ballot_sync|__ballot|__activemask|__match_any_sync|__match_all_sync)\s*\("
)
_TYPE_32_BEFORE_RE = re.compile(
    r"(?<![\w])(unsigned\s+int|unsigned|uint32_t|int32_t|int|uint)\s+([A-Za-z_]\w*)\s*=\s*"
    r"(?:\(\s*[\w\s]+\)\s*)?$"
)
_BIT32_CALL_RE = re.compile(r"(__popc|__ffs|__clz|__brev)\s*\(\s*(\w+)\s*([()])")


def _check_ballots(src: _Source) -> Iterator[Finding]:
    code = src.code
    if "__ballot" not in code and "__activemask" not in code and "__match_" not in code:
        return
    ballot_vars: set[str] = set()
    for m in _words(_BALLOT_CALL_RE, code):
        found = _assigned_name(code, m.start())
        if found is None:
            continue
        ballot_vars.add(found[0])
        stmt_start, stmt = _statement_before(code, m.start())
        decl = _TYPE_32_BEFORE_RE.search(stmt)
        if decl is None or stmt[: decl.start()].rstrip().endswith("long"):
            continue  # 64-bit, auto, or unsigned long long int
        type_name = " ".join(decl.group(1).split())
        yield src.finding(
            BALLOT_RESULT_32_BIT,
            stmt_start + decl.start(),
            m.start(),
            message=f"`{type_name} {decl.group(2)}` keeps the 64-bit result of {m.group(1)} in "
            "32 bits, dropping lanes 32-63; use unsigned long long (or auto)",
        )
    for m in _words(_BIT32_CALL_RE, code):
        fn, arg, after = m.group(1), m.group(2), m.group(3)
        if after == "(" and _BALLOT_CALL_RE.fullmatch(arg + "("):
            what = f"{fn}({arg}(…)) looks at only 32 bits of a 64-bit lane mask"
        elif after == ")" and arg in ballot_vars:
            what = f"{fn}({arg}) looks at only 32 bits of a lane mask that is 64 bits on AMD"
        else:
            continue
        yield src.finding(
            BALLOT_RESULT_32_BIT,
            m.start(1),
            m.end(1),
            message=f"{what}; use {fn}ll",
            fix=Fix(f"Use {fn}ll, the 64-bit form.", mechanical=True, replacement=f"{fn}ll"),
        )


# --------------------------------------------------------------------------------------------
# GP305 warp-size constants, GP306 warpSize as a constant

_WARP_NAME_RE = re.compile(
    r"warp_?(?:size|sz|width|threads|lanes)|threads_?per_?warp|lanes_?per_?warp", re.I
)
# Starts at the '#' (see _INCLUDE_RE); the line start is found by ``_line_start``.
_DEFINE_32_RE = re.compile(r"#[ \t]*define[ \t]+(\w+)[ \t]+\(?[ \t]*32[uU]?[ \t]*\)?[ \t]*$", re.M)
_VALUE_32_RE = re.compile(r"(?:=\s*\(?\s*32[uU]?\s*\)?\s*(?=[;,>})])|\{\s*32[uU]?\s*\})")
_NAME_BEFORE_RE = re.compile(r"([A-Za-z_]\w*)\s*$")


def _values_32(code: str) -> Iterator[re.Match[str]]:
    """``_VALUE_32_RE.finditer(code)``, tried only where a "32" follows ``=`` or ``{``.

    '=' and '{' are everywhere in C++, and trying the pattern at each costs more than
    finding each "32" and looking back over the spaces and the one '(' the pattern allows.
    Matches cannot overlap (each holds one '=' or '{', at its start), so none is lost.
    """
    at = code.find("32")
    while at >= 0:
        start = at - 1
        while start >= 0 and code[start].isspace():
            start -= 1
        if start >= 0 and code[start] == "(":
            start -= 1
            while start >= 0 and code[start].isspace():
                start -= 1
        if start >= 0 and code[start] in "={":
            m = _VALUE_32_RE.match(code, start)
            if m is not None:
                yield m
        at = code.find("32", at + 2)


_ASSIGNMENT_OPERATOR_CHARS = "=!<>+-*/%&|^"


def _check_warp_size_constants(src: _Source) -> Iterator[Finding]:
    code = src.code
    if "32" not in code:
        return
    hits: list[tuple[int, int, str]] = []
    if "define" in code:
        for m in _DEFINE_32_RE.finditer(code):
            line_start = _line_start(code, m.start())
            if line_start >= 0:
                hits.append((line_start, m.end(), m.group(1)))
    for m in _values_32(code):
        is_operator = m.start() > 0 and code[m.start() - 1] in _ASSIGNMENT_OPERATOR_CHARS
        if m.group().startswith("=") and is_operator:
            continue  # ==, <=, += …
        before = _NAME_BEFORE_RE.search(code, max(0, m.start() - 80), m.start())
        if before is not None:
            hits.append((before.start(1), m.end(), before.group(1)))
    checked_64: dict[str, bool] = {}
    for start, end, name in _unique_lines(src, sorted(hits)):
        if not _WARP_NAME_RE.search(name):
            continue
        # A name also given the value 64 is already selected per architecture (HIP's
        # recommended pattern): leave it alone.
        if name not in checked_64:
            also_64 = re.compile(re.escape(name) + r"(?:\s*=\s*|\s*\{\s*|[ \t]+)\(?\s*64[uU]?\b")
            checked_64[name] = next(_words(also_64, code), None) is not None
        if checked_64[name]:
            continue
        yield src.finding(
            WARP_SIZE_HARDCODED,
            start,
            end,
            message=f"{name} is fixed at 32, but AMD CDNA wavefronts have 64 lanes; use "
            "warpSize or select the value per architecture",
        )


def _unique_lines(
    src: _Source, hits: Iterable[tuple[int, int, str]]
) -> Iterator[tuple[int, int, str]]:
    seen: set[int] = set()
    for hit in hits:
        line = src.line_of(hit[0])
        if line not in seen:
            seen.add(line)
            yield hit


_WARPSIZE_RE = re.compile(r"warpSize\b")
_CONST_CONTEXT_RE = re.compile(r"(constexpr|static_assert|alignas|__launch_bounds__|case)\b")
_CONST_CONTEXT_WORDS = {
    "case": "as a case label",
    "constexpr": "in a constant expression",
    "static_assert": "in static_assert",
    "alignas": "in alignas",
    "__launch_bounds__": "in __launch_bounds__",
}
_PREV_WORD_RE = re.compile(r"([A-Za-z_]\w*)\s*[*&]*\s*(?:\[[^\[\]]*\]\s*)*$")


_TEMPLATE_ARGS_RE = re.compile(r"[\w\s:+\-*/%,]*")


def _enclosing_bracket(code: str, pos: int, floor: int) -> tuple[str, int] | None:
    """The innermost unclosed ``[``, ``(`` or ``<`` before ``pos`` (not before ``floor``)."""
    depth = {"]": 0, ")": 0, ">": 0}
    opener = {"[": "]", "(": ")", "<": ">"}
    for i in range(pos - 1, floor - 1, -1):
        ch = code[i]
        if ch in depth:
            if ch == ">" and code[i - 1 : i + 1] in ("->", ">>"):
                continue
            depth[ch] += 1
        elif ch in opener:
            if ch == "<" and code[i - 1 : i + 1] == "<<":
                continue
            closer = opener[ch]
            if depth[closer]:
                depth[closer] -= 1
            else:
                return ch, i
    return None


def _warpsize_use(code: str, pos: int) -> str | None:
    """How the ``warpSize`` at ``pos`` is used, when a constant is required there."""
    stmt_start, stmt = _statement_before(code, pos)
    context = None
    for m in _CONST_CONTEXT_RE.finditer(stmt):
        if _word_start(stmt, m.start()):
            context = m.group(1)
    if context is not None:
        return _CONST_CONTEXT_WORDS[context]
    bracket = _enclosing_bracket(code, pos, stmt_start)
    if bracket is None:
        return None
    kind, at = bracket
    if kind == "[":
        before = _PREV_WORD_RE.search(code, max(stmt_start, at - 120), at)
        if before is None or before.group(1) in _CPP_KEYWORDS:
            return None  # an index, or new T[n]
        head = _NAME_BEFORE_RE.search(code, stmt_start, before.start())
        # a declaration has a type before the name: `float buf[...]`, `__shared__ T x[...]`
        if head is not None and head.group(1) not in _CPP_KEYWORDS:
            return "as an array bound"
        return None
    if kind == "<" and at > 0 and (code[at - 1].isalnum() or code[at - 1] == "_"):
        close = code.find(">", pos, pos + 200)
        if close < 0:
            return None
        if _TEMPLATE_ARGS_RE.fullmatch(code, at + 1, pos) and _TEMPLATE_ARGS_RE.fullmatch(
            code, pos, close
        ):
            return "as a template argument"
    return None


def _check_warpsize_constexpr(src: _Source) -> Iterator[Finding]:
    code = src.code
    if "warpSize" not in code:
        return
    hits: list[tuple[int, int, str]] = []
    for m in _words(_WARPSIZE_RE, code, also=".>"):
        use = _warpsize_use(code, m.start())
        if use is not None:
            hits.append((m.start(), m.end(), use))
    for start, end, what in _unique_lines(src, hits):
        yield src.finding(
            WARPSIZE_NOT_CONSTEXPR,
            start,
            end,
            message=f"warpSize used {what}: it is not a compile-time constant in HIP "
            "(ROCm 7.0 and later) and differs between AMD GPUs (64 or 32)",
        )


# --------------------------------------------------------------------------------------------
# GP307 shared arrays of 32 indexed by lane

_SHARED_32_RE = re.compile(r"__shared__[^;{}()]*?\b(\w+)\s*\[\s*32[uU]?\s*\]\s*;")


_BRACES_RE = re.compile(r"[{}]")


def _scope_end(code: str, pos: int) -> int:
    """Offset of the ``}`` closing the block that contains ``pos`` (at most _MAX_SPAN on)."""
    depth = 0
    limit = min(len(code), pos + _MAX_SPAN)
    for m in _BRACES_RE.finditer(code, pos, limit):
        if m.group() == "{":
            depth += 1
        elif depth == 0:
            return m.start()
        else:
            depth -= 1
    return limit


_WARP_INDEX_RE = re.compile(r"warp|wid\b|/|>>", re.I)


def _check_lane_indexed_arrays(src: _Source, names: _Names) -> Iterator[Finding]:
    code = src.code
    if "__shared__" not in code:
        return
    for decl in _SHARED_32_RE.finditer(code):
        array = decl.group(1)
        uses = list(
            _words(
                re.compile(re.escape(array) + r"\s*\[([^\[\]]+)\]"),
                code,
                decl.end(),
                _scope_end(code, decl.end()),
            )
        )
        # One slot per warp (written at a warp index, read back by lane under a guard) is
        # the classic block reduction, and 32 slots are plenty for 64-lane wavefronts.
        if any(_WARP_INDEX_RE.search(use.group(1)) for use in uses):
            continue
        for use in uses:
            index = use.group(1).strip()
            words = re.findall(r"[A-Za-z_]\w*", index)
            lane_name = re.fullmatch(r"[A-Za-z_]\w*", index) and (
                index in names.lane or _LANE_NAME_RE.match(index)
            )
            lane_expr = _LANE_HINT_RE.search(index) and any(
                w in names.thread or w in ("threadIdx", "__lane_id") for w in words
            )
            if lane_name or lane_expr:
                yield src.finding(
                    PER_WARP_ARRAY_32,
                    decl.start(),
                    decl.end(),
                    message=f"__shared__ {array}[32] is indexed by lane ({array}[{index}], "
                    f"line {src.line_of(use.start())}); a 64-lane wavefront needs 64 slots",
                )
                break


# --------------------------------------------------------------------------------------------
# GP308 shuffle reductions over 32 lanes

_LOOP_DOWN_16_RE = re.compile(
    r"for\s*\(\s*(?:[A-Za-z_]\w*\s+)*?(\w+)\s*=\s*16[uU]?\s*;\s*\1\s*(?:>=?|!=)\s*[01][uU]?\s*;"
    r"\s*(?:\1\s*>>=\s*1|\1\s*/=\s*2|\1\s*=\s*\1\s*(?:>>\s*1|/\s*2))\s*\)"
)
_LOOP_UP_32_RE = re.compile(
    r"for\s*\(\s*(?:[A-Za-z_]\w*\s+)*?(\w+)\s*=\s*1[uU]?\s*;\s*\1\s*(?:<\s*32|<=\s*16)[uU]?\s*;"
    r"\s*(?:\1\s*<<=\s*1|\1\s*\*=\s*2|\1\s*\+=\s*\1|\1\s*=\s*\1\s*(?:<<\s*1|\*\s*2))\s*\)"
)
_SHFL_CALL_RE = re.compile(r"__shfl_(xor|down|up)(_sync)?\s*\(")


def _shfl_calls(code: str, start: int, end: int) -> Iterator[tuple[re.Match[str], list[str]]]:
    for m in _words(_SHFL_CALL_RE, code, start, end):
        close_at = _match_forward(code, m.end() - 1)
        if close_at < 0:
            continue
        args = [code[a:b].strip() for a, b in _split_args(code, m.end() - 1, close_at)]
        yield m, args


def _has_narrow_width(m: re.Match[str], args: list[str]) -> bool:
    width_index = 3 if m.group(2) else 2
    if len(args) <= width_index:
        return False
    width = args[width_index].rstrip("uU")
    return width.isdigit() and int(width) <= 32


def _loop_body(code: str, after: int) -> tuple[int, int]:
    i = after
    while i < len(code) and code[i].isspace():
        i += 1
    if i < len(code) and code[i] == "{":
        close_at = _match_forward(code, i)
        return i, (close_at if close_at >= 0 else min(len(code), i + _MAX_SPAN))
    semi = code.find(";", i)
    return i, (semi if semi >= 0 else len(code))


def _check_shuffle_loops(src: _Source) -> Iterator[Finding]:
    code = src.code
    if "__shfl" not in code:
        return
    for regex, what in (
        (_LOOP_DOWN_16_RE, "starts at offset 16"),
        (_LOOP_UP_32_RE, "stops below offset 32"),
    ):
        for m in _words(regex, code):
            body_start, body_end = _loop_body(code, m.end())
            calls = list(_shfl_calls(code, body_start, body_end))
            if not calls or all(_has_narrow_width(c, a) for c, a in calls):
                continue
            name = f"__shfl_{calls[0][0].group(1)}{calls[0][0].group(2) or ''}"
            yield src.finding(
                SHUFFLE_FROM_16,
                m.start(),
                m.end(),
                message=f"{name} loop {what}, so it reduces only 32 lanes; on a 64-lane "
                "wavefront start at warpSize / 2",
            )
    # Unrolled reductions: a literal offset of 16 is the largest, and none is 32.
    literal_offsets: list[tuple[re.Match[str], str, bool]] = []
    for m, args in _shfl_calls(code, 0, len(code)):
        offset_index = 2 if m.group(2) else 1
        if len(args) > offset_index and m.group(1) in ("xor", "down"):
            literal_offsets.append((m, args[offset_index].rstrip("uU"), _has_narrow_width(m, args)))
    if any(offset == "32" for _, offset, _ in literal_offsets):
        return
    for m, offset, narrow in literal_offsets:
        if offset == "16" and not narrow:
            yield src.finding(
                SHUFFLE_FROM_16,
                m.start(),
                m.end(),
                message=f"shuffle reduction starts at offset 16 (__shfl_{m.group(1)}"
                f"{m.group(2) or ''}), so it covers only 32 lanes of a 64-lane wavefront",
            )


# --------------------------------------------------------------------------------------------
# Per-line identifier rules: Hopper features, clusters, async copies, textures, graphs, sleep

_HOPPER_IDENT_RE = re.compile(
    r"(cuTensorMapEncode\w*|CUtensorMap\w*|cudaGridDependencySynchronize"
    r"|cudaTriggerProgrammaticLaunchCompletion|cudaLaunchAttributeProgrammatic\w+"
    r"|CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC\w+|SM90_\w+|SM100_\w+|GMMA::\w+|UMMA::\w+"
    r"|cp_async_bulk\w*)\b"
)
_CLUSTER_IDENT_RE = re.compile(
    r"(__cluster_dims__|cudaLaunchAttributeCluster\w+|cudaFuncAttribute\w*Cluster\w*"
    r"|cudaOccupancyMax\w*Cluster\w*|cudaDevAttrClusterLaunch|CU_LAUNCH_ATTRIBUTE_CLUSTER\w*"
    r"|CU_FUNC_ATTRIBUTE_\w*CLUSTER\w*|this_cluster|cluster_group)\b"
    r"|cluster\w*\s*\.\s*(?:sync|map_shared_rank|block_rank|barrier_arrive|barrier_wait"
    r"|dim_blocks|num_blocks)\s*\("
)
_ASYNC_IDENT_RE = re.compile(
    r"(__pipeline_(?:memcpy_async|commit|wait_prior|arrive_on)|memcpy_async|make_pipeline"
    r"|pipeline_shared_state)\b|cuda::(?:pipeline|barrier|aligned_size_t)\b"
    r"|(?:cg|cooperative_groups)::wait(?:_prior)?\b"
)
_ASYNC_HEADER_RE = re.compile(
    r"^(?:cuda/(?:std/)?(?:pipeline|barrier)|cuda_pipeline\w*\.h|cuda_awbarrier\w*\.h"
    r"|cooperative_groups/memcpy_async\.h)$"
)
_TEXTURE_REF_RE = re.compile(
    r"(?:texture|surface)\s*<[^;<>{}]*>\s*[A-Za-z_]\w*\s*[;,]"
    r"|(cudaBindTexture\w*|cudaUnbindTexture|cudaBindSurfaceToArray|cudaGetTextureReference"
    r"|cudaGetSurfaceReference|cudaGetTextureAlignmentOffset|textureReference|surfaceReference"
    r"|cuTexRef\w*|cuSurfRef\w*|cuModuleGetTexRef|cuModuleGetSurfRef|CUtexref|CUsurfref)\b"
)
_GRAPH_IDENT_RE = re.compile(
    r"(cudaGraphConditionalHandle\w*|cudaGraphCond(?:Type|Assign)\w+|cudaGraphSetConditional"
    r"|cudaConditionalNodeParams|cudaGraphInstantiateFlagDeviceLaunch|cudaGraphDeviceNode_t"
    r"|cudaLaunchAttributeDeviceUpdatableKernelNode|cudaGraphKernelNodeUpdatesApply)\b"
)
_NANOSLEEP_RE = re.compile(r"__nanosleep\s*\(")


@dataclass(frozen=True, slots=True)
class _LineRule:
    rule: Rule
    needles: tuple[str, ...]
    pattern: re.Pattern[str]
    message: Callable[[str], str]


def _ident_message(what: str) -> Callable[[str], str]:
    return lambda name: f"{name}: {what}"


_LINE_RULES = (
    _LineRule(
        HOPPER_ONLY,
        (
            "TensorMap",
            "tensorMap",
            "Programmatic",
            "PROGRAMMATIC",
            "GridDependency",
            "SM90_",
            "SM100_",
            "MMA::",
            "cp_async_bulk",
        ),
        _HOPPER_IDENT_RE,
        _ident_message("a Hopper-or-newer feature with no HIP counterpart"),
    ),
    _LineRule(
        THREAD_BLOCK_CLUSTERS,
        ("luster", "LUSTER"),
        _CLUSTER_IDENT_RE,
        _ident_message("thread-block clusters are not available on AMD Instinct GPUs"),
    ),
    _LineRule(
        ASYNC_COPY,
        ("pipeline", "memcpy_async", "barrier", "aligned_size_t", "::wait"),
        _ASYNC_IDENT_RE,
        _ident_message("asynchronous global-to-shared copies have no HIP counterpart"),
    ),
    _LineRule(
        TEXTURE_REFERENCE,
        ("texture", "surface", "Texture", "Surface", "TexRef", "SurfRef", "texref", "surfref"),
        _TEXTURE_REF_RE,
        _ident_message(
            "legacy texture/surface references are gone in CUDA 12 and deprecated in HIP"
        ),
    ),
    _LineRule(
        GRAPH_FEATURES,
        ("cudaGraph", "cudaConditional", "DeviceUpdatable"),
        _GRAPH_IDENT_RE,
        _ident_message("this CUDA graph feature has no HIP counterpart"),
    ),
    _LineRule(
        NANOSLEEP,
        ("__nanosleep",),
        _NANOSLEEP_RE,
        lambda _: "__nanosleep: use __builtin_amdgcn_s_sleep(n) (about 64·n clock cycles) on AMD",
    ),
)


def _anchored(
    pattern: re.Pattern[str], text: str, anchors: tuple[str, ...]
) -> Iterator[re.Match[str]]:
    """Matches of ``pattern`` at the names that contain one of ``anchors``, in text order.

    Finding the literal anchors with ``str.find`` and matching only there is far faster
    than letting a pattern with many different first letters try every offset.
    """
    found: dict[int, re.Match[str]] = {}
    for anchor in anchors:
        at = text.find(anchor)
        while at >= 0:
            start = at
            while start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_:"):
                start -= 1
            # try the qualified name and each part after a `::`
            candidates = [start] + [
                i + 2 for i in range(start, at) if text.startswith("::", i) and i + 2 <= at
            ]
            for candidate in candidates:
                if candidate in found:
                    continue
                m = pattern.match(text, candidate)
                if m is not None:
                    found[candidate] = m
                    break
            at = text.find(anchor, at + len(anchor))
    for start in sorted(found):
        yield found[start]


def _check_line_rules(src: _Source) -> Iterator[Finding]:
    body = src.body
    in_body = body.__contains__  # any(map(...)) tests the needles without a Python frame each
    for line_rule in _LINE_RULES:
        if not any(map(in_body, line_rule.needles)):
            continue
        for m in _once_per_line(src, _anchored(line_rule.pattern, body, line_rule.needles)):
            name = " ".join(m.group().rstrip(";,( ").split())
            if len(name) > 60:
                name = name[:57] + "…"
            yield src.finding(line_rule.rule, m.start(), m.end(), message=line_rule.message(name))
    for header, offset in src.includes:
        if _ASYNC_HEADER_RE.match(header):
            yield src.finding(
                ASYNC_COPY,
                offset,
                message=f"#include <{header}>: asynchronous copies and pipelines have no HIP "
                "counterpart",
            )


# --------------------------------------------------------------------------------------------
# Once-per-file library rules


@dataclass(frozen=True, slots=True)
class _LibraryRule:
    rule: Rule
    label: str
    needles: tuple[str, ...]
    identifiers: re.Pattern[str] | None
    headers: re.Pattern[str] | None
    advice: str
    skip: frozenset[str] = frozenset()


_LIBRARY_RULES = (
    _LibraryRule(
        CUTLASS_CUTE,
        "CUTLASS/CuTe",
        ("cutlass", "cute"),
        re.compile(r"(?:cutlass|cute)::\w+"),
        re.compile(r"^(?:cutlass|cute)/"),
        "use hipBLASLt or composable_kernel on AMD",
    ),
    _LibraryRule(
        CUBLASLT,
        "cuBLASLt",
        ("ublasLt", "UBLASLT"),
        re.compile(r"(?:cublasLt|CUBLASLT_)\w*"),
        re.compile(r"^cublasLt\.h$"),
        "port to hipBLASLt and re-check attributes, epilogues and heuristics",
    ),
    _LibraryRule(
        CUDNN,
        "cuDNN",
        ("cudnn", "CUDNN"),
        re.compile(r"(?:cudnn|CUDNN_)\w*"),
        re.compile(r"^(?:cudnn\w*\.h|cudnn_frontend\w*\.h)$"),
        "MIOpen is the counterpart, with a different API (find step, formats, no graph API)",
    ),
    _LibraryRule(
        LIBCUDACXX,
        "libcu++",
        ("cuda::", "cuda/"),
        re.compile(r"cuda::(?:std::)?\w+"),
        re.compile(r"^cuda/(?!(?:std/)?(?:pipeline|barrier|ptx)$)"),
        "libhipcxx (early access) keeps these names; otherwise use std:: and HIP atomics",
        frozenset(
            {
                "cuda::pipeline",
                "cuda::barrier",
                "cuda::memcpy_async",
                "cuda::make_pipeline",
                "cuda::pipeline_shared_state",
                "cuda::aligned_size_t",
                "cuda::ptx",
                "cuda::std::pipeline",
                "cuda::std::barrier",
            }
        ),
    ),
    _LibraryRule(
        NVRTC,
        "NVRTC",
        ("nvrtc", "NVRTC"),
        re.compile(r"(?:nvrtc[A-Z]|NVRTC_)\w*"),
        re.compile(r"^nvrtc\.h$"),
        "hipRTC is the counterpart; it emits AMD code objects, not PTX",
    ),
    _LibraryRule(
        NVTX,
        "NVTX",
        ("nvtx", "NVTX", "nvToolsExt"),
        re.compile(r"(?:nvtx[A-Z]\w*|nvtx3::\w+|NVTX3?_[A-Z]\w*)"),
        re.compile(r"^(?:nvToolsExt\w*\.h|nvtx3/.*)$"),
        "ROCTx (roctxRangePush/roctxRangePop/roctxMark) is the counterpart",
    ),
    _LibraryRule(
        MEMORY_POOLS,
        "CUDA memory pools",
        ("MemPool", "FromPoolAsync"),
        re.compile(
            r"(?:cudaMemPool\w*|cudaDevice(?:Set|Get|GetDefault)MemPool|cudaMallocFromPoolAsync"
            r"|cuMemPool\w*)"
        ),
        None,
        "supported as hipMemPool*/hipMallocFromPoolAsync; check the pool attributes you set",
    ),
    _LibraryRule(
        WMMA,
        "WMMA",
        ("wmma", "mma.h"),
        re.compile(r"(?:nvcuda::wmma|wmma::\w+)"),
        re.compile(r"^mma\.h$"),
        "HIP has no warp matrix functions; port to rocWMMA",
    ),
    _LibraryRule(
        FP8_TYPES,
        "CUDA low-precision types",
        ("__nv_fp", "__nv_cvt", "cuda_fp8", "cuda_fp6", "cuda_fp4"),
        re.compile(r"__nv_(?:fp[864]\w*|cvt_\w+)"),
        re.compile(r"^cuda_fp[864]\.h(?:pp)?$"),
        "use hip/hip_fp8.h types; MI300 (gfx942) uses the FNUZ encodings",
    ),
)


# Each rule with its skipped names as ``name::`` prefixes, for one ``startswith`` test.
_LIBRARY_SKIPS = tuple(
    (lib, tuple(name + "::" for name in sorted(lib.skip))) for lib in _LIBRARY_RULES
)


def _inside_other_namespace(code: str, pos: int) -> bool:
    """Whether the name at ``pos`` is qualified by another namespace (``x::name``)."""
    return pos >= 3 and code[pos - 2 : pos] == "::" and _word_start(code, pos - 2) is False


def _check_libraries(src: _Source) -> Iterator[Finding]:
    in_code = src.code.__contains__
    for lib, skip_prefixes in _LIBRARY_SKIPS:
        if not any(map(in_code, lib.needles)):
            continue
        first: int | None = None
        names: Counter[str] = Counter()
        headers: list[str] = []
        if lib.headers is not None:
            for header, offset in src.includes:
                if lib.headers.search(header):
                    headers.append(header)
                    first = offset if first is None else min(first, offset)
        if lib.identifiers is not None:
            for m in _words(lib.identifiers, src.body):
                if _inside_other_namespace(src.body, m.start()):
                    continue  # thrust::cuda::par is Thrust's, not libcu++
                name = m.group()
                if name in lib.skip or name.startswith(skip_prefixes):
                    continue
                names[name] += 1
                first = m.start() if first is None else min(first, m.start())
        if first is None:
            continue
        parts: list[str] = []
        total = sum(names.values())
        if total:
            parts.append(f"{total} reference{'s' if total != 1 else ''} ({_top(names)})")
        if headers:
            shown = ", ".join(f"<{h}>" for h in headers[:3]) + (", …" if len(headers) > 3 else "")
            parts.append(f"#include {shown}")
        yield src.finding(
            lib.rule,
            first,
            message=f"{lib.label} in this file: {' and '.join(parts)}; {lib.advice}",
        )


# --------------------------------------------------------------------------------------------
# GP324 __CUDA_ARCH__

_CUDA_ARCH_RE = re.compile(r"__CUDA_ARCH\w*")


def _check_cuda_arch(src: _Source) -> Iterator[Finding]:
    code = src.code
    if "__CUDA_ARCH" not in code:
        return
    for m in _once_per_line(src, _words(_CUDA_ARCH_RE, code)):
        line_start = code.rfind("\n", 0, m.start()) + 1
        line_end = code.find("\n", m.end())
        line = code[line_start : line_end if line_end >= 0 else len(code)]
        if "__HIP" in line or "__HIPCC__" in line:
            continue  # already written for both compilers
        name = m.group()
        if not line.lstrip().startswith("#"):
            message = (
                f"{name} used in code: HIP-Clang never defines it; use "
                "__HIP_DEVICE_COMPILE__ or the __gfx*__ target macros instead"
            )
        elif name != "__CUDA_ARCH__":
            message = f"{name} is an NVIDIA architecture feature macro; HIP-Clang never defines it"
        elif re.search(
            r"__CUDA_ARCH__\s*(?:[<>]=?|[!=]=)\s*\d|\d\s*(?:[<>]=?|[!=]=)\s*__CUDA_ARCH__", line
        ):
            message = (
                "__CUDA_ARCH__ version check: HIP-Clang never defines __CUDA_ARCH__, so AMD "
                "builds always take the fallback; test __HIP_ARCH_HAS_*__ or __gfx*__ macros"
            )
        else:
            message = (
                "__CUDA_ARCH__ as a device-pass test: HIP-Clang never defines it, so AMD device "
                "code takes the host branch here; test __HIP_DEVICE_COMPILE__ as well"
            )
        yield src.finding(CUDA_ARCH_MACRO, m.start(), m.end(), message=message)


# --------------------------------------------------------------------------------------------
# GP325 kernel launches from device code

_DEVICE_QUALIFIER_RE = re.compile(r"__(?:global|device)__\b")
_STATEMENT_END_RE = re.compile(r"[;{}]")


def _device_bodies(code: str) -> list[tuple[int, int]]:
    bodies: list[tuple[int, int]] = []
    last_end = -1
    for m in _words(_DEVICE_QUALIFIER_RE, code):
        if m.start() < last_end:
            continue  # inside a body already found
        stop = _STATEMENT_END_RE.search(code, m.end())
        if stop is None or stop.group() != "{":
            continue
        head = code[m.end() : stop.start()]
        if "(" not in head or "=" in head.split("(", 1)[0]:
            continue  # a variable, not a function
        decl_start = max(code.rfind(";", 0, m.start()), code.rfind("}", 0, m.start()))
        decl_start = max(decl_start, code.rfind("{", 0, m.start()))
        if "__host__" in code[decl_start + 1 : stop.start()]:
            continue  # __host__ __device__: launches there are usually host-only paths
        close_at = _match_forward(code, stop.start(), len(code))
        if close_at < 0:
            continue
        bodies.append((stop.start(), close_at))
        last_end = close_at
    return bodies


def _check_device_launches(src: _Source) -> Iterator[Finding]:
    code = src.code
    if "<<<" not in code or ("__global__" not in code and "__device__" not in code):
        return
    bodies = _device_bodies(code)
    if not bodies:
        return
    starts = [b[0] for b in bodies]
    for m in re.finditer(r"<<<", code):
        index = bisect.bisect_right(starts, m.start()) - 1
        if index >= 0 and bodies[index][0] < m.start() < bodies[index][1]:
            yield src.finding(
                DYNAMIC_PARALLELISM,
                m.start(),
                m.end(),
                message="kernel launched from device code (dynamic parallelism); HIP does not "
                "support it — launch from the host",
            )


# --------------------------------------------------------------------------------------------
# GP300 the mechanical renames, counted once per file

_API_RE = re.compile(
    r"(?:"
    r"(cuda[A-Z]\w*)"
    r"|(cu[A-Z][A-Za-z0-9_]*|CU[a-z]\w*|CU_[A-Z0-9_]+|CUDA_SUCCESS|CUDA_ERROR_\w+)"
    r"|(cublas(?!Lt)[A-Z]\w*|CUBLAS_(?!LT)[A-Z]\w*)"
    r"|(curand[A-Z_]\w*|CURAND_[A-Z]\w*)"
    r"|(cufft[A-Z]\w*|CUFFT_[A-Z]\w*)"
    r"|(cusparse[A-Z]\w*|CUSPARSE_[A-Z]\w*)"
    r"|(cusolver[A-Z]\w*|CUSOLVER_[A-Z]\w*)"
    r"|(cub::\w+)"
    r")"
)
_API_CANDIDATE_RE = re.compile(r"(?:cu|CU)(?:b::)?\w*")
_API_FAMILIES = ("runtime", "driver", "cuBLAS", "cuRAND", "cuFFT", "cuSPARSE", "cuSOLVER", "CUB")
# Names with their own rule, or with no HIP counterpart in HIPIFY's tables: not a rename.
_NOT_RENAMED_RE = re.compile(
    r"^(?:cuTensorMap\w*|CUtensorMap\w*|cudaBindTexture\w*|cudaUnbindTexture"
    r"|cudaBindSurfaceToArray|cudaGet(?:Texture|Surface)Reference|cudaGetTextureAlignmentOffset"
    r"|cuTexRef\w*|cuSurfRef\w*|cuModuleGet(?:Tex|Surf)Ref|CUtexref|CUsurfref"
    r"|cudaLaunchAttributeCluster\w*|cudaFuncAttribute\w*Cluster\w*|cudaOccupancyMax\w*Cluster\w*"
    r"|cudaDevAttrClusterLaunch|CU_LAUNCH_ATTRIBUTE_CLUSTER\w*|CU_FUNC_ATTRIBUTE_\w*CLUSTER\w*"
    r"|cudaGraphConditional\w*|cudaGraphCond(?:Type|Assign)\w+|cudaGraphSetConditional"
    r"|cudaConditionalNodeParams|cudaGraphInstantiateFlagDeviceLaunch|cudaGraphDeviceNode_t"
    r"|cudaLaunchAttributeDeviceUpdatableKernelNode|cudaGraphKernelNodeUpdatesApply"
    r"|cudaLaunchAttributeProgrammatic\w*|CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC\w*"
    r"|cudaGridDependencySynchronize|cudaTriggerProgrammaticLaunchCompletion"
    r"|cudaGraphicsD3D\w+|cudaD3D\w+|cudaGraphicsVDPAU\w+|cudaVDPAU\w+|cudaEGL\w+|cudaGraphicsEGL\w+"
    r"|cuda_\w+)$"
)
_HELPER_MACRO_RE = re.compile(r"#[ \t]*define[ \t]+((?:cu|CU)\w+)")
_HELPER_FUNCTION_RE = re.compile(
    r"((?:cu|CU)\w+)\s*\([^;{}()]*\)\s*(?:const\s*)?(?:noexcept\s*)?\{"
)
_RETURN_TYPE_BEFORE_RE = re.compile(
    r"(?:void|int|bool|unsigned|auto|inline|static|cudaError_t|CUresult|size_t|float|double)"
    r"\s*[*&]?\s*$"
)


def _user_defined_names(code: str) -> set[str]:
    """``cu*`` names the project defines itself (macros and helper functions)."""
    names = {m.group(1) for m in _HELPER_MACRO_RE.finditer(code)}
    for m in _words(_HELPER_FUNCTION_RE, code):
        if _RETURN_TYPE_BEFORE_RE.search(code, max(0, m.start() - 40), m.start()):
            names.add(m.group(1))
    return names


_RENAMED_HEADER_RE = re.compile(
    r"^(?:cuda_runtime(?:_api)?\.h|cuda\.h|cuda_fp16\.hp?p?|cuda_bf16\.hp?p?|cuComplex\.h"
    r"|cublas(?:_v2|_api|Xt)?\.h|curand(?:_kernel|_mtgp32\w*|_philox4x32_x|_normal|_uniform)?\.h"
    r"|cufft(?:Xt)?\.h|cusparse(?:_v2)?\.h|cusolver(?:Dn|Sp|Rf|_common)?\.h"
    r"|cooperative_groups\.h|cooperative_groups/reduce\.h|cub/.+|device_launch_parameters\.h"
    r"|cuda_profiler_api\.h|cuda_texture_types\.h|texture_fetch_functions\.h|nccl\.h)$"
)


def _check_api_renames(src: _Source) -> Iterator[Finding]:
    if "cu" not in src.code and "CU" not in src.code:
        return
    code = src.body
    user_defined = _user_defined_names(src.code)
    families: dict[str, Counter[str]] = {}
    first: int | None = None
    for candidate in _words(_API_CANDIDATE_RE, code, also=".>"):
        m = _API_RE.fullmatch(candidate.group())
        index = m.lastindex if m is not None else None
        if m is None or index is None:
            continue
        name = m.group(index)
        if name in user_defined or _NOT_RENAMED_RE.match(name):
            continue
        families.setdefault(_API_FAMILIES[index - 1], Counter())[name] += 1
        if first is None:
            first = candidate.start()
    headers: Counter[str] = Counter()
    for header, offset in src.includes:
        if _RENAMED_HEADER_RE.match(header):
            headers[header] += 1
            first = offset if first is None else min(first, offset)
    if first is None:
        return
    total = sum(sum(c.values()) for c in families.values()) + sum(headers.values())
    parts = [
        f"{family} {sum(families[family].values())} ({_top(families[family])})"
        for family in _API_FAMILIES
        if family in families
    ]
    if headers:
        parts.append(f"headers {sum(headers.values())} ({_top(headers)})")
    yield src.finding(
        CUDA_API_RENAMES,
        first,
        message=f"{total} CUDA API reference{'s' if total != 1 else ''} that gpuport port "
        f"renames to HIP: {'; '.join(parts)}",
        fix=Fix(CUDA_API_RENAMES.fix, mechanical=True),
    )


# --------------------------------------------------------------------------------------------
# Entry points

# What makes C/C++ code "use CUDA". Each pattern starts with a literal, and the substrings
# are plain ``in`` tests, so a project's CUDA-free C++ files cost about 1% of lexing them.
_CUDA_SUBSTRINGS = ("<<<", "threadIdx", "blockIdx", "warpSize", "cooperative_groups", "mma.h")
_CUDA_WORD_RES = (
    re.compile(r"__(?:global|device|shared|constant|managed)__"),
    re.compile(
        r"cu(?:da[A-Z_]|[A-Z][a-z]\w*\s*\(|blas|dnn|rand|fft|sparse|solver|tlass|te::|te/|b/)"
    ),
    re.compile(r"CU(?:result|device|stream|context|function|module|deviceptr)\b"),
    re.compile(r"nv(?:rtc|tx|ToolsExt|cuda)"),
)


def _mentions_cuda(text: str) -> bool:
    if any(needle in text for needle in _CUDA_SUBSTRINGS):
        return True
    return any(next(_words(pattern, text), None) is not None for pattern in _CUDA_WORD_RES)


def uses_cuda(text: str) -> bool:
    """Whether C/C++ code (not its comments or strings) uses CUDA.

    That is: it includes a CUDA header, uses ``__global__``/``__device__``, a ``<<<``
    launch, thread indices, or CUDA runtime, driver or library APIs.
    """
    return _mentions_cuda(text) and _mentions_cuda(code_only(text))


def scan_cuda_text(
    rel: str, text: str, *, code: str | None = None, renames: bool = True
) -> list[Finding]:
    """Every GP3xx finding in one CUDA (or CUDA-using C++) file, in file order.

    ``rel`` is the path shown in findings. This is public so that ``gpuport port`` can list
    what a rename cannot fix: it passes the ``code_only`` text it already has as ``code``,
    and ``renames=False`` to leave out GP300, the count of the renames it does itself.
    """
    return _scan(_Source(rel, text, code_only(text) if code is None else code), renames)


def _scan(src: _Source, renames: bool = True) -> list[Finding]:
    constants = _Constants(src.code)
    code = src.code
    needs_names = "threadIdx" in code or "blockDim" in code or "__lane_id" in code
    names = _tracked_names(src) if needs_names else _Names(set(), set())
    findings: list[Finding] = []
    if renames:
        findings.extend(_check_api_renames(src))
    findings.extend(_check_asm(src))
    findings.extend(_check_cuda_ptx_namespace(src))
    if needs_names:
        findings.extend(_check_lane_math(src, names))
    findings.extend(_check_warp_masks(src, constants))
    findings.extend(_check_ballots(src))
    findings.extend(_check_warp_size_constants(src))
    findings.extend(_check_warpsize_constexpr(src))
    findings.extend(_check_lane_indexed_arrays(src, names))
    findings.extend(_check_shuffle_loops(src))
    findings.extend(_check_line_rules(src))
    findings.extend(_check_libraries(src))
    findings.extend(_check_syncwarp(src, constants))
    findings.extend(_check_cuda_arch(src))
    findings.extend(_check_device_launches(src))
    findings.sort(key=lambda f: f.sort_key)
    return findings


@scanner(FileKind.CUDA, FileKind.CXX, name="kernels")
def scan_kernels(source: SourceText, enabled: frozenset[str]) -> Iterable[Finding | Skipped]:
    """CUDA files always; C/C++ files only when their code uses CUDA."""
    text = source.text
    if source.file.kind is FileKind.CXX:
        if not _mentions_cuda(text):  # cheap: most C++ files stop here
            return []
        code = code_only(text)
        if not _mentions_cuda(code):  # CUDA only in comments or strings
            return []
        return _scan(_Source(source.file.rel, text, code))
    return _scan(_Source(source.file.rel, text, code_only(text)))
