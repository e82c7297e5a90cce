"""The pre-filters: which files and statements the enabled rules' needles let through.

A file that holds none of the enabled rules' needles is not parsed (no rule could fire in it:
:class:`gpuport.rules.NeedleSet` tells). The import rule's needles of the project's own packages
(``import deepspeed`` in DeepSpeed) do not count: that rule never reports the project importing
itself (:func:`file_prefilter`). Within a parsed file, the walk steps over a statement
whose source shows nothing any rule looks for (:class:`SourceSegments`): no needle of a rule
that checks raw syntax, no tracked name, and nothing that changes what the walk remembers.

Both are computed from :attr:`gpuport.rules.Rule.needles`; nothing here names a rule's word.
"""

from __future__ import annotations

import ast
import bisect
import itertools
import re
from collections.abc import Callable

from gpuport.rules import NeedleSet, trie_pattern
from gpuport.scan.python.checks import Dispatch
from gpuport.scan.python.rules.imports import CUDA_ONLY_IMPORT

# Statements the walk may step over whole when their source shows nothing to look at.
STATEMENT_TYPES = frozenset(
    t for t in vars(ast).values() if isinstance(t, type) and issubclass(t, ast.stmt)
)
_SCOPE_STATEMENTS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)

# What a statement's source must contain for walking it to matter, whatever the rules:
#   import  (an import binds names the rules resolve through),
#   a backslash or implicit concatenation ("as" "m(": a closing quote, blanks or comments, an
#   opening quote), because then a string's value differs from its source and may hold a
#   needle the source does not.
# At module level a string constant bound to a name is remembered (for commands such as
# ``subprocess.run(NVSMI)``), so statements there must also hold no string literal, unless they
# are functions or classes (their bodies bind locally). Non-ASCII sources are never stepped over
# (identifiers are NFKC-normalised).
# Between the quotes: blank lines or lines of comments, written one line at a time so that a
# failed match does not try every way of splitting a `#####` banner into comments (exponential).
_STATE_TRIGGERS = (
    rb"import|\\|[\"'][ \t\f]*(?:#[^\n]*)?(?:\n[ \t\f]*(?:#[^\n]*)?)*[A-Za-z]{0,3}[\"']"
)
_QUOTES = re.compile(rb"[\"']")
_STATIC_PATTERNS: dict[tuple[str, ...], re.Pattern[bytes]] = {}
# A word as ``\b`` sees one in ASCII bytes: a tracked name is found in a segment when one of the
# segment's whole words is that name, which is what ``\bname\b`` would find.
_WORD = re.compile(rb"\w+")
_NAME_WORDS: dict[frozenset[str], frozenset[bytes]] = {}
# How the import rule writes a package's needle: its import name after a space or a quote.
_IMPORT_QUOTES = (" ", "'", '"')
_FILE_PREFILTERS: dict[tuple[tuple[str, ...], frozenset[str]], Callable[[str], bool]] = {}


def file_prefilter(dispatch: Dispatch, first_party: frozenset[str]) -> Callable[[str], bool]:
    """Whether some enabled rule may fire in a file's text, knowing the project's own packages.

    The import rule (GP201) never reports an import of ``first_party`` (the project importing
    itself), so its needles for those names are left out, unless another enabled rule shares
    them. The rule's other packages are then looked for as whole names wherever they stand
    (``import os,pynvml``, not only after a space or a quote): a file that mentioned the
    project's own import, and so was parsed, finds every other import it did before. On
    DeepSpeed's Python this skips 3 files in 5 that only import deepspeed
    (benchmarks/results/python_vs_bandit.md).
    """
    needles = dispatch.needles
    if needles is None or not first_party or CUDA_ONLY_IMPORT not in dispatch.rules:
        return dispatch.may_fire_in
    key = (needles, first_party)
    found = _FILE_PREFILTERS.get(key)
    if found is not None:
        return found
    import_needles = frozenset(CUDA_ONLY_IMPORT.needles or ())
    others: set[str] = set()
    for other in dispatch.rules:
        if other is not CUDA_ONLY_IMPORT:
            others.update(other.needles or ())
    own = {
        f"{quote}{name}" for name in first_party for quote in _IMPORT_QUOTES
    } & import_needles - others
    found = dispatch.may_fire_in
    if own:
        kept = NeedleSet(n for n in needles if n not in own)
        tops = {
            n[1:] for n in import_needles if n[:1] in _IMPORT_QUOTES and n[1:] not in first_party
        }
        # `(?<![\w.])` is checked on each match rather than written first in the expression:
        # an expression that starts with a look-behind is tried at every position of the text,
        # one that starts with the names skips to where one could start.
        names = re.compile(rf"(?:{trie_pattern(tops)})(?!\w)") if tops else None

        def may_fire_in(text: str) -> bool:
            return kept.found_in(text) or (names is not None and _name_found(names, text))

        found = may_fire_in
    if len(_FILE_PREFILTERS) > 64:
        _FILE_PREFILTERS.clear()
    _FILE_PREFILTERS[key] = found
    return found


def _name_found(names: re.Pattern[str], text: str) -> bool:
    """``names`` matches where no word character (as ``\\w`` has it) or dot comes before."""
    match = names.search(text)
    while match is not None:
        start = match.start()
        if start == 0:
            return True
        before = text[start - 1]
        if not (before.isalnum() or before == "_" or before == "."):
            return True
        match = names.search(text, start + 1)
    return False


def _static_pattern(needles: tuple[str, ...]) -> re.Pattern[bytes]:
    """A state trigger or one of ``needles`` (compiled once per set of enabled rules)."""
    pattern = _STATIC_PATTERNS.get(needles)
    if pattern is None:
        alternatives = [_STATE_TRIGGERS]
        if needles:
            alternatives.append(trie_pattern(needles).encode())
        pattern = _STATIC_PATTERNS[needles] = re.compile(b"|".join(alternatives))
    return pattern


def _name_words(names: frozenset[str]) -> frozenset[bytes]:
    """The tracked ``names`` that can be whole words of an ASCII segment, as bytes.

    A set, not a regular expression of the names: each file tracks its own names (its
    imports), and compiling one pattern per set of names cost more than the whole walk
    (benchmarks/results/python_vs_bandit.md).
    """
    words = _NAME_WORDS.get(names)
    if words is None:
        words = frozenset(n.encode() for n in names if n.isascii() and n.isidentifier())
        if len(_NAME_WORDS) > 256:
            _NAME_WORDS.clear()
        _NAME_WORDS[names] = words
    return words


class SourceSegments:
    """The source of statements, by the positions ``ast`` gives (UTF-8 byte columns).

    ``inert(node, …)`` is true only when no rule can fire inside ``node`` and walking it would
    change nothing the walk remembers: it names no tracked name and holds no needle of a rule
    that checks raw syntax, and no state trigger (see ``_STATE_TRIGGERS``). Bindings of untracked
    names inside a function or class only hide names that nothing follows, so they need no walk.
    """

    def __init__(self, data: bytes, needles: tuple[str, ...]) -> None:
        self._data = data
        lengths = [len(line) + 1 for line in data.split(b"\n")]  # each line with its "\n"
        lengths.pop()  # the text after the last "\n" starts no further line
        self._starts = [0, *itertools.accumulate(lengths)]
        # Where the static pattern matches in the whole text, searched once: a statement holds
        # a match of its own only where one of these overlaps it (a match at a position of the
        # statement is found there, unless an earlier one already covers that position).
        # Searching each statement's source instead read a function's body once per level of
        # nesting (6 of unsloth's 15 CPU seconds).
        self._match_starts: list[int] = []
        self._match_ends: list[int] = []
        for match in _static_pattern(needles).finditer(data):
            self._match_starts.append(match.start())
            self._match_ends.append(match.end())

    @classmethod
    def of(cls, text: str, needles: tuple[str, ...] | None) -> SourceSegments | None:
        """Segments of ``text``; None when statements cannot be stepped over (``needles`` is
        None, or the text's positions are not plain UTF-8 lines)."""
        if needles is None or text.startswith("\ufeff"):
            return None
        if "\r" in text:
            text = text.replace("\r\n", "\n")
            if "\r" in text:  # old Mac line ends: keep it simple and walk everything
                return None
        if not all(n.isascii() for n in needles):
            return None
        try:
            return cls(text.encode("utf-8"), needles)
        except UnicodeEncodeError:
            return None

    def inert(self, node: ast.AST, names: frozenset[str], module_scope: bool) -> bool:
        if not isinstance(node, ast.stmt):
            return False
        end_line, end_column = node.end_lineno, node.end_col_offset
        if end_line is None or end_column is None:
            return False
        line, column = node.lineno, node.col_offset
        if isinstance(node, _SCOPE_STATEMENTS):
            for decorator in node.decorator_list:
                line, column = min((line, column), (decorator.lineno, decorator.col_offset))
        starts = self._starts
        if end_line > len(starts) or line < 1:
            return False
        begin, end = starts[line - 1] + column, starts[end_line - 1] + end_column
        first_ending_after = bisect.bisect_right(self._match_ends, begin)
        if (
            first_ending_after < len(self._match_starts)
            and self._match_starts[first_ending_after] < end
        ):
            return False  # a match overlaps the statement: it may hold one (walking is safe)
        segment = self._data[begin:end]
        if not segment.isascii():
            return False
        if module_scope and not isinstance(node, _SCOPE_STATEMENTS) and _QUOTES.search(segment):
            return False
        words = _name_words(names)
        return not words or words.isdisjoint(_WORD.findall(segment))
