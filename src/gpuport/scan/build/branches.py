"""Where a CMake file already has its ROCm path: the branches of an if-chain beside a ROCm branch.

``if(BUILD_CUDA) … elseif(BUILD_HIP) … endif()`` and ``if(USE_ROCM) … else() … endif()`` build
the CUDA code only when ROCm is not the target: findings in those branches are not porting work,
the ROCm branch is right there. A branch is the ROCm one when its condition names ROCm, HIP or
AMD (``USE_ROCM``, ``BUILD_HIP``, ``CMAKE_HIP_COMPILER``) without ``NOT``, or when it is the
``else()`` of a chain whose earlier branch tested ``NOT`` one of them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from gpuport.syntax.cmake import CMakeCommand

_ROCM_WORD_RE = re.compile(r"(?i)(?:^|_)(?:rocm|hip|amd|hipcc)(?:_|$)|^(?:rocm|hip)\w*$")
_CUDA_WORD_RE = re.compile(r"(?i)(?:^|_)cuda(?:_|$)")


def _rocm_word(word: str) -> bool:
    name = word.strip("${}")
    return bool(_ROCM_WORD_RE.search(name))


def _branch_tests_cuda(args: Sequence[str]) -> bool:
    """The condition selects the CUDA build (``BUILD_CUDA``, ``COMPUTE_BACKEND STREQUAL cuda``),
    not negated."""
    for position, word in enumerate(args):
        if _CUDA_WORD_RE.search(word.strip("${}")):
            return not (position > 0 and args[position - 1].upper() == "NOT")
    return False


def _cuda_only(args: Sequence[str]) -> bool:
    return _branch_tests_cuda(args) and _branch_tests_rocm(args) is None


def _branch_tests_rocm(args: Sequence[str]) -> bool | None:
    """True: the branch runs for ROCm; False: only when not ROCm (``NOT USE_ROCM``); None: the
    condition says nothing about ROCm."""
    for position, word in enumerate(args):
        if _rocm_word(word):
            negated = position > 0 and args[position - 1].upper() == "NOT"
            return not negated
    return None


def cuda_only_spans(commands: Sequence[CMakeCommand]) -> list[tuple[int, int]]:
    """Offset spans of the branches that sit beside a ROCm branch in the same if-chain, and,
    in a file that has a ROCm branch, of the branches that select the CUDA build
    (``if(BUILD_CUDA) … endif()`` next to ``if(BUILD_HIP) … endif()``)."""
    spans: list[tuple[int, int]] = []
    has_rocm_branch = any(
        c.name in ("if", "elseif") and _branch_tests_rocm([a.value for a in c.args])
        for c in commands
    )
    open_cuda: list[int | None] = []  # per open if: the start of its CUDA branch, if any
    # One open if-chain: its branches as (start offset, runs for ROCm?) and whether a NOT-ROCm
    # test came before (so the else() is the ROCm branch).
    stack: list[tuple[list[tuple[int, bool]], bool]] = []
    for command in commands:
        name = command.name
        args = [arg.value for arg in command.args]
        if name in ("elseif", "else", "endif") and open_cuda and open_cuda[-1] is not None:
            spans.append((open_cuda[-1], command.start))  # a CUDA branch ends here
            open_cuda[-1] = None
        if name == "if":
            tested = _branch_tests_rocm(args)
            stack.append(([(command.end, tested is True)], tested is False))
            open_cuda.append(command.end if has_rocm_branch and _cuda_only(args) else None)
        elif name == "elseif" and stack:
            branches, saw_not = stack[-1]
            tested = _branch_tests_rocm(args)
            branches.append((command.end, tested is True))
            stack[-1] = (branches, saw_not or tested is False)
            if open_cuda and has_rocm_branch and _cuda_only(args):
                open_cuda[-1] = command.end
        elif name == "else" and stack:
            branches, saw_not = stack[-1]
            branches.append((command.end, saw_not))
        elif name == "endif" and stack:
            if open_cuda:
                open_cuda.pop()
            branches, _ = stack.pop()
            if not any(rocm for _, rocm in branches):
                continue
            ends = [start for start, _ in branches[1:]] + [command.start]
            for (start, rocm), end in zip(branches, ends, strict=True):
                if not rocm:
                    spans.append((start, end))
    return spans
