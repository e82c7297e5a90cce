"""What each GP2xx rule's check looks at, and the tables the walk dispatches nodes from.

A rule's module declares the rule and, right after it, the one function that checks it,
registered with :func:`looks_at`: the node types, qualified calls, attributes, followed values
or events (facts the walk derives from several kinds of node) it wants to see. The walk
(:mod:`.walker`) builds a :class:`Dispatch` for the enabled rules and hands each node only to
the checks that asked for it.

A check that looks only at things reached through a resolved name (a qualified call or
attribute, a followed value, an import) can fire only in a statement that names a tracked name
or says ``import``; a check that looks at raw syntax (constants, comparisons, assignments…)
needs its rule's needles in the statement itself. :attr:`Dispatch.statement_needles` holds the
needles of the rules with such checks, for the statement pre-filter.
"""

from __future__ import annotations

import ast
import functools
import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import NamedTuple, TypeVar

from gpuport.rules import NeedleSet, Rule, needles_of, prefilter
from gpuport.scan.python.context import PythonContext, ValueKind, kind_words

# --- Events: facts the walk derives from several kinds of node --------------------------------


@dataclass(slots=True)
class ModuleImport:
    """``module`` is imported at ``node``: ``import``, ``from … import``, ``__import__("…")`` or
    ``importlib.import_module("…")``. ``shown`` is the ``from`` part of ``from x import y``."""

    module: str
    node: ast.AST
    shown: str = ""


@dataclass(slots=True)
class EnvAccess:
    """Environment variable ``name`` is read or set (``write``) at ``line``, ``column``."""

    name: str
    line: int
    column: int
    write: bool
    node: ast.AST | None = None  # where in the tree, when the access is in Python code


@dataclass(slots=True)
class Assignment:
    """``target = value`` (one target of an assignment, after its names are bound)."""

    target: ast.expr
    value: ast.expr
    # The assignment statement (or walrus), whose place in the tree is known when the check
    # runs; its target and value get theirs only after.
    node: ast.AST | None = None


@dataclass(slots=True)
class ShellCommand:
    """A shell command line outside Python code: a notebook ``!`` line or ``%%bash`` cell line."""

    command: str
    line: int


Event = ModuleImport | EnvAccess | Assignment | ShellCommand
# Events found only where a statement says `import` or names a tracked name (or outside Python
# statements altogether): the statement pre-filter never needs their rules' needles.
_RESOLVED_EVENTS: frozenset[type[Event]] = frozenset({ModuleImport, ShellCommand})
# Words a text must hold for the walk to raise an event there at all. Every environment access
# (:mod:`.environment`) spells "env": ``os.environ`` or a name bound from it, ``os.getenv``,
# ``putenv`` or ``unsetenv``, an ``env=`` keyword, a notebook's ``%env`` line. Imports,
# assignments and shell lines are anywhere: no word.
_EVENT_WORDS: dict[type[Event], tuple[str, ...]] = {EnvAccess: ("env",)}

# A check: the context, and one node or event it asked for.
Check = Callable[[PythonContext, object], None]
_F = TypeVar("_F", bound=Callable[..., None])


@dataclass(frozen=True, slots=True)
class Subscription:
    """What one rule's check looks at."""

    rule: Rule
    check: Check
    nodes: tuple[type[ast.AST], ...] = ()  # every node of these types
    calls: tuple[str, ...] = ()  # calls of these qualified names
    call_prefixes: tuple[str, ...] = ()  # calls of qualified names starting so
    methods: tuple[str, ...] = ()  # calls of methods so named, on anything: ``x.startswith(…)``
    every_call: bool = False
    attributes: tuple[str, ...] = ()  # reads of these qualified attributes
    assignments: tuple[str, ...] = ()  # assignments to these qualified attributes
    followed: tuple[ValueKind, ...] = ()  # names read that hold a followed value of these kinds
    events: tuple[type[Event], ...] = ()

    @property
    def raw_syntax(self) -> bool:
        """The check may fire where no resolved name is written: it needs its needles there."""
        return bool(
            self.nodes
            or self.methods
            or self.every_call
            or any(e not in _RESOLVED_EVENTS for e in self.events)
        )

    def words(self) -> tuple[tuple[Word, ...], ...] | None:
        """The texts the check can be called in at all: those holding every word of one of
        these groups; None: any text.

        A qualified call, attribute or assignment target is resolved from names that the text
        spells part by part (an import binds the name it writes, an attribute chain writes the
        rest), so each part of the qualified name stands in the text as a whole name; a method
        call writes its method's name; a followed value and an event need the words their
        sources write (:func:`~gpuport.scan.python.context.kind_words`, ``_EVENT_WORDS``). A
        node type or every call can be anywhere.
        """
        if self.nodes or self.every_call:
            return None
        groups = [
            tuple(Word(part, True) for part in qual.split("."))
            for qual in (*self.calls, *self.attributes, *self.assignments)
        ]
        for prefix in self.call_prefixes:  # its last part may be the start of a name
            *whole, last = prefix.split(".")
            groups.append((*(Word(p, True) for p in whole), *([Word(last, False)] if last else [])))
        groups += [(Word(method, True),) for method in self.methods]
        for kind in self.followed:
            parts = kind_words(kind)
            if parts is None:
                return None
            groups.append(tuple(Word(part, True) for part in parts))
        for event in self.events:
            fragments = _EVENT_WORDS.get(event)
            if fragments is None:
                return None
            groups.append(tuple(Word(fragment, False) for fragment in fragments))
        return tuple(dict.fromkeys(groups))


class Word(NamedTuple):
    """A word a text must hold: as a whole name (``version``, not ``__version__``), or
    anywhere (``env`` in ``environ``)."""

    text: str
    whole: bool

    def found_in(self, text: str) -> bool:
        """``text`` (ASCII) holds the word. The character before a name is tested on each
        match, not written as a look-behind: an expression that starts with one is tried at
        every position of the text (40 times slower over DeepSpeed's Python)."""
        at = text.find(self.text)
        if at < 0 or not self.whole:
            return at >= 0
        pattern = _name_end(self.text)
        match = pattern.search(text, at)
        while match is not None:
            start = match.start()
            before = text[start - 1] if start else " "
            if not (before.isalnum() or before == "_"):
                return True
            match = pattern.search(text, start + 1)
        return False


@functools.lru_cache(maxsize=256)
def _name_end(name: str) -> re.Pattern[str]:
    return re.compile(rf"{re.escape(name)}(?!\w)")


_SUBSCRIPTIONS: list[Subscription] = []


def looks_at(
    rule: Rule,
    *,
    nodes: Iterable[type[ast.AST]] = (),
    calls: Iterable[str] = (),
    call_prefixes: Iterable[str] = (),
    methods: Iterable[str] = (),
    every_call: bool = False,
    attributes: Iterable[str] = (),
    assignments: Iterable[str] = (),
    followed: Iterable[ValueKind] = (),
    events: Iterable[type[Event]] = (),
) -> Callable[[_F], _F]:
    """Register the decorated function as ``rule``'s check, given what it looks at."""

    def register(check: _F) -> _F:
        _SUBSCRIPTIONS.append(
            Subscription(
                rule,
                check,
                tuple(nodes),
                tuple(calls),
                tuple(call_prefixes),
                tuple(methods),
                every_call,
                tuple(attributes),
                tuple(assignments),
                tuple(followed),
                tuple(events),
            )
        )
        return check

    return register


def subscriptions() -> list[Subscription]:
    """Every registered check, in registration order."""
    return list(_SUBSCRIPTIONS)


@dataclass(frozen=True, slots=True, eq=False)
class Dispatch:
    """For a set of enabled rules: which checks see which nodes, and the words they need."""

    rules: tuple[Rule, ...]
    nodes: dict[type[ast.AST], tuple[Check, ...]]
    calls: dict[str, tuple[Check, ...]]
    call_prefixes: tuple[tuple[str, Check], ...]
    prefixes: tuple[str, ...]  # every prefix of call_prefixes, for one quick test
    methods: dict[str, tuple[Check, ...]]
    every_call: tuple[Check, ...]
    # every_call's checks, each with its rule's needles (None: it has none and may fire anywhere)
    every_call_needles: tuple[tuple[Check, NeedleSet | None], ...]
    attributes: dict[str, dict[str, tuple[Check, ...]]]  # last name -> qualified name -> checks
    assignments: dict[str, tuple[Check, ...]]  # qualified attribute -> checks (of Assignment)
    followed: dict[ValueKind, tuple[Check, ...]]
    events: dict[type[Event], tuple[Check, ...]]
    # The needles of the enabled rules that are not in ``conditional`` (None: one may fire
    # anywhere, nothing can be skipped), and those of the rules with a check on raw syntax
    # (see the module's docstring).
    needles: tuple[str, ...] | None
    statement_needles: tuple[str, ...] | None
    # The rules whose checks are called only in texts holding certain words (Subscription.words):
    # each with its needles (None: it has none) and those groups of words. Such a rule may fire
    # only where both are found: ``torch.version.cuda``'s rule needs "cuda" (its needle) and
    # "torch", "version" (the attribute's parts), not "cuda" alone, as in most files of a
    # PyTorch project.
    conditional: tuple[tuple[NeedleSet | None, tuple[tuple[Word, ...], ...]], ...] = ()
    # ``needles`` as a NeedleSet, built on first use: the file pre-filter of a scan with the
    # import rule enabled (every default scan) never uses it, and building it (a trie of ~600
    # needles) was 12 of the 13 ms of CPU that building the dispatch took.
    _needle_set: list[NeedleSet] = field(default_factory=list, repr=False)

    def may_fire_in(self, text: str) -> bool:
        """Some enabled rule may fire in ``text``: it holds one of their needles (and, for a
        conditional rule, the words its checks need)."""
        if self.needles is None:
            return bool(self.rules)
        if not self._needle_set:
            self._needle_set.append(NeedleSet(self.needles))
        return self._needle_set[0].found_in(text) or self.conditional_in(text)

    def conditional_in(self, text: str) -> bool:
        """Some conditional rule may fire in ``text``. Outside ASCII every text may hold the
        words: identifiers are NFKC-normalised, so the source may spell one differently."""
        if not self.conditional:
            return False
        plain = text.isascii()
        # Each word looked for once: the rules share theirs (torch, backends, cuda…), and a
        # word that is not there costs a search of the whole text. Plain loops, not a closure
        # and a generator per rule: asked of 780 of DeepSpeed's files, 27 -> 23 ms of CPU.
        seen: dict[Word, bool] = {}
        for needles, groups in self.conditional:
            if plain:
                for group in groups:
                    for word in group:
                        found = seen.get(word)
                        if found is None:
                            found = seen[word] = word.found_in(text)
                        if not found:
                            break
                    else:  # every word of the group is there
                        break
                else:  # no group is
                    continue
            if needles is None or needles.found_in(text):
                return True
        return False

    def every_call_in(self, text: str | None) -> tuple[Check, ...]:
        """The checks of every call that may fire in ``text`` (a file or a cell, None: unknown):
        a check on raw syntax fires only where its rule's needles are written."""
        if text is None:
            return self.every_call
        return tuple(
            check
            for check, needles in self.every_call_needles
            if needles is None or needles.found_in(text)
        )

    def sees(self, event: type[Event]) -> bool:
        """Some enabled check looks at ``event``."""
        return event in self.events


_DISPATCHES: dict[frozenset[str], Dispatch] = {}


def dispatch_for(enabled: frozenset[str]) -> Dispatch:
    """The dispatch tables for the checks of the ``enabled`` rules (cached per set)."""
    found = _DISPATCHES.get(enabled)
    if found is None:
        if len(_DISPATCHES) > 64:
            _DISPATCHES.clear()
        found = _DISPATCHES[enabled] = _build([s for s in _SUBSCRIPTIONS if s.rule.id in enabled])
    return found


def forget_dispatches() -> None:
    """Drop the cached tables (tests that change a registration call this)."""
    _DISPATCHES.clear()


def _build(chosen: list[Subscription]) -> Dispatch:
    nodes: defaultdict[type[ast.AST], list[Check]] = defaultdict(list)
    calls: defaultdict[str, list[Check]] = defaultdict(list)
    methods: defaultdict[str, list[Check]] = defaultdict(list)
    attributes: defaultdict[str, defaultdict[str, list[Check]]] = defaultdict(
        lambda: defaultdict(list)
    )
    assignments: defaultdict[str, list[Check]] = defaultdict(list)
    followed: defaultdict[ValueKind, list[Check]] = defaultdict(list)
    events: defaultdict[type[Event], list[Check]] = defaultdict(list)
    prefixes: list[tuple[str, Check]] = []
    every_call: list[Check] = []
    every_call_needles: list[tuple[Check, NeedleSet | None]] = []
    for sub in chosen:
        for node_type in sub.nodes:
            nodes[node_type].append(sub.check)
        for qual in sub.calls:
            calls[qual].append(sub.check)
        prefixes += [(prefix, sub.check) for prefix in sub.call_prefixes]
        for method in sub.methods:
            methods[method].append(sub.check)
        if sub.every_call:
            every_call.append(sub.check)
            every_call_needles.append(
                (sub.check, needles_of(sub.rule) if sub.rule.needles else None)
            )
        for qual in sub.attributes:
            attributes[qual.rsplit(".", 1)[-1]][qual].append(sub.check)
        for qual in sub.assignments:
            assignments[qual].append(sub.check)
        for kind in sub.followed:
            followed[kind].append(sub.check)
        for event in sub.events:
            events[event].append(sub.check)
    rules = tuple(dict.fromkeys(sub.rule for sub in chosen))
    raw = dict.fromkeys(sub.rule for sub in chosen if sub.raw_syntax)
    words: dict[Rule, list[tuple[Word, ...]] | None] = {}
    for sub in chosen:
        groups = sub.words()
        known = words.setdefault(sub.rule, [])
        if groups is None or known is None:
            words[sub.rule] = None
        else:
            known += groups
    conditional = {r: tuple(dict.fromkeys(g)) for r, g in words.items() if g is not None}
    plain = [r for r in rules if r not in conditional]
    return Dispatch(
        rules=rules,
        nodes={k: tuple(v) for k, v in nodes.items()},
        calls={k: tuple(v) for k, v in calls.items()},
        call_prefixes=tuple(prefixes),
        prefixes=tuple(dict.fromkeys(prefix for prefix, _ in prefixes)),
        methods={k: tuple(v) for k, v in methods.items()},
        every_call=tuple(every_call),
        every_call_needles=tuple(every_call_needles),
        attributes={
            last: {qual: tuple(v) for qual, v in by_qual.items()}
            for last, by_qual in attributes.items()
        },
        assignments={k: tuple(v) for k, v in assignments.items()},
        followed={k: tuple(v) for k, v in followed.items()},
        events={k: tuple(v) for k, v in events.items()},
        needles=prefilter(plain),
        statement_needles=prefilter(raw),
        conditional=tuple(
            (needles_of(r) if r.needles else None, groups) for r, groups in conditional.items()
        ),
    )
