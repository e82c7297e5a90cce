"""Warp lane masks: which expressions mean "the full 32-lane warp" and which "the full 64-lane wavefront"."""

from __future__ import annotations

import re

from gpuport.scan.kernels.constants import Constants

# The full mask of a 64-lane wavefront, as gpuport writes it.
FULL_MASK_64 = "0xffffffffffffffffULL"

_INT_SUFFIX = r"(?:[uU](?:ll|LL|l|L)?|(?:ll|LL|l|L)[uU]?)?"
# Values whose type is 32 bits wide: a compile error against HIP's 64-bit mask parameter.
_FULL_32_TYPED_RE = re.compile(
    r"^(?:0[xX][fF]{8}[uU]?|4294967295[uU]?|~\s*0[uU]?|-\s*1[uU]?"
    r"|\(\s*(?:unsigned(?:\s+int)?|uint32_t|int)\s*\)\s*(?:-\s*1|~\s*0[uU]?)"
    r"|(?:static_cast\s*<\s*(?:unsigned(?:\s+int)?|uint32_t)\s*>|uint32_t|unsigned)\s*\(\s*-\s*1\s*\)"
    r"|UINT_MAX|UINT32_MAX)$"
)
# 32 one-bits in a 64-bit type: compiles, but leaves lanes 32-63 out.
_FULL_32_WIDE_RE = re.compile(
    r"^(?:0[xX][fF]{8}(?:[uU]?(?:ll|LL|l|L)|(?:ll|LL|l|L)[uU]?)"
    r"|4294967295(?:[uU]?(?:ll|LL|l|L)|(?:ll|LL|l|L)[uU]?)"
    r"|\(\s*(?:unsigned\s+long(?:\s+long)?|uint64_t)\s*\)\s*0[xX][fF]{8}[uU]?)$"
)
_FULL_64_RE = re.compile(
    r"^(?:0[xX][fF]{16}" + _INT_SUFFIX + r"|~\s*0(?:[uU]?(?:ll|LL|l|L)|(?:ll|LL|l|L)[uU]?)"
    r"|ULLONG_MAX|UINT64_MAX|\(\s*(?:unsigned\s+long\s+long|uint64_t)\s*\)\s*(?:-\s*1|~\s*0))$"
)
_NAME_RE = re.compile(r"[A-Za-z_]\w*")


def strip_parens(text: str) -> str:
    """``text`` without surrounding whitespace and balanced outer parentheses."""
    text = text.strip()
    while text.startswith("(") and text.endswith(")"):
        inner = text[1:-1].strip()
        if inner.count("(") != inner.count(")"):
            break
        text = inner
    return text


def full_mask_kind(expr: str) -> str | None:
    """'typed32' / 'wide32' when ``expr`` is a full 32-lane constant; None otherwise."""
    value = strip_parens(expr)
    if _FULL_32_TYPED_RE.match(value):
        return "typed32"
    if _FULL_32_WIDE_RE.match(value):
        return "wide32"
    return None


def is_full_mask(expr: str, constants: Constants) -> bool:
    """Whether ``expr`` (or the constant it names) is the full 32-lane or 64-lane mask."""
    value = strip_parens(expr)
    if full_mask_kind(value) or _FULL_64_RE.match(value):
        return True
    constant = constants.get(value) if _NAME_RE.fullmatch(value) else None
    return constant is not None and bool(
        full_mask_kind(constant.value) or _FULL_64_RE.match(strip_parens(constant.value))
    )


def is_name(expr: str) -> bool:
    """Whether ``expr`` is a bare identifier (a constant or variable, not a literal)."""
    return _NAME_RE.fullmatch(expr) is not None
