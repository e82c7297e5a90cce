"""Triage: tiers on every finding, NVIDIA-only components and per-folder renames folded."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from expect import check_findings
from gpuport.findings import Category, Confidence, Finding, Location, Severity, Tier
from gpuport.project.file_folds import fold_by_folder
from gpuport.project.model import Component, ComponentStatus, Evidence, ProjectModel
from gpuport.project.triage import NVIDIA_ONLY_COMPONENT, triage
from gpuport.scan.engine import ScanOptions, scan_path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "project"
CUTLASS = Component(
    "csrc/attn",
    ComponentStatus.NVIDIA_ONLY,
    (Evidence("setup.py", 12, "setup.py compiles csrc/attn/ only in its CUDA branch"),),
    "csrc/attn_ck",
)
MODEL = ProjectModel(name="p", rocm_support=(Evidence("setup.py", 3, "x"),), components=(CUTLASS,))
ALL = frozenset({"GP601", "GP300", "GP312", "GP302"})


def finding(rule_id: str, path: str, line: int = 1, severity: Severity = Severity.LOW) -> Finding:
    return Finding(
        rule_id,
        f"{rule_id} here",
        Location(path, line),
        severity,
        Confidence.HIGH,
        Category.KERNELS,
    )


def keys(findings: list[Finding]) -> list[tuple[str, int, int, str, str]]:
    return sorted(f.sort_key for f in findings)


def test_a_component_becomes_one_finding_and_its_findings_are_set_aside() -> None:
    inside = [
        finding("GP312", "csrc/attn/a.cu"),
        finding("GP312", "csrc/attn/b.cu"),
        finding("GP302", "csrc/attn/sub/c.cu"),
    ]
    outside = finding("GP302", "csrc/attn_ck/a.cpp")
    kept, aside = triage([*inside, outside], MODEL, ALL)
    assert keys(aside) == keys(inside)
    (folded,) = [f for f in kept if f.rule_id == "GP601"]
    assert (folded.location.path, folded.location.line) == ("setup.py", 12)
    assert folded.severity is Severity.INFO
    assert folded.category is Category.PROJECT
    assert "csrc/attn/ is NVIDIA-only" in folded.message
    assert "3 finding(s) in it set aside (GP302 x1, GP312 x2)" in folded.message
    assert "csrc/attn_ck" in folded.message
    assert outside in kept


def test_a_component_with_no_finding_in_it_is_still_one_line() -> None:
    kept, aside = triage([], MODEL, ALL)
    assert [(f.rule_id, f.location.path, f.location.line) for f in kept] == [
        ("GP601", "setup.py", 12)
    ]
    assert "0 finding(s) in it set aside" in kept[0].message
    assert aside == []


def test_without_gp601_enabled_nothing_is_folded_into_a_component() -> None:
    inside = [finding("GP302", "csrc/attn/a.cu")]
    kept, aside = triage(inside, MODEL, frozenset({"GP302"}))
    assert (kept, aside) == (inside, [])


def test_every_finding_gets_its_tier() -> None:
    kept, _ = triage(
        [finding("GP302", "tests/t.cu"), finding("GP302", "pkg/k.cu")], ProjectModel(), ALL
    )
    assert [f.tier for f in kept] == [Tier.TESTS, Tier.PRODUCT]


def test_renames_fold_per_folder_and_tier_when_two_files_or_more() -> None:
    many = [finding("GP300", f"csrc/includes/h{i}.h", 10 + i) for i in range(3)]
    lone = finding("GP300", "csrc/other/x.cu")
    in_tests = [finding("GP300", "tests/a.cu"), finding("GP300", "tests/b.cu")]
    high = finding("GP312", "csrc/k/a.cu", severity=Severity.HIGH)
    low = finding("GP312", "csrc/k/b.cu", severity=Severity.MEDIUM)
    tiered, none_aside = triage([*many, lone, *in_tests, high, low], ProjectModel(), ALL)
    assert none_aside == [] and len(tiered) == 8  # the scan itself does not fold by folder
    kept, aside = fold_by_folder(tiered)
    assert keys(aside) == keys([*many, *in_tests, high, low])
    by_path = {(f.rule_id, f.location.path): f for f in kept}
    assert set(by_path) == {
        ("GP300", "csrc/includes/h0.h"),
        ("GP300", "csrc/other/x.cu"),
        ("GP300", "tests/a.cu"),
        ("GP312", "csrc/k/a.cu"),
    }
    folded = by_path["GP300", "csrc/includes/h0.h"]
    assert folded.message.startswith("3 files in csrc/includes/ use CUDA API names")
    assert folded.location.line == 10
    assert by_path["GP300", "tests/a.cu"].tier is Tier.TESTS
    assert by_path["GP312", "csrc/k/a.cu"].severity is Severity.HIGH


def test_the_fixture_project_folds_its_cutlass_backend() -> None:
    root = FIXTURES / "nvidia_only"
    result = scan_path(root, ScanOptions(jobs=1), display_root=root.name)
    assert result.project is not None and result.project.supports_rocm
    assert not result.skipped
    setup_findings = [f for f in result.findings if f.location.path == "setup.py"]
    check_findings((root / "setup.py").read_text(encoding="utf-8"), setup_findings, "setup.py")
    # GP601 alone: GP210 is quiet in a setup.py that already branches for ROCm
    assert [f.location.path for f in result.findings] == ["setup.py"]
    assert {f.location.path for f in result.set_aside} == {"csrc/attn_cutlass/api.cu"}
    assert {f.rule_id for f in result.set_aside} >= {"GP312", "GP303"}
    assert NVIDIA_ONLY_COMPONENT.id in {f.rule_id for f in result.findings}


def test_hopper_features_of_several_files_become_one_line_naming_the_decision() -> None:
    def tma(path: str, line: int, name: str = "CUtensorMap") -> Finding:
        return replace(
            finding("GP309", path, line, Severity.HIGH),
            message=f"{name}: a Hopper-or-newer feature with no HIP counterpart",
        )

    group = [
        tma("lib/cast/a.cuh", 3),
        tma("lib/cast/a.cuh", 9, "CUtensorMapSwizzle"),
        tma("lib/common.cu", 5, "cp_async_bulk_wait_group"),
    ]
    alone = tma("ops/probe.cu", 2)  # outside lib/, in the same (project) scope: folded too
    other = finding("GP300", "lib/common.cu")
    model = ProjectModel(name="p")
    kept, aside = triage([*group, alone, other], model, frozenset({"GP309", "GP300"}))
    assert keys(aside) == keys([*group, alone])
    (line,) = [f for f in kept if f.rule_id == "GP309"]
    assert line.excerpt is None and line.severity is Severity.HIGH
    assert line.location.path == "lib/cast/a.cuh" and line.location.line == 3
    assert line.message.startswith("the project uses Hopper-or-newer NVIDIA features")
    assert "(CUtensorMap, cp_async_bulk)" in line.message
    assert "3 files, 4 finding(s) set aside" in line.message
    assert "lib/cast/a.cuh (2), lib/common.cu (1), ops/probe.cu (1)" in line.message
    assert other in kept


def test_hopper_features_of_one_file_stay_as_they_are() -> None:
    one = [finding("GP309", "lib/a.cuh", 3), finding("GP309", "lib/a.cuh", 9)]
    kept, aside = triage(one, ProjectModel(name="p"), frozenset({"GP309"}))
    assert not aside and keys(kept) == keys(one)
    folder = [finding("GP309", "lib/x/a.cuh", 3), finding("GP309", "lib/y/b.cuh", 9)]
    kept, aside = triage(folder, ProjectModel(name="p"), frozenset({"GP309"}))
    (line,) = kept
    assert line.message.startswith("lib/ uses Hopper-or-newer NVIDIA features")
