"""Which parts of a C/C++/CUDA file the HIP compiler for AMD compiles: ``#if`` stacks in three-valued logic.

:func:`conditions` reads a file's ``code_only`` text (comments and literals blanked, offsets
kept; :func:`gpuport.syntax.cxx.code_only`) once, directive by directive, and says for every
region whether a ROCm build compiles it: yes, no, or cannot tell (unknown). Unknown is live:
only what ROCm *never* compiles is dead. Conditions are evaluated as HIP-Clang targeting AMD
sees them:

- defined (and 1): the HIP platform macros HIP-Clang and the HIP headers define, the project's
  own ROCm macros (``ProjectFacts.rocm_macros``), and names whose underscore-separated words
  say ROCm/HIP/AMD (``USE_ROCM``, ``BUILD_HIP``, ``GGML_USE_HIP``, ``IS_ROCM``);
- never defined (0 in ``#if``): the NVCC and NVIDIA-platform macros (``__CUDA_ARCH__``,
  ``__NVCC__``, ``__CUDACC_VER_MAJOR__``, ``__HIP_PLATFORM_NVIDIA__``, ``__CUDA_ARCH_FEAT_*``);
- defined and 0: macros a project header defines as a test of the CUDA toolkit's version
  (``#define FP4_TYPE_SUPPORTED (CUDA_VERSION >= 12080)``, :func:`zero_on_rocm`), passed in;
- anything else, and anything the evaluator cannot parse, is unknown.

The file's own ``#define``/``#undef`` lines are followed in order (a macro defined in a region
ROCm may or may not compile is unknown from there on). Linear in the file's size: one regex
pass over the directives, and each condition is parsed once.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

# Three-valued truth: True (always on ROCm), False (never on ROCm), None (cannot tell).
Truth = bool | None

# HIP-Clang's own macros: clang defines __HIP__ and __HIPCC__ for every HIP compilation and
# __HIP_DEVICE_COMPILE__ only in the device pass, and never __CUDA_ARCH__ or __CUDA__ for HIP
# (clang/lib/Frontend/InitPreprocessor.cpp, https://reviews.llvm.org/D45441); the HIP headers
# define __HIP_PLATFORM_AMD__ (and the older __HIP_PLATFORM_HCC__) on AMD
# (https://rocm.docs.amd.com/projects/HIP/en/docs-5.7.0/user_guide/hip_porting_guide.html,
# "Compiler defines: summary"). USE_ROCM is what PyTorch's extension builder passes on ROCm.
ROCM_DEFINED: frozenset[str] = frozenset(
    {"__HIP_PLATFORM_AMD__", "__HIP_PLATFORM_HCC__", "__HIPCC__", "__HIP__", "USE_ROCM"}
)
# Defined on the device pass only: a ROCm build compiles both sides of a test of it.
ROCM_UNKNOWN: frozenset[str] = frozenset(
    {
        "__HIP_DEVICE_COMPILE__",
        # HIP-Clang does not define __CUDACC__ (the porting guide's table), but hipify tools
        # rewrite it to __HIPCC__ and many projects define it in their ROCm build: unknown.
        "__CUDACC__",
    }
)
# Never defined when HIP-Clang compiles for AMD (same sources): NVCC's own macros, the NVIDIA
# HIP platform, and the NVIDIA architecture macros.
NVIDIA_ONLY: frozenset[str] = frozenset(
    {
        "__CUDA_ARCH__",
        "__CUDA__",
        "__NVCC__",
        "__CUDACC_VER_MAJOR__",
        "__CUDACC_VER_MINOR__",
        "__CUDACC_VER_BUILD__",
        "__CUDACC_RDC__",
        "__CUDACC_EWP__",
        "__CUDACC_DEBUG__",
        "__CUDACC_RTC__",
        "__CUDA_ARCH_LIST__",
        "__CUDA_ARCH_SPECIFIC__",
        "__CUDA_ARCH_FAMILY_SPECIFIC__",
        "__HIP_PLATFORM_NVIDIA__",
        "__HIP_PLATFORM_NVCC__",
        "__NVCOMPILER",
        "__CUDA_ARCH_HAS_FEATURE__",
    }
)
_NVIDIA_PREFIXES = ("__CUDA_ARCH_FEAT_", "__CUDA_ARCH_SPECIFIC_", "__CUDA_ARCH_FAMILY_SPECIFIC_")
_ROCM_WORDS = frozenset({"ROCM", "HIP", "AMD", "HCC", "HIPCC"})
_NOT_ROCM_WORDS = frozenset(
    {"NVIDIA", "NVCC", "CUDA", "NO", "NOT", "DISABLE", "DISABLED", "WITHOUT", "SKIP", "NON"}
)


def is_nvidia_only(name: str) -> bool:
    """Is ``name`` a macro that HIP-Clang compiling for AMD never defines?"""
    return name in NVIDIA_ONLY or name.startswith(_NVIDIA_PREFIXES)


def rocm_flag(name: str) -> Truth:
    """What a macro named like a ROCm switch holds on ROCm: True when it is a yes/no flag
    (``USE_ROCM``, ``BUILD_HIP``, ``__HIP_PLATFORM_AMD__``: the ROCm word ends the name), None
    when it is some other ROCm value (``HIP_VERSION``, ``__HIP_ARCH_HAS_DOUBLES__``), False when
    the name does not say ROCm/HIP/AMD or says "not" (``NO_HIP``, ``__HIP_PLATFORM_NVIDIA__``)."""
    words = [w for w in name.upper().split("_") if w]
    if not words or not _ROCM_WORDS.intersection(words) or _NOT_ROCM_WORDS.intersection(words):
        return False
    return True if words[-1] in _ROCM_WORDS else None


_IDENTIFIER_RE = re.compile(r"[A-Za-z_]\w*")
_CUDA_NAME_RE = re.compile(r"__[a-z]|cuda[A-Z]|cu[A-Z]|warpSize$")


def names_rocm_macro(text: str, rocm_macros: frozenset[str] = frozenset()) -> bool:
    """Does ``text`` (a condition) name a macro a ROCm build defines: the HIP platform's, the
    project's own, or one named for ROCm (``USE_ROCM``, ``BUILD_HIP``)?"""
    for m in _IDENTIFIER_RE.finditer(text):
        name = m.group()
        if name in ROCM_DEFINED or name in rocm_macros or rocm_flag(name) is not False:
            return True
    return False


@dataclass(frozen=True, slots=True)
class Define:
    """One ``#define`` of the file, with where it stands and whether ROCm compiles it."""

    name: str
    params: tuple[str, ...] | None  # None: object-like
    body: str
    offset: int  # of the '#'
    compiled: Truth  # True: a ROCm build always sees it; None: it may; never False (not kept)
    rocm_branch: bool  # inside a condition that only ROCm takes (#if USE_ROCM, #ifdef __HIPCC__)


# A directive's '#': whether it opens its line is checked in code (as source.py does for
# #include), since ``^`` in MULTILINE mode is tried at every offset by Python's engine.
_DIRECTIVE_RE = re.compile(
    r"#[ \t]*(if|ifdef|ifndef|elif|elifdef|elifndef|else|endif|define|undef)(?![A-Za-z0-9_])"
    r"((?:\\\r?\n|\\\r|[^\r\n])*+)"
)
_CONDITIONAL_RE = re.compile(r"#[ \t]*(?:if|el)")
_DEFINE_RE = re.compile(r"\s*([A-Za-z_]\w*)(\(([^)]*)\))?(.*)", re.DOTALL)
_CONTINUATION_RE = re.compile(r"\\\r?\n|\\\r")
_NAME_RE = re.compile(r"\s*([A-Za-z_]\w*)")
_TOKEN_RE = re.compile(
    r"\s*(?:(?P<num>0[xX][0-9a-fA-F']+|0[bB][01']+|[0-9][0-9']*)[uUlL]*"
    r"|(?P<name>[A-Za-z_]\w*)"
    r"|(?P<op>&&|\|\||==|!=|<=|>=|<<|>>|[-+*/%<>!~&|^?:(),]))"
)
_MAX_EXPANSION_DEPTH = 8


def has_conditionals(code: str) -> bool:
    """Whether the code has an ``#if``-family directive: without one everything is compiled."""
    return _CONDITIONAL_RE.search(code) is not None


# A condition can only be decided with a name of these in it (or a macro of the project's):
# files whose #if tests are all include guards and feature switches of their own skip the read.
_DECIDABLE_RE = re.compile(r"__CUDA|__NVCC|__NVCOMPILER|HIP|ROCM|AMD|HCC")


def can_matter(code: str, project_macros: frozenset[str] = frozenset()) -> bool:
    """Whether reading the directives of ``code`` can find a branch ROCm never compiles: it has
    an ``#if``-family directive and names a macro whose value on ROCm is known."""
    if not has_conditionals(code):
        return False
    if _DECIDABLE_RE.search(code) is not None:
        return True
    return any(name in code for name in project_macros)


def _opens_line(code: str, pos: int) -> bool:
    while pos > 0 and code[pos - 1] in " \t":
        pos -= 1
    return pos == 0 or code[pos - 1] in "\r\n"


class Conditions:
    """The regions of one file a ROCm build never compiles, and the file's ``#define``s."""

    __slots__ = (
        "_ends",
        "_rocm_only_at",
        "_rocm_only_from",
        "_starts",
        "cuda_only_macros",
        "defines",
        "directives",
    )

    def __init__(
        self,
        dead: list[tuple[int, int]],
        defines: list[Define],
        directives: int,
        cuda_only_macros: frozenset[str] = frozenset(),
        rocm_only: tuple[list[int], list[bool]] = ([], []),
    ):
        self._starts = [s for s, _ in dead]
        self._ends = [e for _, e in dead]
        # where the "every ROCm build compiles this, and no CUDA build does" state changes
        self._rocm_only_from, self._rocm_only_at = rocm_only
        self.defines = defines
        self.directives = directives
        # macros the file defines only where ROCm never looks (`#if __CUDA_ARCH__ >= 530`
        # `#define PTX_AVAILABLE`): other files' `#ifdef PTX_AVAILABLE` is dead on ROCm too
        self.cuda_only_macros = cuda_only_macros

    @property
    def dead(self) -> list[tuple[int, int]]:
        """(start, end) offsets of the regions ROCm never compiles, in order, disjoint."""
        return list(zip(self._starts, self._ends, strict=True))

    def is_dead(self, offset: int) -> bool:
        """Does a ROCm build never compile the code at ``offset``?"""
        i = bisect.bisect_right(self._starts, offset) - 1
        return i >= 0 and offset < self._ends[i]

    def rocm_only(self, offset: int) -> bool:
        """Is the code at ``offset`` in a branch that every ROCm build compiles and no CUDA build
        does (``#ifdef __HIP_PLATFORM_AMD__``, ``#else`` of ``#ifndef USE_ROCM``), with no test
        of the GPU target (``__GFX9__``, ``__gfx90a__``) between?"""
        i = bisect.bisect_right(self._rocm_only_from, offset) - 1
        return i >= 0 and self._rocm_only_at[i]

    def rocm_aliases(self) -> frozenset[str]:
        """CUDA names the file redefines for ROCm, in a branch only ROCm compiles
        (``#define __shfl_xor_sync(mask, var, lane) __shfl_xor(var, lane)`` under USE_ROCM):
        compiler intrinsics (``__*``), runtime names (``cuda*``, ``cu*``) and ``warpSize``."""
        return frozenset(
            d.name
            for d in self.defines
            if d.rocm_branch and d.compiled is not False and _CUDA_NAME_RE.match(d.name)
        )


@dataclass(slots=True)
class _Frame:
    parent: Truth  # whether the region around the #if is compiled
    taken: Truth  # whether an earlier branch of this #if was taken on ROCm
    current: Truth  # whether the current branch is compiled on ROCm
    cuda_taken: Truth  # whether an earlier branch was taken on a CUDA build
    outer_rocm_only: bool  # the region around the #if is one only ROCm compiles


class _Macros:
    """The macro environment while the directives are read in order."""

    def __init__(
        self,
        rocm_macros: frozenset[str],
        local: dict[str, tuple[str | None, bool]] | None = None,
        *,
        cuda: bool = False,
        never_defined: frozenset[str] = frozenset(),
        zero: frozenset[str] = frozenset(),
    ) -> None:
        self.rocm_macros = rocm_macros
        self.never_defined = never_defined
        self.zero = zero  # defined, and 0, on ROCm (a project header's toolkit-version test)
        # name -> (body, certain); certain=False: defined or undefined in a maybe-region
        self.local: dict[str, tuple[str | None, bool]] = {} if local is None else local
        # CUDA's point of view instead: the ROCm macros undefined, the NVIDIA ones unknown
        self.cuda = cuda

    def _rocm(self, name: str) -> bool:
        return name in ROCM_DEFINED or name in self.rocm_macros or rocm_flag(name) is not False

    def defined(self, name: str) -> Truth:
        local = self.local.get(name)
        if local is not None:
            body, certain = local
            return (body is not None) if certain else None
        if self.cuda:
            return False if self._rocm(name) else None
        if name in self.never_defined:
            return False
        if name in ROCM_DEFINED or name in self.rocm_macros or name in self.zero:
            return True
        if name in ROCM_UNKNOWN:
            return None
        if is_nvidia_only(name):
            return False
        return True if rocm_flag(name) is not False else None

    def value(self, name: str, depth: int) -> int | None:
        local = self.local.get(name)
        if local is not None:
            body, certain = local
            if not certain:
                return None
            if body is None:
                return 0
            if not self.cuda and zero_on_rocm(body):  # `#define FP4_OK (CUDA_VERSION >= 12080)`
                return 0
            if depth >= _MAX_EXPANSION_DEPTH:
                return None
            return evaluate(body, self, depth + 1)
        if self.cuda:
            return 0 if self._rocm(name) else None
        if name in self.never_defined or name in self.zero:
            return 0
        if name in ROCM_DEFINED or name in self.rocm_macros:
            return 1
        if name in ROCM_UNKNOWN:
            return None
        if is_nvidia_only(name):
            return 0
        return 1 if rocm_flag(name) is True else None


class _ParseError(Exception):
    pass


def _tokens(expr: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    n = len(expr)
    while pos < n:
        m = _TOKEN_RE.match(expr, pos)
        if m is None:
            if expr[pos:].strip():
                raise _ParseError(expr[pos:])
            break
        kind = m.lastgroup
        assert kind is not None
        out.append((kind, m.group(kind)))
        pos = m.end()
    return out


def _and(a: int | None, b: int | None) -> int | None:
    if a == 0 or b == 0:
        return 0
    return None if a is None or b is None else 1


def _or(a: int | None, b: int | None) -> int | None:
    if (a is not None and a != 0) or (b is not None and b != 0):
        return 1
    return None if a is None or b is None else 0


_BINARY: dict[str, tuple[int, Callable[[int, int], int]]] = {
    "*": (10, lambda a, b: a * b),
    "/": (10, lambda a, b: int(a / b)),
    "%": (10, lambda a, b: a - b * int(a / b)),
    "+": (9, lambda a, b: a + b),
    "-": (9, lambda a, b: a - b),
    "<<": (8, lambda a, b: a << b if 0 <= b < 64 else 0),
    ">>": (8, lambda a, b: a >> b if 0 <= b < 64 else 0),
    "<": (7, lambda a, b: int(a < b)),
    ">": (7, lambda a, b: int(a > b)),
    "<=": (7, lambda a, b: int(a <= b)),
    ">=": (7, lambda a, b: int(a >= b)),
    "==": (6, lambda a, b: int(a == b)),
    "!=": (6, lambda a, b: int(a != b)),
    "&": (5, lambda a, b: a & b),
    "^": (4, lambda a, b: a ^ b),
    "|": (3, lambda a, b: a | b),
}
_LOGICAL = {"&&": 2, "||": 1}


class _Parser:
    """Precedence climbing over an ``#if`` expression; values are ints or None (unknown)."""

    def __init__(self, tokens: list[tuple[str, str]], macros: _Macros, depth: int) -> None:
        self.tokens = tokens
        self.pos = 0
        self.macros = macros
        self.depth = depth

    def peek(self) -> str | None:
        return self.tokens[self.pos][1] if self.pos < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        if self.pos >= len(self.tokens):
            raise _ParseError("unexpected end")
        token = self.tokens[self.pos]
        self.pos += 1
        return token

    def expect(self, text: str) -> None:
        if self.take()[1] != text:
            raise _ParseError(text)

    def skip_call(self) -> None:
        """Step over a parenthesised argument list (a function-like macro's, __has_include's)."""
        self.expect("(")
        depth = 1
        while depth:
            text = self.take()[1]
            depth += {"(": 1, ")": -1}.get(text, 0)

    def expression(self, min_prec: int = 0) -> int | None:
        left = self.unary()
        while True:
            op = self.peek()
            if op == "?" and min_prec == 0:
                self.take()
                yes = self.expression()
                self.expect(":")
                no = self.expression()
                left = (yes if yes == no else None) if left is None else (yes if left else no)
                continue
            if op in _LOGICAL:
                prec = _LOGICAL[op]
                if prec < min_prec:
                    return left
                self.take()
                right = self.expression(prec + 1)
                left = _and(left, right) if op == "&&" else _or(left, right)
                continue
            if op not in _BINARY:
                return left
            prec, fn = _BINARY[op]
            if prec < min_prec:
                return left
            self.take()
            right = self.expression(prec + 1)
            if left is None or right is None or (op in "/%" and right == 0):
                left = None
            else:
                left = fn(left, right)

    def unary(self) -> int | None:
        kind, text = self.take()
        if text == "(":
            value = self.expression()
            self.expect(")")
            return value
        if text in ("!", "-", "+", "~"):
            value = self.unary()
            if value is None:
                return None
            return {"!": int(not value), "-": -value, "+": value, "~": ~value}[text]
        if kind == "num":
            digits = text.replace("'", "")
            return int(digits, 0) if not re.fullmatch(r"0[0-7]+", digits) else int(digits, 8)
        if kind != "name":
            raise _ParseError(text)
        if text == "defined":
            paren = self.peek() == "("
            if paren:
                self.take()
            kind, name = self.take()
            if kind != "name":
                raise _ParseError(name)
            if paren:
                self.expect(")")
            truth = self.macros.defined(name)
            return None if truth is None else int(truth)
        if text in ("true", "false"):
            return int(text == "true")
        if self.peek() == "(":  # a function-like macro or __has_include(...): cannot tell
            self.skip_call()
            # ...unless NVCC's own: __CUDA_ARCH_HAS_FEATURE__(SM90_ALL) is not there on ROCm
            return 0 if is_nvidia_only(text) and not self.macros.cuda else None
        return self.macros.value(text, self.depth)


def evaluate(expr: str, macros: _Macros, depth: int = 0) -> int | None:
    """The value of an ``#if`` expression on ROCm, or None when it cannot be told."""
    try:
        parser = _Parser(_tokens(expr), macros, depth)
        if not parser.tokens:
            return None
        value = parser.expression()
        if parser.pos != len(parser.tokens):
            return None
    except (_ParseError, ValueError, OverflowError, RecursionError):
        return None
    return value


class _Target(_Macros):
    """One NVIDIA compilation's macros: ``defined`` names with their values, ``undefined`` ones
    absent, every other name unknown (and every function-like macro call unknown)."""

    def __init__(self, defined: dict[str, int], undefined: Callable[[str], bool]) -> None:
        super().__init__(frozenset(), cuda=True)
        self.values = defined
        self.absent = undefined

    def defined(self, name: str) -> Truth:
        if name in self.values:
            return True
        return False if self.absent(name) else None

    def value(self, name: str, depth: int) -> int | None:
        if name in self.values:
            return self.values[name]
        return 0 if self.absent(name) else None


def evaluate_for(
    expr: str, defined: dict[str, int], undefined: Callable[[str], bool]
) -> int | None:
    """The value of an ``#if`` expression in a compilation where the ``defined`` macros hold
    the values given and those ``undefined`` says so are absent; None when it cannot be told
    (another name, or a function-like macro, decides it)."""
    return evaluate(expr, _Target(defined, undefined))


def evaluate_on_rocm(expr: str, rocm_macros: frozenset[str] = frozenset()) -> int | None:
    """The value of an ``#if`` expression as HIP-Clang for AMD reads it (the file's own
    ``#define``s aside), or None when it cannot be told."""
    return evaluate(expr, _Macros(rocm_macros))


# CUDA toolkit versions: HIP never defines them (kb/cuda_hip_extra.toml), and torch's hipify
# renames CUDA_VERSION to TORCH_HIP_VERSION, which is major * 100 + minor (ROCm 7.0: 700).
_TOOLKIT_VERSIONS = frozenset({"CUDA_VERSION", "CUDART_VERSION"})
_HIPIFIED_VERSION = 700


def zero_on_rocm(body: str) -> bool:
    """Is an object-like macro with this body 0 on ROCm because it tests the CUDA toolkit's
    version (TransformerEngine's ``#define FP4_TYPE_SUPPORTED (CUDA_VERSION >= 12080)``)?

    True only when the body names a toolkit version and reads 0 both with that version absent
    (HIP-Clang) and with it hipified to a ROCm version; any other name in it must be one HIP
    never defines. ``#if NAME`` is then false on ROCm, while ``#ifdef NAME`` stays true."""
    names = set(_IDENTIFIER_RE.findall(body))
    if not names & _TOOLKIT_VERSIONS:
        return False
    absent = is_nvidia_only
    for versions in ({}, dict.fromkeys(_TOOLKIT_VERSIONS, _HIPIFIED_VERSION)):
        if evaluate_for(body, versions, lambda n: n in _TOOLKIT_VERSIONS or absent(n)) != 0:
            return False
    return True


def _truth(value: int | None) -> Truth:
    return None if value is None else value != 0


def _and3(a: Truth, b: Truth) -> Truth:
    if a is False or b is False:
        return False
    return None if a is None or b is None else True


def _not3(a: Truth) -> Truth:
    return None if a is None else not a


def _or3(a: Truth, b: Truth) -> Truth:
    if a is True or b is True:
        return True
    return None if a is None or b is None else False


def _directives(code: str) -> Iterator[tuple[int, int, str, str]]:
    """(start, end, keyword, argument with continuations joined) of every directive line."""
    if "#" not in code:
        return
    for m in _DIRECTIVE_RE.finditer(code):
        if _opens_line(code, m.start()):
            yield m.start(), m.end(), m.group(1), _CONTINUATION_RE.sub(" ", m.group(2))


def _next_line(code: str, end: int) -> int:
    """The offset past the line break that ends a directive (at ``end``)."""
    if code.startswith("\r\n", end):
        return end + 2
    return end + 1 if end < len(code) else end


def _condition(keyword: str, argument: str, macros: _Macros) -> Truth:
    if keyword in ("ifdef", "ifndef", "elifdef", "elifndef"):
        m = _NAME_RE.match(argument)
        if m is None:
            return None
        defined = macros.defined(m.group(1))
        return defined if keyword in ("ifdef", "elifdef") else _not3(defined)
    return _truth(evaluate(argument, macros))


_NOT_DEFINED_RE = re.compile(r"\s*!\s*defined\s*\(?\s*([A-Za-z_]\w*)\s*\)?\s*$")


def _include_guard(code: str) -> str | None:
    """The include guard's name when the file opens with ``#ifndef X`` (or ``#if !defined(X)``)
    and ``#define X`` right after: its test is true on first inclusion, whatever X is called.

    Without this a guard named for HIP (``#ifndef _hip_compat_cuh``) would read as a ROCm
    switch that is defined, and the whole header as code ROCm never compiles."""
    guard: str | None = None
    for _start, _end, keyword, argument in _directives(code):
        if guard is None:
            m = (
                _NAME_RE.match(argument)
                if keyword == "ifndef"
                else _NOT_DEFINED_RE.match(argument)
                if keyword == "if"
                else None
            )
            if m is None:
                return None
            guard = m.group(1)
            continue
        m = _NAME_RE.match(argument) if keyword == "define" else None
        return guard if m is not None and m.group(1) == guard else None
    return None


def conditions(
    code: str,
    rocm_macros: frozenset[str] = frozenset(),
    never_defined: frozenset[str] = frozenset(),
    zero: frozenset[str] = frozenset(),
) -> Conditions:
    """Read the directives of ``code`` (``code_only`` text) as a ROCm build would.

    ``never_defined``: macros the project defines only in branches ROCm never compiles (the
    :attr:`Conditions.cuda_only_macros` of its headers), undefined here unless the file
    defines them itself. ``zero``: macros its headers define as a CUDA toolkit-version test
    (:func:`zero_on_rocm`): defined, and 0, here unless the file defines them itself."""
    macros = _Macros(rocm_macros, never_defined=never_defined, zero=zero)
    cuda_only: set[str] = set()
    cuda_macros = _Macros(rocm_macros, macros.local, cuda=True)
    stack: list[_Frame] = []
    dead: list[tuple[int, int]] = []
    defines: list[Define] = []
    region: Truth = True  # whether the code here is compiled
    rocm_only = False  # the code here is in a branch only ROCm takes
    dead_from = -1  # where the current dead stretch began
    count = 0
    rocm_only_from: list[int] = []
    rocm_only_at: list[bool] = []
    guarded = _include_guard(code) is not None

    def set_region(state: Truth, at: int) -> None:
        nonlocal region, dead_from
        always_rocm_only = state is True and rocm_only
        if rocm_only_from and rocm_only_from[-1] == at:
            rocm_only_at[-1] = always_rocm_only
        elif (rocm_only_at[-1] if rocm_only_at else False) != always_rocm_only:
            rocm_only_from.append(at)
            rocm_only_at.append(always_rocm_only)
        if state is False and dead_from < 0:
            dead_from = at
        elif state is not False and dead_from >= 0:
            if at > dead_from:
                dead.append((dead_from, at))
            dead_from = -1
        region = state

    for start, end, keyword, argument in _directives(code):
        count += 1
        if keyword in ("define", "undef"):
            if region is not False:
                _define(keyword, argument, start, region, rocm_only, macros, defines)
            elif keyword == "define" and (m := _NAME_RE.match(argument)) is not None:
                # defined only where ROCm never looks (`#ifndef USE_ROCM` `#define BF16_OK`):
                # undefined on ROCm, unless the file defines it elsewhere too
                macros.local.setdefault(m.group(1), (None, True))
                cuda_only.add(m.group(1))
            continue
        if keyword in ("if", "ifdef", "ifndef"):
            frame = _Frame(region, False, region, False, rocm_only)
            stack.append(frame)
        elif not stack:
            continue  # an #else or #endif without its #if: leave the region as it is
        else:
            frame = stack[-1]
        if keyword == "endif":
            stack.pop()
            rocm_only = frame.outer_rocm_only
            set_region(frame.parent, start)
            continue
        # An #elif line is read only when its #if's region is compiled and no branch before
        # it was surely taken; an #elif after a taken branch is not porting work either.
        line_state = _and3(frame.parent, _not3(frame.taken))
        if keyword not in ("if", "ifdef", "ifndef"):
            set_region(line_state, start)
        if keyword == "else" or (guarded and count == 1):
            cond: Truth = True  # an #else, or the include guard's test on first inclusion
            cuda_cond: Truth = True
        elif line_state is False:
            cond = cuda_cond = False
        else:
            cond = _condition(keyword, argument, macros)
            cuda_cond = _condition(keyword, argument, cuda_macros)
        frame.current = _and3(line_state, cond)
        cuda_branch = _and3(_not3(frame.cuda_taken), cuda_cond)
        frame.taken = _or3(frame.taken, cond)
        frame.cuda_taken = _or3(frame.cuda_taken, cuda_cond)
        rocm_only = frame.outer_rocm_only or (frame.current is not False and cuda_branch is False)
        set_region(frame.current, _next_line(code, end))
    if 0 <= dead_from < len(code):
        dead.append((dead_from, len(code)))
    live = {d.name for d in defines}
    return Conditions(
        dead, defines, count, frozenset(cuda_only - live), (rocm_only_from, rocm_only_at)
    )


def _define(
    keyword: str,
    argument: str,
    start: int,
    region: Truth,
    rocm_only: bool,
    macros: _Macros,
    defines: list[Define],
) -> None:
    """Remember a ``#define`` or ``#undef`` read in a region ROCm compiles (surely or maybe)."""
    m = _DEFINE_RE.match(argument)
    if m is None:
        return
    name = m.group(1)
    if keyword == "undef":
        macros.local[name] = (None, region is True)
        return
    params = None
    if m.group(2) is not None:  # `NAME(` with no space: function-like
        params = tuple(p.strip() for p in m.group(3).split(",") if p.strip())
        body = m.group(4).strip()
    else:
        body = argument[m.end(1) :].strip()
    # a function-like macro has no value in #if: an empty body there makes it unknown-ish 0
    macros.local[name] = (body if params is None else "", region is True)
    defines.append(Define(name, params, body, start, region, rocm_only))
