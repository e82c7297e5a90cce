"""How a compute-capability comparison answers on the AMD GPUs ROCm's torch reports (GP203).

torch on ROCm answers ``get_device_capability()`` with the gfx version (gfx942 -> (9, 4),
gfx1100 -> (11, 0)); :func:`answers` turns a comparison whose other side is written out into a
function of the capability, so the rule can ask which AMD GPUs it misleads (:func:`misled`).
"""

from __future__ import annotations

import ast
import functools
import operator
import re
from collections.abc import Callable
from typing import Any

from gpuport.kb import gpu_stack
from gpuport.scan.python.context import ValueKind
from gpuport.scan.python.nodes import number_like

# NVIDIA GPUs from before FP8 (Pascal to Ampere): a path a gate keeps for them needs nothing
# ROCm lacks, so an AMD GPU that answers a gate as one of them is not misled.
_PRE_FP8_CAPABILITIES = ((6, 0), (6, 1), (7, 0), (7, 2), (7, 5), (8, 0), (8, 6), (8, 7))
_GFX_RE = re.compile(r"^gfx(\d{1,2})([0-9a-f])[0-9a-f]$")


@functools.cache
def amd_capabilities() -> tuple[tuple[int, int], ...]:
    """(major, minor) that torch on ROCm reports for each target its wheels are built for: the
    gfx version (gfx90a -> (9, 0), gfx942 -> (9, 4), gfx1030 -> (10, 3), gfx1201 -> (12, 0))."""
    found: set[tuple[int, int]] = set()
    for wheel in gpu_stack.torch_rocm_archs():
        for arch in wheel.archs:
            if match := _GFX_RE.match(arch):
                found.add((int(match[1]), int(match[2], 16)))
    return tuple(sorted(found))


Capability = tuple[int, int]
_CONTAINERS = (ast.Tuple, ast.List, ast.Set)
_Value = tuple[int, ...] | int | float


def _number(node: ast.AST) -> _Value | None:
    """The value of a number or a tuple of numbers written out (``8``, ``(9, 0)``, ``8.9``)."""
    if not number_like(node) or isinstance(node, (ast.List, ast.Set)):
        return None
    try:
        value = ast.literal_eval(node)
    except ValueError:  # pragma: no cover - number_like admits only literals
        return None
    if isinstance(value, tuple):
        return value if all(type(v) is int for v in value) else None
    return value if type(value) in (int, float) else None


def _minor_operand(node: ast.AST) -> bool:
    """``cap[1]``, ``props.minor`` or a name such as ``cc_minor``: the minor number alone."""
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Constant) and node.slice.value == 1
    if isinstance(node, ast.Attribute):
        return node.attr == "minor"
    return isinstance(node, ast.Name) and "minor" in node.id.lower()


def _view(capability: Capability, like: _Value, minor: bool) -> _Value:
    """The capability as the code compares it with ``like``: the tuple, the major or minor
    number, ``major * 10 + minor`` (sm = 90) or ``major.minor`` as a float (8.9)."""
    major, minor_number = capability
    if isinstance(like, tuple):
        return capability[: len(like)] if len(like) <= 2 else capability
    if minor:
        return minor_number
    if isinstance(like, float):
        return major + minor_number / 10
    return major * 10 + minor_number if like >= 20 else major


_ORDER: dict[type[ast.cmpop], Callable[[Any, Any], bool]] = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}


def answers(
    node: ast.Compare, kinds: list[ValueKind | None]
) -> Callable[[Capability], bool] | None:
    """The comparison as a function of the capability, when its other operands are numbers
    written out (``major in (10, 12)``, ``(10, 0) <= cap < (12, 0)``); None otherwise."""
    operands = [node.left, *node.comparators]
    sides: list[bool | list[_Value]] = []  # the capability (is it the minor alone?) or values
    for index, (operand, kind) in enumerate(zip(operands, kinds, strict=True)):
        if kind is ValueKind.CAPABILITY:
            sides.append(_minor_operand(operand))
            continue
        container = index > 0 and isinstance(node.ops[index - 1], (ast.In, ast.NotIn))
        parts = operand.elts if container and isinstance(operand, _CONTAINERS) else [operand]
        found = [_number(part) for part in parts]
        values = [value for value in found if value is not None]
        if not values or len(values) != len(found):
            return None
        sides.append(values)
    likes = [value for side in sides if isinstance(side, list) for value in side]
    if not likes or len({type(like) for like in likes}) != 1:
        return None
    like = likes[0]

    def answer(capability: Capability) -> bool:
        shown = [[_view(capability, like, s)] if isinstance(s, bool) else s for s in sides]
        for op, left, right in zip(node.ops, shown, shown[1:], strict=False):
            if isinstance(op, (ast.In, ast.NotIn)):
                ok = (left[0] in right) is isinstance(op, ast.In)
            elif type(op) in _ORDER and len(left) == 1 and len(right) == 1:
                try:
                    ok = _ORDER[type(op)](left[0], right[0])
                except TypeError:  # a tuple against a number: cannot tell, count it taken
                    return True
            else:
                return True
            if not ok:
                return False
        return True

    return answer


def misled(answer: Callable[[Capability], bool]) -> tuple[Capability, ...]:
    """The AMD capabilities that answer the gate as no NVIDIA GPU from before FP8 does."""
    pre_fp8 = {answer(c) for c in _PRE_FP8_CAPABILITIES}
    return tuple(c for c in amd_capabilities() if answer(c) not in pre_fp8)


_HOPPER = (9, 0)
_BLACKWELL = (10, 0)


def blackwell_for_amd(answer: Callable[[Capability], bool] | None) -> bool:
    """The gate answers some AMD GPU as it answers Blackwell and not as it answers Hopper: a
    refusal that asks for Blackwell lets RDNA cards through (ROCm torch reports gfx1030 as
    (10, 3), gfx1100 as (11, 0)), which have none of Blackwell's MXFP8/NVFP4 paths, so they
    fail later instead of at the check; one that asks for Hopper lets MI200/MI300 through,
    the Hopper-class peers, as intended."""
    if answer is None:
        return False
    blackwell = answer(_BLACKWELL)
    return blackwell != answer(_HOPPER) and any(answer(c) == blackwell for c in amd_capabilities())
