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
(MXFP8, NVFP4) out or writes its own kernels, one decision for the file.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from gpuport.findings import Category, Confidence, Finding, Severity
from gpuport.rules import rule
from gpuport.scan.kernels.arch_branches import arch_test
from gpuport.scan.kernels.brackets import match_forward
from gpuport.scan.kernels.references import COMPOSABLE_KERNEL, HIPBLASLT
from gpuport.scan.kernels.source import KernelSource, directive_line_start
from gpuport.scan.kernels.words import words
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
    in a file with no kernel, whose every device function is compiled only for Blackwell."""
    code = src.code
    if "__global__" not in code and "__device__" not in code:
        return
    guards = _blackwell_guards(src)
    if not guards:
        return
    kernels = functions = 0
    helpers: list[tuple[str, int, int]] = []  # (name, '{', '}') of helpers ROCm compiles
    bodies: list[tuple[int, int]] = []
    for kind, name, open_at, close_at in _device_functions(src):
        bodies.append((open_at, close_at))
        guarded = any(start < close_at and open_at < end for start, end, _ in guards)
        if not guarded or _left_to_rocm(code, open_at + 1, close_at, guards):
            if kind == "global":
                return  # a kernel ROCm compiles (or an empty one): not Blackwell-only
            helpers.append((name, open_at, close_at))
        else:
            kernels += kind == "global"
            functions += 1
    if kernels == 0 and (helpers or functions == 0):
        return  # a header of device functions: Blackwell-only when all of them are
    for name, open_at, close_at in helpers:
        if not _called_only_inside(code, name, (open_at, close_at), guards, bodies):
            return  # a helper other code may call: the file is not only its Blackwell kernels
    start, _end, condition = guards[0]
    shown = " ".join(condition.split())
    expanded = _expanded(src, condition, {}, 0) or condition
    if evaluate_for(expanded, _HOPPER, lambda name: False) == 0:
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


def _blackwell_guards(src: KernelSource) -> list[tuple[int, int, str]]:
    """(start, end, condition) of each ``#if``/``#elif`` branch a ROCm build reads as false
    and NVIDIA compilers compile only for sm_100+ or only with the CUDA 12.8 toolkit."""
    code = src.code
    found: list[tuple[int, int, str]] = []
    cache: dict[str, str | None] = {}
    for m in _CONDITIONAL_RE.finditer(code):
        if directive_line_start(code, m.start()) < 0:
            continue
        test = arch_test(code, m.start())
        if test is None or test.function_like:
            continue
        expanded = _expanded(src, test.condition, cache, 0)
        if expanded is not None and _blackwell_only(expanded, src.facts.rocm_macros):
            found.append((m.start(), test.body[1], test.condition))
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


def _blackwell_only(condition: str, rocm_macros: frozenset[str]) -> bool:
    """False on ROCm, true for sm_100 with CUDA 12.8, false for Hopper or an older toolkit."""

    def absent_on_nvidia(name: str) -> bool:
        return name in ROCM_DEFINED or name in rocm_macros or rocm_flag(name) is not False

    def absent_on_rocm(name: str) -> bool:
        return name in _TOOLKIT_NAMES or is_nvidia_only(name)

    if evaluate_for(condition, {}, absent_on_rocm) != 0:
        return False
    if not evaluate_for(condition, _BLACKWELL, absent_on_nvidia):
        return False
    return (
        evaluate_for(condition, _HOPPER, absent_on_nvidia) == 0
        or evaluate_for(condition, _OLDER_TOOLKIT, absent_on_nvidia) == 0
    )


def _device_functions(src: KernelSource) -> Iterator[tuple[str, str, int, int]]:
    """(global or device, name, '{', '}') of each ``__global__``/``__device__`` function with a
    body; the functions defined inside another one's body are passed over."""
    code = src.code
    last_end = -1
    for m in words(_QUALIFIER_RE, code):
        if m.start() < last_end:
            continue
        stop = _STATEMENT_END_RE.search(code, m.end())
        if stop is None or stop.group() != "{":
            continue
        head = code[m.end() : stop.start()]
        if "(" not in head or "=" in head.split("(", 1)[0]:
            continue  # a variable, not a function
        name = next(
            (c.group(1) for c in _CALLED_NAME_RE.finditer(head) if c.group(1) not in _ATTRIBUTES),
            None,
        )
        close_at = match_forward(src.brackets, stop.start(), len(code))
        if name is None or close_at < 0:
            continue
        last_end = close_at
        yield m.group(1), name, stop.start(), close_at


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
