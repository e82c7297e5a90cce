"""Where a shell script already has its ROCm path: CUDA branches of an if-chain beside a ROCm one.

``if [ -n "$NVCC_PATH" ]; then … elif [ "$GPU_BACKEND" = "rocm" ]; then … fi`` builds the CUDA
way only on the machine the script found CUDA on; on an AMD machine it takes the ROCm branch
right there. Findings in such CUDA branches are not porting work, as in CMake's
``if(BUILD_CUDA) … elseif(BUILD_HIP)`` (:mod:`gpuport.scan.build.branches`). A branch tests
CUDA when its condition names CUDA, nvcc or NVIDIA, and ROCm when it names ROCm, HIP or AMD;
a negated condition (``!``, ``!=``, ``-z``) is neither, and an ``else`` is never a CUDA branch.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from gpuport.syntax.shell import Word

_CUDA_RE = re.compile(r"(?i)cuda|nvcc|nvidia")
_ROCM_RE = re.compile(r"(?i)(?:^|[^a-z])(?:rocm|hip|amd(?!64))")
_NEGATIONS = frozenset({"!", "!=", "-z"})
# Words that may open a command before the keyword that matters: `then if …`, `{ if …`.
_PREFIXES = frozenset({"then", "do", "{", "(", "else"})


def _test(words: Sequence[Word]) -> str | None:
    """'cuda', 'rocm' or None: what the condition ``words`` (after if/elif) selects."""
    texts = [w.text for w in words]
    if any(t in _NEGATIONS for t in texts):
        return None
    rocm = any(_ROCM_RE.search(t) for t in texts)
    cuda = any(_CUDA_RE.search(t) for t in texts)
    if rocm and not cuda:
        return "rocm"
    if cuda and not rocm:
        return "cuda"
    return None


def shell_cuda_only_spans(commands: Sequence[Sequence[Word]]) -> list[tuple[int, int]]:
    """Offset spans of the branches that test CUDA in an if-chain that also has a branch
    testing ROCm."""
    spans: list[tuple[int, int]] = []
    # Each open if-chain: its branches as (start offset, what the branch tests).
    stack: list[list[tuple[int, str | None]]] = []

    def close(end: int) -> None:
        chain = stack.pop()
        if any(tested == "rocm" for _, tested in chain):
            bounds = [start for start, _ in chain[1:]] + [end]
            spans.extend(
                (start, bound)
                for (start, tested), bound in zip(chain, bounds, strict=True)
                if tested == "cuda"
            )

    for command in commands:
        words = list(command)
        while words:
            keyword = words[0].text
            if keyword == "if":
                stack.append([(words[0].start, _test(words[1:]))])
                break
            if keyword == "elif" and stack:
                stack[-1].append((words[0].start, _test(words[1:])))
                break
            if keyword == "else" and stack:
                stack[-1].append((words[0].start, None))
            elif keyword == "fi" and stack:
                close(words[0].start)
            elif keyword not in _PREFIXES:
                break
            words = words[1:]
    return sorted(spans)
