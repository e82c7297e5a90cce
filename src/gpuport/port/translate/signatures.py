"""Calls whose HIP counterpart takes other arguments: rewritten by kb/hip_signatures.toml.

A name the map renames one for one (``cudaEventCreate`` → ``hipEventCreate``) may still need
its call changed: another function for another argument count, an argument dropped, added or
given HIP's value. Each such rewrite is a ``[[signature]]`` entry of the knowledge base, with
its source; a call this module cannot rewrite soundly is reported with the fix, never renamed
into a call that does not compile. Legacy cuBLAS (v1) calls are reported the same way.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from gpuport.kb.loader import Entry, KbError, entries, load_toml, table_entry
from gpuport.port.apimap import load_api_map
from gpuport.port.translate.actions import Rename
from gpuport.port.translate.syntax import Call, is_definition
from gpuport.port.translate.translation import (
    CONVERTED,
    NEEDS_REVIEW,
    UNCONVERTED,
    Translation,
)
from gpuport.syntax.cxx import ID_CHARS as _ID

SIGNATURES_TOML = "hip_signatures.toml"
HIP_VERSION = "{hip_version}"  # placeholder: the target release as hipGetProcAddress counts it
_NULL_ARGUMENTS = frozenset({"0", "NULL", "nullptr", "0L", "0UL", "0ULL", "(void*)0"})
_STRING_RE = re.compile(r'"([A-Za-z_][A-Za-z0-9_]*)"')


@dataclass(frozen=True, slots=True)
class AppendFrom:
    """Append argument ``take`` of the last earlier ``call`` whose argument ``match`` is ours."""

    call: str
    match: int
    take: int


@dataclass(frozen=True, slots=True)
class Signature:
    """One CUDA call form and how its arguments become HIP's (kb/hip_signatures.toml)."""

    cuda: str
    arguments: frozenset[int]  # the CUDA call's argument counts this rewrites
    note: str
    hip: str = ""  # call this HIP function instead of the map's rename
    drop: int | None = None
    keep_note: str = ""
    insert_at: int | None = None
    insert: str = ""
    replace_at: int | None = None
    replace: str = ""
    append: str = ""
    append_from: AppendFrom | None = None
    constants: Mapping[str, str] = field(default_factory=dict)
    symbol_string: int | None = None
    report: str = ""  # no rewrite is sound: the call is left and reported with this fix


@dataclass(frozen=True, slots=True)
class LegacyCublas:
    header: str  # "cublas.h": the legacy API
    v2_header: str  # "cublas_v2.h": the handle API
    note: str
    v1_only: frozenset[str]  # cublasInit, cublasAlloc...: helpers of the legacy API alone


@dataclass(frozen=True, slots=True)
class ClashGuard:
    """Which user definitions HIP's headers make too, exactly (wrapped in ``#if guard``)."""

    guard: str  # the condition: "!defined(__HIP_PLATFORM_AMD__)"
    atomics: frozenset[str]
    atomic_types: frozenset[str]  # T of HIP's atomicX(T*, T)
    vector_operators: frozenset[str]
    scalar_types: frozenset[str]  # a vector's operator may take one of these instead


@dataclass(frozen=True, slots=True)
class DevicePrintf:
    builtins: frozenset[str]  # threadIdx, blockIdx...: cast when passed to printf as they are
    cast: str
    note: str


@dataclass(frozen=True, slots=True)
class SignatureFacts:
    signatures: Mapping[str, tuple[Signature, ...]]  # by CUDA name
    legacy_cublas: LegacyCublas
    clash_guard: ClashGuard
    device_printf: DevicePrintf


def _optional_int(entry: Entry, key: str) -> int | None:
    return entry.integer(key) if key in entry.raw else None


def _signature(entry: Entry) -> Signature:
    entry.sources()
    entry.date()
    counts = entry.ints("arguments")
    if not counts:
        raise KbError(f"{entry.where}: 'arguments' needs at least one argument count")
    append_from = None
    if "append_from" in entry.raw:
        table = entry.table("append_from")
        append_from = AppendFrom(table.text("call"), table.integer("match"), table.integer("take"))
    insert_at, replace_at = _optional_int(entry, "insert_at"), _optional_int(entry, "replace_at")
    drop = _optional_int(entry, "drop")
    signature = Signature(
        cuda=entry.text("cuda"),
        arguments=frozenset(counts),
        note=entry.text("note"),
        hip=entry.text("hip", ""),
        drop=drop,
        keep_note=entry.text("keep_note", ""),
        insert_at=insert_at,
        insert=entry.text("insert", ""),
        replace_at=replace_at,
        replace=entry.text("replace", ""),
        append=entry.text("append", ""),
        append_from=append_from,
        constants=MappingProxyType(dict(entry.text_table("constants")))
        if "constants" in entry.raw
        else MappingProxyType({}),
        symbol_string=_optional_int(entry, "symbol_string"),
        report=entry.text("report", ""),
    )
    rewrites = ("hip", "drop", "insert_at", "replace_at", "append", "constants", "symbol_string")
    if signature.report and any(key in entry.raw for key in rewrites):
        raise KbError(f"{entry.where}: 'report' leaves the call as it is: no rewrite keys")
    if (drop is not None) != bool(signature.keep_note):
        raise KbError(f"{entry.where}: 'drop' and 'keep_note' go together")
    if (insert_at is not None) != bool(signature.insert):
        raise KbError(f"{entry.where}: 'insert_at' and 'insert' go together")
    if (replace_at is not None) != bool(signature.replace):
        raise KbError(f"{entry.where}: 'replace_at' and 'replace' go together")
    if append_from is not None and not signature.append:
        raise KbError(f"{entry.where}: 'append_from' needs 'append' for when no call is found")
    smallest = min(counts)
    for key in ("drop", "replace_at", "symbol_string", "insert_at"):
        index = _optional_int(entry, key)
        if index is not None and not 0 <= index <= smallest - (key != "insert_at"):
            raise KbError(f"{entry.where}: {key} {index} is not an argument of the call")
    return signature


@functools.cache
def signature_facts() -> SignatureFacts:
    """The argument rewrites of kb/hip_signatures.toml (read once per process)."""
    data = load_toml(SIGNATURES_TOML)
    found: dict[str, list[Signature]] = {}
    for entry in entries(data, "signature", SIGNATURES_TOML, "cuda"):
        signature = _signature(entry)
        taken = found.setdefault(signature.cuda, [])
        if any(s.arguments & signature.arguments for s in taken):
            raise KbError(f"{entry.where}: an argument count listed twice for {signature.cuda}")
        taken.append(signature)
    legacy = table_entry(data, "legacy_cublas", SIGNATURES_TOML)
    legacy.sources()
    legacy.date()
    clash = table_entry(data, "clash_guard", SIGNATURES_TOML)
    printf = table_entry(data, "device_printf", SIGNATURES_TOML)
    for table in (clash, printf):
        table.sources()
        table.date()
    return SignatureFacts(
        MappingProxyType({k: tuple(v) for k, v in found.items()}),
        LegacyCublas(
            legacy.text("header"),
            legacy.text("v2_header"),
            legacy.text("note"),
            frozenset(legacy.texts("v1_only", required=True)),
        ),
        ClashGuard(
            clash.text("guard"),
            frozenset(clash.texts("atomics", required=True)),
            frozenset(clash.texts("atomic_types", required=True)),
            frozenset(clash.texts("vector_operators", required=True)),
            frozenset(clash.texts("scalar_types", required=True)),
        ),
        DevicePrintf(
            frozenset(printf.texts("builtins", required=True)),
            printf.text("cast"),
            printf.text("note"),
        ),
    )


@functools.cache
def legacy_cublas_names() -> frozenset[str]:
    """cuBLAS names of the legacy (v1) API: those it shares with v2 (``cublasSaxpy``, v2's
    ``cublasSaxpy_v2``) and its own helpers (``cublasAlloc``)."""
    names = load_api_map().entries
    shared = {n for n in names if n.startswith("cublas") and f"{n}_v2" in names}
    return frozenset(shared | signature_facts().legacy_cublas.v1_only)


def handled_names() -> frozenset[str]:
    """Every name this module looks at (for the walk's table of special names)."""
    return frozenset(signature_facts().signatures) | legacy_cublas_names()


# ----------------------------------------------------------------------------- rewriting


def rewrite(t: Translation, name: str, start: int, end: int) -> None:
    """A call of ``name``: legacy cuBLAS is reported, a listed signature rewritten, any other
    use takes the name map's action."""
    action = t.actions.get(name)
    legacy = name in legacy_cublas_names() and _uses_legacy_cublas(t)
    forms = signature_facts().signatures.get(name, ())
    if (legacy or forms) and not _is_call(t, start, end):
        legacy, forms = False, ()
    if legacy:
        t.report(start, "cublas", name, UNCONVERTED, signature_facts().legacy_cublas.note)
        return
    call = t.call_arguments(end) if forms else None
    form = next((f for f in forms if call is not None and len(call.args) in f.arguments), None)
    if call is None or form is None or not isinstance(action, Rename):
        if action is not None:
            t.apply_action(name, start, end, action)
        return
    _rewrite_call(t, name, start, end, call, form, action)


def _is_call(t: Translation, start: int, end: int) -> bool:
    """``name(...)`` in an expression: not a member, another namespace's, or a declaration."""
    if not t.followed_by(end, "(") or t.is_member_or_foreign(start):
        return False
    return not is_definition(t.index, t.text, start, end)


def _uses_legacy_cublas(t: Translation) -> bool:
    """Does the file include <cublas.h> and not <cublas_v2.h> (decided once per file)?"""
    if t.legacy_cublas is None:
        legacy = signature_facts().legacy_cublas
        t.legacy_cublas = _includes(t.code, t.text, legacy.header) and not _includes(
            t.code, t.text, legacy.v2_header
        )
    return t.legacy_cublas


def _includes(code: str, text: str, header: str) -> bool:
    pattern = rf'^[ \t]*#[ \t]*include[ \t]*[<"]{re.escape(header)}[>"]'
    for match in re.finditer(pattern, text, re.MULTILINE):
        hash_at = match.group().index("#") + match.start()
        if code[hash_at] == "#":  # not inside a comment
            return True
    return False


def _hip_version(t: Translation) -> str:
    """The target release as hipGetProcAddress counts it: 100 * major + minor (6.4 → 604)."""
    major, minor = t.target[0], t.target[1] if len(t.target) > 1 else 0
    return str(100 * major + minor)


def _rewrite_call(
    t: Translation, name: str, start: int, end: int, call: Call, form: Signature, action: Rename
) -> None:
    if form.report:
        t.report(start, action.family, name, UNCONVERTED, form.report)
        return
    text = t.text
    spans = call.args
    args = [text[a.start : a.end] for a in spans]
    if form.drop is not None and re.sub(r"\s+", "", args[form.drop]) not in _NULL_ARGUMENTS:
        # HIP has no parameter for what the call passes: say how to change the code
        note = f"{form.keep_note} (passed here: {args[form.drop]})"
        t.report(start, action.family, name, UNCONVERTED, note)
        return
    hip = form.hip or action.hip
    if not t.edit(start, end, hip):
        return
    t.change(start, action.family, name, hip, CONVERTED, form.note)
    if action.family in ("runtime", "driver"):
        t.uses_gpu_code = True
    version = _hip_version(t)
    separator = text[spans[0].end : spans[1].start] if len(spans) >= 2 else ", "
    # small edits, each on its own span, so that the walk still renames the names between them
    edits: list[tuple[int, int, str, str]] = []  # start, end, new text, review note
    if form.drop is not None:
        gone = spans[form.drop]
        stop = spans[form.drop + 1].start if form.drop + 1 < len(spans) else gone.end
        begin = gone.start if form.drop + 1 < len(spans) else spans[form.drop - 1].end
        edits.append((begin, stop, "", ""))
    if form.insert_at is not None:
        value = form.insert.replace(HIP_VERSION, version)
        if form.insert_at < len(spans):
            edits.append((spans[form.insert_at].start,) * 2 + (value + separator, ""))
        else:
            edits.append((spans[-1].end,) * 2 + (separator + value, ""))
    if form.replace_at is not None:
        span = spans[form.replace_at]
        edits.append((span.start, span.end, form.replace.replace(HIP_VERSION, version), ""))
    if form.symbol_string is not None:
        span = spans[form.symbol_string]
        renamed = _hip_symbol_string(t, args[form.symbol_string])
        if renamed != args[form.symbol_string]:
            edits.append((span.start, span.end, renamed, ""))
    for constant, hip_constant in form.constants.items():
        pattern = re.compile(rf"(?<![{_ID}]){re.escape(constant)}(?![{_ID}])")
        for span in spans:
            for match in pattern.finditer(t.code, span.start, span.end):
                edits.append((match.start(), match.end(), hip_constant, ""))
                t.handled.add(match.start())
    if form.append_from is not None:
        found = _argument_of_earlier_call(t, form.append_from, args, start)
        review = ""
        if found is None:
            review = (
                f"{hip} needs the external buffer given to "
                f"{_hip_name(t, form.append_from.call)}: pass it in place of {form.append}"
            )
        edits.append((spans[-1].end, spans[-1].end, separator + (found or form.append), review))
    elif form.append:
        edits.append((spans[-1].end, spans[-1].end, separator + form.append, ""))
    for begin, stop, new, review in sorted(edits, key=lambda e: (e[0], e[1])):
        old = text[begin:stop]
        if t.edit(begin, stop, new):
            status = NEEDS_REVIEW if review else CONVERTED
            t.change(begin, action.family, old, new.strip(", \t\r\n"), status, review or form.note)


def _hip_symbol_string(t: Translation, arg: str) -> str:
    """``"cuMemAlloc"`` → ``"hipMalloc"``: hipGetProcAddress looks up HIP's names."""
    match = _STRING_RE.fullmatch(arg.strip())
    if match is None:
        return arg
    action = t.actions.get(match.group(1))
    if not isinstance(action, Rename):
        return arg
    return arg.replace(match.group(1), action.hip)


def _hip_name(t: Translation, cuda: str) -> str:
    action = t.actions.get(cuda)
    return action.hip if isinstance(action, Rename) else cuda


def _argument_of_earlier_call(
    t: Translation, source: AppendFrom, args: list[str], before: int
) -> str | None:
    """Argument ``take`` of the last ``source.call`` before ``before`` whose argument ``match``
    is the same text as ours (the SpSM descriptor that ties analysis and solve together)."""
    want = re.sub(r"\s+", "", args[source.match])
    found: str | None = None
    pattern = re.compile(rf"(?<![{_ID}]){re.escape(source.call)}(?![{_ID}])")
    for match in pattern.finditer(t.code, 0, before):
        call = t.call_arguments(match.end())
        if call is None or len(call.args) <= max(source.match, source.take):
            continue
        theirs = call.args[source.match]
        if re.sub(r"\s+", "", t.text[theirs.start : theirs.end]) == want:
            taken = call.args[source.take]
            found = t.text[taken.start : taken.end]
    return found


_PRINTF_RE = re.compile(rf"(?<![{_ID}.>:])printf[ \t]*(?=\()")


@functools.cache
def _printf_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """A printf call that may pass a built-in coordinate (looked for on the text first: the
    code text, comments blanked, costs a pass over the whole file), and one such argument."""
    words = "|".join(sorted(signature_facts().device_printf.builtins))
    return (
        re.compile(rf"printf[^;]*?\b(?:{words})\b"),
        re.compile(rf"(?:{words})[ \t]*\.[ \t]*[xyz]", re.ASCII),
    )


def cast_printf_builtins(t: Translation) -> None:
    """``printf("%d", blockIdx.x)`` → ``printf("%d", (unsigned int)blockIdx.x)``: HIP's
    built-in coordinates are objects device printf cannot take as they are."""
    if "printf" not in t.text:
        return
    maybe, builtin = _printf_patterns()
    if maybe.search(t.text) is None:
        return
    cast, note = signature_facts().device_printf.cast, signature_facts().device_printf.note
    for match in _PRINTF_RE.finditer(t.code):
        call = t.call_arguments(match.end())
        if call is None:
            continue
        for span in call.args[1:]:
            arg = t.text[span.start : span.end]
            if builtin.fullmatch(arg) and t.edit(span.start, span.end, f"({cast}){arg}"):
                t.change(span.start, "device", arg, f"({cast}){arg}", CONVERTED, note)
