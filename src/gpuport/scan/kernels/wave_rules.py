"""Warp-size facts written for one kind of AMD GPU or one lane (GP327, GP328, GP329): each rule, then its check.

AMD GPUs do not share one wavefront width: CDNA (gfx9) runs 64 lanes, RDNA (gfx10, gfx11,
gfx12) runs 32. Code that fixes 64 for every AMD GPU, names lane 31 as the last lane, or
builds lane masks in 32 bits is right on one of them at most.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from gpuport.findings import Category, Confidence, Finding, Severity
from gpuport.rules import rule
from gpuport.scan.kernels.brackets import match_forward, split_args, trimmed
from gpuport.scan.kernels.names import LANE_NAME_RE
from gpuport.scan.kernels.references import HIP_WARP_FUNCTIONS, HIP_WARP_SIZE
from gpuport.scan.kernels.source import KernelSource, directive_line_start
from gpuport.scan.kernels.warp_width_rules import warp_size_hardcoded
from gpuport.scan.kernels.words import words

# Names that say "the warp's width" (as GP305 reads them), and the wavefront spellings.
_WARP_WIDTH_NAME_RE = re.compile(
    r"warp_?(?:size|sz|width|threads|lanes)|threads_?per_?warp|lanes_?per_?warp"
    r"|wave_?(?:front_?)?(?:size|width|lanes)",
    re.I,
)
# Starts at the '#' (see source._INCLUDE_RE); the line start is found by directive_line_start.
_DEFINE_64_RE = re.compile(r"#[ \t]*define[ \t]+(\w+)[ \t]+\(?[ \t]*64[uU]?[ \t]*\)?[ \t]*$", re.M)
# `name = 64;`, `name{64};`, matched backwards from each "64" (see _declared_64).
_DECLARED_64_RE = re.compile(r"([A-Za-z_]\w*)\s*(?:=\s*\(?\s*|\{\s*)$")
_AFTER_64_RE = re.compile(r"[uU]?\s*\)?\s*\}?\s*;")

WARP_SIZE_FIXED_64 = rule(
    id="GP327",
    slug="warp-size-fixed-64-on-amd",
    category=Category.KERNELS,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="A warp-size constant is 64 for every AMD GPU; RDNA GPUs run 32-wide wavefronts",
    what=(
        "Finds `#define WARP_SIZE 64`, `constexpr int kWarpSize = 64;` and the like (names "
        "that say warp or wavefront size) in a branch that every ROCm build compiles and no "
        "CUDA build does (`#ifdef __HIP_PLATFORM_AMD__`, `#ifdef USE_ROCM`, the `#else` of "
        "`#ifndef USE_ROCM`), with no test of the GPU target (`__GFX9__`, `__gfx90a__`, "
        "`__AMDGCN_WAVEFRONT_SIZE`) around it."
    ),
    why=(
        "64 is right for CDNA and GCN GPUs (gfx9: MI100-MI355, Vega) only. RDNA GPUs "
        "(gfx10, gfx11, gfx12: Radeon and Radeon PRO) run 32-wide wavefronts, so a ROCm build "
        "for them gets per-warp buffers, lane masks, warps per block and host launch sizes "
        "computed for 64 lanes: half the 'warps', reductions over lanes that do not exist, "
        "blocks that are half the size the kernel expects."
    ),
    example="#ifdef __HIP_PLATFORM_AMD__\n#define WARP_SIZE 64\n#else\n#define WARP_SIZE 32\n#endif\n",
    instead=(
        "#if defined(__GFX9__)   // device pass: CDNA/GCN\n#define WARP_SIZE 64\n#else\n"
        "#define WARP_SIZE 32\n#endif\n// host code: query hipDeviceAttributeWarpSize\n"
    ),
    fix=(
        "In device code select the value per target (`__GFX9__` gives 64, other AMD targets "
        "32) or use `warpSize`; in host code query `hipDeviceAttributeWarpSize` at run time "
        "and pick the kernel instantiation from it."
    ),
    mechanical=False,
    references=(HIP_WARP_SIZE,),
    needles=("64",),
)


def warp_size_fixed_64_on_amd(src: KernelSource) -> Iterator[Finding]:
    """Warp-size names given 64 in a branch every ROCm build compiles, whatever the GPU."""
    code = src.code
    if not src.mentions(WARP_SIZE_FIXED_64) or src.conditions is None:
        return
    hits: list[tuple[int, int, str]] = []
    if "define" in code:
        for m in _DEFINE_64_RE.finditer(code):
            start = directive_line_start(code, m.start())
            if start >= 0:
                hits.append((start, m.end(), m.group(1)))
    hits.extend(_declared_64(code))
    conditions = src.conditions
    for start, end, name in src.once_per_line(sorted(hits)):
        if not _WARP_WIDTH_NAME_RE.search(name) or not conditions.rocm_only(start):
            continue
        yield src.finding(
            WARP_SIZE_FIXED_64,
            start,
            end,
            message=f"{name} is 64 for every AMD GPU, but RDNA GPUs (gfx10-gfx12) run 32-wide "
            "wavefronts: select it per target (__GFX9__: 64) in device code and query "
            "hipDeviceAttributeWarpSize on the host",
        )


def _declared_64(code: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, name) of each ``name = 64;`` or ``name{64};``: found from each "64", since
    '=' and '{' are everywhere in C++ (as warp_width_rules._values_32 does for 32)."""
    at = code.find("64")
    while at >= 0:
        if (at == 0 or not code[at - 1].isalnum()) and not code[at + 2 : at + 3].isalnum():
            before = _DECLARED_64_RE.search(code, max(0, at - 80), at)
            after = _AFTER_64_RE.match(code, at + 2)
            if before is not None and after is not None:  # `x == 64`, `x <= 64` never match
                yield before.start(1), after.end(), before.group(1)
        at = code.find("64", at + 2)


_SHFL_RE = re.compile(r"(__shfl(?:_sync)?)\s*\(")

SHUFFLE_FROM_LANE_31 = rule(
    id="GP328",
    slug="shuffle-from-lane-31",
    category=Category.KERNELS,
    severity=Severity.MEDIUM,
    confidence=Confidence.MEDIUM,
    summary="A shuffle reads lane 31, the last lane of a 32-wide warp only",
    what=(
        "Finds `__shfl(v, 31)` and `__shfl_sync(mask, v, 31)` without an explicit width of 32 "
        "or less: a broadcast from what the code takes for the warp's last lane."
    ),
    why=(
        "On a 64-lane wavefront lane 31 is the middle, not the end: a running total, carry or "
        "label taken from 'the last lane' silently drops lanes 32-63."
    ),
    example="const int last = __shfl(label, 31);\n",
    instead="const int last = __shfl(label, warpSize - 1);\n",
    fix="Read lane `warpSize - 1`, or pass a width of 32 if groups of 32 lanes are meant.",
    mechanical=False,
    references=(HIP_WARP_FUNCTIONS,),
    needles=("__shfl",),
)


def shuffle_from_lane_31(src: KernelSource) -> Iterator[Finding]:
    """``__shfl``/``__shfl_sync`` whose source lane is the literal 31 and whose width is not."""
    code = src.code
    if not src.mentions(SHUFFLE_FROM_LANE_31):
        return
    for m in words(_SHFL_RE, code):
        open_at = m.end() - 1
        close_at = match_forward(src.brackets, open_at)
        if close_at < 0:
            continue
        args = split_args(code, src.brackets, open_at, close_at)
        lane_index = 2 if m.group(1).endswith("_sync") else 1
        if len(args) <= lane_index:
            continue
        start, end = trimmed(code, *args[lane_index])
        if code[start:end].rstrip("uU") != "31":
            continue
        if len(args) > lane_index + 1:
            width = code[slice(*trimmed(code, *args[lane_index + 1]))].rstrip("uU")
            if not width.isdigit() or int(width) <= 32:
                continue  # a logical warp of 32 (or one the code sizes itself)
        yield src.finding(
            SHUFFLE_FROM_LANE_31,
            m.start(),
            close_at + 1,
            message=f"{m.group(1)} reads lane 31 as the last lane; on a 64-lane wavefront the "
            "last lane is 63: use warpSize - 1",
        )


# A 32-bit one (or all-ones) shifted by a lane number: `1 << lane`, `1u << lane_id`,
# `~(-1 << lane)`, `0xffffffff << lane`. The literal has no `ll`/`l` suffix.
_SHIFTED_BY_LANE_RE = re.compile(
    r"(?<![\w.])(-\s*1|1|~\s*0|0[xX][fF]{8})[uU]?\s*<<\s*\(?\s*([A-Za-z_]\w*)\s*\)?(?![\w(\[.])"
)
_OPERAND_END = tuple("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_)]")
_MASK_WORDS = ("__ballot", "__activemask", "__popc", "__ffs", "__clz", "_sync(", "__lanemask")
_LANE_BELOW_32_RE = re.compile(r"&\s*(?:31|0[xX]1[fF])[uU]?\b|%\s*32[uU]?\b")
_LANE_BY_NAME_RE = re.compile(r"([&%])\s*([A-Za-z_]\w*)")

LANE_MASK_32_BIT = rule(
    id="GP329",
    slug="lane-mask-32-bit-shift",
    category=Category.KERNELS,
    severity=Severity.MEDIUM,
    confidence=Confidence.MEDIUM,
    summary="A lane mask is built by shifting a 32-bit value by a lane number that reaches 63",
    what=(
        "Finds `1 << lane`, `1u << lane`, `-1 << lane`, `~0u << lane` and `0xffffffff << lane` "
        "(a 32-bit literal, no `ll` suffix) where `lane` is a lane number (`lane`, `lane_id`, "
        "or computed with `% warpSize` or `__lane_id()`) in a file that works with lane masks "
        "(ballots, `__popc*`, `__ffs*`, `*_sync`). Lanes computed with `& 31` or `% 32` are "
        "left to GP302."
    ),
    why=(
        "On a 64-lane wavefront the lane runs to 63, and shifting a 32-bit int by 32 or more is "
        "undefined behaviour in C++ (on AMD GPUs the shift count is taken modulo 32), so "
        "masks of the lanes before this one (`__popcll(ballot & ((1u << lane) - 1))`, the "
        "classic stream-compaction slot) are wrong for lanes 32-63."
    ),
    example="int before = __popcll(votes & ((1u << lane) - 1));\n",
    instead="int before = __popcll(votes & ((1ull << lane) - 1));   // or __lanemask_lt()\n",
    fix="Shift a 64-bit one (`1ull << lane`), or use HIP's `__lanemask_lt()`.",
    mechanical=False,
    references=(HIP_WARP_FUNCTIONS,),
    needles=("<<",),
)


def lane_mask_32_bit_shift(src: KernelSource) -> Iterator[Finding]:
    """32-bit literals shifted left by a lane number, in files that work with lane masks."""
    code = src.code
    if not src.mentions(LANE_MASK_32_BIT) or not any(w in code for w in _MASK_WORDS):
        return
    lanes = src.names.lane
    checked: dict[str, bool] = {}
    fixed_32: bool | None = None
    for m in src.once_per_line(_SHIFTED_BY_LANE_RE.finditer(code)):
        name = m.group(2)
        if m.group(1).startswith("-") and code[: m.start()].rstrip()[-1:] in _OPERAND_END:
            continue  # `n - 1 << lane` is (n - 1) << lane: not a literal -1
        if name not in checked:
            checked[name] = (name in lanes or LANE_NAME_RE.match(name) is not None) and not (
                _lane_below_32(src, name)
            )
        if not checked[name]:
            continue
        if fixed_32 is None:
            # a file that fixes its warp width at 32 (kThreadsPerWarp = 32, which GP305
            # reports) keeps its lanes under 32: the masks follow when that constant changes
            fixed_32 = next(warp_size_hardcoded(src), None) is not None
        if fixed_32:
            return
        literal = " ".join(m.group(1).split())
        yield src.finding(
            LANE_MASK_32_BIT,
            m.start(),
            m.end(),
            message=f"`{literal} << {name}` is a 32-bit shift, but {name} reaches 63 on a "
            "64-lane wavefront: shift 1ull (64 bits) or use __lanemask_lt()",
        )


def _lane_below_32(src: KernelSource, name: str) -> bool:
    """Is ``name`` assigned with ``& 31`` or ``% 32``, literally or through a constant of the
    file (``% kThreadsPerWarp`` with ``kThreadsPerWarp = 32``)? Then it stays under 32, and the
    32 is GP302's or GP305's to report."""
    code = src.code
    assignment = re.search(rf"\b{re.escape(name)}\s*=(?!=)([^;]*);", code)
    if assignment is None:
        return False
    value = assignment.group(1)
    if _LANE_BELOW_32_RE.search(value):
        return True
    for m in _LANE_BY_NAME_RE.finditer(value):
        constant = src.constants.get(m.group(2))
        if constant is not None and constant.value.rstrip("uU") == (
            "31" if m.group(1) == "&" else "32"
        ):
            return True
    return False
