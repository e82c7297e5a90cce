"""Device helpers that only code HIP never compiles calls (scan/kernels/callers.py, triage)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from gpuport.findings import Finding
from gpuport.report.json_format import scan_body
from gpuport.scan.engine import ScanOptions, scan_path
from gpuport.scan.kernels.callers import facts_of

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "project" / "arch_only_helpers"


def _places(findings: Iterable[Finding]) -> list[tuple[str, str, int]]:
    return sorted((f.rule_id, f.location.path, f.location.line) for f in findings)


def test_a_template_helper_only_arch_guarded_code_calls_is_set_aside() -> None:
    result = scan_path(FIXTURE, ScanOptions(jobs=1), display_root=FIXTURE.name)
    aside = _places(result.set_aside)
    # wait_on_barrier<Phase>: HIP never instantiates it, so its Hopper barrier is set aside
    assert ("GP309", "csrc/helpers.cuh", 8) in aside
    # group_max<Width> (`__forceinline__` before `__device__`): its masks are never compiled
    assert ("GP303", "csrc/helpers.cuh", 32) in aside
    # abs_ptx: inline, so clang never emits it (nor assembles its PTX) with no compiled call
    assert ("GP301", "csrc/helpers.cuh", 41) in aside
    # unused_pair_sum<T>: a template nothing calls
    assert ("GP303", "csrc/helpers.cuh", 48) in aside
    reported = _places(result.findings)
    assert [line for rule, _path, line in reported if rule in {"GP309", "GP301"}] == [68]
    # lane_ballot: an always-compiled kernel calls it, so its trap fallback stays reported;
    # fast_broadcast: not a template, so HIP compiles its 32-bit mask even with no call;
    # host_abs: host code the scan never reads may call it
    assert ("GP324", "csrc/helpers.cuh", 13) in reported
    assert ("GP303", "csrc/helpers.cuh", 24) in reported
    assert ("GP324", "csrc/helpers.cuh", 54) in reported
    # lone_sum<T>: nothing calls it, but no project file includes its header either
    assert ("GP303", "csrc/snippet.cuh", 7) in reported
    # to_half_bits<T>: only guarded code calls it, but HIP-Clang rejects its NVPTX "=h"/"f"
    # constraints where it parses the template (kb/ptx.toml [[constraint]])
    # cluster_barrier<Block>: nothing calls it, but HIP looks its non-dependent cluster names
    # up where it parses the template and rejects them (review24)
    assert ("GP310", "csrc/helpers.cuh", 77) in reported
    [to_half] = [f for f in result.findings if f.location.line == 68]
    assert to_half.rule_id == "GP301" and '("=h", "f")' in to_half.message


def test_one_line_per_file_counts_the_set_aside_helper_findings_and_says_why() -> None:
    result = scan_path(FIXTURE, ScanOptions(jobs=1), display_root=FIXTURE.name)
    [line] = [f for f in result.findings if f.rule_id == "GP603"]
    assert (line.location.path, line.location.line) == ("csrc/helpers.cuh", 7)
    assert line.message.startswith("5 finding(s) in device helpers")
    assert "GP303 x2" in line.message
    assert "group_max (only called from CUDA-only branches of kernel.cu)" in line.message
    assert "unused_pair_sum (never called)" in line.message
    assert "fast_broadcast" not in line.message and "lane_ballot" not in line.message


def test_the_scan_json_lists_the_set_aside_helper_finding_with_its_text() -> None:
    result = scan_path(FIXTURE, ScanOptions(jobs=1), display_root=FIXTURE.name)
    places = json.loads(json.dumps(scan_body(result)["set_aside"]))
    place = next(p for p in places if p["rule_id"] == "GP309")
    assert place["path"] == "csrc/helpers.cuh" and place["line"] == 8
    assert "mbarrier.try_wait" in place["text"]


def test_call_facts_split_compiled_and_dead_calls() -> None:
    text = (
        "template <int N> __device__ void tmpl_helper() { leaf(); }\n"
        "__device__ void plain_helper() {\n"
        "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900\n"
        "  hopper_only();\n"
        "#endif\n"
        "}\n"
        "__global__ void k() {\n"
        "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900\n"
        "  tmpl_helper<1>();\n"
        "#endif\n"
        "  plain_helper();\n"
        "}\n"
    )
    facts = facts_of("k.cu", text)
    assert "plain_helper" in facts.live and "tmpl_helper" not in facts.live
    assert "tmpl_helper" in facts.dead
    by_name = {h.name: h for h in facts.helpers}
    tmpl = by_name["tmpl_helper"]
    assert (tmpl.first, tmpl.last, tmpl.calls, tmpl.template) == (1, 1, frozenset({"leaf"}), True)
    plain = by_name["plain_helper"]
    assert (plain.first, plain.last, plain.template, plain.inline) == (2, 6, False, False)
    assert "hopper_only" not in plain.calls  # a call in a branch HIP never compiles is no call
    assert "k" not in by_name  # a __global__ kernel is launched by the host, never a helper


def test_call_facts_read_the_whole_declaration_head() -> None:
    text = (
        "template <int W>\n"
        "__forceinline__ __device__ float reduce_w(float v) { return v; }\n"
        "__host__ __device__ static int both(int v) { return v; }\n"
    )
    by_name = {h.name: h for h in facts_of("h.cuh", text).helpers}
    assert by_name["reduce_w"].template and by_name["reduce_w"].inline
    assert by_name["both"].host and by_name["both"].inline and not by_name["both"].template
