"""Where a shell script already has its ROCm path: CUDA branches of an if-chain beside a ROCm one.

``if [ -n "$NVCC_PATH" ]; then … elif [ "$GPU_BACKEND" = "rocm" ]; then … fi`` builds the CUDA
way only on the machine the script found CUDA on; on an AMD machine it takes the ROCm branch
right there. Findings in such CUDA branches are not porting work, as in CMake's
``if(BUILD_CUDA) … elseif(BUILD_HIP)`` (:mod:`gpuport.scan.build.branches`). A branch tests
CUDA when its condition names CUDA, nvcc or NVIDIA, and ROCm when it names ROCm, HIP or AMD;
a negated condition (``!``, ``!=``, ``-z``) is neither, and an ``else`` is never a CUDA branch.

A shell function every use of which sits in such a CUDA branch (or in another such function)
runs only there too: ``_find_nvcc() { command -v nvcc; }`` called from the CUDA branch alone.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from gpuport.syntax.shell import ASSIGNMENT_RE, Word

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


def _combined(parts: Sequence[str | None]) -> str | None:
    """What a condition of several ``&&``/``||`` commands selects (``[ -z "$B" ] && [ "$AMD"
    = true ]``): a part naming one platform, none naming the other; negated parts say nothing."""
    if "rocm" in parts and "cuda" not in parts:
        return "rocm"
    if "cuda" in parts and "rocm" not in parts:
        return "cuda"
    return None


class _Chain:
    """One open if-chain: its branches as (start offset, condition parts), and whether the
    if-chain right before it (only assignments between) opened with a ROCm or CUDA test."""

    def __init__(
        self,
        start: int,
        first: str | None,
        before: tuple[str | None, list[tuple[int, int]]] | None,
    ) -> None:
        self.branches: list[tuple[int, list[str | None]]] = [(start, [first])]
        # the sibling if-chain right before: what it opened with, and its CUDA spans
        self.before = before

    def tests(self) -> list[str | None]:
        return [_combined(parts) for _, parts in self.branches]


def shell_cuda_only_spans(
    commands: Sequence[Sequence[Word]], text: str = ""
) -> list[tuple[int, int]]:
    """Offset spans of the branches that test CUDA in an if-chain that also has a branch
    testing ROCm, or that sits right before or after an if-chain opening with a ROCm test
    (``if [ "$nvidia_ok" = true ]; then … fi`` then ``if [ "$amd_found" = true ]; then …``:
    two sibling ifs split the platforms as an elif would), and (given the script's ``text``)
    of the functions only they use."""
    spans: list[tuple[int, int]] = []
    stack: list[_Chain] = []
    condition_open = False  # the last branch's condition goes on until `then`
    # What the if-chain just closed at the current depth opened with, and its CUDA spans;
    # forgotten at any other command than an assignment.
    previous: tuple[int, str | None, list[tuple[int, int]]] | None = None

    def close(end: int) -> None:
        nonlocal previous
        chain = stack.pop()
        tests = chain.tests()
        bounds = [start for start, _ in chain.branches[1:]] + [end]
        cuda = [
            (start, bound)
            for (start, _), bound, tested in zip(chain.branches, bounds, tests, strict=True)
            if tested == "cuda"
        ]
        if "rocm" in tests or (chain.before is not None and chain.before[0] == "rocm"):
            spans.extend(cuda)
        if chain.before is not None and tests[0] == "rocm":
            spans.extend(chain.before[1])  # the CUDA if right above this ROCm one
        previous = (len(stack), tests[0], cuda)

    for command in commands:
        words = list(command)
        if condition_open and words and words[0].text not in ("then", "fi"):
            stack[-1].branches[-1][1].append(_test(words))
            continue
        if (
            words
            and words[0].text not in ("if", "fi")
            and not all(ASSIGNMENT_RE.match(w.text) for w in words)
        ):
            previous = None
        while words:
            keyword = words[0].text
            if keyword == "if":
                before = None
                if previous is not None and previous[0] == len(stack):
                    before = previous[1], previous[2]
                stack.append(_Chain(words[0].start, _test(words[1:]), before))
                previous = None
                condition_open = True
                break
            if keyword == "elif" and stack:
                stack[-1].branches.append((words[0].start, [_test(words[1:])]))
                condition_open = True
                break
            if keyword == "then":
                condition_open = False
            if keyword == "else" and stack:
                stack[-1].branches.append((words[0].start, [None]))
            elif keyword == "fi" and stack:
                close(words[0].start)
            elif keyword not in _PREFIXES:
                break
            words = words[1:]
    if spans and text:
        spans.extend(_functions_used_only_in(spans, _functions(commands, text), text))
    return sorted(spans)


_NAME_RE = re.compile(r"[A-Za-z_][\w-]*")
_PARENS_RE = re.compile(r"[ \t]*\([ \t]*\)")


def _functions(commands: Sequence[Sequence[Word]], text: str) -> list[tuple[str, int, int]]:
    """(name, start offset, end offset) of each ``name() { … }`` / ``function name { … }``."""
    found: list[tuple[str, int, int]] = []
    open_bodies: list[tuple[str, int, int]] = []  # (name, start, brace depth of its body)
    pending: tuple[str, int] | None = None  # a head whose `{` is the next command
    depth = 0
    for command in commands:
        texts = [w.text for w in command]
        if not texts:
            continue
        if texts[0] == "function" and len(texts) > 1:
            pending, texts = (texts[1].removesuffix("()"), command[0].start), texts[2:]
            if not texts:
                continue
        elif (
            len(texts) == 1
            and _NAME_RE.fullmatch(texts[0])
            and _PARENS_RE.match(text, command[0].end)
        ):
            pending = (texts[0], command[0].start)
            continue
        if texts[0] == "{":
            depth += 1
            if pending is not None:
                open_bodies.append((*pending, depth))
        elif texts[0] == "}":
            if open_bodies and open_bodies[-1][2] == depth:
                name, start, _ = open_bodies.pop()
                found.append((name, start, command[0].end))
            depth = max(depth - 1, 0)
        pending = None
    return found


def _functions_used_only_in(
    spans: list[tuple[int, int]], functions: list[tuple[str, int, int]], text: str
) -> list[tuple[int, int]]:
    """The bodies of the functions every use of which (outside the function itself) lies in
    ``spans`` or in the body of another such function; a function never used is left out."""
    if not functions:
        return []
    names = {name for name, _, _ in functions}
    pattern = re.compile(
        r"(?<![\w$-])("
        + "|".join(sorted(map(re.escape, names), key=len, reverse=True))
        + r")(?![\w-])"
    )
    uses: dict[str, list[int]] = {}
    for match in pattern.finditer(text):
        uses.setdefault(match.group(1), []).append(match.start())
    covered = list(spans)
    added: list[tuple[int, int]] = []
    changed = True
    while changed:
        changed = False
        for name, start, end in functions:
            if (start, end) in added:
                continue
            outside = [u for u in uses.get(name, []) if not start <= u < end]
            if outside and all(any(a <= u < b for a, b in covered) for u in outside):
                added.append((start, end))
                covered.append((start, end))
                changed = True
    return added
