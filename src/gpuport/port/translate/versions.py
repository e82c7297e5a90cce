"""Calls whose translation depends on the target release: memory-location forms, cuCtxCreate.

CUDA 12.2's ``cudaMemAdvise_v2``/``cudaMemPrefetchAsync_v2`` and CUDA 13's plain names take a
``cudaMemLocation``; HIP has the same form only as ``hipMemAdvise_v2``/``hipMemPrefetchAsync_v2``
(ROCm 7), and the plain HIP names keep the device-id signature. CUDA 13's ``cuCtxCreate`` takes
a ``CUctxCreateParams*`` second; HIP's keeps the three-argument form. The facts (names, argument
positions, the first release) are data: ``kb/rocm_versions.toml``.
"""

from __future__ import annotations

import re

from gpuport.port.apimap import ContextParams, LocationForm, version_facts, version_text
from gpuport.port.translate.syntax import Call
from gpuport.port.translate.translation import CONVERTED, UNCONVERTED, Translation

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


HANDLERS = {
    **dict.fromkeys(LOCATION_FORMS, memory_location),
    **dict.fromkeys(CONTEXT_PARAMS, context_create),
}
