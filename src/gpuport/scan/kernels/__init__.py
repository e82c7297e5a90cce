"""The CUDA/C++ scanner (GP3xx): inline PTX, 32-wide warp assumptions, NVIDIA-only features, libraries.

Each rule is declared once, followed by its check, a function named after the rule's slug, in
the ``*_rules`` modules (and ``renames``) of this package; the other modules are rule-neutral
helpers named for what they are. One pass per file runs the checks of the enabled rules.

Every check runs regular expressions over ``code_only`` text (comments and string insides
blanked, offsets kept; :mod:`gpuport.syntax.cxx`), so nothing fires inside comments or
strings. Inline PTX is the one exception: its template lives in a string, which is read from
the original text at the same offsets. Files none of the enabled rules' needles appear in are
skipped before they are lexed, because this runs over tens of thousands of files.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator

from gpuport.files import NO_PROJECT_FACTS, FileKind, ProjectFacts, SourceText
from gpuport.findings import CallFacts, Finding, Skipped
from gpuport.rules import NeedleSet, Rule
from gpuport.scan.base import scanner
from gpuport.scan.kernels import (
    arch_rules,
    feature_rules,
    library_rules,
    ptx_rules,
    renames,
    warp_mask_rules,
    warp_width_rules,
    wave_rules,
)
from gpuport.scan.kernels.callers import call_facts, names_only
from gpuport.scan.kernels.cuda_files import mentions_cuda, uses_cuda
from gpuport.scan.kernels.masks import FULL_MASK_64
from gpuport.scan.kernels.source import KernelSource
from gpuport.syntax.cxx import code_only

__all__ = ["FULL_MASK_64", "KERNEL_RULES", "analyze", "scan_kernels", "uses_cuda"]

Check = Callable[[KernelSource], Iterator[Finding]]

# Every kernel rule with its check, in rule-id order.
CHECKS: tuple[tuple[Rule, Check], ...] = (
    (renames.CUDA_API_RENAMES, renames.cuda_api_renames),
    (ptx_rules.INLINE_PTX, ptx_rules.inline_ptx_assembly),
    (warp_width_rules.LANE_MATH_WARP_32, warp_width_rules.lane_math_assumes_warp_32),
    (warp_mask_rules.WARP_MASK_32_BIT, warp_mask_rules.warp_mask_32_bit),
    (warp_mask_rules.BALLOT_RESULT_32_BIT, warp_mask_rules.ballot_result_32_bit),
    (warp_width_rules.WARP_SIZE_HARDCODED, warp_width_rules.warp_size_hardcoded),
    (warp_width_rules.WARPSIZE_NOT_CONSTEXPR, warp_width_rules.warpsize_not_constexpr),
    (warp_width_rules.PER_WARP_ARRAY_32, warp_width_rules.lane_indexed_array_32),
    (warp_width_rules.SHUFFLE_FROM_16, warp_width_rules.shuffle_reduction_32_lanes),
    (ptx_rules.HOPPER_ONLY, ptx_rules.hopper_only_feature),
    (ptx_rules.THREAD_BLOCK_CLUSTERS, ptx_rules.thread_block_clusters),
    (ptx_rules.ASYNC_COPY, ptx_rules.async_copy_pipeline),
    (library_rules.CUTLASS_CUTE, library_rules.cutlass_cute),
    (library_rules.CUBLASLT, library_rules.cublaslt),
    (library_rules.CUDNN, library_rules.cudnn),
    (feature_rules.TEXTURE_REFERENCE, feature_rules.texture_surface_reference),
    (library_rules.LIBCUDACXX, library_rules.libcudacxx),
    (library_rules.NVRTC, library_rules.nvrtc),
    (library_rules.NVTX, library_rules.nvtx),
    (feature_rules.NANOSLEEP, feature_rules.nanosleep),
    (warp_mask_rules.INDEPENDENT_THREAD_SCHEDULING, warp_mask_rules.partial_warp_sync),
    (library_rules.MEMORY_POOLS, library_rules.stream_ordered_memory_pools),
    (feature_rules.GRAPH_FEATURES, feature_rules.cuda_graph_unsupported_feature),
    (library_rules.WMMA, library_rules.wmma),
    (feature_rules.CUDA_ARCH_MACRO, feature_rules.cuda_arch_macro),
    (feature_rules.DYNAMIC_PARALLELISM, feature_rules.dynamic_parallelism),
    (library_rules.FP8_TYPES, library_rules.fp8_formats),
    (wave_rules.WARP_SIZE_FIXED_64, wave_rules.warp_size_fixed_64_on_amd),
    (wave_rules.SHUFFLE_FROM_LANE_31, wave_rules.shuffle_from_lane_31),
    (wave_rules.LANE_MASK_32_BIT, wave_rules.lane_mask_32_bit_shift),
    (arch_rules.BLACKWELL_ONLY_KERNEL, arch_rules.blackwell_only_kernel),
)
KERNEL_RULES: tuple[Rule, ...] = tuple(rule for rule, _ in CHECKS)


def analyze(
    rel: str,
    text: str,
    *,
    code: str | None = None,
    renames: bool = True,
    facts: ProjectFacts = NO_PROJECT_FACTS,
) -> list[Finding]:
    """Every GP3xx finding in one CUDA (or CUDA-using C++) file, in file order.

    ``rel`` is the path shown in findings. This is public so that ``gpuport port`` can list
    what a rename cannot fix: it passes the ``code_only`` text it already has as ``code``,
    and ``renames=False`` to leave out GP300, the count of the renames it does itself.
    """
    checks = CHECKS if renames else CHECKS[1:]
    code = code_only(text) if code is None else code
    return _run(KernelSource(rel, text, code, facts), checks)


def _run(src: KernelSource, checks: Iterable[tuple[Rule, Check]]) -> list[Finding]:
    findings: list[Finding] = []
    for rule, check in checks:
        if src.mentions(rule):
            findings.extend(check(src))
    if findings and src.conditions is not None:
        # a branch ROCm never compiles (the #else of #if USE_ROCM) is not porting work
        findings = [f for f in findings if src.compiled_line(f.location.line)]
    findings.sort(key=lambda f: f.sort_key)
    return findings


@functools.lru_cache(maxsize=64)
def _enabled_checks(
    enabled: frozenset[str],
) -> tuple[tuple[tuple[Rule, Check], ...], NeedleSet | None]:
    """The checks of the enabled rules, and the words a file needs for one of them to fire."""
    checks = tuple((rule, check) for rule, check in CHECKS if rule.id in enabled)
    return checks, NeedleSet.of(rule for rule, _ in checks)


@scanner(FileKind.CUDA, FileKind.CXX, name="kernels")
def scan_kernels(
    source: SourceText, enabled: frozenset[str]
) -> Iterable[Finding | Skipped | CallFacts]:
    """CUDA files always; C/C++ files only when their code uses CUDA. Every such file also
    gives its part of the project's device call index (:mod:`.callers`), for triage."""
    checks, needles = _enabled_checks(enabled)
    text = source.text
    if source.file.kind is FileKind.CXX and not mentions_cuda(text):
        return []  # cheap: most C++ files stop here
    if not checks:
        return []
    if needles is not None and not needles.found_in(text):
        # no enabled rule can fire here; its calls still count
        return [names_only(source)]
    code = code_only(text)
    if source.file.kind is FileKind.CXX and not mentions_cuda(code):
        return []  # CUDA only in comments or strings
    file = source.file
    kernel_source = KernelSource(
        file.rel,
        text,
        code,
        source.facts,
        path=file.path,
        root=file.root if file.confined else None,
    )
    found = _run(kernel_source, checks)
    return [*found, call_facts(kernel_source, indexed=bool(found))]
