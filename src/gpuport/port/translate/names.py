"""Names that need more than a rename: definitions that clash with HIP's, namespaces, casts
HIP's C API needs, CUDA 12's graph instantiation, a calling-convention macro."""

from __future__ import annotations

import re

from gpuport.port.knowledge import translation_facts
from gpuport.port.translate import clashes
from gpuport.port.translate.actions import Rename
from gpuport.port.translate.syntax import is_definition, operator_declaration
from gpuport.port.translate.translation import CONVERTED, NEEDS_REVIEW, Translation
from gpuport.syntax.cxx import ID_CHARS as _ID

_FACTS = translation_facts()
# CUDA's built-in vector types (HIP's hip_vector_types.h defines the same).
VECTOR_TYPES = _FACTS.vector_types
# Functions HIP's own headers define that CUDA code often defines for itself: a second
# definition fails to compile or makes calls ambiguous.
CLASH_FUNCTIONS = _FACTS.clash_functions
# HIP functions whose pointer argument needs a cast (kb/hip_translation.toml [[pointer_cast]]).
CAST_ARGUMENTS = _FACTS.pointer_casts
_VECTOR_TYPE_RE = re.compile(
    rf"(?<![{_ID}])(?:{'|'.join(sorted(map(re.escape, VECTOR_TYPES), key=len, reverse=True))})(?![{_ID}])"
)
_STREAM_WORD_RE = re.compile(rf"(?<![{_ID}])[{_ID}]*stream")
# C++'s arithmetic and comparison operators: an operator definition on a vector type clashes.
_ARITH_OPERATORS = frozenset(
    [
        "+",
        "-",
        "*",
        "/",
        "%",
        "+=",
        "-=",
        "*=",
        "/=",
        "%=",
        "==",
        "!=",
        "<",
        ">",
        "<=",
        ">=",
        "&",
        "|",
        "^",
        "~",
        "!",
        "&=",
        "|=",
        "^=",
        "<<",
        ">>",
        "<<=",
        ">>=",
        "++",
        "--",
    ]
)


# ------------------------------------------------------------------------------ clashes


def clash(t: Translation, name: str, start: int, end: int) -> None:
    """A definition of a function HIP's headers already define."""
    if not is_definition(t.index, t.text, start, end):
        return
    if name.startswith("make_"):
        if not _is_hip_make_signature(t, name, end):
            return  # a new overload (make_float3(float4)): nothing of HIP's clashes
        why = "HIP's hip_vector_types.h defines the make_* functions for its vector types"
    elif name.startswith("atomic"):
        if clashes.guard_atomic(t, name, start, end):
            return
        why = (
            f"HIP defines {name} for int, unsigned, unsigned long long, float and double "
            "(CUDA lacks some of these, so CUDA code often adds its own)"
        )
    elif name == "__syncwarp":
        why = "ROCm 7.0 and later define __syncwarp"
    else:
        why = f"HIP defines {name} for the built-in types"
    t.report(
        start,
        "clash",
        name,
        NEEDS_REVIEW,
        f"defines {name}, which HIP already provides: {why}; a second definition with the "
        "same signature does not compile and a near one makes calls ambiguous — remove it, "
        "guard it with #ifndef __HIPCC__, or rename it",
    )


def _is_hip_make_signature(t: Translation, name: str, end: int) -> bool:
    """Does ``make_float3(...)`` declared at ``end`` take what HIP's does: one scalar per
    component (three here), no vector type?"""
    call = t.call_arguments(end)
    if call is None:
        return True  # cannot tell: report it
    params = [t.text[arg.start : arg.end] for arg in call.args]
    components = int(name[-1])
    if len(params) != components:
        return False
    return not any(word in VECTOR_TYPES for p in params for word in re.findall(r"\w+", p))


def clash_or_rename(t: Translation, name: str, start: int, end: int) -> None:
    """Names that HIP defines and CUDA code sometimes defines too (atomicMax, make_float4)."""
    if is_definition(t.index, t.text, start, end):
        clash(t, name, start, end)
        return
    action = t.actions.get(name)
    if action is not None:
        t.apply_action(name, start, end, action)


def operator(t: Translation, name: str, start: int, end: int) -> None:
    """``operator+(float4, float4)`` and friends: HIP's vector types already have them."""
    declaration = operator_declaration(t.index, end)
    if declaration is None:
        return
    op, (params_start, params_end) = declaration.op, declaration.params
    if op not in _ARITH_OPERATORS:
        return
    vector_type = _VECTOR_TYPE_RE.search(t.code, params_start, params_end)
    if vector_type is None or _STREAM_WORD_RE.search(t.code, params_start, params_end):
        return
    vector = vector_type.group()
    if clashes.guard_operator(t, op, start, declaration.params, vector) != "report":
        return  # guarded, or two different vector types: HIP defines nothing like it
    t.report(
        start,
        "clash",
        f"operator{op}",
        NEEDS_REVIEW,
        f"defines operator{op} on {vector}: HIP's hip_vector_types.h already defines arithmetic "
        "and comparison operators for its vector types, so this one is a redefinition or makes "
        "calls ambiguous — remove it for HIP (e.g. #ifndef __HIPCC__) or move it into a namespace",
    )


# ---------------------------------------------------------------------------- namespaces


def cub_namespace(t: Translation, name: str, start: int, end: int) -> None:
    """``cub::`` and ``using namespace cub``: hipCUB's namespace is ``hipcub``."""
    text = t.text
    qualified = t.followed_by(end, "::")
    in_using = re.search(r"\bnamespace\s+$", text[max(0, start - 40) : start]) is not None
    if in_using and t.followed_by(end, "="):
        return  # the project's own alias (`namespace cub = hipcub;` under a ROCm guard)
    if not (qualified or in_using) or t.is_member_or_foreign(start):
        return
    if t.edit(start, end, "hipcub"):
        t.change(
            start, "cub", "cub", "hipcub", CONVERTED, "hipCUB keeps CUB's API in namespace hipcub"
        )


_THRUST_QUALIFIER_RE = re.compile(r"(?<![\w$])thrust\s*::\s*$")


def thrust_cuda(t: Translation, name: str, start: int, end: int) -> None:
    """``thrust::cuda::par``: rocThrust's device system is ``thrust::hip``."""
    if not _THRUST_QUALIFIER_RE.search(t.text[max(0, start - 40) : start]):
        return
    if not t.followed_by(end, "::"):
        return
    if t.edit(start, end, "hip"):
        t.change(
            start,
            "thrust",
            "thrust::cuda",
            "thrust::hip",
            CONVERTED,
            "rocThrust's execution policies live in thrust::hip (par, par_nosync)",
        )


# --------------------------------------------------------------------------- runtime calls


def cudart_cb(t: Translation, name: str, start: int, end: int) -> None:
    """``static void CUDART_CB callback(...)``: the calling-convention macro is empty on Linux
    and HIP has none, so it goes (with the blank after it)."""
    stop = end
    while stop < len(t.text) and t.text[stop] in " \t":
        stop += 1
    if t.edit(start, stop, ""):
        t.change(
            start,
            "runtime",
            name,
            "",
            CONVERTED,
            "removed: HIP host callbacks need no calling-convention macro",
        )


def cast_argument(t: Translation, name: str, start: int, end: int) -> None:
    """Rename the call, and cast the argument HIP takes as ``void**``/``const void*``."""
    action = t.actions.get(name)
    if action is None or t.is_member_or_foreign(start):
        return
    t.apply_action(name, start, end, action)
    if not isinstance(action, Rename):
        return
    call = t.call_arguments(end)
    cast = CAST_ARGUMENTS[name]
    if call is None or len(call.args) <= cast.argument:
        return
    arg_start, arg_end = call.args[cast.argument]
    arg = t.text[arg_start:arg_end]
    cast_to = cast.cast_to
    if "void" in arg or "cast" in arg:
        return  # already the pointer type the C API takes
    new = f"reinterpret_cast<{cast_to}>({arg})"
    if t.edit(arg_start, arg_end, new):
        t.change(
            arg_start,
            action.family,
            arg,
            new,
            CONVERTED,
            f"HIP's {action.hip} takes {cast_to} here (no template overload, unlike CUDA's)",
        )


def graph_instantiate(t: Translation, name: str, start: int, end: int) -> None:
    """``cudaGraphInstantiate(&exec, graph, flags)`` is CUDA 12's three-argument form; HIP's
    hipGraphInstantiate keeps the older five-argument one, and names the three-argument
    call hipGraphInstantiateWithFlags."""
    if t.is_member_or_foreign(start):
        return
    call = t.call_arguments(end)
    action = t.actions.get(name)
    if call is None or len(call.args) != 3:
        if action is not None:
            t.apply_action(name, start, end, action)
        return
    with_flags = t.actions.get("cudaGraphInstantiateWithFlags")
    if not isinstance(with_flags, Rename):
        if with_flags is not None:
            t.apply_action(name, start, end, with_flags)
        return
    if t.edit(start, end, with_flags.hip):
        t.change(
            start,
            "runtime",
            name,
            with_flags.hip,
            CONVERTED,
            "CUDA 12's three-argument cudaGraphInstantiate is HIP's hipGraphInstantiateWithFlags",
        )
