"""GP603: the kernel findings inside ``__device__`` helpers that no code a ROCm build compiles
calls, set aside under one line per file (project/triage.py runs it; scan/kernels/callers.py
gives the call index).

Holds the rule, :func:`set_aside_unreached_helpers` and its helpers: which helpers HIP never
calls, which of their findings HIP never compiles, and where the project names them.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import replace

from gpuport.findings import (
    NVPTX_CONSTRAINT_MARK,
    CallFacts,
    Category,
    Confidence,
    DeviceHelper,
    Finding,
    Severity,
)
from gpuport.project.file_folds import BLACKWELL_FILE_RULE, rule_counts
from gpuport.project.model import ComponentStatus, ProjectModel
from gpuport.rules import rule

UNREACHED_HELPERS = rule(
    id="GP603",
    slug="unreached-device-helpers",
    category=Category.PROJECT,
    severity=Severity.INFO,
    confidence=Confidence.MEDIUM,
    summary="Device helpers that no code a ROCm build compiles calls",
    what="Folds the kernel findings inside a file's `__device__` helpers whose every call in the "
    "project sits where HIP never compiles it (an `#if __CUDA_ARCH__ >= 1000` or `CUDA_VERSION` "
    "branch, the CUDA arm of an `#ifdef USE_ROCM`, a file GP330 calls Blackwell-only, an "
    "NVIDIA-only component, or another such helper), or that nothing in the project calls, into "
    "one line per file naming the helpers and why. Only what HIP never compiles is folded: every "
    "finding of a template helper (HIP instantiates it only from a call) but its thread-block "
    "cluster and wmma names, which HIP rejects where it parses the template; in a helper that is "
    "not a template, the findings that show only when it runs (lane math, kept 32-bit masks, "
    "`__CUDA_ARCH__` trap fallbacks) and, when it is inline or static, its inline PTX (clang "
    "neither emits such a function nor checks its asm when nothing calls it). Its 32-bit "
    "`__shfl_sync` masks, wmma or FP8 types stay reported: HIP's headers reject them as soon as "
    "the body is parsed. A helper that host code may call (`__host__ __device__`), one named "
    "anywhere HIP compiles, and an uncalled one in a header that no scanned file includes or in a "
    "public `include/` folder (code the scan never read may call it) stay reported.",
    why="A helper only a CUDA-only branch calls is ported, or dropped, with that branch: its "
    "findings are that branch's decision, not work of their own.",
    example="template <int P> __device__ void wait_phase(uint64_t* bar) { asm volatile(...); }\n"
    "__global__ void k(uint64_t* bar) {\n#if __CUDA_ARCH__ >= 1000\n  wait_phase<0>(bar);\n"
    "#endif\n}",
    instead="Port or drop the `#if __CUDA_ARCH__ >= 1000` branch; the helper goes with it.",
    fix="Nothing to port in these helpers on their own: decide their callers' CUDA-only branch "
    "(or, for a helper nothing calls, delete it or leave it unused).",
    mechanical=False,
)

# Kernel rules whose problem shows only when the code runs (lane math, 32-bit masks kept,
# `__CUDA_ARCH__` fallbacks, sleeps): moot in a helper HIP never calls. The others (a 32-bit
# mask HIP's `__shfl_sync` rejects with a static_assert, wmma, FP8 types, warpSize as a
# constant, CUTLASS) fail when HIP parses the body, which it does for a non-template function
# whether or not anything calls it; only a template's body waits for a call to instantiate it.
_RUN_TIME_KERNEL_RULES = frozenset(
    {"GP302", "GP304", "GP305", "GP307", "GP308", "GP319", "GP320", "GP324", "GP327", "GP328"}
    | {"GP329"}
)
# Inline PTX: clang defers a device function's asm diagnostics until it emits the function,
# and it emits an inline or static one only when something calls it (clang's "deferred
# diagnostics" for CUDA/HIP, clang/lib/Sema/SemaStmtAsm.cpp's targetDiag).
_EMITTED_RULES = frozenset({"GP301"})
# CUDA library names HIP does not declare, which code spells without a template parameter
# (`cg::this_cluster()`, `nvcuda::wmma::fragment<…>`): clang looks a non-dependent name up where
# it parses a template, so an uncalled template still fails on ROCm ("no member named
# 'this_cluster' in namespace 'cooperative_groups'", hipcc 5.2 gfx90a, review24). Only a
# dependent use waits for an instantiation; the scan cannot tell which, so these stay reported.
_NAMED_API_RULES = frozenset({"GP310", "GP323"})
# How GP330's message names a Hopper-only TMA file (scan/kernels/arch_rules.py), not a Blackwell one.
_HOPPER_FILE = "only for Hopper and newer"
_PUBLIC_HEADERS_RE = re.compile(r"(?:^|/)include/")
_TRANSLATION_UNIT_RE = re.compile(r"\.(?:cu|cpp|cc|cxx|c)$")
_MOST_NAMED = 4


def set_aside_unreached_helpers(
    findings: list[Finding], model: ProjectModel, calls: list[CallFacts], set_aside: list[Finding]
) -> list[Finding]:
    """``findings`` less the kernel findings inside a project ``__device__`` helper that no code
    HIP compiles calls (appended to ``set_aside``), counted on one GP603 line per file that
    names the helpers and why (scan/kernels/callers.py gives the call index). A helper's
    findings go only where HIP never compiles them (``_folded_in``): all of a template's; of
    another helper those of ``_RUN_TIME_KERNEL_RULES``, and its inline PTX when it is inline
    or static. Kept: a ``__host__ __device__`` helper (host files the index never reads may
    call it), a helper named anywhere HIP compiles, and an uncalled helper whose callers the
    scan may not have read (``_callers_all_read``). A CUDA file the scan skipped (too large)
    is not read for calls."""
    if not calls:
        return findings
    # GP330 files: Blackwell-only, or Hopper-only TMA files (scan/kernels/arch_rules.py)
    blackwell = {
        f.location.path: "Hopper-only " if _HOPPER_FILE in f.message else "Blackwell-only "
        for f in [*set_aside, *findings]
        if f.rule_id == BLACKWELL_FILE_RULE
    }

    def unreached_file(rel: str) -> str:
        """Why HIP never compiles ``rel`` ("" when it does)."""
        if rel in blackwell:
            return blackwell[rel]
        component = model.component_of(rel)
        if component is not None and component.status is ComponentStatus.NVIDIA_ONLY:
            return "NVIDIA-only "
        return ""

    live: set[str] = set()
    defined: dict[str, list[tuple[str, DeviceHelper]]] = defaultdict(list)
    for fact in calls:
        if not unreached_file(fact.rel):
            live |= fact.live
        for helper in fact.helpers:
            defined[helper.name].append((fact.rel, helper))
    reached = set(live)  # a call in a helper HIP compiles is a compiled call
    frontier = [name for name in defined if name in reached]
    while frontier:
        for rel, helper in defined[frontier.pop()]:
            if not unreached_file(rel):
                new = helper.calls - reached
                reached |= new
                frontier.extend(n for n in new if n in defined)
    unreached = {
        (rel, helper)
        for name, defs in defined.items()
        if name not in reached
        for rel, helper in defs
        if not helper.host
    }
    if not unreached:
        return findings
    spans: dict[str, list[tuple[str, DeviceHelper]]] = defaultdict(list)
    for rel, helper in unreached:
        spans[rel].append((rel, helper))
    kept: list[Finding] = []
    inside: dict[tuple[str, DeviceHelper], list[Finding]] = defaultdict(list)
    for finding in findings:
        loc = finding.location
        home = next(
            (
                (rel, helper)
                for rel, helper in spans.get(loc.path, ())
                if helper.first <= loc.line <= helper.last
            ),
            None,
        )
        if (
            home is not None
            and finding.rule_id.startswith("GP3")
            and finding.rule_id != BLACKWELL_FILE_RULE
            and _folded_in(home[1], finding)
        ):
            inside[home].append(finding)
        else:
            kept.append(finding)
    if not inside:
        return findings
    why = _HelperCallers(calls, unreached_file, {h.name for _r, h in unreached})
    by_file: dict[str, list[tuple[DeviceHelper, list[Finding]]]] = defaultdict(list)
    included = {name for fact in calls for name in fact.included}
    for (rel, helper), folded in inside.items():
        if not why.called(helper.name) and not _callers_all_read(rel, included):
            kept.extend(folded)  # its callers may be code the scan never read
        else:
            by_file[rel].append((helper, folded))
    for rel, group in by_file.items():
        group.sort(key=lambda item: item[0].first)
        folded = [f for _h, fs in group for f in fs]
        set_aside.extend(folded)
        kept.append(_unreached_helpers_finding(rel, group, folded, why))
    return kept


def _callers_all_read(rel: str, included: set[str]) -> bool:
    """Whether the scan read every place that may call a helper of ``rel`` with none found: a
    source file (its own translation unit), or a header that project files include and that
    is no public ``include/`` API. A header nothing includes (a snippet, a library's API) may
    be called by code the scan never saw."""
    if _TRANSLATION_UNIT_RE.search(rel):
        return True
    return rel.rsplit("/", 1)[-1] in included and not _PUBLIC_HEADERS_RE.search(rel)


def _folded_in(helper: DeviceHelper, finding: Finding) -> bool:
    """Whether HIP never compiles ``finding``'s problem in ``helper`` when nothing calls it.
    Never an asm statement with an NVPTX-only operand constraint: clang rejects it where it
    parses it, in a template never instantiated too (kb/ptx.toml [[constraint]])."""
    if NVPTX_CONSTRAINT_MARK in finding.message:
        return False
    rule_id = finding.rule_id
    return (
        (helper.template and rule_id not in _NAMED_API_RULES)
        or rule_id in _RUN_TIME_KERNEL_RULES
        or (helper.inline and rule_id in _EMITTED_RULES)
    )


class _HelperCallers:
    """Where the project names each unreached helper, to say why HIP never calls it."""

    def __init__(
        self, calls: list[CallFacts], unreached_file: Callable[[str], str], names: set[str]
    ) -> None:
        self._where: dict[str, list[str]] = defaultdict(list)
        for fact in calls:
            kind = unreached_file(fact.rel)
            base = fact.rel.rsplit("/", 1)[-1]
            seen = (fact.dead if not kind else fact.dead | fact.live) & names
            for name in seen:
                place = f"{kind}{base}" if kind else f"CUDA-only branches of {base}"
                self._where[name].append(place)
            for helper in fact.helpers:
                for name in (helper.calls & names) - {helper.name}:
                    self._where[name].append(f"{helper.name}()")

    def called(self, name: str) -> bool:
        return bool(self._where.get(name))

    def reason(self, name: str) -> str:
        where = sorted(set(self._where.get(name, ())))
        if not where:
            return f"{name} (never called)"
        shown = ", ".join(where[:2]) + (f" and {len(where) - 2} more" if len(where) > 2 else "")
        return f"{name} (only called from {shown})"


def _unreached_helpers_finding(
    rel: str,
    group: list[tuple[DeviceHelper, list[Finding]]],
    folded: list[Finding],
    why: _HelperCallers,
) -> Finding:
    names = list(dict.fromkeys(h.name for h, _fs in group))
    shown = "; ".join(why.reason(n) for n in names[:_MOST_NAMED])
    more = f"; and {len(names) - _MOST_NAMED} more" if len(names) > _MOST_NAMED else ""
    message = (
        f"{len(folded)} finding(s) in device helpers no code a ROCm build compiles calls, set "
        f"aside ({rule_counts(folded)}): {shown}{more}"
    )
    finding = UNREACHED_HELPERS.finding(rel, group[0][0].first, message=message)
    return replace(finding, tier=folded[0].tier)
