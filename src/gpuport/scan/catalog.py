"""Every rule gpuport has: the scanners that declare them are imported here, then looked up."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import gpuport.project.triage  # registers GP601 and GP602, the rules the triage reports
import gpuport.project.unreached_helpers  # registers GP603
import gpuport.scan  # noqa: F401  (importing the scanners registers every rule)
from gpuport.findings import Category
from gpuport.rules import Rule, registered


def all_rules() -> list[Rule]:
    """Every rule, sorted by id. Importing the scanners registers them."""
    return sorted(registered(), key=lambda r: r.id)


def get_rule(key: str) -> Rule:
    """Look a rule up by id (case-insensitive) or slug."""
    key = key.strip()
    for r in all_rules():
        if r.id.lower() == key.lower() or r.slug == key.lower():
            return r
    raise KeyError(key)


def iter_rules(category: Category | None = None) -> Iterator[Rule]:
    for r in all_rules():
        if category is None or r.category == category:
            yield r


def enabled_rules(ids: Iterable[str], category: Category | None = None) -> list[Rule]:
    """The registered rules among ``ids`` (of one category, when given), sorted by id."""
    wanted = set(ids)
    return [
        r for r in all_rules() if r.id in wanted and (category is None or r.category == category)
    ]
