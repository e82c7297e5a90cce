"""CUDA names a project's compat header redefines for ROCm, from a small directive-stack walk.

``#if defined(USE_ROCM)`` / ``#define __shfl_xor_sync(mask, v, l) __shfl_xor(v, l)`` means that
the project maps the name itself under HIP: a scanner need not report it. Conditions are
evaluated as the ROCm build sees them: ROCm names (``__HIP_PLATFORM_AMD__``, ``USE_ROCM``, the
project's own ROCm macros, and names a ROCm branch defines, like bitsandbytes' ``BNB_HIP``) are
1, every other name is 0 (undefined, as ``__CUDA_ARCH__`` is under HIP). This is not the
kernel scanner's preprocessor: it only answers "which names does a ROCm branch #define".
"""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable, Iterable

from gpuport.project.survey import Survey
from gpuport.project.texts import HEADER_BUDGET, HEADER_BYTES, ProjectTexts

# The CUDA names worth knowing about: warp intrinsics (__shfl_*_sync, __ballot_sync,
# __any_sync, __all_sync, __activemask, __syncwarp), CUDA runtime and library names (cuda*,
# cublas*, cusparse*, CUDART_*), and warpSize.
CUDA_NAME_RE = re.compile(
    r"^(?:__\w+_sync|__activemask|__syncwarp|cuda[A-Z_]\w*|cu(?:blas|sparse|rand|fft|solver)\w*"
    r"|CUDART_\w+|CUBLAS_\w+|warpSize)$"
)
# One search of the bytes before a header is decoded: it must #define one of these names.
_DEFINES_CUDA_NAME_RE = re.compile(
    rb"#[ \t]*define[ \t]+(?:__\w+_sync\b|__activemask\b|__syncwarp\b|cuda[A-Z_]"
    rb"|cu(?:blas|sparse|rand|fft|solver)|CUDART_|CUBLAS_|warpSize\b)"
)
_DIRECTIVE_RE = re.compile(r"^\s*#\s*(\w+)\s*(.*)$")
_DEFINE_RE = re.compile(r"([A-Za-z_]\w*)(\([^)]*\))?\s*(.*)$")
_ROCM_NAME_RE = re.compile(r"HIP|ROCM|ROCm|AMDGPU|__HIPCC__")
_DEFINED_RE = re.compile(r"\bdefined\s*\(\s*(\w+)\s*\)|\bdefined\s+(\w+)")
_IDENT_RE = re.compile(r"\b[A-Za-z_]\w*\b")
_INT_RE = re.compile(r"\b(\d+)[uUlL]*\b")


def rocm_aliases(
    texts: ProjectTexts,
    found: Survey,
    rocm_macros: frozenset[str],
    own: Callable[[str], bool] = lambda rel: True,
) -> tuple[frozenset[str], list[str]]:
    """CUDA names the project's headers #define in a ROCm branch, and the headers that do.

    Only headers ``own`` accepts are read (the project's own code, not vendored copies).
    """
    names: set[str] = set()
    where: list[str] = []
    spent = 0
    for rel in found.headers:
        if spent >= HEADER_BUDGET:
            break
        if not own(rel):
            continue
        data = texts.data(rel, HEADER_BYTES)
        if data is None:
            continue
        spent += len(data)
        if not _DEFINES_CUDA_NAME_RE.search(data):
            continue
        found_here = header_aliases(data.decode("utf-8", "replace"), rocm_macros)
        if found_here:
            names |= found_here
            where.append(rel)
    return frozenset(names), where


def header_aliases(text: str, rocm_macros: Iterable[str] = ()) -> frozenset[str]:
    """The CUDA names ``text`` #defines inside a branch that only the ROCm build compiles."""
    rocm_names = set(rocm_macros)
    values: dict[str, int] = {}
    # Each open #if: (this branch is taken under ROCm, some branch was taken, ROCm decided it)
    stack: list[tuple[bool, bool, bool]] = []
    out: set[str] = set()
    for line in _logical_lines(text):
        match = _DIRECTIVE_RE.match(line)
        if match is None:
            continue
        directive, rest = match.group(1), _strip_comment(match.group(2))
        active = all(taken for taken, _, _ in stack)
        if directive in ("if", "ifdef", "ifndef"):
            taken, rocm = _condition(directive, rest, rocm_names, values)
            stack.append((taken, taken, rocm))
        elif directive == "elif" and stack:
            _, any_taken, rocm_before = stack[-1]
            taken, rocm = _condition("if", rest, rocm_names, values)
            taken = taken and not any_taken
            stack[-1] = (taken, any_taken or taken, rocm_before or rocm)
        elif directive == "else" and stack:
            _, any_taken, rocm = stack[-1]
            stack[-1] = (not any_taken, True, rocm)
        elif directive == "endif" and stack:
            stack.pop()
        elif directive == "define" and active:
            defined = _DEFINE_RE.match(rest)
            if defined is None:
                continue
            name, body = defined.group(1), defined.group(3).strip()
            under_rocm = any(rocm for _, _, rocm in stack)
            if under_rocm:
                rocm_names.add(name)  # a ROCm branch's own switch (BNB_HIP)
                if CUDA_NAME_RE.match(name):
                    out.add(name)
            number = _INT_RE.fullmatch(body)
            values[name] = int(number.group(1)) if number else 1
    return frozenset(out)


def _logical_lines(text: str) -> Iterable[str]:
    pending = ""
    for line in text.splitlines():
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        yield pending + line
        pending = ""
    if pending:
        yield pending


def _strip_comment(text: str) -> str:
    return re.sub(r"/\*.*?\*/", " ", text.split("//", 1)[0]).strip()


def _is_rocm(name: str, rocm_names: set[str]) -> bool:
    return name in rocm_names or bool(_ROCM_NAME_RE.search(name))


def _condition(
    directive: str, text: str, rocm_names: set[str], values: dict[str, int]
) -> tuple[bool, bool]:
    """(whether the branch is compiled under ROCm, whether a ROCm name decides that)."""
    if directive in ("ifdef", "ifndef"):
        name = text.split()[0] if text.split() else ""
        rocm = _is_rocm(name, rocm_names)
        is_defined = rocm or name in values
        return (is_defined if directive == "ifdef" else not is_defined), rocm
    rocm = any(_is_rocm(n, rocm_names) for n in _IDENT_RE.findall(text) if n != "defined")

    def defined(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        return " 1 " if _is_rocm(name, rocm_names) or name in values else " 0 "

    expression = _DEFINED_RE.sub(defined, text)

    def value(match: re.Match[str]) -> str:
        name = match.group(0)
        if _is_rocm(name, rocm_names):
            return str(values.get(name, 1))
        return str(values.get(name, 0))

    expression = _IDENT_RE.sub(value, expression)
    expression = expression.replace("&&", " and ").replace("||", " or ")
    expression = re.sub(r"!(?!=)", " not ", expression)
    try:
        return bool(_evaluate(ast.parse(expression.strip(), mode="eval").body)), rocm
    except (SyntaxError, ValueError, ZeroDivisionError, RecursionError):
        return False, rocm  # a condition this walk cannot read: not taken


_COMPARE = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}
_ARITHMETIC = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.floordiv,  # C's integer division
    ast.Mod: operator.mod,
}


def _evaluate(node: ast.expr) -> int:
    """An #if expression of integers, comparisons, +-*/%, !, && and || (nothing else)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.BoolOp):
        values = [_evaluate(v) for v in node.values]
        return int(all(values) if isinstance(node.op, ast.And) else any(values))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not | ast.USub | ast.UAdd):
        inner = _evaluate(node.operand)
        if isinstance(node.op, ast.Not):
            return int(not inner)
        return -inner if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.Compare):
        left = _evaluate(node.left)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = _evaluate(right_node)
            compare = _COMPARE.get(type(op))
            if compare is None or not compare(left, right):
                return 0
            left = right
        return 1
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        return int(_ARITHMETIC[type(node.op)](_evaluate(node.left), _evaluate(node.right)))
    raise ValueError("not an integer expression")
