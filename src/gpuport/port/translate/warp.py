"""Warp intrinsics: the _sync forms and their masks, __activemask, __syncwarp, tile votes.

A CDNA wavefront has 64 lanes: HIP's ``_sync`` warp functions take a 64-bit mask (and
static_assert it), releases before they existed have only the mask-less forms, and a
full-warp mask written for 32 lanes covers half a wavefront.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpuport.port.apimap import version_text
from gpuport.port.knowledge import translation_facts
from gpuport.port.translate.names import clash
from gpuport.port.translate.syntax import Call, Span, is_definition
from gpuport.port.translate.translation import (
    CONVERTED,
    NEEDS_REVIEW,
    UNCONVERTED,
    Translation,
)

FULL_MASK_64 = "0xffffffffffffffffULL"
# Why a 32-bit full mask is widened without being asked (kb/rocm_versions.toml "warp-masks").
_STATIC_ASSERT = "HIP's _sync warp functions static_assert a 64-bit mask"
# What replaces __syncwarp() where HIP has none: the lanes of a wavefront execute in
# lockstep, so a wavefront-level scheduling barrier keeps the compiler from moving memory
# operations across the point (ROCm 7.0's own __syncwarp adds wavefront fences around it).
WAVE_BARRIER = "__builtin_amdgcn_wave_barrier()"

_FACTS = translation_facts()
# HIP's mask-less warp functions (user code sometimes defines them for CUDA).
WARP_BUILTINS = _FACTS.warp_builtins
# CUDA's masked warp functions and HIP's mask-less form of each.
MASKED_WARP = _FACTS.masked_warp
MATCH_WARP = _FACTS.match_warp
# A tile's vote members and the wave-wide function to use instead ("" when there is none).
_TILE_VOTES = _FACTS.tile_votes


# ------------------------------------------------------------------------------- masks

_HEX_RE = re.compile(r"^0[xX]0*([fF]+)([uUlL]*)$")
_DEC_RE = re.compile(r"^(\d+)([uUlL]*)$")
_NOT_ZERO_RE = re.compile(r"^~\s*0(?:[xX]0*)?([uUlL]*)$")
_MINUS_ONE_RE = re.compile(r"^-\s*1([uUlL]*)$")
_CAST_RE = re.compile(
    r"^(?:\(\s*(?P<c>[A-Za-z_][\w\s]*?)\s*\)|static_cast\s*<\s*(?P<s>[A-Za-z_][\w\s]*?)\s*>)\s*"
    r"(?P<rest>.+)$",
    re.DOTALL,
)
_TYPES_64 = frozenset(
    {
        "unsigned long long",
        "unsigned long long int",
        "long long",
        "long long int",
        "uint64_t",
        "int64_t",
        "size_t",
        "unsigned long",
        "long",
        "unsigned long int",
        "long int",
        "ulong",
        "uint64",
    }
)
_IDENT_ONLY_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# A functional cast, `uint32_t(-1)`: read like a C cast when the name is an integer type.
_FUNCTIONAL_CAST_RE = re.compile(r"^(?P<t>[A-Za-z_]\w*)\s*\((?P<rest>.*)\)$", re.DOTALL)
_TYPES_32 = frozenset({"unsigned", "int", "uint32_t", "int32_t", "uint", "uint32"})


@dataclass(frozen=True, slots=True)
class Mask:
    kind: str  # "full64", "full32" (all 32 lanes: half a wave64), "unknown"
    is_64bit_type: bool = False
    via: str = ""  # the macro or constant it was read from
    definition: Span | None = None  # that definition's value
    definition_kind: str = ""  # "define" or "const"
    type_span: Span | None = None  # a const's type


def _strip_parens(expr: str) -> str:
    expr = expr.strip()
    while expr.startswith("(") and expr.endswith(")") and _balanced(expr[1:-1]):
        expr = expr[1:-1].strip()
    return expr


def _balanced(s: str) -> bool:
    depth = 0
    for ch in s:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def _is_64(suffix: str) -> bool:
    return "l" in suffix.lower()


def _classify_literal(expr: str) -> Mask:
    expr = _strip_parens(expr)
    functional = _FUNCTIONAL_CAST_RE.match(expr)
    if functional and _balanced(functional.group("rest")):
        type_name = functional.group("t")
        if type_name in _TYPES_64 or type_name in _TYPES_32:
            expr = f"({type_name}) ({functional.group('rest')})"
    cast = _CAST_RE.match(expr)
    if cast:
        type_name = " ".join((cast.group("c") or cast.group("s") or "").split())
        inner = _classify_literal(cast.group("rest"))
        if type_name in _TYPES_64:
            if inner.kind == "full64" or (inner.kind == "full32" and inner.via == "minus-one"):
                return Mask("full64", True)
            return Mask(inner.kind, True)
        return Mask("full32" if inner.kind in ("full32", "full64") else inner.kind)
    m = _HEX_RE.match(expr)
    if m:
        digits, suffix = len(m.group(1)), m.group(2)
        if digits == 16:
            return Mask("full64", True)
        if digits == 8:
            return Mask("full32", _is_64(suffix))
        return Mask("unknown")
    m = _DEC_RE.match(expr)
    if m:
        if m.group(1) == "4294967295":
            return Mask("full32", _is_64(m.group(2)))
        if m.group(1) == "18446744073709551615":
            return Mask("full64", True)
        return Mask("unknown")
    m = _NOT_ZERO_RE.match(expr)
    if m:
        return Mask("full64", True) if _is_64(m.group(1)) else Mask("full32")
    m = _MINUS_ONE_RE.match(expr)
    if m:
        if _is_64(m.group(1)):
            return Mask("full64", True)
        return Mask("full32", False, "minus-one")
    return Mask("unknown")


# A mask that is a name: its `#define NAME value` or `const TYPE NAME = value;`, looked up in
# the file. Each lookup reads the file; past a few names, all definitions are read in one pass
# instead (a lookup for each of many names was quadratic). A type or value longer than any
# real one is not read, so that the pass stays linear.
_DEFINE_RE = re.compile(
    r"^[ \t]*#[ \t]*define[ \t]+(?P<name>\w+)[ \t]+(?P<rest>[^\r\n]*+)$", re.MULTILINE
)
_CONST_RE = re.compile(
    r"(?<![\w$])(?:static\s+)?(?:constexpr|const)\s+(?P<t>[A-Za-z_][\w\s]{0,100}?)\s+"
    r"(?P<name>[A-Za-z_]\w*)\s*=\s*(?P<v>[^;\r\n]{1,300}+);"
)
_LOOKUPS_BEFORE_ONE_PASS = 8


def _named(pattern: str, name: str) -> re.Pattern[str]:
    return re.compile(
        pattern.replace(r"(?P<name>\w+)", re.escape(name), 1).replace(
            r"(?P<name>[A-Za-z_]\w*)", re.escape(name), 1
        ),
        re.MULTILINE,
    )


class MaskDefinitions:
    """The macros and constants of one file that a mask may name (the first of each)."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._lookups = 0
        self._all_read = False
        self.defines: dict[str, Span | None] = {}
        self.consts: dict[str, tuple[str, Span, Span] | None] = {}

    def _read_all(self) -> None:
        self._all_read = True
        defines: dict[str, Span | None] = {}
        for m in _DEFINE_RE.finditer(self._text):
            defines.setdefault(m.group("name"), _define_value(m))
        consts: dict[str, tuple[str, Span, Span] | None] = {}
        for m in _CONST_RE.finditer(self._text):
            consts.setdefault(m.group("name"), _const_value(m))
        self.defines, self.consts = defines, consts

    def lookup(self, name: str) -> tuple[Span | None, tuple[str, Span, Span] | None]:
        """The value of ``#define name``, and the type and value of a ``const`` one."""
        if not self._all_read and name not in self.defines:
            self._lookups += 1
            if self._lookups > _LOOKUPS_BEFORE_ONE_PASS:
                self._read_all()
            else:
                define = _named(_DEFINE_RE.pattern, name).search(self._text)
                self.defines[name] = _define_value(define) if define else None
                const = _named(_CONST_RE.pattern, name).search(self._text)
                self.consts[name] = _const_value(const) if const else None
        return self.defines.get(name), self.consts.get(name)


def _const_value(m: re.Match[str]) -> tuple[str, Span, Span]:
    """A constant's type, the span of its value and the span of its type."""
    return m.group("t"), Span(*m.span("v")), Span(*m.span("t"))


def _define_value(m: re.Match[str]) -> Span:
    """The value of a ``#define``: up to a ``//`` comment, trailing blanks left out."""
    rest = m.group("rest")
    comment = rest.find("//")
    value = (rest if comment < 0 else rest[:comment]).rstrip(" \t")
    return Span(m.start("rest"), m.start("rest") + len(value))


def classify_mask(text: str, definitions: MaskDefinitions, expr: str) -> Mask:
    """What the mask expression ``expr`` holds, reading a macro or constant it names."""
    expr = _strip_parens(expr)
    if not _IDENT_ONLY_RE.match(expr):
        return _classify_literal(expr)
    define, const = definitions.lookup(expr)
    if define is not None:
        inner = _classify_literal(text[define.start : define.end])
        return Mask(inner.kind, inner.is_64bit_type, expr, define, "define")
    if const is not None:
        type_text, value, type_span = const
        inner = _classify_literal(text[value.start : value.end])
        type_name = " ".join(type_text.replace("const", " ").split())
        is64 = type_name in _TYPES_64 or inner.is_64bit_type
        return Mask(inner.kind, is64, expr, value, "const", type_span)
    return Mask("unknown", False, expr)


def _mask_of(t: Translation, expr: str) -> Mask:
    if t.mask_definitions is None:
        t.mask_definitions = MaskDefinitions(t.text)
    return classify_mask(t.text, t.mask_definitions, expr)


# ---------------------------------------------------------------------------- handlers


def warp_masked(t: Translation, name: str, start: int, end: int) -> None:
    """``__shfl_sync(mask, ...)`` and friends."""
    if t.is_member_or_foreign(start) or is_definition(t.index, t.text, start, end):
        clash(t, name, start, end)
        return
    call = t.call_arguments(end)
    if call is None or len(call.args) < 2:
        if call is None and not t.followed_by(end, "("):
            return  # the name itself (a macro argument, a function pointer): leave it
        t.report(start, "warp", name, UNCONVERTED, "could not read the call's arguments")
        return
    mask_start, mask_end = call.args[0]
    mask_text = t.text[mask_start:mask_end]
    if t.target < t.api.warp.sync_default_since:
        _drop_mask(t, name, start, call, mask_text)
    else:
        _check_mask(t, name, start, mask_start, mask_end, mask_text)


def _drop_mask(t: Translation, name: str, start: int, call: Call, mask_text: str) -> None:
    hip = MASKED_WARP[name]
    second = call.args[1][0]
    new = f"{hip}("
    mask = _mask_of(t, mask_text)
    target = version_text(t.target)
    note = f"mask dropped: HIP in ROCm {target} has only the mask-less form, which acts on all active lanes"
    if t.target >= t.api.warp.sync_preview_since:
        note += (
            " (the _sync forms need -DHIP_ENABLE_WARP_SYNC_BUILTINS before ROCm "
            f"{version_text(t.api.warp.sync_default_since)})"
        )
    if name == "__ballot_sync":
        note += "; the result is 64-bit on a 64-lane wavefront: keep it in unsigned long long"
    status = CONVERTED
    if mask.kind == "unknown":
        status = NEEDS_REVIEW
        note = (
            f"mask `{mask_text}` dropped: the mask-less HIP form acts on all active lanes; "
            "check that the code does not rely on a partial mask" + note[len("mask dropped") :]
        )
    if t.edit(start, second, new):
        t.change(start, "warp", t.text[start:second], new, status, note)


def _check_mask(
    t: Translation, name: str, start: int, mask_start: int, mask_end: int, mask_text: str
) -> None:
    mask = _mask_of(t, mask_text)
    if mask.kind == "full64":
        return
    if mask.kind == "unknown":
        t.report(
            start,
            "warp",
            name,
            NEEDS_REVIEW,
            f"HIP's {name} needs a 64-bit mask (static_assert): check that `{mask_text}` is an "
            "unsigned long long holding every lane you mean (a wave has 64 lanes on CDNA GPUs)",
        )
        return
    # a full-warp mask written for 32 lanes
    where = ""
    if mask.via and mask.definition is not None:
        line, _ = t.line_col(mask.definition[0])
        where = f" ({mask.via} is defined on line {line})"
    # A mask of a 32-bit type does not compile (HIP's _sync functions static_assert a 64-bit
    # one): widened whatever the options. A 64-bit one holding 32 lanes compiles but covers
    # half a wave64: widened only when asked (--fix-warp-masks).
    if mask.is_64bit_type and not t.options.fix_warp_masks:
        t.report(
            mask_start,
            "warp",
            mask_text,
            NEEDS_REVIEW,
            f"32-lane full mask `{mask_text}`{where}: compiles, but covers only 32 of a "
            f"wave64's lanes; use {FULL_MASK_64} (gpuport port --fix-warp-masks does this)",
        )
        return
    why = "--fix-warp-masks" if mask.is_64bit_type else _STATIC_ASSERT
    if mask.via:
        _widen_definition(t, start, mask, mask_text, where, why)
        return
    if t.edit(mask_start, mask_end, FULL_MASK_64):
        t.change(
            mask_start,
            "warp",
            mask_text,
            FULL_MASK_64,
            CONVERTED,
            f"full-warp mask widened to 64 bits ({why})",
        )


def _widen_definition(
    t: Translation, start: int, mask: Mask, mask_text: str, where: str, why: str
) -> None:
    assert mask.definition is not None
    def_start, def_end = mask.definition
    if def_start in t.widened_definitions:
        return
    type_span = mask.type_span
    new_type = ""
    if mask.definition_kind == "const" and type_span is not None and not mask.is_64bit_type:
        # `constexpr unsigned FULL_MASK = 0xffffffff;`: the type is widened with the value
        type_text = " ".join(t.text[type_span.start : type_span.end].split())
        new_type = "unsigned long long" if type_text in _TYPES_32 | {"unsigned int"} else ""
        if not new_type:
            type_span = None
    if mask.definition_kind != "define" and not (new_type or mask.is_64bit_type):
        t.report(
            start,
            "warp",
            mask_text,
            UNCONVERTED,
            f"32-lane full mask{where}: declare it `unsigned long long {mask.via} = "
            f"{FULL_MASK_64}` (gpuport widens #define'd masks and constants of an integer type)",
        )
        return
    t.widened_definitions.add(def_start)
    old = t.text[def_start:def_end]
    if new_type and type_span is not None:
        old_type = t.text[type_span.start : type_span.end]
        if not t.edit(type_span.start, type_span.end, new_type):
            return
        t.change(
            type_span.start,
            "warp",
            old_type,
            new_type,
            NEEDS_REVIEW,
            f"{mask.via} made 64-bit for the _sync warp functions ({why}); check its other uses",
        )
    if t.edit(def_start, def_end, FULL_MASK_64):
        t.change(
            def_start,
            "warp",
            old,
            FULL_MASK_64,
            NEEDS_REVIEW,
            f"{mask.via} widened to 64 bits for the _sync warp functions ({why}); "
            "check its other uses",
        )


def warp_match(t: Translation, name: str, start: int, end: int) -> None:
    """``__match_any_sync`` / ``__match_all_sync``."""
    if t.is_member_or_foreign(start) or not t.followed_by(end, "("):
        return
    warp = t.api.warp
    missing = ""
    if t.target < warp.sync_preview_since:
        missing = (
            f"no HIP counterpart before ROCm {version_text(warp.sync_preview_since)}: "
            "compare values with __shfl and __ballot instead"
        )
    elif t.target < warp.sync_default_since:
        missing = (
            f"ROCm {version_text(t.target)} has {name} only with "
            "-DHIP_ENABLE_WARP_SYNC_BUILTINS, and with a 64-bit mask"
        )
    if missing:
        t.report(start, "warp", name, UNCONVERTED, missing)
        return
    call = t.call_arguments(end)
    if call is None or not call.args:
        return
    mask_start, mask_end = call.args[0]
    _check_mask(t, name, start, mask_start, mask_end, t.text[mask_start:mask_end])


def activemask(t: Translation, name: str, start: int, end: int) -> None:
    """``__activemask()``: a ballot of true where HIP has no __activemask."""
    if t.is_member_or_foreign(start) or is_definition(t.index, t.text, start, end):
        return
    if t.target >= t.api.warp.sync_default_since:
        return
    call = t.call_arguments(end)
    if call is None or call.args:
        return
    new = "__ballot(1)"
    if t.edit(start, call.close_paren + 1, new):
        t.change(
            start,
            "warp",
            t.text[start : call.close_paren + 1],
            new,
            CONVERTED,
            f"ROCm {version_text(t.target)} has no __activemask; a ballot of true over the active "
            "lanes is the same mask, 64 bits wide",
        )


def syncwarp(t: Translation, name: str, start: int, end: int) -> None:
    """``__syncwarp(mask)``: its mask checked, or a wavefront barrier where HIP has none."""
    if t.is_member_or_foreign(start) or is_definition(t.index, t.text, start, end):
        clash(t, name, start, end)
        return
    call = t.call_arguments(end)
    if call is None:
        return
    if t.target >= t.api.warp.syncwarp_since:
        if call.args:
            mask_start, mask_end = call.args[0]
            _check_mask(t, "__syncwarp", start, mask_start, mask_end, t.text[mask_start:mask_end])
        return
    old = t.text[start : call.close_paren + 1]
    if t.edit(start, call.close_paren + 1, WAVE_BARRIER):
        t.change(
            start,
            "warp",
            old,
            WAVE_BARRIER,
            NEEDS_REVIEW,
            f"HIP has __syncwarp only from ROCm {version_text(t.api.warp.syncwarp_since)}: "
            "replaced by a wavefront barrier (a wavefront's lanes run in lockstep); check code "
            "that relied on independent thread scheduling",
        )


# ------------------------------------------------------------------------- tile votes

# Variables that hold a cooperative-groups tile or coalesced group: declared with the type,
# or with auto from the call that makes one.
_TILE_VARIABLE_RE = re.compile(
    r"(?:\bthread_block_tile\s*<[^<>;{}()]*>|\bcoalesced_group)\s*&{0,2}\s*([A-Za-z_]\w*)"
    r"|\bauto\s*&{0,2}\s*([A-Za-z_]\w*)\s*=\s*(?:\w+\s*::\s*)*"
    r"(?:tiled_partition\s*<|coalesced_threads\s*\(|binary_partition\s*\()"
)


def tile_votes(t: Translation) -> None:
    """``tile.any(p)``, ``tile.ballot(p)``, ``tile.match_any(v)``...: HIP's cooperative
    groups have them only from ROCm 6.2 (5.2's thread_block_tile has the shuffles alone)."""
    code = t.code
    names = {a or b for a, b in _TILE_VARIABLE_RE.findall(code)}
    if not names:
        return
    calls = re.compile(
        rf"(?<![\w$])(?:{'|'.join(map(re.escape, sorted(names)))})\s*(?:\.|->)\s*"
        rf"({'|'.join(_TILE_VOTES)})\s*\("
    )
    since = version_text(t.api.warp.tile_vote_since)
    for m in calls.finditer(code):
        member = m.group(1)
        wave_wide = _TILE_VOTES[member]
        instead = (
            f"use the wave-wide {wave_wide}() and keep the tile's own lanes of the result"
            if wave_wide
            else "compare values with the tile's shfl() instead"
        )
        before = code[m.start() : m.start(1) + len(member)]
        t.report(
            m.start(1),
            "device",
            before,
            UNCONVERTED,
            f"cooperative groups' {member}() on a tile is not in ROCm {version_text(t.target)} "
            f"(added in {since}): {instead}",
        )
