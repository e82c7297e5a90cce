"""Tracked names: the variables of a file that hold a thread index, and those that hold a lane number."""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpuport.scan.kernels.statements import Statements, assigned_name
from gpuport.scan.kernels.words import match_start, word_start, words

THREAD_SOURCE_RE = re.compile(r"\b(?:threadIdx|blockDim)\s*\.\s*[xyz]\b|\bthread_rank\s*\(")
LANE_NAME_RE = re.compile(r"^(?:[a-z]+_)?lane(?:_?(?:id|idx|index))?$", re.I)
# Names are tracked only in code that mentions a thread index or a lane id at all.
TRACKING_WORDS = ("threadIdx", "blockDim", "__lane_id")
_IDENTIFIER_RE = re.compile(r"[A-Za-z_]\w*")


@dataclass(slots=True)
class Names:
    thread: set[str]
    lane: set[str]

    def is_thread_expr(self, expr: str) -> bool:
        """Whether ``expr`` reads a thread index, directly or through a tracked variable."""
        if not expr:
            return False
        if THREAD_SOURCE_RE.search(expr):
            return True
        return any(w in self.thread for w in _IDENTIFIER_RE.findall(expr))


_THREAD_WORD_RE = re.compile(r"(?:threadIdx|blockDim)\s*\.\s*[xyz]\b|thread_rank\s*\(")
# The same three alternatives, each led by its own literal, which the regex engine finds far
# faster than the alternation (whose first letters, 't' and 'b', are everywhere). Their
# matches cannot overlap, so merging them in offset order gives the alternation's matches.
_THREAD_WORD_PARTS = tuple(
    re.compile(part)
    for part in (r"threadIdx\s*\.\s*[xyz]\b", r"blockDim\s*\.\s*[xyz]\b", r"thread_rank\s*\(")
)


def _thread_words(code: str) -> list[re.Match[str]]:
    """``words(_THREAD_WORD_RE, code)``, found part by part."""
    found = [
        m for part in _THREAD_WORD_PARTS for m in part.finditer(code) if word_start(code, m.start())
    ]
    found.sort(key=match_start)
    return found


LANE_HINT_RE = re.compile(
    r"&\s*(?:31|0[xX]1[fF])[uU]?\b|%\s*(?:32[uU]?\b|warpSize\b)|&\s*\(\s*warpSize\s*-\s*1\s*\)"
    r"|__lane_id\s*\(|laneid\b"
)
# LANE_HINT_RE's alternatives grouped by their leading literal (see _THREAD_WORD_PARTS).
# No match of one part can hold the start of another's, so together they find the same.
_LANE_HINT_PARTS = tuple(
    re.compile(part)
    for part in (
        r"&\s*(?:31|0[xX]1[fF])[uU]?\b|&\s*\(\s*warpSize\s*-\s*1\s*\)",
        r"%\s*(?:32[uU]?\b|warpSize\b)",
        r"__lane_id\s*\(",
        r"laneid\b",
    )
)


_SUBSCRIPT_RE = re.compile(r"\[[^\[\]]*\]")


def _index_assignment(
    code: str,
    pos: int,
    word: re.Pattern[str],
    seen: dict[tuple[int, int, str], bool] | None = None,
    statements: Statements | None = None,
) -> str | None:
    """The variable assigned an expression of the index at ``pos``, not of data loaded with it.

    ``gtid = blockIdx.x * blockDim.x + tid`` is another index; ``v = values[tid]`` and
    ``v = tid < n ? values[tid] : 0`` are data. ``seen`` remembers right-hand sides already
    judged: several indices in one statement share one.
    """
    found = assigned_name(code, pos) if statements is None else statements.assigned_name(pos)
    if found is None:
        return None
    eq = code.find("=", found[1])
    end = code.find(";", pos, pos + 400)
    stop = end if end >= 0 else pos + 400
    key = (eq, stop, word.pattern)
    if seen is not None and key in seen:
        return found[0] if seen[key] else None
    rhs = code[eq + 1 : stop]
    if "[" in rhs:
        previous = None
        while previous != rhs:  # drop subscripts, innermost first
            previous, rhs = rhs, _SUBSCRIPT_RE.sub(" ", rhs)
    if "?" in rhs:
        rhs = rhs.split("?", 1)[1]  # the condition of a ternary is not the value
    judged = word.search(rhs) is not None
    if seen is not None:
        seen[key] = judged
    return found[0] if judged else None


def tracked_names(code: str) -> Names:
    """Variables assigned from thread indices, and those that hold a lane number.

    Empty when the code mentions none of :data:`TRACKING_WORDS`.
    """
    if not any(word in code for word in TRACKING_WORDS):
        return Names(set(), set())
    thread: set[str] = set()
    seen: dict[tuple[int, int, str], bool] = {}
    statements = Statements(code)
    for m in _thread_words(code):
        found = _index_assignment(code, m.start(), _THREAD_WORD_RE, seen, statements)
        if found is not None:
            thread.add(found)
    # One level of propagation: tid = threadIdx.x; gtid = blockIdx.x * blockDim.x + tid
    if thread:
        direct = re.compile("(?:" + "|".join(map(re.escape, sorted(thread))) + r")\b")
        name_words: dict[str, re.Pattern[str]] = {}
        for m in words(direct, code, also=".>"):
            name = m.group()
            word = name_words.get(name)
            if word is None:
                word = name_words[name] = re.compile(r"(?<![\w.])" + re.escape(name) + r"\b")
            found = _index_assignment(code, m.start(), word, seen, statements)
            if found is not None and found != name:
                thread.add(found)
    lane: set[str] = set()
    for part in _LANE_HINT_PARTS:  # the order does not matter: a set is collected
        for m in part.finditer(code):
            assigned = statements.assigned_name(m.start())
            if assigned is not None:
                lane.add(assigned[0])
    return Names(thread, lane)
