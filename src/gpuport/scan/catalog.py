"""Every rule gpuport has, and the rules of one scan, each loaded when first asked for.

A rule is declared in the module of its check (:mod:`gpuport.rules`); importing that module
registers it. :func:`all_rules` imports them all (``explain``, SARIF's rule table, the docs);
a scan knows its rules by id (:data:`gpuport.scan.rule_ids.RULE_IDS`, generated from the
declarations by tools/gen_rule_docs.py) and loads a rule's module only when a report asks for
that rule (:class:`RuleTable`), so a Python-only tree never imports the CUDA rules.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from gpuport.findings import Category
from gpuport.rules import Rule, find_rule, load_rule_modules, registered
from gpuport.scan.rule_ids import RULE_IDS


def all_rules() -> list[Rule]:
    """Every rule, sorted by id (their modules imported)."""
    load_rule_modules()
    return sorted(registered(), key=lambda r: r.id)


def rule_ids() -> list[str]:
    """Every rule's id, sorted, without importing a rule's module (and any rule registered
    beyond the generated list, as tests do)."""
    return sorted(set(RULE_IDS).union(r.id for r in registered()))


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


class RuleTable(Mapping[str, Rule]):
    """A scan's rules by id, in id order; a rule's declaration is looked up when first asked
    for. ``rules`` are known already (a test's own); ``ids`` are found in the catalog."""

    __slots__ = ("_id_set", "_ids", "_known")

    def __init__(self, rules: Iterable[Rule] = (), ids: Iterable[str] = ()) -> None:
        self._known = {r.id: r for r in rules}
        self._id_set = frozenset(self._known.keys() | set(ids))
        self._ids = tuple(sorted(self._id_set))

    def __getitem__(self, rule_id: str) -> Rule:
        found = self._known.get(rule_id)
        if found is None:
            if rule_id not in self._id_set:
                raise KeyError(rule_id)
            found = find_rule(rule_id)
            if found is None:
                raise KeyError(rule_id)
            self._known[rule_id] = found
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids)

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, rule_id: object) -> bool:
        return rule_id in self._id_set

    def __repr__(self) -> str:
        return f"RuleTable({len(self._ids)} rules)"
