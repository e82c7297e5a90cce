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
from collections.abc import Callable, Iterable

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
# Each branch starts with one character, not a class (``"…|'…``, not ``["']…``): ``re`` then
# skips, at C speed, the positions where none of them starts; with a class it tried every
# position (TransformerEngine's 211 parsed files: 0.14 -> 0.07 s; the same matches).
_BETWEEN_QUOTES = rb"[ \t\f]*(?:#[^\n]*)?(?:\n[ \t\f]*(?:#[^\n]*)?)*[A-Za-z]{0,3}[\"']"
_STATE_TRIGGERS = rb"import|\\|\"" + _BETWEEN_QUOTES + rb"|'" + _BETWEEN_QUOTES
_STATE_PATTERN = re.compile(_STATE_TRIGGERS)
_STATIC_PATTERNS: dict[tuple[str, ...], tuple[re.Pattern[bytes], ...]] = {}
# A word as ``\b`` sees one in ASCII bytes: a tracked name is found in a segment when one of the
# segment's whole words is that name, which is what ``\bname\b`` would find. The words are the
# runs of ``\w`` bytes (ASCII letters, digits, ``_``): every other byte made a blank, then
# split, a third of the CPU of ``re.findall(rb"\w+")`` (DeepSpeed's 93 parsed files: 20 ms
# against 6 ms).
_WORD_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_BLANK_NON_WORDS = bytes(c if c in _WORD_BYTES else 0x20 for c in range(256))
_NAME_WORDS: dict[frozenset[str], frozenset[bytes]] = {}
# How the import rule writes a package's needle: its import name after a space or a quote.
_IMPORT_QUOTES = (" ", "'", '"')
_FILE_PREFILTERS: dict[tuple[object, ...], Callable[[str], bool]] = {}


def file_prefilter(
    dispatch: Dispatch, first_party: frozenset[str], *, notebook: bool = False
) -> Callable[[str], bool]:
    """Whether some enabled rule may fire in a file's text, knowing the project's own packages.

    The import rule (GP201) sees only imports: ``import x``, ``from x …``, ``import a, x`` and
    ``importlib.import_module("x")`` / ``__import__("x")``. Its needles (each package's import
    name after a space or a quote) are looked for only there: after ``import``, ``from``, a
    comma or a quote (with blanks or backslash-continued lines between), as whole names
    (:func:`imports_found`), not in ``device = "cuda"`` or a comment's " cuda" (DeepSpeed: 41
    files in 231 parsed for that alone, benchmarks/results/python_vs_bandit.md). This also
    finds ``import os,pynvml`` and ``import\tpynvml``, which the needles miss. The project's
    own packages are left out: the rule never reports the project importing itself
    (``import deepspeed`` in DeepSpeed: 3 files in 5 of its Python held nothing else). A
    needle another enabled rule shares stays a needle. A ``notebook``'s text is its JSON.
    """
    needles = dispatch.needles
    if needles is None or CUDA_ONLY_IMPORT not in dispatch.rules:
        return dispatch.may_fire_in
    # The dispatch itself (hashed by identity), not its ~600 needles: hashing them for each
    # file cost 5 ms of CPU over DeepSpeed's 836 files.
    key = (dispatch, first_party, notebook)
    found = _FILE_PREFILTERS.get(key)
    if found is not None:
        return found
    others: set[str] = set()
    for other in dispatch.rules:
        if other is not CUDA_ONLY_IMPORT:
            others.update(other.needles or ())
    imports = {
        n for n in CUDA_ONLY_IMPORT.needles or () if n[:1] in _IMPORT_QUOTES and n not in others
    }
    kept = NeedleSet(n for n in needles if n not in imports)
    patterns = import_patterns(n[1:] for n in imports if n[1:] not in first_party)
    conditional_in = dispatch.conditional_in

    # The cheapest tests first (one answer whatever the order): in a GPU project most files
    # that may fire hold a conditional rule's words, found by a few substring searches; the
    # pass of the trie of ~600 needles, the dearest, runs only in the files they miss.
    # TransformerEngine's 440 files: 0.16 -> 0.08 s; DeepSpeed's 836: 0.11 -> 0.095 s.
    def may_fire_in(text: str) -> bool:
        return (
            conditional_in(text)
            or (patterns is not None and imports_found(patterns, text, quoted=notebook))
            or kept.found_in(text)
        )

    if len(_FILE_PREFILTERS) > 64:
        _FILE_PREFILTERS.clear()
    _FILE_PREFILTERS[key] = may_fire_in
    return may_fire_in


# Between `import`, `from`, a comma or a quote and the module's name: blanks and backslash-
# continued line ends. A quote counts only in a text calling ``import_module`` or
# ``__import__`` (both hold "import_"): elsewhere "'cuda'" is a device, not a module.
_BETWEEN = r"(?:[ \t\f]|\\(?:\r\n?|\n))*"
_IMPORT_CALL = "import_"


ImportPatterns = tuple[tuple[re.Pattern[str], ...], tuple[re.Pattern[str], ...]]


def import_patterns(names: Iterable[str]) -> ImportPatterns | None:
    """Where an import can name one of ``names`` (a whole name: ``cuda`` and ``cuda.x``, not
    ``cudax``): after ``import``, ``from`` or a comma; the second set also after a quote.
    The words before a name are written without ``\\b``: an expression whose first step is a
    look-behind is tried at every position of a text, this one only where ``import``,
    ``from`` or a comma starts (also finding ``reimport x``, which costs only a parse). One
    expression per word before the name, each searched on its own: one that starts with a
    word is searched for that word at C speed, where an alternation of them was tried at
    every ``i``, ``f`` and comma (DeepSpeed's 836 files: 40 ms against 21 ms)."""
    words = sorted(set(names))
    if not words:
        return None
    name = rf"{_BETWEEN}(?:{trie_pattern(words)})(?!\w)"
    plain = tuple(re.compile(before + name) for before in ("import", "from", ","))
    return plain, (*plain, re.compile(rf"[\"']{name}"))


def imports_found(patterns: ImportPatterns, text: str, *, quoted: bool = False) -> bool:
    """An import in ``text`` may name one of the names of ``patterns`` (:func:`import_patterns`).
    ``quoted``: a name after a quote counts in any text (a notebook's JSON starts each line of
    a cell with one, so the module on a backslash-continued import line follows a quote)."""
    plain, after_quote = patterns
    found = after_quote if quoted or _IMPORT_CALL in text else plain
    return any(pattern.search(text) is not None for pattern in found)


def _static_patterns(needles: tuple[str, ...]) -> tuple[re.Pattern[bytes], ...]:
    """The state triggers, and ``needles`` (compiled once per set of enabled rules): two
    expressions, each searched on its own. One alternation of both took half as long again:
    a text position is then tried against every branch, not only where a branch can start."""
    patterns = _STATIC_PATTERNS.get(needles)
    if patterns is None:
        patterns = (_STATE_PATTERN,)
        if needles:
            patterns += (re.compile(trie_pattern(needles).encode()),)
        _STATIC_PATTERNS[needles] = patterns
    return patterns


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
        # Where each static pattern matches in the whole text, searched once: a statement holds
        # a match of its own only where one of a pattern's matches overlaps it (a match at a
        # position of the statement is found there, unless an earlier one of the same pattern
        # already covers that position). Searching each statement's source instead read a
        # function's body once per level of nesting (6 of unsloth's 15 CPU seconds).
        # Only whether some match overlaps a statement counts, so the matches of all patterns
        # are joined where they overlap: one look-up per statement, not one per pattern
        # (15,500 statements in DeepSpeed). Touching matches stay apart, and an empty match
        # (none of these patterns has one) keeps each pattern's own list: both as before.
        self._matches: list[tuple[list[int], list[int]]] = []
        every: list[tuple[int, int]] = []
        for pattern in _static_patterns(needles):
            spans = [match.span() for match in pattern.finditer(data)]
            self._matches.append(([s for s, _ in spans], [e for _, e in spans]))
            every += spans
        if len(self._matches) > 1 and all(s < e for s, e in every):
            starts: list[int] = []
            ends: list[int] = []
            for s, e in sorted(every):
                if ends and s < ends[-1]:
                    ends[-1] = max(ends[-1], e)
                else:
                    starts.append(s)
                    ends.append(e)
            self._matches = [(starts, ends)]
        self._names: frozenset[str] | None = None  # the last names asked about, and their words
        self._words: frozenset[bytes] = frozenset()

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
        for starts_at, ends_at in self._matches:
            first_ending_after = bisect.bisect_right(ends_at, begin)
            if first_ending_after < len(starts_at) and starts_at[first_ending_after] < end:
                return False  # a match overlaps the statement: it may hold one (walk it)
        segment = self._data[begin:end]
        if not segment.isascii():
            return False
        if (
            module_scope
            and not isinstance(node, _SCOPE_STATEMENTS)
            and (b'"' in segment or b"'" in segment)
        ):
            return False
        if names is not self._names:  # the walk asks with the same set until a name binds
            self._names, self._words = names, _name_words(names)
        words = self._words
        return not words or words.isdisjoint(segment.translate(_BLANK_NON_WORDS).split())
