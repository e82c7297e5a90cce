"""Which branch of a ``__CUDA_ARCH__`` test a ROCm build compiles, and whether that is porting work.

HIP-Clang never defines ``__CUDA_ARCH__``, so a version test reads on AMD as it reads for an
NVIDIA GPU below every version: ``#if __CUDA_ARCH__ >= 800`` takes its ``#else``, the path the
project already writes for Volta and Turing. That path is porting work only when it is not
code that runs: an error trap (``assert(false)``, ``__trap()``, ``NVTE_DEVICE_ERROR(...)``,
``#error``), or nothing at all where every current NVIDIA GPU compiles something. A test no
NVIDIA device compilation answers the way HIP does (``#ifdef __CUDA_ARCH__``: the device pass
reads as the host pass on AMD) or one only NVCC can answer (``__CUDA_ARCH_HAS_FEATURE__(...)``,
a preprocessor error on HIP-Clang) always is.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from gpuport.syntax.preprocessor import (
    ROCM_DEFINED,
    evaluate_for,
    evaluate_on_rocm,
    rocm_flag,
)

# NVIDIA device compilations compared with HIP's: plain targets (sm_90, not sm_90a, so the
# arch-specific and family macros are absent), from Pascal to Blackwell; "current" ones are
# the GPUs a project targets today (Ampere and newer).
NVIDIA_ARCHS: tuple[int, ...] = (600, 700, 750, 800, 860, 890, 900, 1000, 1200)
CURRENT_ARCHS: frozenset[int] = frozenset({800, 860, 890, 900, 1000, 1200})
# ...compiled by a current toolkit (CUDA 12.8): a test of its version reads as it does there.
_TOOLKIT: dict[str, int] = {
    "__CUDACC__": 1,
    "__NVCC__": 1,
    "__CUDACC_VER_MAJOR__": 12,
    "__CUDACC_VER_MINOR__": 8,
    "CUDA_VERSION": 12080,
    "CUDART_VERSION": 12080,
}
_ARCH_SPECIFIC = ("__CUDA_ARCH_SPECIFIC", "__CUDA_ARCH_FAMILY_SPECIFIC", "__CUDA_ARCH_FEAT_")
# CCCL's <nv/target> defines __CUDA_MINIMUM_ARCH__ as __CUDA_ARCH__ in an nvcc device pass (and
# from the arch list only under nvc++), and HIP-Clang defines neither: read it as __CUDA_ARCH__,
# which both compilers then answer as they answer a test of __CUDA_ARCH__ itself
# (https://github.com/NVIDIA/cccl, libcudacxx's nv/detail/__target_macros).
_MINIMUM_ARCH_RE = re.compile(r"\b__CUDA_MINIMUM_ARCH__\b")

_BRANCH_RE = re.compile(
    r"#[ \t]*(if|ifdef|ifndef|elif|elifdef|elifndef|else|endif)(?![A-Za-z0-9_])"
    r"((?:\\\r?\n|[^\r\n])*)"
)
_CONTINUATION_RE = re.compile(r"\\\r?\n")
_NAME_RE = re.compile(r"\s*([A-Za-z_]\w*)")
# A branch that stops the program: what HIP reaching it means is a failure, not a fallback.
_TRAP_RE = re.compile(
    r"\bassert\s*\(\s*\(?[^;]*?\b(?:false|0)\s*\)"
    r"|\b__trap\s*\(|\b__builtin_trap\b|\b__builtin_unreachable\b|\babort\s*\("
    r"|\b[A-Z][A-Z0-9_]*ERROR[A-Z0-9_]*\s*\(|\bthrow\b"
    r"|\bstatic_assert\s*\(\s*(?:false|0|!|sizeof)"
    r"|#[ \t]*error\b"
)
_ASM_TRAP_RE = re.compile(r"\"\s*trap\s*;")
_CONDITIONAL_LINE_RE = re.compile(
    r"^[ \t]*#[ \t]*(?:if|ifdef|ifndef|elif|elifdef|elifndef|else|endif)\b.*$", re.M
)
_LAUNCH_BOUNDS_ONLY_RE = re.compile(r"__launch_bounds__\s*\([^;{}]*\)")


def _absent_on_nvidia(rocm_macros: frozenset[str]) -> Callable[[str], bool]:
    def absent(name: str) -> bool:
        return (
            name in ROCM_DEFINED
            or name in rocm_macros
            or name == "__HIP_DEVICE_COMPILE__"
            or name.startswith(_ARCH_SPECIFIC)
            or rocm_flag(name) is not False
        )

    return absent


@dataclass(frozen=True, slots=True)
class ArchTest:
    """One ``#if``/``#elif`` of an architecture test and the code around it."""

    condition: str  # as an #if expression (``#ifdef X`` reads ``defined(X)``)
    body: tuple[int, int]  # the code the condition selects
    rest: tuple[int, int]  # the code of the branches after it, to the #endif
    function_like: bool  # the condition calls a macro (``__CUDA_ARCH_HAS_FEATURE__(...)``)


def arch_test(code: str, start: int) -> ArchTest | None:
    """The directive at ``start`` (its '#') with its branch and the branches after it; None
    when it is not an ``#if``-family line or its ``#endif`` is missing."""
    m = _BRANCH_RE.match(code, start)
    if m is None or m.group(1) in ("else", "endif"):
        return None
    keyword, argument = m.group(1), _CONTINUATION_RE.sub(" ", m.group(2))
    if keyword in ("ifdef", "ifndef", "elifdef", "elifndef"):
        name = _NAME_RE.match(argument)
        if name is None:
            return None
        negate = "!" if keyword.endswith("ndef") else ""
        condition = f"{negate}defined({name.group(1)})"
    else:
        condition = argument
    body_start = m.end()
    found = _groups(code).get(start)
    if found is None:
        return None  # not at the start of its line, or no #endif
    sibling, endif = found
    rest_start = sibling if sibling >= 0 else endif
    return ArchTest(
        condition,
        (body_start, rest_start),
        (rest_start, endif),
        re.search(r"[A-Za-z_]\w*\s*\(", condition.replace("defined", "")) is not None,
    )


@lru_cache(maxsize=4)
def _groups(code: str) -> dict[int, tuple[int, int]]:
    """Each conditional directive of ``code`` (its '#', at the start of its line) -> the next
    directive of its group (``#elif``/``#else``; -1 if none) and the group's ``#endif``.

    One pass over the file: finding each directive's ``#endif`` by scanning forward from it
    was quadratic on a file of nested ``#if`` lines (tests/test_adversarial_growth.py).
    """
    groups: dict[int, tuple[int, int]] = {}
    stack: list[list[int]] = []
    for d in _BRANCH_RE.finditer(code):
        line_start = code.rfind("\n", 0, d.start()) + 1
        if code[line_start : d.start()].strip():
            continue  # not at the start of its line
        word = d.group(1)
        if word in ("if", "ifdef", "ifndef"):
            stack.append([d.start()])
        elif word == "endif":
            if not stack:
                continue
            group = stack.pop()
            for at, directive in enumerate(group):
                following = group[at + 1] if at + 1 < len(group) else -1
                groups[directive] = (following, d.start())
        elif stack:
            stack[-1].append(d.start())
    return groups


def _code_of(code: str, span: tuple[int, int]) -> str:
    """The code in ``span`` without its conditional directive lines (``#define``s stay)."""
    return _CONDITIONAL_LINE_RE.sub("", code[span[0] : span[1]]).strip()


def rocm_fallback_is_sound(
    code: str, text: str, start: int, rocm_macros: frozenset[str] = frozenset()
) -> bool:
    """Does a ROCm build take, at the architecture test at ``start``, a branch that some NVIDIA
    GPU compiles too and that is sound: working code (the Volta/Turing path of a
    ``>= 800`` test, the modern path of a ``< 700`` workaround), or nothing where a current
    NVIDIA GPU also compiles nothing (a Hopper-only body), or nothing instead of a
    ``__launch_bounds__`` hint? False when it cannot be told."""
    test = arch_test(code, start)
    if test is None or test.function_like:
        return False
    if _records_the_arch(code, test):
        return True
    condition = _MINIMUM_ARCH_RE.sub("__CUDA_ARCH__", test.condition)
    on_rocm = evaluate_on_rocm(condition, rocm_macros)
    if on_rocm is None:
        return False
    hip = on_rocm != 0
    absent = _absent_on_nvidia(rocm_macros)
    same_as_hip: list[int] = []
    for arch in NVIDIA_ARCHS:
        value = evaluate_for(
            condition,
            {"__CUDA_ARCH__": arch, **_TOOLKIT},
            absent,
        )
        if value is not None and (value != 0) == hip:
            same_as_hip.append(arch)
    if not same_as_hip:
        return False  # no NVIDIA device compiles what HIP does here: a device-pass test
    taken, other = (test.body, test.rest) if hip else (test.rest, test.body)
    taken_code = _code_of(code, taken)
    if _TRAP_RE.search(taken_code) or _ASM_TRAP_RE.search(text, taken[0], taken[1]):
        return False
    if taken_code:
        return True
    if CURRENT_ARCHS.intersection(same_as_hip):
        return True
    other_code = _code_of(code, other)
    if _LAUNCH_BOUNDS_ONLY_RE.fullmatch(other_code) is not None:
        return True
    return _only_specialisations(other_code, code[:start])


_ARCH_WORD_RE = re.compile(r"\b__CUDA_ARCH__\b")
# Only #define lines: a value used in code (`return __CUDA_ARCH__;`) is reported, as a
# device-pass test; a macro's value is read where a later test uses it.
_DEFINES_ONLY_RE = re.compile(r"(?:#[ \t]*define\b[^#]*)+")


def _records_the_arch(code: str, test: ArchTest) -> bool:
    """Does the test only record the architecture: its NVIDIA branch ``#define``s a macro from
    ``__CUDA_ARCH__``'s value, and the other branch is that very code with 0 for it (``#ifdef __CUDA_ARCH__``
    ``current_arch = __CUDA_ARCH__`` ``#else`` ``current_arch = 0``)? Then HIP gets "no NVIDIA
    architecture", the value every later feature test of it wants on AMD: no porting work here
    (those tests are reported where they are made)."""
    body = " ".join(_code_of(code, test.body).split())
    if not _ARCH_WORD_RE.search(body) or not _DEFINES_ONLY_RE.fullmatch(body):
        return False
    return _ARCH_WORD_RE.sub("0", body) == " ".join(_code_of(code, test.rest).split())


_SPECIALISATION_RE = re.compile(r"template\s*<[^<>{};]*>\s*(?:struct|class)\s+(\w+)\s*<")


def _only_specialisations(body: str, before: str) -> bool:
    """Is ``body`` nothing but specialisations of class templates whose primary template the
    file defines (not only declares) before the test? Then leaving the body out is no gap: the primary template is
    the general path (mamba's sm80-only bf16 ``Converter<at::BFloat16, N>``, whose primary
    converts element by element)."""
    at = 0
    names: set[str] = set()
    while at < len(body):
        m = _SPECIALISATION_RE.match(body, at)
        if m is None:
            return False
        open_at = body.find("{", m.end())
        if open_at < 0:
            return False
        depth = 0
        close_at = -1
        for i in range(open_at, len(body)):
            if body[i] == "{":
                depth += 1
            elif body[i] == "}":
                depth -= 1
                if depth == 0:
                    close_at = i
                    break
        if close_at < 0:
            return False
        end = body.find(";", close_at)
        if end < 0 or body[close_at + 1 : end].strip():
            return False
        names.add(m.group(1))
        at = end + 1
        while at < len(body) and body[at].isspace():
            at += 1
    return bool(names) and all(
        re.search(rf"template\s*<[^<>{{}};]*>\s*(?:struct|class)\s+{re.escape(n)}\s*[{{:]", before)
        for n in names
    )
