"""What the walk of one Python file knows so far: names, followed values, and the findings made.

Rule-neutral: the walk (:mod:`.walker`) keeps this state up to date and the rules' checks ask it
questions. It resolves names through imports and aliases (``import torch as T``, ``from
torch.backends import cudnn``, ``from os import environ``), follows a few kinds of value through
simple assignments (``major, minor = torch.cuda.get_device_capability()``), remembers
module-level string constants, and collects each rule's findings once per rule, line and
subject. It never imports or runs the code it reads.
"""

from __future__ import annotations

import ast
import enum
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from gpuport.findings import Confidence, Finding, Severity
from gpuport.rules import Rule
from gpuport.scan.python.nodes import literal


class ValueKind(enum.Enum):
    """A kind of value the context follows from the call that makes it to the names holding it."""

    CAPABILITY = "capability"  # torch.cuda.get_device_capability(): the tuple or one number
    PROPERTIES = "properties"  # a torch.cuda.get_device_properties(...) object
    DEVICE_NAME = "device-name"  # torch.cuda.get_device_name() or properties .name
    CUDA_VERSION = "cuda-version"  # torch.version.cuda
    ENVIRON = "environ"  # os.environ or a copy of it


# Top-level modules of NVIDIA-only kernel DSLs (nvidia-cutlass-dsl installs `cutlass`).
NVIDIA_ONLY_DSL_MODULES = frozenset({"cutlass"})

# The PyTorch and standard-library names each kind starts from.
_CAPABILITY = "torch.cuda.get_device_capability"
_PROPERTIES = "torch.cuda.get_device_properties"
_DEVICE_NAME = "torch.cuda.get_device_name"
CUDA_VERSION = "torch.version.cuda"
ENVIRON = "os.environ"
_QUALIFIED_KINDS = {ENVIRON: ValueKind.ENVIRON, CUDA_VERSION: ValueKind.CUDA_VERSION}
_PROPERTY_KINDS = {
    "major": ValueKind.CAPABILITY,
    "minor": ValueKind.CAPABILITY,
    "name": ValueKind.DEVICE_NAME,
}
# The words every text holding a value of a kind spells, where the kind starts only from one
# qualified name (:meth:`PythonContext.kind`: a qualified name is spelled part by part, in an
# import or an attribute chain, and a name holding the value was bound from it in the same
# text). The other kinds start from several calls and properties: no word is known.
_KIND_WORDS = {kind: tuple(qualified.split(".")) for qualified, kind in _QUALIFIED_KINDS.items()}


def kind_words(kind: ValueKind) -> tuple[str, ...] | None:
    """Words that every text in which a value of ``kind`` is followed holds (None: unknown)."""
    return _KIND_WORDS.get(kind)


# String methods whose result is still the device name, for ``name.lower()`` and the like.
_NAME_KEEPING_METHODS = frozenset({"lower", "upper", "casefold", "strip", "lstrip", "rstrip"})


@dataclass(slots=True)
class Scope:
    """Names bound in one function (or class, or the module) that matter to the rules."""

    module: bool = False
    shadowed: set[str] = field(default_factory=set)  # local names hiding an import alias
    kinds: dict[str, ValueKind | None] = field(default_factory=dict)  # None: follows nothing


class PythonContext:
    """The state of one file's walk; a notebook's cells share one, so that an import in one cell
    resolves names in the next."""

    def __init__(self, path: str, first_party: frozenset[str] = frozenset()) -> None:
        self.path = path
        # The project's own top-level import names (ProjectFacts.first_party) and the package
        # this file itself sits in: importing them is not a third-party dependency.
        own_package = path.split("/", 1)[0] if "/" in path else ""
        self.first_party = first_party | ({own_package} if own_package.isidentifier() else set())
        self.aliases: dict[str, str] = {}  # local name -> the dotted name it stands for
        self.module_scope = Scope(module=True)
        self.scopes: list[Scope] = [self.module_scope]
        self.parents: dict[ast.AST, ast.AST] = {}
        self.strings: dict[str, str] = {}  # module-level NAME = "literal"
        # Names that were bound (or imported) to a followed value of each kind, ever.
        self._followed: dict[ValueKind, set[str]] = {kind: set() for kind in ValueKind}
        self.findings: list[Finding] = []
        self._fired: set[tuple[str, int, str]] = set()
        self._once: set[tuple[str, str]] = set()
        self._tracked: frozenset[str] | None = None
        # The names in ``aliases`` that stand for an NVIDIA-only DSL module, kept as aliases
        # change: two rules ask on every comparison and call (DeepSpeed: 54,000 look-ups of
        # an alias's module for 1,400 questions when each answer went through every alias).
        self._dsl_names: set[str] = set()
        self._operand_kinds: tuple[ast.Compare, list[ValueKind | None]] | None = None

    def imports_nvidia_only_dsl(self) -> bool:
        """The file is written in an NVIDIA-only kernel DSL (NVIDIA's CuTe DSL: ``import
        cutlass``): it never runs on ROCm, and GP201 reports that import once."""
        return bool(self._dsl_names)

    def is_first_party(self, module: str) -> bool:
        """``module`` (dotted) belongs to the project being scanned."""
        return module.split(".", 1)[0] in self.first_party

    # -- one parsed text at a time -----------------------------------------------------------

    def begin(self) -> None:
        """Start on a new parsed text (a file, or a notebook cell)."""
        self._fired = set()
        self.parents = {}

    # -- findings ----------------------------------------------------------------------------

    def report(
        self,
        rule: Rule,
        at: ast.AST | tuple[int, int],
        message: str,
        *,
        key: str = "",
        severity: Severity | None = None,
        confidence: Confidence | None = None,
        fix: str | None = None,
        references: Iterable[str] = (),
    ) -> None:
        """A finding of ``rule`` at a node or at a ``(line, column)`` (1-based; column 0: the
        whole line): once per rule, line and ``key`` (the subject)."""
        if isinstance(at, tuple):
            line, column = at
        else:
            line, column = getattr(at, "lineno", 0), getattr(at, "col_offset", -1) + 1
        fired = (rule.id, line, key)
        if fired in self._fired:
            return
        self._fired.add(fired)
        finding = rule.finding(
            self.path,
            line,
            column,
            message=message,
            fix=fix,
            severity=severity,
            confidence=confidence,
        )
        extra = tuple(r for r in references if r not in finding.references)
        if extra:
            finding = replace(finding, references=finding.references + extra)
        self.findings.append(finding)

    def first_time(self, rule: Rule, key: str) -> bool:
        """True the first time ``rule`` asks about ``key`` in this file (rules that tell once)."""
        if (rule.id, key) in self._once:
            return False
        self._once.add((rule.id, key))
        return True

    # -- scopes ------------------------------------------------------------------------------

    def enter_scope(self, parameters: Iterable[str] = ()) -> None:
        """A function (with its parameters) or class body starts."""
        names = set(parameters)
        self.scopes.append(Scope(shadowed=names, kinds=dict.fromkeys(names)))

    def leave_scope(self) -> None:
        scope = self.scopes.pop()
        if any(scope.kinds.values()):
            self._tracked = None

    def shadowed(self, name: str) -> bool:
        """A local name of an enclosing function hides the module's import of ``name``."""
        for scope in reversed(self.scopes):
            if scope.module:
                return False
            if name in scope.shadowed:
                return True
        return False

    def tracked_names(self) -> frozenset[str]:
        """Every name through which a rule can see a followed value or an imported module."""
        tracked = self._tracked
        if tracked is None:
            names = set(self.aliases)
            for followed in self._followed.values():
                names |= followed
            for scope in self.scopes:  # a name bound to None follows nothing
                names.update(name for name, kind in scope.kinds.items() if kind)
            tracked = self._tracked = frozenset(names)
        return tracked

    # -- names -------------------------------------------------------------------------------

    def qual(self, node: ast.AST) -> str | None:
        """The dotted name an expression stands for (``T.version.cuda`` -> ``torch.version.cuda``)."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        # The alias first: most names are none, and then no scope need be searched.
        base = self.aliases.get(node.id)
        if base is None or self.shadowed(node.id):
            return None
        parts.append(base)
        return ".".join(reversed(parts))

    def add_alias(self, name: str, qualified: str) -> None:
        """``import qualified as name`` (or ``from … import``)."""
        self.aliases[name] = qualified
        if qualified.split(".", 1)[0] in NVIDIA_ONLY_DSL_MODULES:
            self._dsl_names.add(name)
        else:
            self._dsl_names.discard(name)
        kind = _QUALIFIED_KINDS.get(qualified)
        if kind is not None:
            self._followed[kind].add(name)
        self._tracked = None

    def followed_names(self, kind: ValueKind) -> set[str]:
        """The names that may hold a followed value of ``kind`` (a quick test before :meth:`kind`):
        one set for the context's life, kept up to date as names bind."""
        return self._followed[kind]

    def _name_kind(self, name: str) -> ValueKind | None:
        for scope in reversed(self.scopes):
            if name in scope.kinds:
                return scope.kinds[name]  # None: a local name that follows nothing
        return None

    def kind(self, node: ast.AST | None) -> ValueKind | None:
        """What kind of followed value an expression holds, if any."""
        if node is None:
            return None
        if isinstance(node, ast.Name):
            kind = self._name_kind(node.id)
            if kind is None:  # from os import environ; from torch.version import cuda
                kind = _QUALIFIED_KINDS.get(self.qual(node) or "")
            return kind
        if isinstance(node, ast.Call):
            return self._call_kind(node)
        if isinstance(node, ast.Attribute):
            qual = self.qual(node)
            if qual in _QUALIFIED_KINDS:
                return _QUALIFIED_KINDS[qual]
            if node.attr in _PROPERTY_KINDS and self.kind(node.value) is ValueKind.PROPERTIES:
                return _PROPERTY_KINDS[node.attr]
            return None
        if isinstance(node, ast.Subscript):
            base = self.kind(node.value)
            return base if base in (ValueKind.CAPABILITY, ValueKind.DEVICE_NAME) else None
        if isinstance(node, (ast.Tuple, ast.List)):
            capability = any(self.kind(e) is ValueKind.CAPABILITY for e in node.elts)
            return ValueKind.CAPABILITY if capability else None
        if isinstance(node, ast.BinOp):
            pending: list[ast.AST] = [node]
            while pending:  # flattened: long arithmetic chains must not recurse
                item = pending.pop()
                if isinstance(item, ast.BinOp):
                    pending += (item.left, item.right)
                elif self.kind(item) is ValueKind.CAPABILITY:
                    return ValueKind.CAPABILITY
            return None
        # {**os.environ, "X": "1"}
        if isinstance(node, ast.Dict) and any(
            k is None and self.is_environ(v) for k, v in zip(node.keys, node.values, strict=True)
        ):
            return ValueKind.ENVIRON
        return None

    def _call_kind(self, node: ast.Call) -> ValueKind | None:
        func = node.func
        qual = self.qual(func)
        if qual == _CAPABILITY:
            return ValueKind.CAPABILITY
        if qual == _PROPERTIES:
            return ValueKind.PROPERTIES
        if qual == _DEVICE_NAME:
            return ValueKind.DEVICE_NAME
        if qual == f"{ENVIRON}.copy" or (
            isinstance(func, ast.Name)
            and func.id == "dict"
            and node.args
            and self.is_environ(node.args[0])
        ):
            return ValueKind.ENVIRON
        if isinstance(func, ast.Attribute) and func.attr in _NAME_KEEPING_METHODS:
            is_name = self.kind(func.value) is ValueKind.DEVICE_NAME
            return ValueKind.DEVICE_NAME if is_name else None
        if isinstance(func, ast.Name) and func.id == "str" and node.args:
            is_name = self.kind(node.args[0]) is ValueKind.DEVICE_NAME
            return ValueKind.DEVICE_NAME if is_name else None
        return None

    def operand_kinds(self, node: ast.Compare) -> list[ValueKind | None]:
        """The kinds of a comparison's operands; the last comparison's are kept, as several
        checks look at the same one."""
        last = self._operand_kinds
        if last is None or last[0] is not node:
            kinds = [self.kind(operand) for operand in (node.left, *node.comparators)]
            last = self._operand_kinds = (node, kinds)
        return last[1]

    def is_environ(self, node: ast.AST) -> bool:
        """``node`` is ``os.environ`` or a copy of it."""
        return self.kind(node) is ValueKind.ENVIRON

    # -- assignments -------------------------------------------------------------------------

    def bind(
        self,
        target: ast.expr,
        kind: ValueKind | None,
        value: ast.expr | None,
        statement: ast.AST | None = None,
    ) -> None:
        """``target = value``, where ``value`` holds a followed value of ``kind`` (or none);
        ``statement`` is the assignment, whose place in the tree is known (its target's is
        recorded only after the assignment's checks run)."""
        scope = self.scopes[-1]
        if isinstance(target, ast.Name):
            name = target.id
            before = scope.kinds.get(name)
            if kind is not None:
                scope.kinds[name] = kind
                self._followed[kind].add(name)
            elif scope.module:
                scope.kinds.pop(name, None)
            else:
                scope.kinds[name] = None  # hides a followed name of the module
            if before is not kind:
                self._tracked = None
            if name in self.aliases and not self._fallback_binding(statement or target, value):
                if scope.module:
                    del self.aliases[name]
                    self._dsl_names.discard(name)
                    self._tracked = None
                else:
                    scope.shadowed.add(name)
            if scope.module and isinstance(value, ast.Constant) and isinstance(value.value, str):
                self.strings[name] = value.value
        elif isinstance(target, (ast.Tuple, ast.List)):
            # major, minor = torch.cuda.get_device_capability()
            for element in target.elts:
                inner = element.value if isinstance(element, ast.Starred) else element
                self.bind(inner, kind if kind is ValueKind.CAPABILITY else None, None)

    def _fallback_binding(self, where: ast.AST, value: ast.expr | None) -> bool:
        """``torch = None`` or any assignment in an ``except`` handler (``flash_attn_func =
        naive_attention`` when the import failed) — a stand-in for a missing module, not a new
        meaning of the name."""
        if isinstance(value, ast.Constant) and value.value is None:
            return True
        parent = self.parents.get(where)
        while parent is not None:
            if isinstance(parent, ast.ExceptHandler):
                return True
            parent = self.parents.get(parent)
        return False

    # -- strings -----------------------------------------------------------------------------

    def string_value(self, node: ast.AST | None) -> str | None:
        """A string expression's literal text: constants, f-string parts, names of constants."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        # Unknown parts become "…", glued to their neighbours so that f"{cuda}/bin/nvcc"
        # still ends in the program's name.
        if isinstance(node, ast.JoinedStr):
            return "".join(literal(part) or "…" for part in node.values)
        if isinstance(node, ast.Name):
            return self.strings.get(node.id)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self.string_value(node.left), self.string_value(node.right)
            if left is None and right is None:
                return None
            return (left or "…") + (right or "…")
        return None
