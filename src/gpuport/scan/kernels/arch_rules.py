"""A kernel file built around Blackwell-only hardware (GP330): the rule, then its check.

Blackwell's fifth-generation tensor cores (``tcgen05`` PTX, CuTe's UMMA and SM100 MMA/TMEM
atoms, CUTLASS's sm100 pipelines) compute out of tensor memory, which no AMD GPU has. A file
that uses them is one kernel design, not a list of lines to port: the rule fires once per file,
and the scan's triage sets the file's other findings aside under it (project/file_folds.py).

So is a file whose every kernel is compiled only for Blackwell: each ``__global__`` body sits
under an ``#if`` that a ROCm build reads as false and NVIDIA compilers read as true only for
sm_100 and newer (``__CUDA_ARCH__ >= 1000``) or only with the Blackwell toolkit (CUDA 12.8, the
first to compile for sm_100 and to ship the FP4 types of ``cuda_fp4.h``), written out or
through a macro the file or a project header defines (``#define FP4_TYPE_SUPPORTED
(CUDA_VERSION >= 12080)``); its ``__device__`` helpers are under such tests too, or called only
there. On ROCm such a file compiles to nothing or to error stubs: the port keeps the recipe
(MXFP8, NVFP4) out or writes its own kernels, one decision for the file. The same holds for a
file whose every kernel is compiled only for Hopper and newer (sm_90+) when the guarded code
uses Hopper's TMA, transaction mbarriers or wgmma (kb/ptx.toml's "hopper" family): widening the
guard cannot port such a body, so the file is the TMA decision (GP309), taken once. A Hopper
guard around plain code, or one with a portable ``#else``, is GP324's finding instead.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator

from gpuport.findings import Category, Confidence, Finding, Severity
from gpuport.kb.kernels import ptx_features, ptx_wrappers
from gpuport.rules import rule
from gpuport.scan.kernels.arch_branches import arch_test
from gpuport.scan.kernels.brackets import function_bodies
from gpuport.scan.kernels.ptx import HOPPER, asm_of_family
from gpuport.scan.kernels.references import COMPOSABLE_KERNEL, HIPBLASLT
from gpuport.scan.kernels.source import KernelSource, directive_line_start
from gpuport.syntax.preprocessor import ROCM_DEFINED, evaluate_for, is_nvidia_only, rocm_flag

# CuTe/CUTLASS names of the sm_100/sm_120 tensor-core path: UMMA (the tcgen05 MMA), its tensor
# memory (TMEM) and the pipelines built on it, and the SM100/SM120 MMA and TMEM atoms.
_BLACKWELL_NAMES_RE = re.compile(
    r"\b(?:UMMA::\w+|SM1[02]\d_(?:MMA|TMEM|UMMA)\w*|umma_arrive\w*|TmemAllocator\w*"
    r"|Pipeline(?:Tma)?Umma\w*|tcgen05_\w+)"
)
_BLACKWELL_ANCHORS = ("UMMA", "umma", "Umma", "TMEM", "Tmem", "tcgen05")
# Headers of CUTLASS/CuTe's sm_100 family: cutlass/pipeline/sm100_pipeline.hpp,
# cute/atom/mma_traits_sm100.hpp, cute/arch/mma_sm100_umma.hpp.
_BLACKWELL_HEADER_RE = re.compile(r"(?:^|[/_])sm1[02]\d(?:[a-z]|_|\.)")

BLACKWELL_ONLY_KERNEL = rule(
    id="GP330",
    slug="blackwell-only-kernel",
    category=Category.KERNELS,
    severity=Severity.HIGH,
    confidence=Confidence.MEDIUM,
    summary="A kernel file built on Blackwell's tensor memory and tcgen05 MMA, which AMD GPUs lack",
    what=(
        "Fires once per file at the first use of Blackwell's fifth-generation tensor cores: "
        "`tcgen05.*` PTX, CuTe's UMMA and SM100/SM120 MMA or TMEM atoms, CUTLASS's sm100 "
        "pipelines (`PipelineTmaUmmaAsync`, `umma_arrive`) or an sm100 CUTLASS/CuTe header. "
        "Also fires once, at the first such test, in a file whose every kernel body sits under "
        "an `#if` compiled only for Blackwell (`__CUDA_ARCH__ >= 1000`, or CUDA 12.8 toolkit "
        "tests such as TransformerEngine's `FP4_TYPE_SUPPORTED`, a macro the file or a project "
        "header defines) and whose device helpers are under such tests or called only there: "
        "on ROCm the file compiles to nothing or to error stubs. A file with one portable "
        "kernel beside its Blackwell ones is not such a file; a header of device functions "
        "only is one when every one of them is under such tests. "
        "It fires the same way for a file whose every kernel is compiled only for Hopper and "
        "newer (`__CUDA_ARCH__ >= 900`, error stubs for the rest) when that guarded code uses "
        "Hopper hardware no AMD GPU has: TMA tensor maps, bulk tensor copies, transaction "
        "mbarriers, async-proxy fences or wgmma (PTX or their wrappers). A Hopper guard around "
        "plain code, or with a portable `#else` an AMD GPU could run, is not such a file. "
        "The scan sets the file's other findings aside under this one: they are part of the "
        "same decision."
    ),
    why=(
        "These instructions read and write tensor memory (TMEM), a Blackwell-only store next "
        "to the tensor cores; AMD GPUs have matrix cores (MFMA) fed from registers and no "
        "tensor memory, so the kernel cannot be translated line by line. A port writes an AMD "
        "kernel for the operation (CK, hipBLASLt) or leaves the operation out on ROCm."
    ),
    example=(
        "#include <cutlass/pipeline/sm100_pipeline.hpp>\n"
        "using Mma = cute::SM100_MMA_F16BF16_SS<half_t, half_t, float, 128, 256,\n"
        "    cute::UMMA::Major::K, cute::UMMA::Major::K>;\n"
    ),
    instead=(
        "// an AMD kernel for the same operation (composable_kernel, hipBLASLt), chosen by\n"
        "// the build on ROCm; the Blackwell file stays NVIDIA-only\n"
    ),
    fix=(
        "Decide once for the file: write or take an AMD kernel for its operation "
        "(composable_kernel, hipBLASLt), or leave the operation out of the ROCm build."
    ),
    mechanical=False,
    references=(COMPOSABLE_KERNEL, HIPBLASLT),
    needles=("asm", *_BLACKWELL_ANCHORS, "sm10", "sm11", "sm12", "__global__", "__device__"),
)


def blackwell_only_kernel(src: KernelSource) -> Iterator[Finding]:
    """The first Blackwell tensor-memory use of the file (an include, a name or tcgen05 PTX)."""
    first: tuple[int, int, str] | None = None  # (start, end, what)
    for header, offset in src.includes:
        if _BLACKWELL_HEADER_RE.search(header) and src.compiled_on_rocm(offset):
            first = (offset, offset, f"includes {header}")
            break
    code = src.code
    for m in _BLACKWELL_NAMES_RE.finditer(code):
        if first is not None and m.start() >= first[0]:
            break
        if src.compiled_on_rocm(m.start()) and not _on_directive(code, m.start()):
            first = (m.start(), m.end(), f"uses {m.group()}")
            break
    for statement in src.asm:
        if first is not None and statement.start >= first[0]:
            break
        ptx = statement.ptx
        if (
            ptx is not None
            and any(op.startswith("tcgen05") for op in ptx.opcodes)
            and src.compiled_on_rocm(statement.start)
        ):
            first = (statement.start, statement.end, f"uses {ptx.shown()} PTX")
            break
    if first is None:
        yield from _blackwell_guarded_kernels(src)
        return
    start, end, what = first
    message = (
        f"this file is built on Blackwell's tensor memory and tcgen05 MMA ({what}), which no AMD "
        "GPU has: write or take an AMD kernel for its operation, or leave it out on ROCm"
    )
    yield src.finding(BLACKWELL_ONLY_KERNEL, start, end if end > start else None, message=message)


def _on_directive(code: str, pos: int) -> bool:
    """Is ``pos`` on a preprocessor line (an arch test names SM100 without using it)?"""
    line_start = code.rfind("\n", 0, pos) + 1
    return code[line_start:pos].lstrip().startswith("#")


# -- a file whose every kernel is compiled only for Blackwell -------------------------------------

# The NVIDIA compilations an arch test is read for: Blackwell (sm_100) with the toolkit that first
# compiles for it (CUDA 12.8, https://docs.nvidia.com/cuda/archive/12.8.0/cuda-toolkit-release-notes/),
# Hopper with that toolkit, and Blackwell with the toolkit before it (CUDA 12.6).
_ARCH_NAMES = ("__CUDA_ARCH__", "__CUDA_ARCH_SPECIFIC__", "__CUDA_ARCH_FAMILY_SPECIFIC__")


def _target(arch: int, minor: int) -> dict[str, int]:
    return {
        **dict.fromkeys(_ARCH_NAMES, arch),
        "__CUDACC__": 1,
        "__NVCC__": 1,
        "__CUDACC_VER_MAJOR__": 12,
        "__CUDACC_VER_MINOR__": minor,
        "CUDA_VERSION": 12000 + minor * 10,
        "CUDART_VERSION": 12000 + minor * 10,
    }


_BLACKWELL = _target(1000, 8)
_HOPPER = _target(900, 8)
_OLDER_TOOLKIT = _target(1000, 6)
_ADA = _target(890, 8)  # the newest GPU before Hopper: a Hopper-or-newer test reads it false
_TOOLKIT_NAMES = frozenset({"CUDA_VERSION", "CUDART_VERSION"})
_CONDITIONAL_RE = re.compile(r"#[ \t]*(?:if|ifdef|elif)\b")
_DIRECTIVE_LINE_RE = re.compile(r"^[ \t]*#[ \t]*(?:if|ifdef|ifndef|elif|else|endif)\b.*$", re.M)
_IDENTIFIER_RE = re.compile(r"(defined\s*\(?\s*)?\b([A-Za-z_]\w*)")
_QUALIFIER_RE = re.compile(r"__(global|device)__")
_STATEMENT_END_RE = re.compile(r"[;{}]")
_CALLED_NAME_RE = re.compile(r"([A-Za-z_]\w*)\s*(?:<[^;{}()]*>\s*)?\(")
_ATTRIBUTES = frozenset(
    {"__launch_bounds__", "__align__", "alignas", "__attribute__", "__declspec"}
)
# What a body left to ROCm may hold and still be an error stub: an error macro's call, a trap,
# assert(false), an early return.
_STUB_RE = re.compile(
    r"\b(?:[A-Z][A-Z0-9_]*(?:ERROR|TRAP|UNREACHABLE)[A-Z0-9_]*|__trap|__builtin_trap"
    r"|__builtin_unreachable|abort)\s*\([^;{}]*\)\s*;"
    r"|\bassert\s*\(\s*(?:false|0)\s*\)\s*;|\breturn\s*;"
)
_MAX_MACRO_DEPTH = 3


def _blackwell_guarded_kernels(src: KernelSource) -> Iterator[Finding]:
    """One finding, at the first Blackwell-only test, for a file whose every kernel is compiled
    only for Blackwell and whose device helpers are under such tests or called only there; or,
    in a file with no kernel, whose every device function is compiled only for Blackwell. Else
    one finding for a file compiled that way only for Hopper and newer whose guarded code uses
    TMA, mbarriers or wgmma (:func:`_hopper_feature`)."""
    code = src.code
    if "__global__" not in code and "__device__" not in code:
        return
    guards = _arch_guards(src)
    blackwell = [(start, end, condition) for start, end, condition, only in guards if only]
    counted = _guarded_only(src, blackwell) if blackwell else None
    hopper = False
    if counted is None:
        if len(blackwell) == len(guards):
            return
        every = [(start, end, condition) for start, end, condition, _ in guards]
        counted = _guarded_only(src, every)
        feature = _hopper_feature(src, every) if counted is not None else None
        if counted is None or feature is None:
            return
        hopper, blackwell = True, every
    kernels, functions = counted
    start, _end, condition = blackwell[0]
    shown = " ".join(condition.split())
    expanded = _expanded(src, condition, {}, 0) or condition
    if hopper:
        built = (
            f"only for Hopper and newer NVIDIA GPUs (sm_90+) and uses {feature}, Hopper "
            "hardware (TMA, transaction mbarriers, wgmma) no AMD GPU has"
        )
    elif evaluate_for(expanded, _HOPPER, lambda name: False) == 0:
        built = "only for Blackwell (sm_100 and newer)"
    else:
        built = "only by the CUDA 12.8+ toolkit that brought Blackwell and its FP4 types"
    what = (
        f"kernel of this file ({kernels})"
        if kernels
        else f"device function of this file ({functions})"
    )
    message = (
        f"every {what} is compiled {built}, under `#if {shown}` and "
        "like tests, so a ROCm build compiles it to nothing or to error stubs: leave the file "
        "out on ROCm, or write an AMD kernel for its operation"
    )
    yield src.finding(BLACKWELL_ONLY_KERNEL, start, message=message)


def _guarded_only(src: KernelSource, guards: list[tuple[int, int, str]]) -> tuple[int, int] | None:
    """(kernels, device functions) of a file whose every kernel body sits under ``guards``
    with only error stubs left to ROCm, and whose device helpers outside them are called only
    there or in other device bodies (or, with no kernel, whose every device function is under
    them); None for any other file."""
    code = src.code
    kernels = functions = 0
    helpers: list[tuple[str, int, int]] = []  # (name, '{', '}') of helpers ROCm compiles
    bodies: list[tuple[int, int]] = []
    for kind, name, open_at, close_at in _device_functions(src):
        bodies.append((open_at, close_at))
        guarded = any(start < close_at and open_at < end for start, end, _ in guards)
        if not guarded or _left_to_rocm(code, open_at + 1, close_at, guards):
            if kind == "global":
                return None  # a kernel ROCm compiles (or an empty one): not guarded-only
            helpers.append((name, open_at, close_at))
        else:
            kernels += kind == "global"
            functions += 1
    if kernels == 0 and (helpers or functions == 0):
        return None  # a header of device functions: guarded-only when all of them are
    for name, open_at, close_at in helpers:
        if not _called_only_inside(code, name, (open_at, close_at), guards, bodies):
            return None  # a helper other code may call: the file is not only its kernels
    return kernels, functions


# Hopper's asynchronous-copy and warpgroup hardware: TMA tensor maps (the driver API's
# ``CUtensorMap``), and the instructions of kb/ptx.toml's "hopper" family (bulk tensor copies,
# transaction mbarriers, async-proxy fences, wgmma), written as PTX or through wrappers named for
# them (``cuda::ptx::cp_async_bulk_tensor``, a project's ``ptx::mbarrier_arrive_expect_tx``).
# None has an AMD counterpart (GP309), so a body built on them is not ported by widening its
# guard. Plain ``mbarrier.init``/``cp.async`` are Ampere's (sm_80) and do not count.
@functools.cache
def _hopper_names_re() -> re.Pattern[str]:
    prefixes = "|".join(re.escape(p) for p in ptx_wrappers()[HOPPER].name_prefixes)
    return re.compile(rf"\bCUtensorMap\w*|\b(?:{prefixes})\w*")


def _hopper_feature(src: KernelSource, guards: list[tuple[int, int, str]]) -> str | None:
    """The first Hopper-only feature (a TMA tensor map, a Hopper PTX instruction or its wrapper)
    used inside ``guards``, or None. It must sit in the guarded code itself: a guard around
    plain code is one a port widens (GP324), not a file a port leaves out."""
    names = _hopper_names_re()
    for start, end, _ in guards:
        m = names.search(src.code, start, end)
        if m is not None:
            return f"`{m.group()}`"
    hopper_ops = ptx_features()[HOPPER].opcode_prefixes
    for statement, ptx in asm_of_family(src.asm, HOPPER):
        if _inside(guards, statement.start):
            op = next((op for op in ptx.opcodes if op.startswith(hopper_ops)), ptx.opcodes[0])
            return f"`{op}` PTX"
    return None


def _arch_guards(src: KernelSource) -> list[tuple[int, int, str, bool]]:
    """(start, end, condition, Blackwell-only) of each ``#if``/``#elif`` branch a ROCm build
    reads as false and NVIDIA compilers compile only for sm_100+ or only with the CUDA 12.8
    toolkit (Blackwell-only), or only for sm_90 and newer (Hopper-or-newer)."""
    code = src.code
    found: list[tuple[int, int, str, bool]] = []
    cache: dict[str, str | None] = {}
    for m in _CONDITIONAL_RE.finditer(code):
        if directive_line_start(code, m.start()) < 0:
            continue
        test = arch_test(code, m.start())
        if test is None or test.function_like:
            continue
        expanded = _expanded(src, test.condition, cache, 0)
        if expanded is None:
            continue
        only = _blackwell_only(expanded, src.facts.rocm_macros)
        if only or _hopper_or_newer(expanded, src.facts.rocm_macros):
            found.append((m.start(), test.body[1], test.condition, only))
    return found


def _expanded(
    src: KernelSource, condition: str, cache: dict[str, str | None], depth: int
) -> str | None:
    """``condition`` with the object-like macros it tests replaced by their values (from the
    file, then from the project headers it includes); None when too deep."""
    if depth > _MAX_MACRO_DEPTH:
        return None
    pieces: list[str] = []
    done = 0
    for m in _IDENTIFIER_RE.finditer(condition):
        name = m.group(2)
        if m.group(1) or name == "defined" or name in _TOOLKIT_NAMES or is_nvidia_only(name):
            continue
        if name not in cache:
            constant = src.constants.get(name)
            if (constant is None or not constant.is_macro) and name in src.included.zero_macros:
                # a project header's toolkit-version test (``FP4_TYPE_SUPPORTED``)
                from_header = src.header_constant(name)
                constant = from_header[1] if from_header is not None else None
            cache[name] = constant.value if constant is not None and constant.is_macro else None
        value = cache[name]
        if value is None:
            continue
        inner = _expanded(src, value, cache, depth + 1)
        if inner is None:
            return None
        pieces.append(condition[done : m.start(2)])
        pieces.append(f"({inner})")
        done = m.end(2)
    return "".join(pieces) + condition[done:]


def _absences(
    rocm_macros: frozenset[str],
) -> tuple[Callable[[str], bool], Callable[[str], bool]]:
    """Which macros an NVIDIA compile leaves undefined (ROCm's own and the project's ROCm
    macros), and which a ROCm compile does (the CUDA toolkit's and NVIDIA-only ones)."""

    def absent_on_nvidia(name: str) -> bool:
        return name in ROCM_DEFINED or name in rocm_macros or rocm_flag(name) is not False

    def absent_on_rocm(name: str) -> bool:
        return name in _TOOLKIT_NAMES or is_nvidia_only(name)

    return absent_on_nvidia, absent_on_rocm


def _blackwell_only(condition: str, rocm_macros: frozenset[str]) -> bool:
    """False on ROCm, true for sm_100 with CUDA 12.8, false for Hopper or an older toolkit."""

    absent_on_nvidia, absent_on_rocm = _absences(rocm_macros)

    if evaluate_for(condition, {}, absent_on_rocm) != 0:
        return False
    if not evaluate_for(condition, _BLACKWELL, absent_on_nvidia):
        return False
    return (
        evaluate_for(condition, _HOPPER, absent_on_nvidia) == 0
        or evaluate_for(condition, _OLDER_TOOLKIT, absent_on_nvidia) == 0
    )


def _hopper_or_newer(condition: str, rocm_macros: frozenset[str]) -> bool:
    """False on ROCm, true for sm_90 (or sm_100) with CUDA 12.8, false for sm_89 (Ada)."""

    absent_on_nvidia, absent_on_rocm = _absences(rocm_macros)

    if evaluate_for(condition, {}, absent_on_rocm) != 0:
        return False
    if evaluate_for(condition, _ADA, absent_on_nvidia) != 0:
        return False
    return bool(
        evaluate_for(condition, _HOPPER, absent_on_nvidia)
        or evaluate_for(condition, _BLACKWELL, absent_on_nvidia)
    )


def _device_functions(src: KernelSource) -> Iterator[tuple[str, str, int, int]]:
    """(global or device, name, '{', '}') of each ``__global__``/``__device__`` function with a
    body; the functions defined inside another one's body are passed over."""
    code = src.code

    def name_of(m: re.Match[str], brace: int) -> str | None:
        heads = _CALLED_NAME_RE.finditer(code, m.end(), brace)
        return next((c.group(1) for c in heads if c.group(1) not in _ATTRIBUTES), None)

    def named(m: re.Match[str], brace: int) -> bool:
        return name_of(m, brace) is not None

    for m, brace, close_at in function_bodies(code, src.brackets, _QUALIFIER_RE, named):
        name = name_of(m, brace)
        if name is not None:  # always: `named` kept only such functions
            yield m.group(1), name, brace, close_at


def _inside(spans: list[tuple[int, int, str]] | list[tuple[int, int]], pos: int) -> bool:
    return any(span[0] <= pos < span[1] for span in spans)


def _left_to_rocm(code: str, start: int, end: int, guards: list[tuple[int, int, str]]) -> bool:
    """Does ROCm compile more than error stubs in ``code[start:end]``, the Blackwell branches
    (``guards``) and the conditional directive lines taken out?"""
    pieces: list[str] = []
    at = start
    for g_start, g_end, _ in guards:
        if g_end <= at or g_start >= end:
            continue
        pieces.append(code[at:g_start])
        at = max(at, g_end)
    if at < end:
        pieces.append(code[at:end])
    left = _DIRECTIVE_LINE_RE.sub("", "".join(pieces))
    return bool(_STUB_RE.sub("", left).strip(" \t\r\n;{}"))


def _called_only_inside(
    code: str,
    name: str,
    own: tuple[int, int],
    guards: list[tuple[int, int, str]],
    bodies: list[tuple[int, int]],
) -> bool:
    """Is ``name`` used in the file, and only inside Blackwell branches or device bodies?"""
    used = False
    for m in re.finditer(rf"\b{re.escape(name)}\b", code):
        pos = m.start()
        if own[0] <= pos <= own[1] or _on_directive(code, pos):
            continue
        if pos < own[0] and not _STATEMENT_END_RE.search(code, m.end(), own[0]):
            continue  # the definition's own name, just before its body
        if not (_inside(guards, pos) or _inside(bodies, pos)):
            return False
        used = True
    return used
