"""Macros a project header defines as a CUDA toolkit-version test are 0 on ROCm (issue 9)."""

from __future__ import annotations

from pathlib import Path

from expect import check_findings
from gpuport.project.build import build_model
from gpuport.scan.engine import ScanOptions, scan_path
from gpuport.syntax.preprocessor import conditions, zero_on_rocm
from project_tree import write

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "project" / "toolkit_version_macro"


def test_the_fixture_project_line_by_line() -> None:
    result = scan_path(FIXTURE, ScanOptions(jobs=1))
    # GP309 folds its own findings of several files into one line: they are set aside, kept
    listed = [*result.findings, *(f for f in result.set_aside if f.rule_id == "GP309")]
    files = sorted(p for p in FIXTURE.rglob("*") if p.is_file())
    assert len(files) == 4
    for path in files:
        rel = path.relative_to(FIXTURE).as_posix()
        mine = [f for f in listed if f.location.path == rel]
        check_findings(path.read_text(encoding="utf-8"), mine, rel)


def test_the_header_fact_reaches_its_includers_only() -> None:
    facts = build_model(FIXTURE).facts
    assert facts.included("common/cast/nvfp4.cuh", ['"../common.h"']).zero_macros == {
        "FP4_TYPE_SUPPORTED"
    }
    assert facts.included("common/cast/mxfp8.cu", []).zero_macros == frozenset()


def test_a_name_another_header_defines_otherwise_is_not_zero(tmp_path: Path) -> None:
    root = write(
        tmp_path,
        {
            "a/common.h": "#pragma once\n#define FP4_OK (CUDA_VERSION >= 12080)\n",
            "b/common.h": "#pragma once\n#define FP4_OK 1\n",
        },
    )
    facts = build_model(root).facts
    assert facts.included("a/k.cu", ['"common.h"']).zero_macros == frozenset()


def test_zero_on_rocm_reads_toolkit_version_tests() -> None:
    assert zero_on_rocm("(CUDA_VERSION >= 12080)")
    assert zero_on_rocm("defined(CUDART_VERSION) && CUDART_VERSION >= 11080")
    assert zero_on_rocm("CUDA_VERSION >= 12000 && defined(__CUDA_ARCH__)")
    assert not zero_on_rocm("CUDA_VERSION < 12000")  # true on ROCm
    assert not zero_on_rocm("!defined(CUDA_VERSION) || CUDA_VERSION >= 11000")
    assert not zero_on_rocm("0")  # a plain default, not a toolkit test
    assert not zero_on_rocm("CUDA_VERSION >= 12080 || USE_FP4")  # another name decides


def test_conditions_read_a_zero_macro_as_defined_and_0() -> None:
    code = "#if FP4\nint a;\n#endif\n#ifdef FP4\nint b;\n#endif\n#if !FP4\nint c;\n#endif\n"
    found = conditions(code, zero=frozenset({"FP4"}))
    dead = [code[s:e] for s, e in found.dead]
    assert dead == ["int a;\n"]
    assert conditions(code).dead == []  # unknown without the fact
