"""Code that assumes 32-lane warps (GP302, GP305, GP306, GP307, GP308): each rule, then its check.

AMD CDNA GPUs run 64-lane wavefronts; these rules find lane and warp arithmetic, constants,
buffers and shuffle loops written for 32.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from gpuport.findings import Category, Confidence, Finding, Severity
from gpuport.rules import rule
from gpuport.scan.kernels.brackets import (
    body_after,
    enclosing_bracket,
    match_forward,
    scope_end,
    split_args,
)
from gpuport.scan.kernels.header_warp_sizes import (
    HEADER_SUFFIXES,
    NAME_BEFORE_RE,
    WARP_NAME_RE,
    warp_32_hits,
)
from gpuport.scan.kernels.lane_groups import (
    VALUE_32_ONLY_RE,
    counts_chunks,
    groups_with_half_trees,
    groups_without_exchange,
    logical_32_lanes,
    logical_groups_only,
    never_read_after,
    only_rotates,
    sizes_only,
)
from gpuport.scan.kernels.names import LANE_HINT_RE, LANE_NAME_RE, TRACKING_WORDS
from gpuport.scan.kernels.references import (
    HIP_WARP_FUNCTIONS,
    HIP_WARP_SIZE,
    ROCM_7_RELEASE_NOTES,
)
from gpuport.scan.kernels.source import KernelSource, directive_line_start
from gpuport.scan.kernels.statements import (
    CPP_KEYWORDS,
    assigned_name,
    left_operand,
    statement_before,
)
from gpuport.scan.kernels.words import word_start, words

_LANE_OP_RE = re.compile(r"(?:&\s*(?:31|0[xX]1[fF])|%\s*32|/\s*32|>>\s*5)[uU]?(?![\w.'])(?!\s*=)")

LANE_MATH_WARP_32 = rule(
    id="GP302",
    slug="lane-math-assumes-warp-32",
    category=Category.KERNELS,
    severity=Severity.MEDIUM,
    confidence=Confidence.MEDIUM,
    summary="Lane or warp index computed from a thread index with a hard-coded warp size of 32",
    what=(
        "Finds `& 31`, `& 0x1f`, `% 32`, `/ 32` and `>> 5` applied to `threadIdx.*`, to "
        "a variable assigned from it, or to a parenthesised expression that contains it. The "
        "same operators on other values (sizes, counters) are not reported; `% warpSize` and "
        "`& (warpSize - 1)` are the portable spelling and are fine. A warp number read only "
        "to rotate which peer a thread visits first (`(i + rank + warp) & (N - 1)`), and "
        "`blockDim.x / 32` counting 32-element chunks in a function that exchanges no data "
        "between lanes, are right on any wavefront width and are not reported. Neither is "
        "lane or warp arithmetic in a device function that exchanges no data between lanes "
        "(no shuffle, ballot, vote, match, cooperative-groups tile, inline assembly, or call "
        "of a helper named for a warp, a reduction, a scan or a broadcast): its 32-thread "
        "groups are logical, and a 64-lane wavefront holds two of them. The same holds where "
        "the only exchanges are xor or shuffle-down trees with offsets of 16 or less, which "
        "stay inside each 32-lane group."
    ),
    why=(
        "AMD Instinct GPUs (CDNA, gfx9) run 64-wide wavefronts; RDNA GPUs run 32-wide. With a "
        "wavefront of 64, `threadIdx.x & 31` gives two threads of the same wavefront the same "
        "'lane', and `threadIdx.x / 32` puts one wavefront in two 'warps', so per-warp "
        "reductions, ballots and shared-memory slots silently mix results."
    ),
    example="int lane = threadIdx.x & 31;\nint warp = threadIdx.x >> 5;\n",
    instead="int lane = threadIdx.x % warpSize;   // or __lane_id()\nint warp = threadIdx.x / warpSize;\n",
    fix=(
        "Use `warpSize` (or `__lane_id()`) instead of 32, 31 and 5, and check that every buffer "
        "sized per warp follows; a template parameter chosen on the host works where a "
        "compile-time constant is needed."
    ),
    mechanical=False,
    references=(HIP_WARP_SIZE, HIP_WARP_FUNCTIONS),
    needles=TRACKING_WORDS,
)


# What makes a 32 a warp's width: a warp-level operation somewhere in the file (looked for
# with `in`, which is many times faster than one alternation run over the whole file).
# The raw warp intrinsics and primitives, which see the hardware's width.
_RAW_WARP_WORDS = (
    "__shfl",
    "__ballot",
    "__any_sync",
    "__all_sync",
    "__syncwarp",
    "__activemask",
    "__match_",
    "WarpReduce",
    "WarpScan",
    "__lane_id",
)
_WARP_LEVEL_WORDS = (
    *_RAW_WARP_WORDS,
    "_sync(",
    "tiled_partition",
    "coalesced_threads",
    "mma_sync",
    "MMA_Atom",
)
# Explicit 32-wide logical warps (the raw intrinsics above would still see the hardware's).
# Cooperative-groups tiles by width: 32, or a name (`tiled_partition<WARP_SIZE>`) whose value,
# defined in the file or in a project header it includes (through the project's include
# folders), is 32.
_TILE_RE = re.compile(r"(?:tiled_partition|thread_block_tile)\s*<\s*(\w+)\s*>")
_LANE_ORWARP_NAME_RE = re.compile(r"lane|warp|^wid|^lid$|^tid_in", re.I)


def lane_math_assumes_warp_32(src: KernelSource) -> Iterator[Finding]:
    """``& 31``, ``% 32``, ``/ 32``, ``>> 5`` applied to a thread index."""
    code = src.code
    if not src.mentions(LANE_MATH_WARP_32):
        return
    names = src.names
    # In a file without a warp-level operation a 32 kept in a variable is a tile or packing
    # size (`z_mod = w % 32` picks a bit of a 3-bit packed column in AutoGPTQ's kernels,
    # `off = threadIdx.x % 32` a column of a shared table), unless the variable is named as a
    # lane or a warp.
    warp_level = any(word in code for word in _WARP_LEVEL_WORDS)
    raw = [word for word in _RAW_WARP_WORDS if word in code]
    if not raw and _has_tile_of_32(src):
        # the file's warps are cooperative-groups tiles of 32 on purpose (`tiled_partition<32>`,
        # which HIP supports on 64-wide wavefronts): `threadIdx.x >> 5` is the tile's number
        return
    if raw == ["__shfl"] and _all_shuffles_32_wide(src):
        # every shuffle names a width of 32 (`__shfl_down_sync(mask, v, o, 32)`): logical
        # 32-lane warps on purpose, which `& 31` and `>> 5` number consistently on wave64
        return
    for m in _LANE_OP_RE.finditer(code):
        if m.start() > 0 and code[m.start() - 1] in "&|":
            continue  # && and || are not bit operations
        operand = left_operand(code, m.start())
        if not names.is_thread_expr(operand):
            continue
        target = assigned_name(code, m.start())
        if not warp_level and target is not None and not _LANE_ORWARP_NAME_RE.search(target[0]):
            continue
        if target is not None and _never_read(code, target, m.end()):
            continue  # `int lane = d3 & 0x1f;` that nothing reads: no lane math at all
        if target is not None and only_rotates(code, target, m.end()):
            continue  # `warp` only staggers which peer each thread reads first
        if counts_chunks(src, operand, m.start()):
            continue  # `blockDim.x / 32` counts 32-element chunks that no lane exchange reads
        if groups_without_exchange(src, m.start()):
            continue  # 32-thread groups of a function that moves no data between lanes
        if groups_with_half_trees(src, m.start()):
            continue  # 32-lane groups whose only exchanges are trees inside each group
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


_DECLARED_AFTER_TYPE_RE = re.compile(r"[\w>]\s+$")


def _never_read(code: str, target: tuple[str, int], after: int) -> bool:
    """Is ``target`` (name, offset) a variable declared here that its block never reads?"""
    name, at = target
    start = code.rfind("\n", 0, at) + 1
    if not _DECLARED_AFTER_TYPE_RE.search(code, start, at) or code[start:at].count("(") > 0:
        return False  # an assignment, or a parameter: it may be read elsewhere
    end = scope_end(code, after)
    if end >= len(code) or code[end] != "}":
        return False  # the block is too long to see whole
    return not any(True for _ in words(re.compile(re.escape(name) + r"\b"), code, after, end))


_ANY_SHFL_RE = re.compile(r"__shfl(?:_(?:xor|down|up))?(_sync)?\s*\(")


def _all_shuffles_32_wide(src: KernelSource) -> bool:
    """Does every raw shuffle of the file pass an explicit width of 32 (bitsandbytes'
    gemm_4bit_simt.cu)? False when there is none or one cannot be read."""
    code = src.code
    seen = False
    for m in words(_ANY_SHFL_RE, code):
        close_at = match_forward(src.brackets, m.end() - 1)
        if close_at < 0:
            return False
        args = split_args(code, src.brackets, m.end() - 1, close_at)
        width_index = 3 if m.group(1) else 2
        if len(args) != width_index + 1:
            return False
        start, end = args[width_index]
        if code[start:end].strip().rstrip("uU") != "32":
            return False
        seen = True
    return seen


def _has_tile_of_32(src: KernelSource) -> bool:
    """Does the file partition its blocks into cooperative-groups tiles of 32 lanes?"""
    widths = {m.group(1) for m in _TILE_RE.finditer(src.code)}
    if {"32", "32u", "32U"} & widths:
        return True
    for name in sorted(w for w in widths if not w[0].isdigit()):
        constant = src.constants.get(name)
        if constant is None:
            found = src.header_constant(name)
            constant = found[1] if found is not None else None
        if constant is not None and VALUE_32_ONLY_RE.fullmatch(constant.value.strip()):
            return True
    return False


WARP_SIZE_HARDCODED = rule(
    id="GP305",
    slug="warp-size-hardcoded",
    category=Category.KERNELS,
    severity=Severity.MEDIUM,
    confidence=Confidence.MEDIUM,
    summary="A warp-size constant is defined as 32",
    what=(
        "Finds `#define WARP_SIZE 32`, `constexpr int kWarpSize = 32`, enumerators and "
        "template defaults of that kind, for names that say warp size, threads per warp or "
        "lanes per warp. Files that also define the same name as 64 (per-architecture "
        "selection) are left alone, and so are copies nothing reads: a struct member its "
        "struct never names, or a source file's constant the file never uses; and so is a "
        "function's or source file's constant read only as a launch shape, an array extent, "
        "a loop step or in a static_assert (a logical 32-lane group that wave64 runs twice), "
        "or read in device functions whose lanes exchange only through shuffle-down or xor "
        "trees from 16 (`for (i = WARP_SIZE / 2; i > 0; i >>= 1)`) or through shuffles given "
        "an explicit width of 32 or less, directly or through the file's own helper of that "
        "kind: each 32-lane half of a wavefront keeps its own result. A width-less broadcast "
        "or scan, a ballot, warpSize or an unknown helper keeps it reported. "
        "A header's constant is left when every project file including it reads it only so, "
        "as a cooperative-groups tile width, in functions whose lanes exchange only through "
        "such tiles, or not at all; a header nothing in the project includes, or one under "
        "an include/ folder (a library's public API), is reported."
    ),
    why=(
        "Everything sized or indexed with the constant (shuffle loops, per-warp shared memory, "
        "lane masks) then assumes 32 lanes, while CDNA GPUs run 64. The code usually still "
        "compiles and runs, with wrong results or half the hardware idle."
    ),
    example="#define WARP_SIZE 32\n",
    instead=(
        "#if defined(__GFX8__) || defined(__GFX9__)\n#define WARP_SIZE 64\n#else\n"
        "#define WARP_SIZE 32\n#endif\n"
    ),
    fix=(
        "Use `warpSize` in device code, query `hipDeviceAttributeWarpSize` on the host and "
        "pass it as a template argument where a constant is needed, or select 64 for gfx8/gfx9 "
        "targets and 32 otherwise as HIP's documentation shows."
    ),
    mechanical=False,
    references=(HIP_WARP_SIZE,),
    needles=("32",),
)


def warp_size_hardcoded(src: KernelSource) -> Iterator[Finding]:
    """Warp-size names defined as 32 (macros, constants, enumerators, template defaults)."""
    code = src.code
    if not src.mentions(WARP_SIZE_HARDCODED):
        return
    hits = warp_32_hits(code)
    checked_64: dict[str, bool] = {}
    judged = src.facts.size_only_warp_constants
    for start, end, name in src.once_per_line(hits):
        if not WARP_NAME_RE.search(name):
            continue
        # A name also given the value 64 is already selected per architecture (HIP's
        # recommended pattern): leave it alone.
        if name not in checked_64:
            also_64 = re.compile(re.escape(name) + r"(?:\s*=\s*|\s*\{\s*|[ \t]+)\(?\s*64[uU]?\b")
            checked_64[name] = next(words(also_64, code), None) is not None
        if checked_64[name]:
            continue
        if (
            never_read_after(src, name, end)
            or sizes_only(src, name, end)
            or logical_groups_only(src, name, end)
        ):
            continue
        if judged and f"{src.rel}:{name}" in judged:
            continue  # a header's: every read in the files reaching it is a size
        yield src.finding(
            WARP_SIZE_HARDCODED,
            start,
            end,
            message=f"{name} is fixed at 32, but AMD CDNA wavefronts have 64 lanes; use "
            "warpSize or select the value per architecture",
        )


# warpSize, and the ROCm libraries' warp-size queries: none is a compile-time constant since
# ROCm 7.0 (rocPRIM 4.0 made rocprim::warp_size(), behind hipCUB's HIPCUB_WARP_THREADS, a
# run-time value like warpSize: https://github.com/ROCm/rocPRIM/blob/develop/CHANGELOG.md,
# "rocPRIM 4.0.0 for ROCm 7.0"; https://rocm.docs.amd.com/en/docs-7.0.0/about/release-notes.html)
_WARPSIZE_RE = re.compile(r"(?:warpSize|HIPCUB_WARP_THREADS)\b|rocprim::warp_size\s*\(\s*\)")
_WARP_QUERY_WORDS = ("warpSize", "HIPCUB_WARP_THREADS", "rocprim::warp_size")
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

WARPSIZE_NOT_CONSTEXPR = rule(
    id="GP306",
    slug="warpsize-not-constexpr",
    category=Category.KERNELS,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="warpSize is used where a compile-time constant is required",
    what=(
        "Finds `warpSize` in array bounds of declarations, template arguments, `constexpr` "
        "initialisers, `static_assert`, `alignas`, `__launch_bounds__` and `case` labels."
    ),
    why=(
        "`warpSize` is a run-time value in CUDA (nvcc rejects it in constant expressions), "
        "but HIP before ROCm 7.0 made it a compile-time constant, so code ported to older ROCm "
        "releases often uses it in array bounds and template arguments. Since ROCm 7.0 it is "
        "no longer constant: these uses stop compiling, and before that they baked in one "
        "target's wavefront size (64 on gfx9, 32 on gfx10 and later)."
    ),
    example="__shared__ float partial[warpSize];\n",
    instead=(
        "template <int WarpSize> __global__ void k(...) { __shared__ float partial[WarpSize]; }\n"
        "// host: query hipDeviceAttributeWarpSize, launch k<64> or k<32>\n"
    ),
    fix=(
        "Make the warp size a template parameter chosen on the host from "
        "`hipDeviceAttributeWarpSize`, or size buffers for the largest case (64)."
    ),
    mechanical=False,
    references=(HIP_WARP_SIZE, ROCM_7_RELEASE_NOTES),
    needles=_WARP_QUERY_WORDS,
)


def warpsize_not_constexpr(src: KernelSource) -> Iterator[Finding]:
    """``warpSize`` where C++ needs a constant: array bounds, template arguments, constexpr."""
    code = src.code
    if not src.mentions(WARPSIZE_NOT_CONSTEXPR):
        return
    hits: list[tuple[int, int, str]] = []
    for m in words(_WARPSIZE_RE, code, also=".>"):
        use = _constant_required(code, m.start())
        if use is not None:
            hits.append((m.start(), m.end(), use))
    for start, end, what in src.once_per_line(hits):
        yield src.finding(
            WARPSIZE_NOT_CONSTEXPR,
            start,
            end,
            message=f"{code[start:end]} used {what}: it is not a compile-time constant in HIP "
            "(ROCm 7.0 and later) and differs between AMD GPUs (64 or 32)",
        )
    yield from _warpsize_through_macros(src, {start for start, _, _ in hits})


# `#define NUM_WARPS (1024 / warpSize)`: the name and the body, up to the line's end.
_DEFINE_RE = re.compile(r"#[ \t]*define[ \t]+([A-Za-z_]\w*)(?![\w(])[ \t]*([^\r\n]*)")


def _warpsize_through_macros(src: KernelSource, reported: set[int]) -> Iterator[Finding]:
    """Object-like macros built from ``warpSize`` (``#define NUM_WARPS (1024 / warpSize)``,
    and macros built from those) where a compile-time constant is required: the most common
    ROCm 7 break, since the array bound does not name warpSize itself."""
    code = src.code
    derived: dict[str, int] = {}  # macro name -> offset of its #define
    bodies: list[tuple[str, int, str]] = []
    for m in _DEFINE_RE.finditer(code):
        if directive_line_start(code, m.start()) >= 0 and src.compiled_on_rocm(m.start()):
            bodies.append((m.group(1), m.start(), m.group(2)))
    queried: dict[str, str] = {}  # macro name -> the warp-size query it is built from
    grew = True
    while grew:  # a macro of a macro of warpSize: a few rounds at most
        grew = False
        for name, at, body in bodies:
            if name in derived:
                continue
            query = _WARPSIZE_RE.search(body)
            if query is not None:
                queried[name] = query.group()
            else:
                other = next((o for o in derived if re.search(rf"\b{re.escape(o)}\b", body)), None)
                if other is None:
                    continue
                queried[name] = queried[other]
            derived[name] = at
            grew = True
    if not derived:
        return
    used: set[str] = set()
    yield from _uses_of_derived(src, derived, queried, reported, used)
    # `#define WARP_SIZE warpSize` where only ROCm looks, beside `#define WARP_SIZE 32` for CUDA:
    # the project uses the name as a constant (template arguments, array bounds), which the
    # ROCm side no longer is; the uses are often in other files (a compat header's macro)
    # (a header's: a source file's uses are all in it, and were looked at just now)
    header = src.rel.endswith(HEADER_SUFFIXES)
    conditions = src.conditions
    for name, at in derived.items():
        if name in used or not header or conditions is None or not conditions.rocm_only(at):
            continue
        if (
            re.search(
                rf"#[ \t]*define[ \t]+{re.escape(name)}[ \t]+\(?[ \t]*\d+[uU]?[ \t]*\)?[ \t]*$",
                code,
                re.M,
            )
            is None
        ):
            continue
        end = code.find("\n", at)
        yield src.finding(
            WARPSIZE_NOT_CONSTEXPR,
            at,
            len(code) if end < 0 else end,
            message=f"{name} is a constant for CUDA but a run-time warp-size query on ROCm "
            "(not a compile-time constant since ROCm 7.0): its uses as template arguments, "
            "array bounds or in constexpr stop compiling there",
            confidence=Confidence.MEDIUM,
        )


def _uses_of_derived(
    src: KernelSource,
    derived: dict[str, int],
    queried: dict[str, str],
    reported: set[int],
    used: set[str],
) -> Iterator[Finding]:
    """Uses of the macros in ``derived`` where a constant is required (their names go in ``used``)."""
    code = src.code
    names_re = re.compile(r"\b(?:" + "|".join(map(re.escape, derived)) + r")\b")
    hits: list[tuple[int, int, str]] = []
    for m in names_re.finditer(code):
        if m.start() in reported or not src.compiled_on_rocm(m.start()):
            continue
        line_start = code.rfind("\n", 0, m.start()) + 1
        if code[line_start : m.start()].lstrip().startswith("#"):
            continue  # another #define or an #if: not a use
        use = _constant_required(code, m.start())
        if use is not None:
            hits.append((m.start(), m.end(), f"{m.group()} used {use}"))
    for start, end, what in src.once_per_line(hits):
        name = code[start:end]
        used.add(name)
        yield src.finding(
            WARPSIZE_NOT_CONSTEXPR,
            start,
            end,
            message=f"{what}, but {name} is defined from {queried[name]} (line "
            f"{src.line_of(derived[name])}): not a compile-time constant in HIP (ROCm 7.0 "
            "and later), and 64 or 32 depending on the AMD GPU",
        )


def _constant_required(code: str, pos: int) -> str | None:
    """How the name at ``pos`` is used, when a compile-time constant is required there."""
    stmt_start, stmt = statement_before(code, pos)
    context = None
    for m in _CONST_CONTEXT_RE.finditer(stmt):
        if word_start(stmt, m.start()):
            context = m.group(1)
    if context is not None:
        return _CONST_CONTEXT_WORDS[context]
    bracket = enclosing_bracket(code, pos, stmt_start)
    if bracket is None:
        return None
    kind, at = bracket
    if kind == "[":
        before = _PREV_WORD_RE.search(code, max(stmt_start, at - 120), at)
        if before is None or before.group(1) in CPP_KEYWORDS:
            return None  # an index, or new T[n]
        head = NAME_BEFORE_RE.search(code, stmt_start, before.start())
        # a declaration has a type before the name: `float buf[...]`, `__shared__ T x[...]`
        if head is not None and head.group(1) not in CPP_KEYWORDS:
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


_SHARED_32_RE = re.compile(r"__shared__[^;{}()]*?\b(\w+)\s*\[\s*(32[uU]?|[A-Za-z_]\w*)\s*\]\s*;")
_ARITHMETIC_RE = re.compile(r"[\d\s()+\-*/]+")
_NUMBER_SUFFIX_RE = re.compile(r"(?<=\d)[uUlL]+\b")
_WARP_INDEX_RE = re.compile(r"warp|wid\b|/|>>", re.I)
_IDENTIFIER_RE = re.compile(r"[A-Za-z_]\w*")

PER_WARP_ARRAY_32 = rule(
    id="GP307",
    slug="lane-indexed-array-32",
    category=Category.KERNELS,
    severity=Severity.MEDIUM,
    confidence=Confidence.MEDIUM,
    summary="A shared array of 32 elements is indexed by lane",
    what=(
        "Finds `__shared__` arrays declared with exactly 32 elements that are indexed by a lane "
        "variable (one computed from `threadIdx` with `& 31`, `% 32`, `% warpSize`, "
        "`__lane_id()`, or named `lane`, `lane_id`, `laneId`)."
    ),
    why=(
        "With 64-wide wavefronts a portable lane index runs to 63 and writes past the end of "
        "the array; a lane computed with `& 31` instead makes two lanes share a slot. Either "
        "way the per-warp scratch buffer is corrupted."
    ),
    example="__shared__ float scratch[32];\nscratch[lane] = v;\n",
    instead="__shared__ float scratch[64];   // the largest wavefront\nscratch[lane] = v;\n",
    fix="Size per-lane buffers for 64 lanes (or a warp-size template parameter).",
    mechanical=False,
    references=(HIP_WARP_SIZE,),
    needles=("__shared__",),
)


def lane_indexed_array_32(src: KernelSource) -> Iterator[Finding]:
    """``__shared__`` arrays of 32 elements indexed by a lane number."""
    code = src.code
    if not src.mentions(PER_WARP_ARRAY_32):
        return
    names = src.names
    for decl in _SHARED_32_RE.finditer(code):
        array = decl.group(1)
        through = None if decl.group(2)[0].isdigit() else decl.group(2)
        if through is not None and _constant_value(src, through) != 32:
            continue
        uses = list(
            words(
                re.compile(re.escape(array) + r"\s*\[([^\[\]]+)\]"),
                code,
                decl.end(),
                scope_end(code, decl.end()),
            )
        )
        # One slot per warp (written at a warp index, read back by lane under a guard) is
        # the classic block reduction, and 32 slots are plenty for 64-lane wavefronts.
        # ... unless a lane reads it without a guard (`sum = sums[lane_id];`): lanes 32-63 read
        # past the end on a 64-lane wavefront (the NUM_WARPS = threads / 32 pattern).
        per_warp = any(_WARP_INDEX_RE.search(use.group(1)) for use in uses)
        for use in uses:
            if per_warp and _guarded(code, use.start()):
                continue
            index = use.group(1).strip()
            index_words = _IDENTIFIER_RE.findall(index)
            lane_name = _IDENTIFIER_RE.fullmatch(index) and (
                index in names.lane or LANE_NAME_RE.match(index)
            )
            lane_expr = LANE_HINT_RE.search(index) and any(
                w in names.thread or w in ("threadIdx", "__lane_id") for w in index_words
            )
            if lane_name or lane_expr:
                size = "32" if through is None else f"{through}, which is 32"
                # one slot per warp, read back by every lane: the read is what breaks
                at, end = (use.start(), use.end()) if per_warp else (decl.start(), decl.end())
                yield src.finding(
                    PER_WARP_ARRAY_32,
                    at,
                    end,
                    message=f"__shared__ {array}[{size}] is indexed by lane ({array}[{index}], "
                    f"line {src.line_of(use.start())}); a 64-lane wavefront needs 64 slots",
                )
                break


def _constant_value(src: KernelSource, name: str, depth: int = 0) -> int | None:
    """The integer a named constant of the file comes to (``#define NUM_WARPS (1024 / 32)``)."""
    constant = src.constants.get(name)
    if constant is None or depth > 4:
        return None
    value = _NUMBER_SUFFIX_RE.sub("", constant.value)
    for other in set(_IDENTIFIER_RE.findall(value)):
        inner = _constant_value(src, other, depth + 1)
        if inner is None:
            return None
        value = re.sub(rf"\b{other}\b", str(inner), value)
    if not _ARITHMETIC_RE.fullmatch(value):
        return None
    try:
        return _arithmetic(ast.parse(value.strip(), mode="eval").body)
    except (SyntaxError, ValueError, ZeroDivisionError, RecursionError):
        return None


def _arithmetic(node: ast.expr) -> int:
    """An integer expression of + - * / (C's integer division) over literals."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_arithmetic(node.operand)
    if isinstance(node, ast.BinOp):
        left, right = _arithmetic(node.left), _arithmetic(node.right)
        if isinstance(node.op, ast.Add):
            return left + right
        if isinstance(node.op, ast.Sub):
            return left - right
        if isinstance(node.op, ast.Mult):
            return left * right
        if isinstance(node.op, ast.Div):
            return int(left / right)
    raise ValueError("not integer arithmetic")


def _guarded(code: str, pos: int) -> bool:
    """Whether the read at ``pos`` is under a bound: a ternary in its statement, or an ``if``
    or a ``<`` test on its line or the line before (``v = lane < n ? s[lane] : 0``)."""
    _, stmt = statement_before(code, pos)
    end = code.find(";", pos)
    rest = code[pos : end if end >= 0 else len(code)]
    if "?" in stmt or "?" in rest:
        return True
    line_start = code.rfind("\n", 0, pos) + 1
    previous = code.rfind("\n", 0, max(0, line_start - 1)) + 1
    return re.search(r"\bif\s*\(|<", code[previous:pos]) is not None


_LOOP_DOWN_16_RE = re.compile(
    r"for\s*\(\s*(?:[A-Za-z_]\w*\s+)*?(\w+)\s*=\s*16[uU]?\s*;\s*\1\s*(?:>=?|!=)\s*[01][uU]?\s*;"
    r"\s*(?:\1\s*>>=\s*1|\1\s*/=\s*2|\1\s*=\s*\1\s*(?:>>\s*1|/\s*2))\s*\)"
)
_LOOP_UP_32_RE = re.compile(
    r"for\s*\(\s*(?:[A-Za-z_]\w*\s+)*?(\w+)\s*=\s*1[uU]?\s*;\s*\1\s*(?:<\s*32|<=\s*16)[uU]?\s*;"
    r"\s*(?:\1\s*<<=\s*1|\1\s*\*=\s*2|\1\s*\+=\s*\1|\1\s*=\s*\1\s*(?:<<\s*1|\*\s*2))\s*\)"
)
_SHFL_CALL_RE = re.compile(r"__shfl_(xor|down|up)(_sync)?\s*\(")

SHUFFLE_FROM_16 = rule(
    id="GP308",
    slug="shuffle-reduction-32-lanes",
    category=Category.KERNELS,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="A shuffle reduction covers only 32 lanes (starts at offset 16 or stops below 32)",
    what=(
        "Finds loops such as `for (int o = 16; o > 0; o >>= 1)` or `for (int o = 1; o < 32; "
        "o <<= 1)` whose body calls `__shfl_xor*`, `__shfl_down*` or `__shfl_up*` without an "
        "explicit width of 32 or less, and unrolled shuffle sequences whose largest offset is "
        "a literal 16. Xor and shuffle-down trees in a device function that works in 32-lane "
        "groups by its own arithmetic (only `threadIdx.x < 32` takes part, lanes numbered "
        "`% 32`, or lanes striding by 32) are right on a 64-lane wavefront and are left to "
        "GP302/GP305, which report the 32."
    ),
    why=(
        "A butterfly or tree reduction must start at half the wavefront. On a 64-wide "
        "wavefront a reduction that starts at 16 combines lanes 0-31 and 32-63 separately, so "
        "lane 0 holds the sum of only half the wavefront."
    ),
    example="for (int o = 16; o > 0; o >>= 1)\n  v += __shfl_xor_sync(0xffffffff, v, o);\n",
    instead="for (int o = warpSize / 2; o > 0; o >>= 1)\n  v += __shfl_xor(v, o);\n",
    fix=(
        "Start at `warpSize / 2` (or loop while `o < warpSize`), or pass an explicit width of "
        "32 if the code really means groups of 32 lanes."
    ),
    mechanical=False,
    references=(HIP_WARP_FUNCTIONS,),
    needles=("__shfl",),
)


def _butterfly(src: KernelSource, offset: str, start: int, end: int) -> bool:
    """Does the loop body pick each lane's role by its bit of the offset (``t & i``)? Then the
    loop is a butterfly transform (Hadamard, FFT, bitonic sort) over groups of a size the data
    sets, not a reduction of the warp: xor offsets below 32 keep each 32-lane group whole on a
    64-lane wavefront too (exllamav2's 32-point Hadamard in cache_q.cuh)."""
    pattern = re.compile(
        rf"(\w[\w.]*)\s*&\s*{re.escape(offset)}\b|\b{re.escape(offset)}\s*&\s*(\w[\w.]*)"
    )
    for m in words(pattern, src.code, start, end):
        # a thread index, or a value passed in as one (exllamav2's `t`): not a literal
        lane = m.group(1) or m.group(2)
        if lane != offset and not lane[0].isdigit():
            return True
    return False


def shuffle_reduction_32_lanes(src: KernelSource) -> Iterator[Finding]:
    """Shuffle loops from offset 16 (or up to 32), and unrolled shuffles whose largest offset is 16."""
    code = src.code
    if not src.mentions(SHUFFLE_FROM_16):
        return

    def shuffles(start: int, end: int) -> Iterator[tuple[re.Match[str], list[str]]]:
        for m in words(_SHFL_CALL_RE, code, start, end):
            close_at = match_forward(src.brackets, m.end() - 1)
            if close_at >= 0:
                args = split_args(code, src.brackets, m.end() - 1, close_at)
                yield m, [code[a:b].strip() for a, b in args]

    def narrow(m: re.Match[str], args: list[str]) -> bool:
        """An explicit width of 32 or less: groups of lanes on purpose."""
        width_index = 3 if m.group(2) else 2
        if len(args) <= width_index:
            return False
        width = args[width_index].rstrip("uU")
        return width.isdigit() and int(width) <= 32

    for regex, what in (
        (_LOOP_DOWN_16_RE, "starts at offset 16"),
        (_LOOP_UP_32_RE, "stops below offset 32"),
    ):
        for m in words(regex, code):
            body_start, body_end = body_after(code, src.brackets, m.end())
            calls = list(shuffles(body_start, body_end))
            if not calls or all(narrow(c, a) for c, a in calls):
                continue
            if _butterfly(src, m.group(1), body_start, body_end):
                continue
            if all(c.group(1) != "up" for c, _ in calls) and logical_32_lanes(src, m.start()):
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
    for m, args in shuffles(0, len(code)):
        offset_index = 2 if m.group(2) else 1
        if len(args) > offset_index and m.group(1) in ("xor", "down"):
            literal_offsets.append((m, args[offset_index].rstrip("uU"), narrow(m, args)))
    if any(offset == "32" for _, offset, _ in literal_offsets):
        return
    for m, offset, is_narrow in literal_offsets:
        if offset == "16" and not is_narrow and not logical_32_lanes(src, m.start()):
            yield src.finding(
                SHUFFLE_FROM_16,
                m.start(),
                m.end(),
                message=f"shuffle reduction starts at offset 16 (__shfl_{m.group(1)}"
                f"{m.group(2) or ''}), so it covers only 32 lanes of a 64-lane wavefront",
            )
