"""The pre-filters: which files and statements the enabled rules' needles let through.

A file that holds none of the enabled rules' needles is not parsed (no rule could fire in it:
:class:`gpuport.rules.NeedleSet` tells). Within a parsed file, the walk steps over a statement
whose source shows nothing any rule looks for (:class:`SourceSegments`): no needle of a rule
that checks raw syntax, no tracked name, and nothing that changes what the walk remembers.

Both are computed from :attr:`gpuport.rules.Rule.needles`; nothing here names a rule's word.
"""

from __future__ import annotations

import ast
import re

from gpuport.rules import trie_pattern

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
_STATE_TRIGGERS = rb"import|\\|[\"'](?:[ \t\n\f]|#[^\n]*)*[A-Za-z]{0,3}[\"']"
_QUOTES = re.compile(rb"[\"']")
_STATIC_PATTERNS: dict[tuple[str, ...], re.Pattern[bytes]] = {}
_NAME_PATTERNS: dict[frozenset[str], re.Pattern[bytes] | None] = {}


def _static_pattern(needles: tuple[str, ...]) -> re.Pattern[bytes]:
    """A state trigger or one of ``needles`` (compiled once per set of enabled rules)."""
    pattern = _STATIC_PATTERNS.get(needles)
    if pattern is None:
        alternatives = [_STATE_TRIGGERS]
        if needles:
            alternatives.append(trie_pattern(needles).encode())
        pattern = _STATIC_PATTERNS[needles] = re.compile(b"|".join(alternatives))
    return pattern


def _names_pattern(names: frozenset[str]) -> re.Pattern[bytes] | None:
    """One of the tracked ``names`` as a whole word; None when there is none.

    Asked only for statements the static pattern lets go, so a file's run of imports, each
    changing the names, does not compile one pattern per import.
    """
    if names in _NAME_PATTERNS:
        return _NAME_PATTERNS[names]
    words = sorted(n.encode() for n in names if n.isascii() and n.isidentifier())
    pattern = None
    if words:
        pattern = re.compile(rb"\b(?:" + b"|".join(re.escape(w) for w in words) + rb")\b")
    if len(_NAME_PATTERNS) > 256:
        _NAME_PATTERNS.clear()
    _NAME_PATTERNS[names] = pattern
    return pattern


class SourceSegments:
    """The source of statements, by the positions ``ast`` gives (UTF-8 byte columns).

    ``inert(node, …)`` is true only when no rule can fire inside ``node`` and walking it would
    change nothing the walk remembers: it names no tracked name and holds no needle of a rule
    that checks raw syntax, and no state trigger (see ``_STATE_TRIGGERS``). Bindings of untracked
    names inside a function or class only hide names that nothing follows, so they need no walk.
    """

    def __init__(self, data: bytes, needles: tuple[str, ...]) -> None:
        self._data = data
        self._starts = [0, *(m.end() for m in re.finditer(rb"\n", data))]
        self._static = _static_pattern(needles)

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
        segment = self._data[starts[line - 1] + column : starts[end_line - 1] + end_column]
        if not segment.isascii():
            return False
        if module_scope and not isinstance(node, _SCOPE_STATEMENTS) and _QUOTES.search(segment):
            return False
        if self._static.search(segment) is not None:
            return False
        names_pattern = _names_pattern(names)
        return names_pattern is None or names_pattern.search(segment) is None
