"""Inline assembly in CUDA code: the ``asm`` statements of a file, and what their PTX templates use.

Reading a template is syntax (statements, opcodes with their qualifiers, ``%`` special
registers); which instructions and registers exist, their feature families and what each
becomes on AMD GPUs is knowledge, in ``kb/ptx.toml`` (:mod:`gpuport.kb.kernels`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from gpuport.findings import NVPTX_CONSTRAINT_MARK
from gpuport.kb.kernels import (
    PTX_FAMILIES,
    PtxInstruction,
    PtxQualifier,
    nvptx_constraints,
    ptx_features,
    ptx_instructions,
    ptx_memory_scopes,
    ptx_qualifiers,
    ptx_wrappers,
    special_registers,
)
from gpuport.scan.kernels.brackets import match_forward
from gpuport.scan.kernels.words import words
from gpuport.syntax.brackets import Brackets

_ASM_RE = re.compile(
    r"(?:asm|__asm__|__asm)\b(?:\s+(?:volatile|__volatile__|__volatile|inline|goto))*\s*\("
)
_STRING_RE = re.compile(r"(?:u8|[uUL])?\"((?:[^\"\\\r\n]|\\.)*)\"")
_STATEMENT_SPLIT_RE = re.compile(r"[;\n]")
_OPCODE_RE = re.compile(r"^(?:@!?%?\w+\s+)?([a-z][a-z0-9_]*(?:\.[\w:]+)*)")
_LABEL_RE = re.compile(r"^\$?\w+:\s*")
HOPPER, CLUSTER, ASYNC = PTX_FAMILIES
# An asm statement belongs to the most specific family it uses, in this order.
_MOST_SPECIFIC_FIRST = (HOPPER, CLUSTER, ASYNC)


@dataclass(frozen=True, slots=True)
class _Tables:
    """What the templates are read against, from ``kb/ptx.toml``: built on first use, so that a
    scan with no CUDA code neither parses the table nor compiles its expression."""

    special_reg_re: re.Pattern[str]  # the special registers, longest first; whole names
    instructions: Mapping[str, PtxInstruction]
    qualifiers: Mapping[tuple[str, str], PtxQualifier]
    qualified_opcodes: frozenset[str]
    # Opcodes that mark a template as PTX even without a '.' qualifier (trap, exit, bra, …).
    bare_ops: frozenset[str]
    family_op_prefixes: Mapping[str, tuple[str, ...]]
    family_registers: Mapping[str, frozenset[str]]
    family_register_prefixes: Mapping[str, tuple[str, ...]]
    hopper_wrapper_prefixes: tuple[str, ...]


@functools.cache
def _tables() -> _Tables:
    registers = special_registers().values()
    instructions = ptx_instructions()
    qualifiers = ptx_qualifiers()
    return _Tables(
        special_reg_re=re.compile(
            r"%%?("
            + "|".join(
                re.escape(reg.name) + (r"\w*" if reg.prefix else "")
                for reg in sorted(registers, key=lambda reg: -len(reg.name))
            )
            + r")\b"
        ),
        instructions=instructions,
        qualifiers=qualifiers,
        qualified_opcodes=frozenset(opcode for opcode, _ in qualifiers),
        bare_ops=frozenset(op for op, instruction in instructions.items() if instruction.bare),
        family_op_prefixes={
            family: feature.opcode_prefixes for family, feature in ptx_features().items()
        },
        family_registers={
            family: frozenset(
                reg.name for reg in registers if reg.family == family and not reg.prefix
            )
            for family in PTX_FAMILIES
        },
        family_register_prefixes={
            family: tuple(reg.name for reg in registers if reg.family == family and reg.prefix)
            for family in PTX_FAMILIES
        },
        hopper_wrapper_prefixes=ptx_wrappers()[HOPPER].name_prefixes,
    )


def ptx_op_hip(op: str) -> str:
    """What HIP offers instead of the PTX instruction ``op`` (with its qualifiers); "" if none."""
    tables = _tables()
    base, *qualifiers = op.split(".")
    if base in tables.qualified_opcodes:
        for qualifier in qualifiers:
            found = tables.qualifiers.get((base, qualifier))
            if found is not None:
                return _with_scope(found.hip, qualifiers)
    instruction = tables.instructions.get(base)
    return "" if instruction is None else instruction.hip


def _with_scope(hip: str, qualifiers: list[str]) -> str:
    """``hip`` with ``{scope}`` filled from the PTX scope qualifier (``.gpu`` when none: the
    default scope of PTX atomics) -- ``ld.acquire.sys`` wants a system-scope HIP load."""
    if "{scope}" not in hip:
        return hip
    scopes = ptx_memory_scopes()
    scope = next((scopes[q] for q in qualifiers if q in scopes), scopes["gpu"])
    return hip.replace("{scope}", scope.hip)


def special_register_hip(register: str) -> str:
    """What HIP offers instead of the PTX special register ``%register``; "" if none."""
    known = special_registers().get(register)
    return "" if known is None else known.hip


def is_hopper_wrapper(name: str) -> bool:
    """Whether ``cuda::ptx::name`` wraps a Hopper-or-newer instruction."""
    return name.startswith(_tables().hopper_wrapper_prefixes)


@dataclass(frozen=True, slots=True)
class Ptx:
    """What one PTX template uses."""

    opcodes: tuple[str, ...]
    special: tuple[tuple[str, str], ...]  # (opcode, special register) pairs
    is_ptx: bool
    family: str | None  # HOPPER, CLUSTER or ASYNC when it uses such features

    def shown(self) -> str:
        """The instructions, with the special register each reads, for a message."""
        regs = {op: f"{op} %{reg}" for op, reg in reversed(self.special)}
        named = [regs.get(op, op) for op in self.opcodes]
        return ", ".join(named[:4]) + (", …" if len(named) > 4 else "")


def read_ptx(template: str) -> Ptx:
    """The opcodes and special registers of a PTX template (escapes already undone)."""
    opcodes: list[str] = []
    special: list[tuple[str, str]] = []
    is_ptx = False
    tables = _tables()
    for raw in _STATEMENT_SPLIT_RE.split(template):
        stmt = raw.strip().lstrip("{}").strip()
        if not stmt:
            continue
        if stmt.startswith("."):  # .reg / .pred declarations
            is_ptx = True
            continue
        stmt = _LABEL_RE.sub("", stmt)  # labels
        m = _OPCODE_RE.match(stmt)
        if not m:
            continue
        opcode = m.group(1)
        if "." in opcode or opcode in tables.bare_ops:
            is_ptx = True
        if opcode not in opcodes:
            opcodes.append(opcode)
        for reg in tables.special_reg_re.finditer(stmt):
            is_ptx = True
            pair = (opcode, reg.group(1))
            if pair not in special:
                special.append(pair)
    return Ptx(tuple(opcodes), tuple(special), is_ptx, _family(opcodes, special))


def _family(opcodes: list[str], special: list[tuple[str, str]]) -> str | None:
    """The most specific feature family the instructions or special registers belong to."""
    tables = _tables()
    for family in _MOST_SPECIFIC_FIRST:
        if any(op.startswith(tables.family_op_prefixes.get(family, ())) for op in opcodes):
            return family
        registers = tables.family_registers[family]
        prefixes = tables.family_register_prefixes[family]
        if (registers or prefixes) and any(
            reg in registers or reg.startswith(prefixes) for _, reg in special
        ):
            return family
    return None


@dataclass(frozen=True, slots=True)
class AsmStatement:
    """One ``asm(...)`` statement: its extent and, when its template is visible PTX, the PTX."""

    start: int
    end: int  # just past the closing parenthesis
    hidden_template: bool  # the template is a macro or variable gpuport cannot read
    ptx: Ptx | None  # None unless the template is PTX (not blank, not host assembly)
    # Operand constraints of NVPTX register classes ("=h", "l"): HIP-Clang rejects them where
    # it parses the statement, called or not (kb/ptx.toml [[constraint]]).
    nvptx_constraints: tuple[str, ...] = ()

    def constraint_note(self) -> str:
        """What the message says about the statement's NVPTX-only constraints ("" if none)."""
        if not self.nvptx_constraints:
            return ""
        shown = ", ".join(f'"{c}"' for c in self.nvptx_constraints)
        return f"; {NVPTX_CONSTRAINT_MARK} ({shown})"


@functools.cache
def _constraint_re() -> re.Pattern[str]:
    """A quoted operand constraint of an NVPTX-only register class (``"=h"(``, ``"+l" (``)."""
    letters = "".join(sorted(nvptx_constraints()))
    return re.compile(rf'"([=+&]*[{letters}])"\s*\(')


def _nvptx_constraints(text: str, start: int, end: int) -> tuple[str, ...]:
    if start < 0:
        return ()
    return tuple(dict.fromkeys(m.group(1) for m in _constraint_re().finditer(text, start, end)))


def asm_of_family(
    statements: list[AsmStatement], family: str
) -> Iterator[tuple[AsmStatement, Ptx]]:
    """The statements whose PTX belongs to ``family`` (HOPPER, CLUSTER or ASYNC), with it."""
    for statement in statements:
        if statement.ptx is not None and statement.ptx.family == family:
            yield statement, statement.ptx


def asm_statements(text: str, code: str, brackets: Brackets) -> list[AsmStatement]:
    """Every ``asm``/``__asm__`` statement in ``code``; templates are read from ``text``."""
    found: list[AsmStatement] = []
    if "asm" not in code:
        return found
    for m in words(_ASM_RE, code):
        open_at = m.end() - 1
        close_at = match_forward(brackets, open_at)
        if close_at < 0:
            close_at = min(len(code), open_at + 2_000)
        colon = code.find(":", open_at, close_at)
        template_end = colon if colon >= 0 else close_at
        pieces = _STRING_RE.findall(text, open_at + 1, template_end)
        constraints = _nvptx_constraints(text, colon, close_at)
        if not pieces:
            hidden = bool(code[open_at + 1 : template_end].strip())
            found.append(AsmStatement(m.start(), close_at + 1, hidden, None, constraints))
            continue
        template = "".join(pieces).replace("\\n", "\n").replace("\\t", " ")
        ptx = read_ptx(template) if template.strip() else None
        if ptx is not None and not ptx.is_ptx:  # host assembly (x86 pause, rdtsc, …)
            ptx = None
        found.append(AsmStatement(m.start(), close_at + 1, False, ptx, constraints))
    return found


_WRAPPER_CALL_RE = re.compile(r"cuda::ptx::(\w+)")


def ptx_wrapper_calls(body: str) -> Iterator[re.Match[str]]:
    """``cuda::ptx::name`` uses (libcu++'s PTX wrappers); group 1 is the name."""
    return words(_WRAPPER_CALL_RE, body, also=":")
