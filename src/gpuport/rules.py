"""Rule declarations: each rule is declared once, with its metadata and its documentation.

A scanner module declares its rules at import time with :func:`rule`; ``gpuport explain``,
SARIF's rule table and the docs are all generated from these declarations. The catalog of every
rule is :mod:`gpuport.scan.catalog`, which imports the scanners that declare them.
"""

from __future__ import annotations

import importlib
import itertools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import ParamSpec

from gpuport.findings import Category, Confidence, Excerpt, Finding, Fix, Location, Severity

_ID_RE = re.compile(r"^GP[1-6]\d\d$")
_SLUG_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_PREFIX = {
    Category.DEPENDENCIES: "1",
    Category.PYTHON: "2",
    Category.KERNELS: "3",
    Category.CONTAINERS: "4",
    Category.BUILD: "5",
    Category.PROJECT: "6",
}


@dataclass(frozen=True, slots=True)
class Rule:
    """One check. The docs fields follow fixed sections, like a lint rule page."""

    id: str
    slug: str
    category: Category
    severity: Severity
    confidence: Confidence
    summary: str  # one line, no trailing period
    what: str  # What it does
    why: str  # Why it matters on ROCm
    example: str  # code that triggers it
    instead: str  # code or config to use instead
    fix: str  # the fix, in one or two sentences
    mechanical: bool  # True when `gpuport port` can apply the fix
    references: tuple[str, ...] = ()
    # The words the rule needs: it can fire only in a text containing one of them (a plain,
    # case-sensitive substring test). Scanners skip a file no enabled rule's needle is in.
    # Empty: the rule may fire anywhere, so no pre-filter can skip a file for it.
    needles: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not _ID_RE.match(self.id) or self.id[2] != _PREFIX[self.category]:
            raise ValueError(f"rule id {self.id!r} does not match category {self.category}")
        if not _SLUG_RE.match(self.slug):
            raise ValueError(f"rule slug {self.slug!r} is not kebab-case")
        if not self.summary or self.summary.endswith("."):
            raise ValueError(f"{self.id}: summary must be one line without a trailing period")
        for name in ("what", "why", "fix"):
            if not getattr(self, name).strip():
                raise ValueError(f"{self.id}: {name} is empty")
        if any(not needle for needle in self.needles):
            raise ValueError(f"{self.id}: an empty needle would match every text")

    def finding(
        self,
        path: str,
        line: int,
        column: int = 0,
        *,
        message: str | None = None,
        fix: str | Fix | None = None,
        end_line: int = 0,
        end_column: int = 0,
        severity: Severity | None = None,
        confidence: Confidence | None = None,
        excerpt: Excerpt | None = None,
    ) -> Finding:
        """A finding of this rule; ``message`` and ``fix`` default to the rule's own."""
        if fix is None:
            fix_obj = Fix(self.fix, self.mechanical)
        elif isinstance(fix, str):
            fix_obj = Fix(fix, self.mechanical)
        else:
            fix_obj = fix
        return Finding(
            rule_id=self.id,
            message=message or self.summary,
            location=Location(path, line, column, end_line or line, end_column),
            severity=self.severity if severity is None else severity,
            confidence=self.confidence if confidence is None else confidence,
            category=self.category,
            fix=fix_obj,
            references=self.references,
            excerpt=excerpt,
        )

    def markdown(self) -> str:
        """The rule's documentation page."""
        refs = "\n".join(f"- <{r}>" for r in self.references) or "- (none)"
        safety = (
            "Mechanical: `gpuport port` applies this fix."
            if self.mechanical
            else "Needs review: gpuport reports it; a person decides."
        )
        return (
            f"# {self.id} {self.slug}\n\n{self.summary}.\n\n"
            f"Category: {self.category.value} · severity: {self.severity.label}"
            f" · confidence: {self.confidence.label}\n\n"
            f"## What it does\n\n{self.what}\n\n## Why is this a problem on ROCm?\n\n{self.why}\n\n"
            f"## Example\n\n```\n{self.example.rstrip()}\n```\n\n"
            f"## Use instead\n\n```\n{self.instead.rstrip()}\n```\n\n"
            f"## Fix\n\n{self.fix}\n\n{safety}\n\n## References\n\n{refs}\n"
        )


_REGISTRY: dict[str, Rule] = {}


_P = ParamSpec("_P")


def _registering(make: Callable[_P, Rule]) -> Callable[_P, Rule]:
    """``make`` (the Rule constructor, with its typed fields) followed by registration."""

    def declare(*args: _P.args, **kwargs: _P.kwargs) -> Rule:
        return register(make(*args, **kwargs))

    return declare


def register(r: Rule) -> Rule:
    """Register a declared rule. Ids and slugs are unique for good."""
    for existing in _REGISTRY.values():
        if existing.id == r.id and existing != r:
            raise ValueError(f"rule id {r.id} declared twice")
        if existing.slug == r.slug and existing.id != r.id:
            raise ValueError(f"rule slug {r.slug} used by {existing.id} and {r.id}")
    _REGISTRY[r.id] = r
    return r


def registered() -> list[Rule]:
    """The rules declared so far, in declaration order (see :mod:`gpuport.scan.catalog`)."""
    return list(_REGISTRY.values())


# The modules that declare the rules, by the first digit of their ids (GP1xx, GP2xx, ...):
# importing them registers every rule (and every scanner). A scan imports a module only when
# it needs it (gpuport.scan.base, gpuport.scan.catalog).
RULE_MODULES: dict[str, tuple[str, ...]] = {
    "1": ("gpuport.scan.deps",),
    "2": ("gpuport.scan.python",),
    "3": ("gpuport.scan.kernels",),
    "4": ("gpuport.scan.containers",),
    "5": ("gpuport.scan.build.analyze", "gpuport.scan.build.gpu_targets"),
    "6": ("gpuport.project.triage", "gpuport.project.unreached_helpers"),
}


def load_rule_modules(digit: str | None = None) -> None:
    """Import the modules declaring the rules whose ids start with ``GP<digit>`` (all: None)."""
    chosen = RULE_MODULES.values() if digit is None else (RULE_MODULES.get(digit, ()),)
    for modules in chosen:
        for name in modules:
            importlib.import_module(name)


def find_rule(rule_id: str) -> Rule | None:
    """The rule of ``rule_id`` (an exact id), its module imported if it was not yet: findings
    can come from a worker process whose rule modules this process never loaded."""
    found = _REGISTRY.get(rule_id)
    if found is None and rule_id.startswith("GP"):
        load_rule_modules(rule_id[2:3])
        found = _REGISTRY.get(rule_id)
    return found


# Declare and register a rule: ``rule(id="GP101", slug=..., ...)`` takes Rule's fields, checked
# by mypy like the constructor's.
rule = _registering(Rule)


def prefilter(rules: Iterable[Rule]) -> tuple[str, ...] | None:
    """The needles of ``rules`` together; None when one of them has none (it may fire anywhere).

    A scanner may skip a text that contains none of these words: no enabled rule can fire there.
    """
    words: set[str] = set()
    for r in rules:
        if not r.needles:
            return None
        words.update(r.needles)
    return tuple(sorted(words))


def case_variants(*words: str) -> tuple[str, ...]:
    """Every upper/lower-case spelling of ``words``: needles for a case-insensitive match."""
    variants: list[str] = []
    for word in words:
        choices = [(c.lower(), c.upper()) if c.isalpha() else (c,) for c in word]
        variants.extend("".join(p) for p in itertools.product(*choices))
    return tuple(dict.fromkeys(variants))


def _without_holders(needles: set[str]) -> list[str]:
    """``needles`` less those that hold another one: each needle's substrings of the lengths
    kept so far are looked up, shortest needles first (a pairwise test is O(n²) in ~600)."""
    kept: set[str] = set()
    lengths: set[int] = set()
    for needle in sorted(needles, key=len):
        size = len(needle)
        if not any(
            needle[i : i + length] in kept
            for length in lengths
            if length < size
            for i in range(size - length + 1)
        ):
            kept.add(needle)
            lengths.add(size)
    return list(kept)


class NeedleSet:
    """A fast "does this text hold one of these needles" test: the scanners' pre-filter.

    - A word given in every upper/lower-case spelling (:func:`case_variants` makes up to 2**n
      needles for a word of n letters) is looked for once, in the lowered text. Lowering can
      only add matches (from letters outside ASCII): a rule then runs where it finds nothing.
    - Up to ``_FEW`` other needles: one substring search each, the last one found first
      (projects mention the same few words in file after file).
    - More: the needles that hit last first, then one pass of a regular expression shaped as a
      trie of every needle (one branch per next character, so a position that starts no needle
      costs one step). Over 2,000 Python files (25.7 MB, most of them holding no needle) that
      took 0.64 s where one substring search per needle took 5.86 s, with the ~600 needles of
      every GP2xx rule (benchmarks/python_prefilter.py, results in
      benchmarks/results/python_prefilter.md).

    A needle holding another is dropped: it is found wherever the shorter one is.
    """

    # One substring search runs at GB/s, a pass of the trie at tens of MB/s: over Python
    # sources, about 40 needles cost the same either way (measured with random sets of GP2xx
    # needles, 600 files).
    _FEW = 40
    _RECENT = 4

    __slots__ = ("_exact", "_folded", "_pattern", "_recent")

    def __init__(self, needles: Iterable[str]) -> None:
        spellings: dict[str, set[str]] = {}
        for needle in needles:
            spellings.setdefault(needle.lower(), set()).add(needle)
        exact: set[str] = set()
        folded: list[str] = []
        for word, group in spellings.items():
            cased = sum(1 for c in word if c.lower() != c.upper())
            if cased and len(group) == 2**cased:  # every spelling is there
                folded.append(word)
            else:
                exact.update(group)
        kept = _without_holders(exact)
        self._folded = tuple(sorted(folded, key=lambda n: (len(n), n)))
        self._exact = sorted(kept, key=lambda n: (len(n), n))  # shortest: likeliest found
        self._pattern = re.compile(_trie(sorted(kept))) if len(kept) > self._FEW else None
        self._recent: list[str] = []

    def found_in(self, text: str, lowered: Callable[[], str] | None = None) -> bool:
        """Whether ``text`` holds a needle; ``lowered`` gives ``text.lower()`` (once per text,
        shared by the sets that look at it), asked only when a case-insensitive word is."""
        pattern = self._pattern
        if pattern is None:
            exact = self._exact
            for i, needle in enumerate(exact):
                if needle in text:
                    if i:
                        exact.insert(0, exact.pop(i))
                    return True
        elif self._match(text, pattern):
            return True
        if not self._folded:
            return False
        lower = text.lower() if lowered is None else lowered()
        return any(map(lower.__contains__, self._folded))

    def _match(self, text: str, pattern: re.Pattern[str]) -> bool:
        recent = self._recent
        for needle in recent:
            if needle in text:
                return True
        match = pattern.search(text)
        if match is None:
            return False
        recent.insert(0, match.group())
        del recent[self._RECENT :]
        return True

    @classmethod
    def of(cls, rules: Iterable[Rule]) -> NeedleSet | None:
        """The needles of ``rules`` together; None when one of them has none (it may fire
        anywhere, so no text can be skipped)."""
        words = prefilter(rules)
        return None if words is None else cls(words)


_RULE_NEEDLES: dict[str, tuple[Rule, NeedleSet]] = {}


def needles_of(r: Rule) -> NeedleSet:
    """``r``'s needles as a set (built once per rule); empty when ``r`` has none."""
    cached = _RULE_NEEDLES.get(r.id)
    if cached is None or cached[0] is not r:  # a test may declare a rule's id anew
        cached = _RULE_NEEDLES[r.id] = (r, NeedleSet(r.needles))
    return cached[1]


def trie_pattern(words: Iterable[str]) -> str:
    """A regular expression matching exactly one of ``words``, branching one character at a
    time (see :class:`NeedleSet`)."""
    return _trie(sorted(set(words)))


def _trie(words: list[str]) -> str:
    by_first: dict[str, list[str]] = {}
    for word in words:
        if word:
            by_first.setdefault(word[0], []).append(word[1:])
    if not by_first:
        return ""
    branches = [re.escape(first) + _trie(rests) for first, rests in sorted(by_first.items())]
    body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
    return f"(?:{body})?" if "" in words else body


@dataclass(frozen=True, slots=True)
class RuleIndex:
    """Rules listed together, one line each: what ``gpuport explain`` shows without an id."""

    rules: tuple[Rule, ...]
