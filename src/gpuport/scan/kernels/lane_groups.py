"""When 32-lane arithmetic is a logical grouping that a 64-lane wavefront runs the same.

The exemptions of the warp-width rules (``warp_width_rules.py``): a warp number read only to
rotate which peer a thread visits first, ``blockDim.x / 32`` counting chunks, lane arithmetic in
a device function that exchanges no data between lanes, a shuffle tree in a function that works
in 32-lane groups by its own arithmetic, and a 32 constant nothing reads. Each answers "is this
32 the hardware's width, or a size the code chose?"; only the first is porting work.
"""

from __future__ import annotations

import re

from gpuport.scan.kernels.brackets import (
    body_after,
    enclosing_bracket,
    match_forward,
    scope_end,
    scope_start,
    split_args,
)
from gpuport.scan.kernels.names import LANE_NAME_RE
from gpuport.scan.kernels.source import KernelSource
from gpuport.scan.kernels.statements import CPP_KEYWORDS, left_operand, statement_before
from gpuport.scan.kernels.words import words

# A constant's value that is 32 and nothing else: `32`, `32u`, `(32)`.
VALUE_32_ONLY_RE = re.compile(r"\(?\s*32[uU]?\s*\)?")
_IDENTIFIER_RE = re.compile(r"[A-Za-z_]\w*")


def function_span(src: KernelSource, pos: int) -> tuple[int, int] | None:
    """The ``{`` and ``}`` of the ``__global__``/``__device__`` function whose body holds
    ``pos``, or None (host code, a body too long to match, a declaration in between)."""
    code = src.code
    start = max(code.rfind("__global__", 0, pos), code.rfind("__device__", 0, pos))
    if start < 0:
        return None
    brace = code.find("{", start, pos)
    if brace < 0 or ";" in code[start:brace]:
        return None
    close = match_forward(src.brackets, brace)
    return (brace, close) if close > pos else None


_IF_RE = re.compile(r"\bif\s*\(")
_BELOW_RE = re.compile(r"([A-Za-z_][\w.]*)\s*<\s*(\w+)(?!\s*[<(\w.])")
_LANE_MODULO_RE = re.compile(r"(?:%\s*(\w+)|&\s*(?:31|0[xX]1[fF])[uU]?\b)(?!\s*=)")
_STRIDE_LOOP_RE = re.compile(
    r"for\s*\(\s*(?:[A-Za-z_]\w*\s+)*?(\w+)\s*=\s*([^;]*);[^;]*;\s*\1\s*\+=\s*(\w+)\s*\)"
)


def _is_32(src: KernelSource, word: str, known: frozenset[str] = frozenset()) -> bool:
    """Is ``word`` the literal 32, one of the ``known`` names of 32, or a constant of the file
    or of a project header it includes whose value is 32 (``kThreadsPerWarp = 32``)?"""
    if word.rstrip("uU") == "32" or word in known:
        return True
    if not word or word[0].isdigit():
        return False
    constant = src.constants.get(word)
    if constant is None:
        found = src.header_constant(word)
        constant = found[1] if found is not None else None
    return constant is not None and VALUE_32_ONLY_RE.fullmatch(constant.value.strip()) is not None


def logical_32_lanes(src: KernelSource, pos: int) -> bool:
    """Does the device function around ``pos`` work in 32-lane groups by its own arithmetic?

    Only 32 threads take part (``if (threadIdx.x < 32)`` around ``pos``), lanes are numbered
    modulo 32 (``threadIdx.x % kThreadsPerWarp`` with that constant 32), or a lane walks its
    data in strides of 32 (``for (i = lane; i < n; i += 32)``). A shuffle reduction from offset
    16 is then right on a 64-lane wavefront too: xor offsets below 32 stay inside each 32-lane
    half, and a shuffle-down tree leaves each half's first lane with that half's total. The
    32 is chosen in that arithmetic, where GP302 and GP305 report it; a function that also
    reads ``warpSize`` mixes the two widths and is still reported.
    """
    span = _body_without_warpsize(src, pos)
    if span is None:
        return False
    code = src.code
    brace = span[0]
    names = src.names

    def lane_like(expr: str) -> bool:
        return names.is_thread_expr(expr) or LANE_NAME_RE.match(expr.split(".")[-1]) is not None

    for m in _IF_RE.finditer(code, brace, pos):
        cond_close = match_forward(src.brackets, m.end() - 1)
        if cond_close < 0 or cond_close > pos:
            continue
        body_start, body_end = body_after(code, src.brackets, cond_close + 1)
        if not body_start <= pos < body_end:
            continue
        for below in _BELOW_RE.finditer(code, m.end(), cond_close):
            if lane_like(below.group(1)) and _is_32(src, below.group(2)):
                return True
    for m in _LANE_MODULO_RE.finditer(code, brace, pos):
        if m.group(1) is not None and not _is_32(src, m.group(1)):
            continue
        if names.is_thread_expr(left_operand(code, m.start())):
            return True
    for m in _STRIDE_LOOP_RE.finditer(code, brace, pos):
        if _is_32(src, m.group(3)) and any(
            lane_like(w) for w in _IDENTIFIER_RE.findall(m.group(2))
        ):
            return True
    return False


# `(i + myrank + warp) & (RANKS - 1)`, `(peer + warp) % n`: a sum reduced modulo a count.
_ROTATION_TAIL_RE = re.compile(r"\)\s*(?:&\s*\(\s*\w+\s*-\s*1\s*\)|%\s*\w+)")
_SUM_OF_NAMES_RE = re.compile(r"\s*[A-Za-z_]\w*(?:\s*\+\s*[A-Za-z_]\w*)+\s*")


def only_rotates(code: str, target: tuple[str, int], after: int) -> bool:
    """Is every read of ``target`` in its block a term of a sum taken modulo a count
    (``dest[i] = (i + myrank + warp) & (RANKS - 1)``)? Then the value only rotates which peer
    or slot each thread visits first, and any value, 32-based or not, is as correct."""
    name = target[0]
    end = scope_end(code, after)
    if end >= len(code) or code[end] != "}":
        return False
    reads = list(words(re.compile(re.escape(name) + r"\b"), code, after, end))
    if not reads:
        return False
    for read in reads:
        bracket = enclosing_bracket(code, read.start(), max(after, read.start() - 200))
        if bracket is None or bracket[0] != "(":
            return False
        close = code.find(")", read.end())
        if close < 0 or not _SUM_OF_NAMES_RE.fullmatch(code, bracket[1] + 1, close):
            return False
        if not _ROTATION_TAIL_RE.match(code, close):
            return False
    return True


# Warp-level exchanges of data between lanes, and calls of helpers named for a warp.
_LANE_EXCHANGE_RE = re.compile(
    r"shfl|ballot|__any|__all|__match|__reduce|activemask|tiled_partition|coalesced|mma"
    r"|_sync\s*\(|\w*[wW]arp\w*\s*\("
)


def counts_chunks(src: KernelSource, operand: str, at: int) -> bool:
    """Is ``operand`` a block size (``blockDim.x``, no thread index) divided into 32-element
    chunks in a device function that exchanges no data between lanes (apex's xentropy block
    reduction: threads < 32 each fold one chunk of shared memory)? The count is then plain
    partitioning, right on any wavefront width."""
    if "blockDim" not in operand or "threadIdx" in operand or "thread_rank" in operand:
        return False
    span = function_span(src, at)
    if span is None:
        return False
    for m in _LANE_EXCHANGE_RE.finditer(src.code, *span):
        if m.group() != "__syncwarp(" and not m.group().startswith("__syncwarp"):
            return False
    return True


_CLASS_HEAD_RE = re.compile(r"\b(?:struct|class|union)\b")
_ENUM_HEAD_RE = re.compile(r"\benum\b")
_SOURCE_SUFFIXES = (".cu", ".cpp", ".cc", ".cxx", ".c", ".hip")


def never_read_after(src: KernelSource, name: str, end: int) -> bool:
    """Is the constant defined just before ``end`` never read where it can be seen?

    A member of a struct or class whose body never names it (a derived reducer that repeats
    its base's ``enum { THREADS_PER_WARP = 32 }`` and calls the base's reduce), or a constant of
    a source file that the rest of the file never names: nothing sizes or indexes with it, so
    there is no 32 to port (the constant that is read is reported where it is defined). A
    header's file-level constant may be read by the files including it, and is reported."""
    code = src.code
    pattern = re.compile(re.escape(name) + r"\b")
    head = _block_head(code, end)
    block_end = scope_end(code, end)
    if head is not None and _ENUM_HEAD_RE.search(head) and block_end < len(code):
        # an enumerator: its scope is the block around the enum
        head = _block_head(code, block_end + 1)
        block_end = scope_end(code, block_end + 1)
    if head is not None and _CLASS_HEAD_RE.search(head):
        if block_end >= len(code) or code[block_end] != "}":
            return False
        return next(words(pattern, code, end, block_end), None) is None
    if not src.rel.endswith(_SOURCE_SUFFIXES):
        return False
    return next(words(pattern, code, end), None) is None


def _block_head(code: str, pos: int) -> str | None:
    """What opens the innermost block around ``pos``: the text between the ``;``, ``{`` or
    ``}`` before its ``{`` and that ``{`` (``struct Reducer<T, 1> : public Base``); None at
    file level or when the block starts too far back."""
    opened = scope_start(code, pos)
    if opened < 0:
        return None
    head_start = max(code.rfind(c, 0, opened) for c in ";{}")
    return code[head_start + 1 : opened]


# What moves data between the lanes of a warp, or may (a helper named for it, whose body may
# be in a header; inline assembly, which may be a PTX shfl or vote). `__syncwarp` is a barrier
# and is not in the list: its 32-bit mask is GP303's.
_EXCHANGE_OR_HELPER_RE = re.compile(
    r"shfl|shuffle|ballot|__any|__all|__match|__reduce|activemask|tiled_partition"
    r"|thread_block_tile|coalesced|(?<![a-z])w?mma|\basm\b"
    r"|(?<!\w)(?!__syncwarp\b)\w*(?:warp|reduce|scan|vote|broadcast)\w*(?:::\w+)*"
    r"\s*(?:<[^;{}()]*>\s*)?\(",
    re.I,
)
_RETURN_RE = re.compile(r"\breturn\b")
# (source, names of the file's device functions whose bodies exchange data between lanes)
_exchanging_cache: list[tuple[KernelSource, frozenset[str]]] = []
_FUNCTION_NAME_RE = re.compile(r"(\w+)\s*(?:<[^;{}()]*>\s*)?\($")
_CALL_RE = re.compile(r"(?<![\w.>:])(\w+)\s*(?:<[^;{}()]*>\s*)?\(")


def _exchanging_functions(src: KernelSource) -> frozenset[str]:
    """The names of the file's device functions whose bodies exchange data between lanes."""
    if _exchanging_cache and _exchanging_cache[0][0] is src:
        return _exchanging_cache[0][1]
    code = src.code
    found: set[str] = set()
    last_end = -1
    for m in _EXCHANGE_OR_HELPER_RE.finditer(code):
        if m.start() < last_end:
            continue
        span = function_span(src, m.start())
        if span is None:
            continue
        last_end = span[1]
        head_start = max(code.rfind("__global__", 0, span[0]), code.rfind("__device__", 0, span[0]))
        # the first '(' after the qualifiers opens the parameter list
        first_paren = code.find("(", head_start, span[0])
        if first_paren < 0:
            continue
        name = _FUNCTION_NAME_RE.search(code, head_start, first_paren + 1)
        if name is not None:
            found.add(name.group(1))
    result = frozenset(found)
    _exchanging_cache[:] = [(src, result)]
    return result


def groups_without_exchange(src: KernelSource, at: int) -> bool:
    """Is ``at`` in a device function that exchanges no data between lanes?

    No shuffle, ballot, vote, match, cooperative-groups tile or inline assembly in its body,
    and no call of a helper named for a warp, a reduction, a scan or a broadcast, or of a
    function of the file that exchanges: its `threadIdx.x % 32` and `/ 32` number logical
    32-thread groups (a copy loop striding by 32, a 32-column scale block), and a 64-lane
    wavefront simply holds two of them. With an exchange the 32 must be the hardware's width
    (a lane index into a ballot, a per-warp slot a shuffle reduction fills), and it is
    reported."""
    span = function_span(src, at)
    if span is None:
        return False
    code = src.code
    brace, close = span
    if _returned(code, brace, at):
        return False
    if _EXCHANGE_OR_HELPER_RE.search(code, brace, close) is not None:
        return False
    exchanging = _exchanging_functions(src)
    if not exchanging:
        return True
    return not any(c.group(1) in exchanging for c in _CALL_RE.finditer(code, brace, close))


# Where a warp-size constant is only a size: a launch shape, a compile-time check, a lambda
# capture that hands it on (its reads in the lambda are checked where they are).
_SHAPE_CALL_RE = re.compile(r"(?:\bstatic_assert|\bdim3(?:\s+[A-Za-z_]\w*)?)\s*$")
_DECLARATOR_RE = re.compile(
    r"\s*(?:(?:__shared__|static|const|constexpr|extern|volatile|alignas\s*\(\s*\w+\s*\))\s+)*"
    r"[A-Za-z_][\w:]*(?:\s*<[^;{}]*>)?\s+[A-Za-z_]\w*\s*(?:\[[^\[\]]*\]\s*)*"
)
_CAPTURES_RE = re.compile(r"[\w\s,&=]*")
_FOR_HEAD_RE = re.compile(r"\bfor\s*\(")
_DERIVED_RE = re.compile(
    r"\s*(?:(?:static|const|constexpr|unsigned|signed|long|short)\s+)*"
    r"(?:int|size_t|int32_t|int64_t|uint32_t|uint64_t|auto|unsigned|long|index_t)?\s*"
    r"([A-Za-z_]\w*)\s*=[^=]"
)
_EXCHANGE_WORDS_RE = re.compile(
    r"shfl|shuffle|ballot|__any|__all|__match|__reduce|activemask|tiled_partition"
    r"|thread_block_tile|coalesced|warpSize|mask|\basm\b",
    re.I,
)


def _scope_reads(src: KernelSource, name: str, end: int) -> tuple[list[re.Match[str]], int] | None:
    """The reads of a constant declared just before ``end`` within its scope (a function or
    block, or a source file's rest), with the scope's end; None for a header's file-level
    constant (its includers read it), a class or enum member, or a constant never read."""
    code = src.code
    head = _block_head(code, end)
    if head is None:
        if not src.rel.endswith(_SOURCE_SUFFIXES):
            return None
        stop = len(code)
    elif _CLASS_HEAD_RE.search(head) or _ENUM_HEAD_RE.search(head):
        return None
    else:
        stop = scope_end(code, end)
    reads = list(words(re.compile(re.escape(name) + r"\b"), code, end, stop))
    return (reads, stop) if reads else None


def sizes_only(src: KernelSource, name: str, end: int, depth: int = 0) -> bool:
    """Is every read of the constant defined just before ``end`` a size the code chose?

    Reads in its scope (the function, or the rest of a source file) are a launch shape
    (``dim3 threads(kThreadsPerWarp, warps)``, ``<<<grid, N>>>``), a ``static_assert``, an
    array extent in a declaration, a loop step (``i += N``), a lambda capture, or the
    initialiser of another local that is itself used only so (one level on). Such a 32 sizes a
    logical 32-lane group: a 64-lane wavefront runs two of them and nothing changes. A read as a
    shuffle width or offset, in a ballot or mask, with ``warpSize``, as a lane index (``% N``,
    ``/ N``) or anything else keeps the constant reported. A header's file-level constant may
    be read by its includers and is never judged here.
    """
    scope = _scope_reads(src, name, end)
    if scope is None:
        return False
    reads, stop = scope
    return all(_size_read(src, read.start(), read.end(), stop, depth) for read in reads)


def _size_read(src: KernelSource, at: int, after: int, stop: int, depth: int) -> bool:
    code = src.code
    start, before = statement_before(code, at)
    finish = code.find(";", after)
    statement = code[start : finish if finish >= 0 else after]
    if _EXCHANGE_WORDS_RE.search(statement):
        return False
    launch = code.rfind("<<<", start, at)
    if launch >= 0 and code.find(">>>", launch, at) < 0 and ">>>" in code[after:finish]:
        return True
    if re.search(r"\+=\s*$", before) and re.match(r"\s*\)", code[after : after + 8]):
        heads = list(_FOR_HEAD_RE.finditer(code, max(0, at - 400), at))
        if heads and match_forward(src.brackets, heads[-1].end() - 1) > at:
            return True
    pos = at
    for _ in range(4):
        bracket = enclosing_bracket(code, pos, start)
        if bracket is None:
            break
        kind, opened = bracket
        if kind == "(" and _SHAPE_CALL_RE.search(code, max(start, opened - 40), opened):
            return True
        if kind == "[":
            close = code.find("]", after)
            if (
                close >= 0
                and _CAPTURES_RE.fullmatch(code, opened + 1, close)
                and re.match(r"\s*[({]", code[close + 1 : close + 4])
            ):
                return True  # a lambda capture
            # an array extent of a declaration (`float partial[N * 2];`), and nothing else
            return _DECLARATOR_RE.fullmatch(code, start, opened) is not None
        pos = opened
    derived = _DERIVED_RE.match(before)
    if derived is not None and depth < 1 and derived.group(1) not in CPP_KEYWORDS:
        other = derived.group(1)
        eq = start + derived.end() - 1
        return any(
            True for _ in words(re.compile(re.escape(other) + r"\b"), code, eq, stop)
        ) and all(
            _size_read(src, r.start(), r.end(), stop, depth + 1)
            for r in words(re.compile(re.escape(other) + r"\b"), code, eq, stop)
        )
    return False


# A shuffle that stays inside a 32-lane half of a wavefront when its offset is below 32.
# Any raw shuffle (group 1: its kind); one with an explicit width of 32 or less stays inside
# its segment whatever its lane or offset.
_HALF_TREE_CALL_RE = re.compile(r"__shfl(_xor|_down|_up)?(?:_sync)?\s*\(")
# A loop counting a shuffle offset down from 16, written `16` or as half a 32 constant
# (`WARP_SIZE / 2`, `kWarpSize >> 1`; group 2 names the constant).
_LOOP_FROM_16_RE = re.compile(
    r"for\s*\(\s*(?:[A-Za-z_]\w*\s+)*?(\w+)\s*=\s*(?:16[uU]?|\(?\s*(\w+)\s*(?:/\s*2|>>\s*1)\s*\)?)"
    r"\s*;\s*\1\s*(?:>=?|!=)\s*[01][uU]?\s*;"
    r"\s*(?:\1\s*>>=\s*1|\1\s*/=\s*2|\1\s*=\s*\1\s*(?:>>\s*1|/\s*2))\s*\)"
)


# The butterfly written upwards: offsets 1, 2, 4, 8, 16 (`for (m = 1; m < 32; m *= 2)`, the bound
# a 32 constant, group 2).
_LOOP_UP_TO_32_RE = re.compile(
    r"for\s*\(\s*(?:[A-Za-z_]\w*\s+)*?(\w+)\s*=\s*1[uU]?\s*;\s*\1\s*<\s*(\w+)\s*;"
    r"\s*(?:\1\s*\*=\s*2|\1\s*<<=\s*1|\1\s*=\s*\1\s*(?:\*\s*2|<<\s*1))\s*\)"
)


def groups_with_half_trees(
    src: KernelSource, at: int, helpers: bool = False, known: frozenset[str] = frozenset()
) -> bool:
    """Is ``at`` in a device function whose only lane exchanges are xor or shuffle-down trees
    with offsets of 16 or less (literals, a loop counting down from 16, or up from 1 to below 32)
    or shuffles of any kind with an explicit width of 32 or less?

    Such a tree never crosses a 32-lane boundary for the lane that keeps the result: with xor
    every lane of each 32-lane half ends with its half's total, with shuffle-down the half's
    first lane does. ``threadIdx.x % 32`` and ``/ 32`` then number exactly those groups on a
    64-lane wavefront (lanes 0 and 32 each write their own group's slot), so the 32 is a
    logical group, not the hardware width. A ballot, width-less broadcast
    (``__shfl_sync(m, v, 0)``) or scan (``__shfl_up_sync(m, v, 1)``), tile or warp helper in the function, a read of ``warpSize``, or a
    returned lane number keeps the lane math reported. With ``helpers``, a call of a device
    function of the file whose own exchanges are such trees (``warp_reduce_sum(val)``) counts
    as one too. ``known``: names whose value is 32 where the file cannot look them up (the
    header constant the project judge asks about).
    """
    span = _body_without_warpsize(src, at)
    if span is None:
        return False
    code = src.code
    brace, close = span
    if _returned(code, brace, at):
        return False
    loops = [
        (m.group(1), *body_after(code, src.brackets, m.end()))
        for pattern in (_LOOP_FROM_16_RE, _LOOP_UP_TO_32_RE)
        for m in pattern.finditer(code, brace, close)
        if m.group(2) is None or _is_32(src, m.group(2), known)
    ]
    trees = 0
    seen: set[int] = set()
    for m in _EXCHANGE_OR_HELPER_RE.finditer(code, brace, close):
        seen.add(m.start())
        call = _HALF_TREE_CALL_RE.match(code, m.start() - 2) if m.group() == "shfl" else None
        if call is None and helpers and _half_tree_helper(src, m, brace, known):
            trees += 1
            continue
        if call is None:
            return False
        paren = call.end() - 1
        call_close = match_forward(src.brackets, paren)
        if call_close < 0:
            return False
        args = [code[a:b].strip() for a, b in split_args(code, src.brackets, paren, call_close)]
        offset_index = 2 if "_sync" in call.group() else 1
        if len(args) <= offset_index:
            return False
        offset = args[offset_index].rstrip("uU")
        if len(args) > offset_index + 1:
            if not _width_at_most_32(src, args[offset_index + 1], known):
                return False  # an explicit width that may pass 32
            trees += 1  # a broadcast, scan or tree inside segments of 32 lanes or fewer
            continue
        if call.group(1) not in ("_xor", "_down"):
            return False  # a width-less broadcast or scan reads across the whole wavefront
        if offset.isdigit():
            if int(offset) > 16:
                return False
        elif not any(name == offset and s <= m.start() < e for name, s, e in loops):
            return False
        trees += 1
    if helpers:
        # calls of the file's exchanging functions whose names say nothing (`group_sum(v)`)
        exchanging = _exchanging_functions(src)
        for c in _CALL_RE.finditer(code, brace, close):
            if c.start() in seen or c.group(1) not in exchanging:
                continue
            if not _half_tree_helper(src, c, brace, known):
                return False
            trees += 1
    return trees > 0


def _width_at_most_32(src: KernelSource, width: str, known: frozenset[str]) -> bool:
    """Is a shuffle's explicit width 32 or a power of two below it (a literal, or a constant
    of the file or of a header it includes whose value is 32)? Lanes then exchange inside
    segments of that width, on a 64-lane wavefront too."""
    width = width.strip()
    if width.rstrip("uU").isdigit():
        return int(width.rstrip("uU")) in (1, 2, 4, 8, 16, 32)
    return _is_32(src, width, known)


_HELPER_CALL_RE = re.compile(r"(\w+)\s*(?:<[^;{}()]*>\s*)?\($")
_DEFINITION_TAIL_RE = re.compile(r"\s*(?:const\s*)?\{")


def _half_tree_helper(
    src: KernelSource, m: re.Match[str], brace: int, known: frozenset[str]
) -> bool:
    """Is ``m`` (an exchange-or-helper match) a call of a device function of this file, not
    the caller itself, whose body passes :func:`groups_with_half_trees` on its own?"""
    code = src.code
    name = _HELPER_CALL_RE.match(m.group())
    if name is None or (m.start() > 0 and code[m.start() - 1] in ".>:"):
        return False  # not a call, or a member or qualified name defined elsewhere
    for d in words(re.compile(re.escape(name.group(1)) + r"\s*(?:<[^;{}()]*>\s*)?\("), code):
        close = match_forward(src.brackets, d.end() - 1)
        body = _DEFINITION_TAIL_RE.match(code, close + 1) if close >= 0 else None
        if body is None:
            continue  # a call or a declaration, not the definition
        opened = body.end() - 1
        if opened == brace:
            return False  # the caller itself: recursion
        head = max(code.rfind("__global__", 0, d.start()), code.rfind("__device__", 0, d.start()))
        if head < 0 or ";" in code[head : d.start()] or "}" in code[head : d.start()]:
            return False
        return groups_with_half_trees(src, opened + 1, known=known)
    return False


def logical_groups_only(src: KernelSource, name: str, end: int) -> bool:
    """Is every read of the 32 constant defined just before ``end`` a size (:func:`sizes_only`'s
    reads) or in a device function whose lanes exchange only through shuffle trees with offsets
    of 16 or less, directly or through the file's own helpers of that kind, or not at all?

    ``#define WARP_SIZE 32`` in a source file whose ``warp_reduce_sum`` shuffles down from
    ``WARP_SIZE / 2`` and whose block reduction keeps ``x[tid / WARP_SIZE]`` partials numbers
    logical 32-lane groups: on a 64-lane wavefront lanes 0 and 32 each end with their own
    group's total and write their own slot, so the 32 stays right (the 32-bit masks of those
    shuffles are GP303's). The scope is the one :func:`sizes_only` reads; a header's file-level
    constant is never judged here.
    """
    scope = _scope_reads(src, name, end)
    if scope is None:
        return False
    reads, stop = scope
    trees = False
    for read in reads:
        if _size_read(src, read.start(), read.end(), stop, 0):
            continue
        if groups_with_half_trees(src, read.start(), helpers=True):
            trees = True
        elif not groups_without_exchange(src, read.start()):
            return False
    return trees


# A read as the width of a cooperative-groups tile (`tiled_partition<N>(block)`,
# `thread_block_tile<N>`): a tile of 32 threads is 32 threads on a 64-lane wavefront too, and
# its shuffles (`g.shfl_down(v, i)`) stay inside it.
_TILE_WIDTH_BEFORE_RE = re.compile(r"(?:tiled_partition|thread_block_tile)\s*<\s*$")
# Lane exchanges that do not go through a tile object (`g.shfl_down`): raw shuffles, votes,
# asm, warpSize, warp helpers.
_MEMBER_BEFORE_RE = re.compile(r"(?:\w\s*(?:\.|->)|\b(?:cg|cooperative_groups)::)\s*$")


def at_file_level(code: str, pos: int) -> bool:
    """Is ``pos`` outside every block but a namespace's (a file-level constant)?"""
    head = _block_head(code, pos)
    return head is None or re.search(r"\bnamespace\b", head) is not None


def _tile_only_exchanges(src: KernelSource, at: int) -> bool:
    """Does the device function around ``at`` exchange data only through cooperative-groups
    tiles (``g.shfl_xor(v, i)`` of a ``tiled_partition<32>``, ``cg::reduce(tile, v, op)``),
    with no ``warpSize``, raw shuffle, vote or asm? Its 32s then describe the tile: a loop
    to 32 over tile shuffles, ``/ 32`` numbering the tiles; a 64-lane wavefront holds two."""
    span = _body_without_warpsize(src, at)
    if span is None:
        return False
    code = src.code
    brace, close = span
    tiles = 0
    head = max(code.rfind("__global__", 0, brace), code.rfind("__device__", 0, brace))
    for m in _EXCHANGE_OR_HELPER_RE.finditer(code, head, close):
        word = m.group()
        if word in ("tiled_partition", "thread_block_tile"):
            tiles += 1
            continue
        if m.start() < brace:
            continue  # the function's own name (`warp_reduce(`), a parameter's type
        if _MEMBER_BEFORE_RE.search(code, max(brace, m.start() - 40), m.start()) is None:
            return False
    return tiles > 0


def header_size_read(src: KernelSource, at: int, after: int, name: str = "") -> bool:
    """Is the read at ``at`` (to ``after``) of a header's warp-size constant a size the code
    chose or a logical 32-lane group: a tile width, any read in a function exchanging only
    through tiles, what :func:`sizes_only` accepts (a launch shape, an extent, a loop step, a
    static_assert), or a read in a device function whose lanes exchange only through
    shuffle-down or xor trees with offsets of 16 or less or widths of 32 or less (directly or
    through the file's own helper of that kind: :func:`groups_with_half_trees`), or not at all
    (:func:`groups_without_exchange`)?

    The last two are the exemptions :func:`logical_groups_only` makes for a source file's
    constant, asked of every reader in the project: ``tid / N`` and ``tid % N`` then number
    the groups each 32-lane half of a wavefront holds. A width-less broadcast
    (``__shfl_sync(m, v, 0)`` reads lane 0 of the whole wavefront), a ballot, ``warpSize``, a
    returned lane number or a helper defined elsewhere keeps the constant reported. ``name``:
    the constant read, known to be 32 (the reader's source cannot look up its headers here)."""
    code = src.code
    if _TILE_WIDTH_BEFORE_RE.search(code, max(0, at - 40), at):
        return True
    if _tile_only_exchanges(src, at):
        return True
    if _size_read(src, at, after, len(code), 0):
        return True
    known = frozenset({name}) if name else frozenset()
    return groups_with_half_trees(src, at, helpers=True, known=known) or groups_without_exchange(
        src, at
    )


def _body_without_warpsize(src: KernelSource, at: int) -> tuple[int, int] | None:
    """The span of the function around ``at``; None outside one, or when the function reads
    ``warpSize`` (it mixes the hardware width with its own 32, and stays reported)."""
    span = function_span(src, at)
    if span is None or "warpSize" in src.code[span[0] : span[1]]:
        return None
    return span


def _returned(code: str, brace: int, at: int) -> bool:
    """The statement holding ``at`` returns it (``return threadIdx.x >> 5;``): the number leaves
    for callers that may exchange lanes."""
    return (
        _RETURN_RE.search(code, max(brace, code.rfind(";", 0, at), code.rfind("{", 0, at)), at)
        is not None
    )
