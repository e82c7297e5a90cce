"""Rule declarations: each rule is declared once, with its metadata and its documentation.

A scanner module declares its rules at import time with :func:`rule`; ``gpuport explain``,
SARIF's rule table and the docs are all generated from these declarations. The catalog of every
rule is :mod:`gpuport.scan.catalog`, which imports the scanners that declare them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import ParamSpec

from gpuport.findings import Category, Confidence, Excerpt, Finding, Fix, Location, Severity

_ID_RE = re.compile(r"^GP[1-5]\d\d$")
_SLUG_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_PREFIX = {
    Category.DEPENDENCIES: "1",
    Category.PYTHON: "2",
    Category.KERNELS: "3",
    Category.CONTAINERS: "4",
    Category.BUILD: "5",
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


@dataclass(frozen=True, slots=True)
class RuleIndex:
    """Rules listed together, one line each: what ``gpuport explain`` shows without an id."""

    rules: tuple[Rule, ...]
