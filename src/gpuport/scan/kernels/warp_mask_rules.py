"""Lane masks kept in 32 bits (GP303, GP304) and partial-warp synchronisation (GP320): each rule, then its check.

HIP's warp functions take and return 64-bit lane masks, one bit per lane of a wavefront of
up to 64, and AMD wavefronts run in lockstep.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from gpuport.findings import Category, Confidence, Finding, Fix, Severity
from gpuport.rules import rule
from gpuport.scan.kernels.brackets import match_forward, scope_end, split_args, trimmed
from gpuport.scan.kernels.masks import FULL_MASK_64, full_mask_kind, is_full_mask, is_name
from gpuport.scan.kernels.references import (
    HIP_COOPERATIVE_GROUPS,
    HIP_WARP_FUNCTIONS,
    HIP_WARP_SYNC_HEADER,
)
from gpuport.scan.kernels.source import KernelSource
from gpuport.scan.kernels.statements import assigned_name, statement_before
from gpuport.scan.kernels.words import words

_SYNC_CALL_RE = re.compile(
    r"(__shfl(?:_up|_down|_xor)?_sync|__ballot_sync|__any_sync|__all_sync"
    r"|__match_(?:any|all)_sync)\s*\("
)

WARP_MASK_32_BIT = rule(
    id="GP303",
    slug="warp-mask-32-bit",
    category=Category.KERNELS,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="A 32-bit full-warp mask is passed to a *_sync warp function; HIP masks are 64-bit",
    what=(
        "Finds `0xffffffff`, `0xFFFFFFFFu`, `~0u`, `-1` and the like as the mask argument of "
        "`__shfl*_sync`, `__ballot_sync`, `__any_sync`, `__all_sync` and `__match_*_sync`, and "
        "`#define`/`constexpr` mask constants with that value that such calls use. 64-bit full "
        "masks (`0xffffffffffffffffULL`, `~0ull`) are fine."
    ),
    why=(
        "HIP's `*_sync` warp functions (ROCm 6.2 behind `HIP_ENABLE_WARP_SYNC_BUILTINS`, on by "
        "default in later releases) take a 64-bit mask and `static_assert` that it is one, so "
        "a 32-bit mask does not compile. A 32-bit value "
        "widened to 64 bits (`0xffffffffULL`) compiles but names only lanes 0-31 of a 64-wide "
        "wavefront, so half of the wavefront is left out."
    ),
    example="v += __shfl_xor_sync(0xffffffff, v, o);\n",
    instead="v += __shfl_xor_sync(0xffffffffffffffffULL, v, o);   // or __shfl_xor(v, o)\n",
    fix=(
        "Opt-in mechanical fix (`gpuport port` applies it when the mask is exactly the "
        "full-warp constant): write the 64-bit full mask `0xffffffffffffffffULL`. For ROCm "
        "older than 6.2, which has no `*_sync` forms, call the mask-less form instead "
        "(`__shfl_xor(v, o)`, `__ballot(p)`); a mask built at run time needs a 64-bit type."
    ),
    mechanical=True,
    references=(HIP_WARP_FUNCTIONS, HIP_WARP_SYNC_HEADER),
    needles=("_sync",),
)


def warp_mask_32_bit(src: KernelSource) -> Iterator[Finding]:
    """Full 32-lane masks passed to ``*_sync`` warp functions, literally or through a constant."""
    code = src.code
    if not src.mentions(WARP_MASK_32_BIT):
        return

    def reason(kind: str) -> str:
        if kind == "wide32":
            return "it names only lanes 0-31 of a 64-lane wavefront"
        return "HIP's mask parameter is 64-bit and a 32-bit mask fails its static_assert"

    reported_constants: set[str] = set()
    # the project maps these to HIP's mask-less forms on ROCm (`#define __shfl_xor_sync(mask,
    # var, lane) __shfl_xor(var, lane)` under USE_ROCM, here or in its compat header)
    aliases = src.rocm_aliases()
    for m in words(_SYNC_CALL_RE, code):
        if m.group(1) in aliases:
            continue
        open_at = m.end() - 1
        close_at = match_forward(src.brackets, open_at)
        if close_at < 0:
            continue
        args = split_args(code, src.brackets, open_at, close_at)
        if not args:
            continue
        start, end = trimmed(code, *args[0])
        mask = code[start:end]
        fn = m.group(1)
        kind = full_mask_kind(mask)
        if kind is not None:
            yield src.finding(
                WARP_MASK_32_BIT,
                start,
                end,
                message=f"{fn} with mask `{mask}`: {reason(kind)}; use {FULL_MASK_64}",
                fix=Fix(
                    f"Replace `{mask}` with `{FULL_MASK_64}` (HIP's masks are 64-bit); on ROCm "
                    f"before 6.2 call the mask-less form of {fn} instead.",
                    mechanical=True,
                    replacement=FULL_MASK_64,
                ),
            )
            continue
        if not is_name(mask) or mask in reported_constants:
            continue
        constant = src.constants.get(mask)
        if constant is None:
            yield from _mask_from_header(src, mask, fn, start, end, reported_constants)
            continue
        kind = full_mask_kind(constant.value)
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
                message=f"{mask} = `{constant.value}` is used as the mask of {fn}: " + reason(kind),
                fix=fix,
            )
        else:
            yield src.finding(
                WARP_MASK_32_BIT,
                constant.start,
                constant.value_end,
                message=f"{mask} = `{constant.value}` is used as the mask of {fn}: "
                + reason(kind)
                + "; give it type unsigned long long and the value "
                + FULL_MASK_64,
                fix=Fix(
                    f"Declare {mask} as `unsigned long long` with value `{FULL_MASK_64}`.",
                    mechanical=False,
                ),
            )


def _mask_from_header(
    src: KernelSource, mask: str, fn: str, start: int, end: int, reported: set[str]
) -> Iterator[Finding]:
    """A mask constant defined in a project header this file includes (``#define FULL_MASK
    0xffffffff`` in ``utils.cuh``): reported at the call, once per name and file, since the
    header's own scan cannot know the name is used as a mask."""
    found = src.header_constant(mask)
    if found is None:
        return
    header, constant = found
    kind = full_mask_kind(constant.value)
    if kind is None:
        return
    reported.add(mask)
    reason = (
        "it names only lanes 0-31 of a 64-lane wavefront"
        if kind == "wide32"
        else "HIP's mask parameter is 64-bit and a 32-bit mask fails its static_assert"
    )
    yield src.finding(
        WARP_MASK_32_BIT,
        start,
        end,
        message=f"{fn} with mask {mask}, `{constant.value}` in {header}: {reason}; define it "
        f"as {FULL_MASK_64}",
        fix=Fix(
            f"Define {mask} in {header} as `{FULL_MASK_64}` (HIP's masks are 64-bit).",
            mechanical=False,
        ),
    )


_BALLOT_CALL_RE = re.compile(
    r"(__ballot_sync|__ballot|__activemask|__match_any_sync|__match_all_sync)\s*\("
)
_TYPE_32_BEFORE_RE = re.compile(
    r"(?<![\w])(unsigned\s+int|unsigned|uint32_t|int32_t|int|uint)\s+([A-Za-z_]\w*)\s*=\s*"
    r"(?:\(\s*[\w\s]+\)\s*)?$"
)
_BIT32_CALL_RE = re.compile(r"(__popc|__ffs|__clz|__brev)\s*\(\s*(\w+)\s*([()])")

BALLOT_RESULT_32_BIT = rule(
    id="GP304",
    slug="ballot-result-32-bit",
    category=Category.KERNELS,
    severity=Severity.MEDIUM,
    confidence=Confidence.MEDIUM,
    summary="A ballot or active-lane mask is kept or counted in 32 bits; HIP returns 64 bits",
    what=(
        "Finds results of `__ballot_sync`, `__ballot`, `__activemask` and `__match_*_sync` "
        "stored in `unsigned`, `unsigned int`, `uint32_t` or `int`, and `__popc`, `__ffs`, "
        "`__clz`, `__brev` applied to such a result (directly or through the variable that "
        "holds it). The 32-bit counts of one ballot variable in its block are named in one "
        "finding, at its 32-bit declaration or its first count."
    ),
    why=(
        "On AMD these functions return `unsigned long long`, one bit per lane of a wavefront "
        "of up to 64. Storing the result in 32 bits drops lanes 32-63, and `__popc` counts only "
        "the low 32 bits, so votes and counts are silently wrong on 64-wide wavefronts."
    ),
    example=("unsigned votes = __ballot_sync(0xffffffff, pred);\nint n = __popc(votes);\n"),
    instead=(
        "unsigned long long votes = __ballot_sync(0xffffffffffffffffULL, pred);\n"
        "int n = __popcll(votes);\n"
    ),
    fix=(
        "Keep masks in `unsigned long long` (or `auto`) and use the 64-bit bit functions "
        "(`__popcll`, `__ffsll`, `__clzll`, `__brevll`)."
    ),
    mechanical=False,
    references=(HIP_WARP_FUNCTIONS,),
    needles=("__ballot", "__activemask", "__match_"),
)


def ballot_result_32_bit(src: KernelSource) -> Iterator[Finding]:
    """Ballot and active-lane masks stored in 32-bit variables, or counted with 32-bit functions.

    One ballot variable is one decision for a port (its type, and the bit functions on it):
    the 32-bit declaration, or the first 32-bit count when the declaration is fine, is reported
    and names the other counts of the same variable in its block (``__popc(ballot)`` two lines
    under ``unsigned ballot = __ballot_sync(...)``), instead of one finding for each.
    """
    code = src.code
    if not src.mentions(BALLOT_RESULT_32_BIT):
        return
    # ballot variable -> [(where it is assigned, where its block ends, index of its report)]
    ballot_vars: dict[str, list[tuple[int, int, int]]] = {}
    # (start, end, message, fix, offsets of the uses folded into it)
    reports: list[tuple[int, int, str, Fix | None, list[int]]] = []
    for m in words(_BALLOT_CALL_RE, code):
        found = assigned_name(code, m.start())
        if found is None:
            continue
        holder = ballot_vars.setdefault(found[0], [])
        stmt_start, stmt = statement_before(code, m.start())
        decl = _TYPE_32_BEFORE_RE.search(stmt)
        if decl is None or stmt[: decl.start()].rstrip().endswith("long"):
            holder.append((m.start(), scope_end(code, m.start()), -1))
            continue  # 64-bit, auto, or unsigned long long int
        holder.append((m.start(), scope_end(code, m.start()), len(reports)))
        type_name = " ".join(decl.group(1).split())
        reports.append(
            (
                stmt_start + decl.start(),
                m.start(),
                f"`{type_name} {decl.group(2)}` keeps the 64-bit result of {m.group(1)} in "
                "32 bits, dropping lanes 32-63; use unsigned long long (or auto)",
                None,
                [],
            )
        )
    for m in words(_BIT32_CALL_RE, code):
        fn, arg, after = m.group(1), m.group(2), m.group(3)
        if after == "(" and _BALLOT_CALL_RE.fullmatch(arg + "("):
            what = f"{fn}({arg}(…)) looks at only 32 bits of a 64-bit lane mask"
        elif after == ")" and arg in ballot_vars:
            what = f"{fn}({arg}) looks at only 32 bits of a lane mask that is 64 bits on AMD"
            assigned = [a for a in ballot_vars[arg] if a[0] < m.start() < a[1]]
            if assigned:
                at, block_end, index = assigned[-1]
                if index >= 0:
                    reports[index][4].append(m.start())
                    continue
                # the first count of a 64-bit variable is reported; later ones fold into it
                ballot_vars[arg][ballot_vars[arg].index(assigned[-1])] = (
                    at,
                    block_end,
                    len(reports),
                )
        else:
            continue
        reports.append(
            (
                m.start(1),
                m.end(1),
                f"{what}; use {fn}ll",
                Fix(f"Use {fn}ll, the 64-bit form.", mechanical=True, replacement=f"{fn}ll"),
                [],
            )
        )
    for start, end, message, fix, folded in sorted(reports, key=lambda r: r[0]):
        if folded:
            lines = ", ".join(str(src.line_of(pos)) for pos in folded)
            message += f"; the same variable is counted in 32 bits at line(s) {lines}"
        if fix is None:
            yield src.finding(BALLOT_RESULT_32_BIT, start, end, message=message)
        else:
            yield src.finding(BALLOT_RESULT_32_BIT, start, end, message=message, fix=fix)


_SYNCWARP_RE = re.compile(r"__syncwarp\s*\(")

INDEPENDENT_THREAD_SCHEDULING = rule(
    id="GP320",
    slug="partial-warp-sync",
    category=Category.KERNELS,
    severity=Severity.MEDIUM,
    confidence=Confidence.LOW,
    summary="__syncwarp with a partial mask relies on independent thread scheduling",
    what=(
        "Finds `__syncwarp(mask)` where the mask is neither empty, the full warp, nor "
        "`__activemask()`: code that synchronises a subset of a diverged warp."
    ),
    why=(
        "Since Volta, NVIDIA threads of a warp can make progress independently, and code may "
        "depend on it (intra-warp locks, partial-warp barriers). AMD GPUs execute a "
        "wavefront in lockstep with no independent thread scheduling, and HIP's documentation "
        "warns that such code can deadlock. HIP's masked `__syncwarp` (ROCm 7.0 and later) "
        "also takes only a 64-bit mask (a `static_assert`), so a 32-bit mask variable or "
        "literal does not compile."
    ),
    example="if (lane < 16) { work(); __syncwarp(0x0000ffff); }\n",
    instead="work_if(lane < 16);\n__syncthreads();   // or restructure so the whole wavefront converges\n",
    fix=(
        "Restructure so that the whole wavefront reaches the synchronisation point; remove "
        "intra-warp spin locks."
    ),
    mechanical=False,
    references=(HIP_COOPERATIVE_GROUPS,),
    needles=("__syncwarp",),
)


def partial_warp_sync(src: KernelSource) -> Iterator[Finding]:
    """``__syncwarp(mask)`` with a mask that is neither empty, full, nor ``__activemask()``."""
    code = src.code
    if not src.mentions(INDEPENDENT_THREAD_SCHEDULING):
        return
    for m in words(_SYNCWARP_RE, code):
        open_at = m.end() - 1
        close_at = match_forward(src.brackets, open_at)
        if close_at < 0:
            continue
        start, end = trimmed(code, open_at + 1, close_at)
        arg = code[start:end]
        if not arg or "__activemask" in arg or is_full_mask(arg, src.constants):
            continue
        shown = " ".join(arg.split())
        message = (
            f"__syncwarp({shown}) synchronises part of a warp; AMD wavefronts run in lockstep "
            "without independent thread scheduling"
        )
        if _narrow_mask(code, arg, m.start()):
            how = "declare it uint64_t" if is_name(arg.strip()) else "give it a ULL suffix"
            message = (
                f"__syncwarp({shown}) passes a 32-bit mask: HIP's __syncwarp(mask) "
                f"static_asserts a 64-bit one ({how}); it also synchronises part of a warp, "
                "and AMD wavefronts run in lockstep"
            )
        yield src.finding(INDEPENDENT_THREAD_SCHEDULING, m.start(), close_at + 1, message=message)


# A 32-bit integer type a mask variable is declared with (`uint32_t mask = ...`).
_NARROW_TYPE = r"(?:u?int32_t|unsigned(?:\s+int)?|int)"
_NARROW_LITERAL_RE = re.compile(r"(?:0[xX][0-9a-fA-F]{1,8}|\d+)[uU]?")
_LOOK_BACK = 4000  # characters before the call searched for the mask's declaration


def _narrow_mask(code: str, arg: str, at: int) -> bool:
    """Is the mask of a ``__syncwarp`` call 32-bit: a literal without a 64-bit suffix, or a
    name declared with a 32-bit integer type shortly before the call? HIP's masked
    ``__syncwarp`` takes only 64-bit masks (hip/amd_detail/amd_warp_sync_functions.h)."""
    mask = arg.strip()
    if _NARROW_LITERAL_RE.fullmatch(mask):
        return True
    if not is_name(mask):
        return False
    declared = re.compile(rf"\b(\w+(?:\s+int)?)\s+{re.escape(mask)}\s*[=;({{]")
    # the nearest declaration before the call
    found = [*declared.finditer(code, max(0, at - _LOOK_BACK), at)]
    return bool(found) and re.fullmatch(_NARROW_TYPE, found[-1].group(1)) is not None
