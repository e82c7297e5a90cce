"""Inline assembly in CUDA code: the ``asm`` statements of a file, and what their PTX templates use.

Reading a template is syntax (statements, opcodes with their qualifiers, ``%`` special
registers); what each instruction becomes on AMD GPUs is knowledge, in the tables below.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from gpuport.scan.kernels.brackets import match_forward
from gpuport.scan.kernels.words import words

_ASM_RE = re.compile(
    r"(?:asm|__asm__|__asm)\b(?:\s+(?:volatile|__volatile__|__volatile|inline|goto))*\s*\("
)
_STRING_RE = re.compile(r"(?:u8|[uUL])?\"((?:[^\"\\\r\n]|\\.)*)\"")
_STATEMENT_SPLIT_RE = re.compile(r"[;\n]")
_OPCODE_RE = re.compile(r"^(?:@!?%?\w+\s+)?([a-z][a-z0-9_]*(?:\.[\w:]+)*)")
_LABEL_RE = re.compile(r"^\$?\w+:\s*")
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


HOPPER = "hopper"
CLUSTER = "cluster"
ASYNC = "async"


def ptx_op_hip(op: str) -> str | None:
    """What HIP offers instead of the PTX instruction ``op`` (with its qualifiers), if known."""
    base, *qualifiers = op.split(".")
    table = {"shfl": _SHFL_MODE_HIP, "vote": _VOTE_MODE_HIP}.get(base)
    if table is not None:
        for qualifier in qualifiers:
            if qualifier in table:
                return table[qualifier]
    return _PTX_OP_HIP.get(base)


def special_register_hip(register: str) -> str | None:
    """What HIP offers instead of the PTX special register ``%register``, if known."""
    return _SPECIAL_REG_HIP.get(register)


def is_hopper_wrapper(name: str) -> bool:
    """Whether ``cuda::ptx::name`` wraps a Hopper-or-newer instruction."""
    return _HOPPER_PTX_FN_RE.match(name) is not None


_HOPPER_PTX_FN_RE = re.compile(
    r"^(?:wgmma|cp_async_bulk|cp_reduce_async_bulk|tensormap|fence_proxy_async|mbarrier_expect_tx"
    r"|mbarrier_arrive_expect_tx|mbarrier_try_wait|elect_sync|st_async|red_async|tcgen05|multimem"
    r"|griddepcontrol|setmaxnreg|stmatrix)"
)


@dataclass(frozen=True, slots=True)
class Ptx:
    """What one PTX template uses."""

    opcodes: tuple[str, ...]
    special: tuple[tuple[str, str], ...]  # (opcode, special register) pairs
    is_ptx: bool

    @property
    def family(self) -> str | None:
        """HOPPER, CLUSTER or ASYNC for templates using those features (most specific first)."""
        ops = self.opcodes
        if any(op.startswith(_HOPPER_OP_PREFIXES) for op in ops):
            return HOPPER
        if any(op.startswith(_CLUSTER_OP_PREFIXES) for op in ops) or any(
            reg.startswith("cluster") or reg in ("nclusterid", "is_explicit_cluster")
            for _, reg in self.special
        ):
            return CLUSTER
        if any(op.startswith(_ASYNC_OP_PREFIXES) for op in ops):
            return ASYNC
        return None

    def shown(self) -> str:
        """The instructions, with the special register each reads, for a message."""
        regs = {op: f"{op} %{reg}" for op, reg in reversed(self.special)}
        named = [regs.get(op, op) for op in self.opcodes]
        return ", ".join(named[:4]) + (", …" if len(named) > 4 else "")


def read_ptx(template: str) -> Ptx:
    """The opcodes and special registers of a PTX template (escapes already undone)."""
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
        stmt = _LABEL_RE.sub("", stmt)  # labels
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
    return Ptx(tuple(opcodes), tuple(special), is_ptx)


@dataclass(frozen=True, slots=True)
class AsmStatement:
    """One ``asm(...)`` statement: its extent and, when its template is visible PTX, the PTX."""

    start: int
    end: int  # just past the closing parenthesis
    hidden_template: bool  # the template is a macro or variable gpuport cannot read
    ptx: Ptx | None  # None unless the template is PTX (not blank, not host assembly)


def asm_statements(text: str, code: str) -> list[AsmStatement]:
    """Every ``asm``/``__asm__`` statement in ``code``; templates are read from ``text``."""
    found: list[AsmStatement] = []
    if "asm" not in code:
        return found
    for m in words(_ASM_RE, code):
        open_at = m.end() - 1
        close_at = match_forward(code, open_at)
        if close_at < 0:
            close_at = min(len(code), open_at + 2_000)
        colon = code.find(":", open_at, close_at)
        template_end = colon if colon >= 0 else close_at
        pieces = _STRING_RE.findall(text, open_at + 1, template_end)
        if not pieces:
            hidden = bool(code[open_at + 1 : template_end].strip())
            found.append(AsmStatement(m.start(), close_at + 1, hidden, None))
            continue
        template = "".join(pieces).replace("\\n", "\n").replace("\\t", " ")
        ptx = read_ptx(template) if template.strip() else None
        if ptx is not None and not ptx.is_ptx:  # host assembly (x86 pause, rdtsc, …)
            ptx = None
        found.append(AsmStatement(m.start(), close_at + 1, False, ptx))
    return found


_WRAPPER_CALL_RE = re.compile(r"cuda::ptx::(\w+)")


def ptx_wrapper_calls(body: str) -> Iterator[re.Match[str]]:
    """``cuda::ptx::name`` uses (libcu++'s PTX wrappers); group 1 is the name."""
    return words(_WRAPPER_CALL_RE, body, also=":")
