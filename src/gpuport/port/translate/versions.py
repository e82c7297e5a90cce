"""What depends on the target release: memory-location forms, cuCtxCreate, warpSize constants.

CUDA 12.2's ``cudaMemAdvise_v2``/``cudaMemPrefetchAsync_v2`` and CUDA 13's plain names take a
``cudaMemLocation``; HIP has the same form only as ``hipMemAdvise_v2``/``hipMemPrefetchAsync_v2``
(ROCm 7), and the plain HIP names keep the device-id signature. CUDA 13's ``cuCtxCreate`` takes
a ``CUctxCreateParams*`` second; HIP's keeps the three-argument form. ``warpSize`` stopped being a
compile-time constant in ROCm 7.0. The facts (names, argument positions, the first release) are
data: ``kb/rocm_versions.toml``.
"""

from __future__ import annotations

import dataclasses
import re

from gpuport.port.apimap import ContextParams, LocationForm, Version, version_facts, version_text
from gpuport.port.model import Change
from gpuport.port.translate.syntax import Call
from gpuport.port.translate.translation import CONVERTED, NEEDS_REVIEW, UNCONVERTED, Translation

_FACTS = version_facts()
LOCATION_FORMS = _FACTS.location_forms
CONTEXT_PARAMS = _FACTS.context_params

# A location written in place: `{cudaMemLocationTypeDevice, 0}`, `cudaMemLocation{...}`, a cast.
_LOCATION_LITERAL_RE = re.compile(r"^(?:\{|(?:struct\s+)?cudaMemLocation\b|\(\s*cudaMemLocation\b)")
_IDENT_RE = re.compile(r"^[A-Za-z_]\w*$")
_NULL = frozenset({"NULL", "nullptr", "0", "(CUctxCreateParams*)0", "(CUctxCreateParams *)0"})


_DECLARED_RE = re.compile(r"\bcudaMemLocation\s*&?\s*([A-Za-z_]\w*)")


def _declared_locations(t: Translation) -> frozenset[str]:
    """The names the file declares as a ``cudaMemLocation`` (read at each location call: they
    are rare, and a file that has one has few)."""
    return frozenset(_DECLARED_RE.findall(t.code))


def _is_location_form(t: Translation, form: LocationForm, call: Call) -> bool:
    if len(call.args) in form.location_counts:
        return True
    if len(call.args) <= form.location_argument:
        return False
    arg_start, arg_end = call.args[form.location_argument]
    arg = t.text[arg_start:arg_end].strip()
    if _LOCATION_LITERAL_RE.match(arg):
        return True
    return bool(_IDENT_RE.match(arg)) and arg in _declared_locations(t)


def memory_location(t: Translation, name: str, start: int, end: int) -> None:
    """``cudaMemAdvise``/``cudaMemPrefetchAsync`` (and their _v2): the location form becomes
    HIP's _v2 function where the target has it, and is reported where it does not."""
    if t.is_member_or_foreign(start):
        return
    form = LOCATION_FORMS[name]
    call = t.call_arguments(end)
    action = t.actions.get(name)
    if call is None or not _is_location_form(t, form, call):
        if action is not None:
            t.apply_action(name, start, end, action)
        return
    t.uses_gpu_code = True
    if t.target < form.since:
        t.report(
            start,
            "runtime",
            name,
            UNCONVERTED,
            f"the cudaMemLocation form of {name} maps to {form.hip}, which is not in ROCm "
            f"{version_text(t.target)} (added in {version_text(form.since)}): {form.older}",
        )
        return
    if t.edit(start, end, form.hip):
        t.change(
            start,
            "runtime",
            name,
            form.hip,
            CONVERTED,
            f"the cudaMemLocation form: {form.hip} takes a hipMemLocation (the plain HIP name "
            "takes a device id)",
        )


def context_create(t: Translation, name: str, start: int, end: int) -> None:
    """``cuCtxCreate(&ctx, params, flags, dev)`` (CUDA 13): null parameters are dropped; others
    have no HIP counterpart and are reported."""
    if t.is_member_or_foreign(start):
        return
    params = CONTEXT_PARAMS[name]
    call = t.call_arguments(end)
    action = t.actions.get(name)
    if call is None or len(call.args) != params.arguments:
        if action is not None:
            t.apply_action(name, start, end, action)
        return
    _drop_null_params(t, name, start, end, call, params)


def _drop_null_params(
    t: Translation, name: str, start: int, end: int, call: Call, params: ContextParams
) -> None:
    arg_start, arg_end = call.args[params.params_argument]
    arg = t.text[arg_start:arg_end].strip()
    if "".join(arg.split()) not in {"".join(n.split()) for n in _NULL}:
        t.report(
            start,
            "driver",
            name,
            UNCONVERTED,
            f"CUDA 13's {name} with context parameters (`{arg}`): {params.unsupported}",
        )
        return
    next_start = call.args[params.params_argument + 1][0]
    if not t.edit(start, end, params.hip):
        return
    if t.edit(arg_start, next_start, ""):
        t.change(
            start,
            "driver",
            t.text[start:next_start],
            f"{params.hip}({t.text[call.args[0][0] : call.args[0][1]]}, ",
            CONVERTED,
            f"CUDA 13's {name} with null context parameters is HIP's three-argument "
            f"{params.hip} (deprecated in HIP: prefer the primary context)",
        )
        t.uses_gpu_code = True


# The scanner rule that finds warpSize where C++ needs a compile-time constant.
WARP_SIZE_RULE = "GP306"


def warp_size_for_target(changes: list[Change], target: Version) -> list[Change]:
    """The scanner's GP306 findings said for the target: from ROCm 7.0 such a use does not
    compile (unconverted, with the fix); before, warpSize is a constant there and the use
    compiles, but holds one wavefront size (review)."""
    since = _FACTS.warp_size_not_constant_since
    out = []
    for change in changes:
        if change.rule_id != WARP_SIZE_RULE:
            out.append(change)
            continue
        if target >= since:
            # a use the scanner saw fails to compile; a ROCm-only `#define WARP_SIZE warpSize`
            # whose uses are elsewhere is only a likely break
            status = UNCONVERTED if " used " in change.note else NEEDS_REVIEW
            said = f"does not compile for ROCm {version_text(target)}"
        else:
            status = NEEDS_REVIEW
            said = (
                f"compiles for ROCm {version_text(target)} (warpSize is a constant there, 64 on "
                f"gfx9) but not from ROCm {version_text(since)}"
            )
        note = f"{said}: {_FACTS.warp_size_fix}. {change.note}"
        out.append(dataclasses.replace(change, status=status, note=note))
    return out


HANDLERS = {
    **dict.fromkeys(LOCATION_FORMS, memory_location),
    **dict.fromkeys(CONTEXT_PARAMS, context_create),
}
