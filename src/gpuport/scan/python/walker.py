"""The one walk over a parsed Python text: keeps the context up to date and hands nodes to checks.

The walk is iterative and in source order (deeply nested expressions must not exhaust the
stack). For each node it first updates what the context remembers (imports, assignments,
scopes), then derives the events some check asked for (a module imported, an environment
variable used, a target assigned) and calls the checks of the enabled rules that look at the
node or event (:mod:`.checks`). It decides nothing about any rule.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

from gpuport.findings import Finding
from gpuport.scan.python import environment
from gpuport.scan.python.checks import (
    Assignment,
    Dispatch,
    EnvAccess,
    Event,
    ModuleImport,
    ShellCommand,
)
from gpuport.scan.python.context import PythonContext
from gpuport.scan.python.nodes import argument, child_fields, literal, parameters
from gpuport.scan.python.prefilter import STATEMENT_TYPES, SourceSegments

_FUNCTION_TYPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_IMPORT_MODULE = "importlib.import_module"


class PythonWalker:
    """Walks one file's parsed texts (a notebook's cells one after another) for the enabled rules."""

    def __init__(
        self, path: str, dispatch: Dispatch, first_party: frozenset[str] = frozenset()
    ) -> None:
        self.context = PythonContext(path, first_party)
        self._dispatch = dispatch
        self._handlers = _handlers_for(dispatch)
        self._plans = _plans_for(dispatch)
        self._followed = [
            (kind, checks, self.context.followed_names(kind))
            for kind, checks in dispatch.followed.items()
        ]
        self._every_call = dispatch.every_call
        # asked at every call: answered once
        self._sees_imports = dispatch.sees(ModuleImport)
        self._sees_env = dispatch.sees(EnvAccess)
        self._needs_qual = bool(
            dispatch.calls
            or dispatch.call_prefixes
            or dispatch.sees(ModuleImport)
            or dispatch.sees(EnvAccess)
        )

    # -- entry points ------------------------------------------------------------------------

    def walk(self, tree: ast.AST, text: str | None = None) -> Sequence[Finding]:
        """The findings in ``tree``; line numbers are those of the text it was parsed from.

        Given ``text`` (exactly what ``tree`` was parsed from), statements whose source holds
        nothing any enabled rule looks for are stepped over without walking them.
        """
        context = self.context
        start = len(context.findings)
        context.begin()
        handlers = self._handlers
        parents = context.parents
        segments = (
            SourceSegments.of(text, self._dispatch.statement_needles) if text is not None else None
        )
        self._every_call = self._dispatch.every_call_in(text)
        plans = self._plans
        inert = segments.inert if segments is not None else None
        tracked_names, scopes = context.tracked_names, context.scopes
        stack: list[ast.AST | None] = [tree]
        pop, push = stack.pop, stack.append
        while stack:
            node = pop()
            if node is None:  # the end of a function or class body
                context.leave_scope()
                continue
            kind = type(node)
            handler, statement, scope, fields = plans.get(kind) or _plan(plans, handlers, kind)
            if statement and inert is not None and inert(node, tracked_names(), scopes[-1].module):
                continue
            if handler is not None:
                handler(self, node)
            if scope is _FUNCTION and isinstance(node, _FUNCTION_TYPES):
                context.enter_scope(parameters(node.args))
                push(None)
            elif scope is _CLASS:
                context.enter_scope()
                push(None)
            if not fields:  # Name, Constant…: no field can hold a node (nodes.child_fields)
                continue
            children: list[ast.AST] = []
            for name in fields:
                value = getattr(node, name, None)
                if type(value) is list:
                    for item in value:
                        if isinstance(item, ast.AST):
                            parents[item] = node
                            children.append(item)
                elif isinstance(value, ast.AST):
                    parents[value] = node
                    children.append(value)
            if children:
                children.reverse()
                stack += children
        return context.findings[start:]

    def shell_command(self, command: str, line: int) -> Sequence[Finding]:
        """The findings for a shell command line (a notebook ``!`` line or ``%%bash`` cell line)."""
        start = len(self.context.findings)
        self._event(ShellCommand(command, line))
        return self.context.findings[start:]

    def environment(self, name: str, line: int) -> Sequence[Finding]:
        """The findings for a variable set outside Python code (a notebook ``%env`` line)."""
        start = len(self.context.findings)
        self._event(EnvAccess(name, line, 0, write=True))
        return self.context.findings[start:]

    # -- dispatch ----------------------------------------------------------------------------

    def _event(self, event: Event) -> None:
        for check in self._dispatch.events.get(type(event), ()):
            check(self.context, event)

    def _event_if_any(self, event: Event | None) -> None:
        if event is not None:
            self._event(event)

    def _checks(self, node: ast.AST) -> None:
        """The checks that asked for every node of this type."""
        for check in self._dispatch.nodes[type(node)]:
            check(self.context, node)

    # -- imports -----------------------------------------------------------------------------

    def _import(self, node: ast.AST) -> None:
        if not isinstance(node, ast.Import):
            return
        context = self.context
        sees = self._dispatch.sees(ModuleImport)
        for alias in node.names:
            if alias.asname:
                context.add_alias(alias.asname, alias.name)
            else:
                top = alias.name.split(".", 1)[0]
                context.add_alias(top, top)
            if sees:
                self._event(ModuleImport(alias.name, node))

    def _import_from(self, node: ast.AST) -> None:
        if not isinstance(node, ast.ImportFrom):
            return
        if node.level or not node.module:
            return  # relative: the project's own modules
        context = self.context
        sees = self._dispatch.sees(ModuleImport)
        for alias in node.names:
            if alias.name == "*":
                if sees:
                    self._event(ModuleImport(node.module, node))
                continue
            full = f"{node.module}.{alias.name}"
            context.add_alias(alias.asname or alias.name, full)
            if sees:
                self._event(ModuleImport(full, node, shown=node.module))

    # -- assignments -------------------------------------------------------------------------

    def _assign(self, node: ast.AST) -> None:
        targets: list[ast.expr]
        value: ast.expr | None
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)):
            targets, value = [node.target], node.value
        else:
            return
        context = self.context
        kind = context.kind(value) if value is not None else None
        dispatch = self._dispatch
        checks = dispatch.events.get(Assignment, ())
        for target in targets:
            context.bind(target, kind, value, node)
            if value is None:
                continue
            if dispatch.assignments and isinstance(target, ast.Attribute):
                for check in dispatch.assignments.get(context.qual(target) or "", ()):
                    check(context, Assignment(target, value, node))
            for check in checks:
                check(context, Assignment(target, value, node))

    # -- calls, names, attributes ------------------------------------------------------------

    def _call(self, node: ast.AST) -> None:
        if not isinstance(node, ast.Call):
            return
        context = self.context
        dispatch = self._dispatch
        func = node.func
        qual = context.qual(func) if self._needs_qual else None
        if qual is not None:
            for check in dispatch.calls.get(qual, ()):
                check(context, node)
            if dispatch.prefixes and qual.startswith(dispatch.prefixes):
                for prefix, check in dispatch.call_prefixes:
                    if qual.startswith(prefix):
                        check(context, node)
        if isinstance(func, ast.Attribute):
            for check in dispatch.methods.get(func.attr, ()):
                check(context, node)
        for check in self._every_call:
            check(context, node)
        if self._sees_imports:
            module = None
            if qual == _IMPORT_MODULE:
                module = literal(argument(node, 0, "name"))
                if module and module.startswith("."):
                    module = None
            elif qual is None and isinstance(func, ast.Name) and func.id == "__import__":
                module = literal(argument(node, 0, "name"))
            if module:
                self._event(ModuleImport(module, node))
        if self._sees_env:
            for access in environment.in_call(context, node, qual):
                self._event(access)

    def _attribute(self, node: ast.AST) -> None:
        if not isinstance(node, ast.Attribute):
            return
        by_qual = self._dispatch.attributes.get(node.attr)
        if by_qual is None or not isinstance(node.ctx, ast.Load):
            return
        qual = self.context.qual(node)
        if qual is not None:
            for check in by_qual.get(qual, ()):
                check(self.context, node)

    def _name(self, node: ast.AST) -> None:
        if not isinstance(node, ast.Name):
            return
        context = self.context
        # The names that may hold each followed kind (sets the context keeps up to date), not
        # every tracked name first: those are mostly imports (``torch``), read at most names.
        for kind, checks, names in self._followed:
            if node.id in names and isinstance(node.ctx, ast.Load) and context.kind(node) is kind:
                for check in checks:
                    check(context, node)

    def _subscript(self, node: ast.AST) -> None:
        if isinstance(node, ast.Subscript):
            self._event_if_any(environment.in_subscript(self.context, node))

    def _compare(self, node: ast.AST) -> None:
        if not isinstance(node, ast.Compare):
            return
        self._event_if_any(environment.in_compare(self.context, node))
        if ast.Compare in self._dispatch.nodes:
            self._checks(node)


_Handler = Callable[[PythonWalker, ast.AST], None]
_FUNCTION, _CLASS = "function", "class"


class _Plan(NamedTuple):
    """What the walk does at a node of one type, worked out once per type and dispatch."""

    handler: _Handler | None
    statement: bool  # a statement the pre-filter may step over
    scope: str | None  # _FUNCTION or _CLASS: its body is a scope of its own
    fields: tuple[str, ...]  # the fields holding its children


_Plans = dict[type[ast.AST], _Plan]


@functools.cache
def _plans_for(dispatch: Dispatch) -> _Plans:
    """An empty table of plans for one dispatch, filled as node types turn up."""
    return {}


def _plan(plans: _Plans, handlers: Mapping[type[ast.AST], _Handler], kind: type[ast.AST]) -> _Plan:
    scope = _FUNCTION if kind in _FUNCTION_TYPES else _CLASS if kind is ast.ClassDef else None
    plan = plans[kind] = _Plan(
        handlers.get(kind),
        kind in STATEMENT_TYPES,
        scope,
        child_fields(kind),
    )
    return plan


@functools.cache
def _handlers_for(dispatch: Dispatch) -> dict[type[ast.AST], _Handler]:
    """Node type -> what the walk does there (other nodes are only walked through)."""
    handlers: dict[type[ast.AST], _Handler] = dict.fromkeys(dispatch.nodes, PythonWalker._checks)
    handlers[ast.Import] = PythonWalker._import
    handlers[ast.ImportFrom] = PythonWalker._import_from
    for node_type in (ast.Assign, ast.AnnAssign, ast.NamedExpr):
        handlers[node_type] = PythonWalker._assign
    handlers[ast.Call] = PythonWalker._call
    if dispatch.attributes:
        handlers[ast.Attribute] = PythonWalker._attribute
    if dispatch.followed:
        handlers[ast.Name] = PythonWalker._name
    if dispatch.sees(EnvAccess):
        handlers[ast.Subscript] = PythonWalker._subscript
        handlers[ast.Compare] = PythonWalker._compare
    return handlers
