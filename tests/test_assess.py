"""The verdict and the effort model, on hand-made scans whose arithmetic can be checked."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gpuport.assess import Verdict, assess
from gpuport.assess.verdict import (
    HOURS_BY_SEVERITY,
    MECHANICAL_REVIEW_HOURS,
    REDESIGN_FILES,
    REPEAT_FACTOR,
)
from gpuport.cli import common
from gpuport.cli import main as cli_main
from gpuport.findings import (
    Category,
    Confidence,
    Finding,
    Fix,
    Location,
    Severity,
    SkipKind,
    Skipped,
    Tier,
)
from gpuport.project.model import Component, ComponentStatus, Evidence, ProjectModel
from gpuport.scan.engine import ScanResult


def finding(
    rule: str,
    path: str,
    line: int,
    severity: Severity,
    category: Category = Category.KERNELS,
    mechanical: bool = False,
) -> Finding:
    return Finding(
        rule_id=rule,
        message=f"{rule} happened. Do this instead.",
        location=Location(path, line, 1),
        severity=severity,
        confidence=Confidence.HIGH,
        category=category,
        fix=Fix("do it", mechanical),
    )


def scan(*findings: Finding, skipped: tuple[Skipped, ...] = ()) -> ScanResult:
    return ScanResult(root="p", findings=list(findings), skipped=list(skipped))


def medium_high_and_low() -> ScanResult:
    """Two kernel findings, medium and high, in one file, and a low Python one."""
    return scan(
        finding("GP302", "k.cu", 3, Severity.MEDIUM),
        finding("GP301", "k.cu", 9, Severity.HIGH),
        finding("GP204", "t.py", 1, Severity.LOW, Category.PYTHON),
    )


def test_nothing_found_is_ready() -> None:
    a = assess(scan(finding("GP208", "t.py", 1, Severity.INFO, Category.PYTHON)))
    assert a.verdict is Verdict.READY
    assert a.total_hours == 0 and a.actionable == 0 and a.mechanical_share == 1.0


def test_any_blocker_blocks_and_is_named_first() -> None:
    a = assess(
        scan(
            finding("GP302", "k.cu", 3, Severity.MEDIUM),
            finding("GP104", "requirements.txt", 2, Severity.BLOCKER, Category.DEPENDENCIES),
            finding("GP104", "setup.py", 9, Severity.BLOCKER, Category.DEPENDENCIES),
        )
    )
    assert a.verdict is Verdict.BLOCKED
    assert [f.location.path for f in a.blockers] == ["requirements.txt", "setup.py"]
    assert a.reasons == ["GP104 at requirements.txt:2:1: GP104 happened (and 1 more)"]


def test_medium_findings_mean_work_and_reasons_list_the_worst_first() -> None:
    a = assess(medium_high_and_low())
    assert a.verdict is Verdict.READY_WITH_WORK
    assert a.reasons[0].startswith("GP301 at k.cu:9:1")
    assert not any("GP204" in r for r in a.reasons)  # low findings are not reasons


def test_effort_arithmetic_repeats_and_mechanical_review() -> None:
    a = assess(
        scan(
            finding("GP302", "k.cu", 3, Severity.MEDIUM),
            finding("GP302", "k.cu", 7, Severity.MEDIUM),  # a repeat in the same file
            finding("GP302", "j.cu", 1, Severity.MEDIUM),  # first in another file
            finding("GP303", "k.cu", 4, Severity.MEDIUM, mechanical=True),
            finding("GP101", "r.txt", 1, Severity.MEDIUM, Category.DEPENDENCIES, mechanical=True),
        )
    )
    by_category = {line.category: line for line in a.effort}
    medium = HOURS_BY_SEVERITY[Severity.MEDIUM]
    kernels = by_category[Category.KERNELS]
    assert kernels.findings == 4 and kernels.mechanical == 1
    assert kernels.hours == pytest.approx(
        round(medium * (2 + REPEAT_FACTOR) + MECHANICAL_REVIEW_HOURS, 2)
    )
    assert by_category[Category.DEPENDENCIES].hours == pytest.approx(MECHANICAL_REVIEW_HOURS)
    assert a.mechanical == 2 and a.actionable == 5
    assert kernels.days_low < kernels.days_high


def test_files_that_could_not_be_read_are_a_stated_gap() -> None:
    a = assess(scan(skipped=(Skipped("big.cu", SkipKind.TOO_LARGE, "too big"),)))
    assert a.verdict is Verdict.READY
    assert any("could not be analysed" in r for r in a.reasons)
    partial = assess(scan(skipped=(Skipped("l.py", SkipKind.NOT_UTF8, "x", 1, partial=True),)))
    assert not any("could not be analysed" in r for r in partial.reasons)


def test_category_severity_table() -> None:
    a = assess(medium_high_and_low())
    assert a.by_category_and_severity() == {
        "python": {"low": 1},
        "kernels": {"medium": 1, "high": 1},
    }


# --- issue 9: tiers, the project's own ROCm path, nothing to assess, next steps ----------------


def tiered(f: Finding, tier: Tier) -> Finding:
    return dataclasses.replace(f, tier=tier)


def test_only_product_findings_drive_the_verdict_and_the_effort() -> None:
    blocker_in_tests = tiered(
        finding("GP104", "tests/req.txt", 1, Severity.BLOCKER, Category.DEPENDENCIES), Tier.TESTS
    )
    high_in_bench = tiered(finding("GP301", "bench/k.cu", 2, Severity.HIGH), Tier.BENCHMARKS)
    a = assess(scan(blocker_in_tests, high_in_bench, finding("GP204", "t.py", 1, Severity.LOW)))
    assert a.verdict is Verdict.READY
    assert a.blockers == []
    assert a.total_hours == pytest.approx(HOURS_BY_SEVERITY[Severity.LOW])
    assert a.tiers == {Tier.PRODUCT: 1, Tier.TESTS: 1, Tier.BENCHMARKS: 1}


def test_reasons_follow_severity_times_confidence_not_frequency() -> None:
    unsure = [
        dataclasses.replace(
            finding("GP302", f"k{i}.cu", 1, Severity.HIGH), confidence=Confidence.LOW
        )
        for i in range(4)
    ]
    sure = finding("GP301", "z.cu", 9, Severity.HIGH)
    a = assess(scan(*unsure, sure))
    assert a.verdict is Verdict.READY_WITH_WORK
    assert a.reasons[0].startswith("GP301 at z.cu:9:1")
    assert a.reasons[1].startswith("GP302") and a.reasons[1].endswith("(and 3 more)")
    assert [f.rule_id for f in a.top] == ["GP301", "GP302"]


def test_an_empty_project_has_nothing_to_assess_and_says_what_gpuport_reads() -> None:
    a = assess(ScanResult(root="empty"))
    assert a.verdict is Verdict.NOTHING_TO_ASSESS
    assert "no file it reads" in a.reasons[0]
    assert a.total_hours == 0
    assert [s.command for s in a.next_steps] == ["gpuport assess PATH/TO/PROJECT"]


def rocm_model(name: str = "", archs: tuple[str, ...] = ()) -> ProjectModel:
    return ProjectModel(
        name=name,
        rocm_support=(
            Evidence("setup.py", 40, "builds the extension with hipcc when torch.version.hip"),
            Evidence(".github/workflows/rocm.yml", 0, "CI builds ROCm wheels"),
        ),
        rocm_archs=archs,
        components=(
            Component(
                "csrc/hopper",
                ComponentStatus.NVIDIA_ONLY,
                (Evidence("setup.py", 80, "compiled only when not torch.version.hip"),),
                "csrc/ck (Composable Kernel)",
            ),
            Component("csrc/ck", ComponentStatus.ROCM),
        ),
    )


def test_a_project_with_its_own_rocm_path_already_supports_rocm_with_its_evidence() -> None:
    folded = [finding("GP301", "csrc/hopper/a.cu", i, Severity.HIGH) for i in (1, 2, 3)]
    result = ScanResult(root="proj", project=rocm_model(archs=("gfx90a", "gfx942")))
    result.set_aside = folded
    result.stats.files_scanned = 5
    a = assess(result)
    assert a.verdict is Verdict.ALREADY_SUPPORTS_ROCM
    assert a.reasons[0] == "setup.py:40: builds the extension with hipcc when torch.version.hip"
    assert "targets gfx90a, gfx942; current ROCm GPUs it leaves out: gfx950" in a.reasons[2]
    assert a.support is not None and a.support.package == ""
    # a ROCm torch first, then the project's own build against it, without build isolation
    assert a.next_steps[0].command == (
        "pip install torch --index-url https://download.pytorch.org/whl/rocm7.2"
    )
    assert "its setup.py takes the ROCm path, setup.py:40" in a.next_steps[1].text
    assert "pip install --no-build-isolation ." in a.next_steps[1].text
    assert "Effort for the gaps" in a.effort_title
    assert a.assumptions[0].startswith("the project already builds for ROCm")
    assert [(c.path, c.findings) for c in a.folded] == [("csrc/hopper", 3)]
    assert a.folded[0].alternative == "csrc/ck (Composable Kernel)"
    assert a.total_hours == 0  # folded findings cost nothing


def test_a_known_package_gets_the_knowledge_base_answer() -> None:
    result = ScanResult(root="bnb", project=rocm_model(name="bitsandbytes"))
    result.stats.files_scanned = 1
    a = assess(result)
    assert a.verdict is Verdict.ALREADY_SUPPORTS_ROCM
    assert a.support is not None and a.support.package == "bitsandbytes"
    assert a.next_steps[0].command.startswith("pip install torch --index-url")  # ROCm torch first
    assert a.next_steps[1].text.startswith("bitsandbytes is a known package: Use bitsandbytes")
    # no architecture list in its build: the reader is told to name the GPU's target
    assert "names no GPU targets" in a.reasons[2]
    assert any("PYTORCH_ROCM_ARCH" in step.text for step in a.next_steps)


def test_a_known_package_without_a_rocm_path_is_pointed_at_its_rocm_build_elsewhere() -> None:
    # apex: no ROCm path in NVIDIA's repository, but the KB knows AMD's fork
    result = scan(finding("GP301", "csrc/a.cu", 3, Severity.HIGH))
    result.project = ProjectModel(name="apex")
    a = assess(result)
    assert a.verdict is Verdict.READY_WITH_WORK
    assert a.elsewhere.startswith("NVIDIA apex (installed from git) has an AMD fork")
    assert a.reasons[0].startswith("a ROCm build of it exists elsewhere: NVIDIA apex")
    assert "github.com/ROCm/apex" in a.next_steps[0].text
    assert a.effort_title == "Estimated effort"
    # a project the KB does not know gets no such line
    result.project = ProjectModel(name="my_own_thing")
    assert assess(result).elsewhere == ""


def test_more_files_needing_a_redesign_than_the_limit_is_blocked_not_a_port() -> None:
    def redesign(n: int) -> list[Finding]:
        return [finding("GP309", f"k{i}.cu", 1, Severity.HIGH) for i in range(n)]

    assert assess(scan(*redesign(REDESIGN_FILES))).verdict is Verdict.READY_WITH_WORK
    result = scan(*redesign(REDESIGN_FILES), finding("GP314", "cudnn.cpp", 1, Severity.HIGH))
    result.project = ProjectModel(name="transformer_engine")
    a = assess(result)
    assert a.verdict is Verdict.BLOCKED
    assert a.reasons[0].startswith("its ROCm build lives elsewhere: Build AMD's fork")
    assert a.reasons[1] == (
        f"{REDESIGN_FILES + 1} product files use features ROCm has no counterpart for "
        f"(GP309 in {REDESIGN_FILES}, GP314 in 1 files): a redesign that size is a fork, not a port"
    )
    # the same files in tests do not count: only product code drives the verdict
    tests_only = [dataclasses.replace(f, tier=Tier.TESTS) for f in result.findings]
    assert assess(scan(*tests_only)).verdict is Verdict.READY


def test_files_a_gp309_line_gathers_still_count_toward_a_redesign() -> None:
    # One GP309 line stands for the TMA uses of many files (project/file_folds.py); the line folds
    # how the work is shown, so the verdict counts its files as if it had not.
    members = [finding("GP309", f"k{i}.cu", 1, Severity.HIGH) for i in range(REDESIGN_FILES + 1)]
    line = finding("GP309", "k0.cu", 1, Severity.HIGH)
    folded = ScanResult(root="p", findings=[line], skipped=[], set_aside=members)
    assert assess(folded).verdict is Verdict.BLOCKED
    # set aside because their component is not built on ROCm: not work, not counted
    left_out = Component("csrc/", ComponentStatus.NVIDIA_ONLY, evidence=())
    members_in_component = [
        dataclasses.replace(f, location=Location(f"csrc/{f.location.path}", 1, 1)) for f in members
    ]
    outside = ScanResult(root="p", findings=[line], skipped=[], set_aside=members_in_component)
    outside.project = ProjectModel(name="p", components=(left_out,))
    assert assess(outside).verdict is Verdict.READY_WITH_WORK


def test_a_project_with_a_rocm_path_is_not_told_to_port_it_and_gaps_are_optional() -> None:
    result = scan(
        finding("GP101", "r.txt", 1, Severity.MEDIUM, Category.DEPENDENCIES, mechanical=True),
        finding("GP301", "k.cu", 9, Severity.HIGH),
    )
    result.project = rocm_model()
    a = assess(result)
    assert a.verdict is Verdict.ALREADY_SUPPORTS_ROCM
    assert not any(s.command.startswith("gpuport port") for s in a.next_steps)
    assert a.reasons[-2].startswith("beyond its ROCm path: GP301 at k.cu:9:1")  # heaviest first
    gap = next(s for s in a.next_steps if "GP301" in s.text)
    assert gap.text == "Only if you need a part its ROCm path leaves out: GP301 at k.cu:9:1: do it."
    assert a.total_hours > 0 and a.effort_title.startswith("Effort for the gaps")


def test_next_steps_name_only_commands_that_exist() -> None:
    a = assess(
        scan(
            finding("GP101", "r.txt", 1, Severity.MEDIUM, Category.DEPENDENCIES, mechanical=True),
            finding("GP301", "k.cu", 9, Severity.HIGH),
        )
    )
    commands = [s.command for s in a.next_steps if s.command]
    assert commands == [
        "gpuport port p --out p-rocm",
        "gpuport plan MODEL",
        "gpuport doctor",
        "gpuport bench",
        "gpuport verify compare ref.gpv",
    ]
    assert a.next_steps[1].text == "GP301 at k.cu:9:1: do it."
    # every step reads the same way: a lead-in to its command, or a sentence
    for step in a.next_steps:
        assert not step.text.endswith((":", ".")) if step.command else step.text.endswith(".")
    registered = set(cli_main.commands)
    assert {c.split()[1] for c in commands} <= registered


# --- the command on bad and empty paths --------------------------------------------------------


def run_cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli_main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("content", [None, "logo.png"], ids=["empty", "nothing-it-reads"])
def test_a_folder_with_nothing_to_read_says_so_and_exits_0(
    tmp_path: Path, content: str | None
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    if content:
        (project / content).write_bytes(b"\x89PNG\r\n")
    code, out, err = run_cli("assess", str(project), "--no-html", "--no-progress")
    assert code == 0
    assert "Verdict: NOTHING TO ASSESS" in out and "no file it reads" in out
    assert "verdict: nothing to assess" in err
    code, out, _ = run_cli("assess", str(project), "--no-html", "--format", "json")
    assert json.loads(out)["verdict"] == "nothing to assess"
    code, out, _ = run_cli("scan", str(project), "--no-progress")
    assert code == 0 and "Nothing to scan: no file here is one gpuport reads" in out


@pytest.mark.parametrize("command", ["scan", "assess"])
def test_an_unreadable_folder_is_a_usage_error_and_writes_no_report(
    tmp_path: Path, command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # root reads a folder whatever its mode, so the refusal is the system's answer, faked
    locked = tmp_path / "locked"
    locked.mkdir()
    real_scandir = os.scandir

    def refuse(path: str) -> Any:
        if Path(path) == locked:
            raise PermissionError(13, "Permission denied", path)
        return real_scandir(path)

    monkeypatch.setattr(common.os, "scandir", refuse)
    monkeypatch.chdir(tmp_path)
    report = tmp_path / "report.json"
    code, out, err = run_cli(command, str(locked), "--format", "json", "-o", str(report))
    assert code == 2 and out == ""
    assert f"{locked}: cannot read it (Permission denied)" in err
    assert not report.exists() and not (tmp_path / "gpuport-report.html").exists()


def test_two_rules_with_the_same_advice_make_one_next_step() -> None:
    same = Fix("Use amdsmi instead of NVML.")
    a = assess(
        scan(
            dataclasses.replace(finding("GP201", "s.py", 7, Severity.HIGH), fix=same),
            dataclasses.replace(
                finding("GP104", "r.txt", 9, Severity.HIGH, Category.DEPENDENCIES),
                fix=Fix("Replace nvidia-ml-py: Use amdsmi instead of NVML."),
            ),
            finding("GP302", "k.cu", 3, Severity.MEDIUM),
        )
    )
    manual = [s.text for s in a.next_steps if s.text.startswith("GP")]
    # equal weight: file order puts r.txt first; GP201's advice is inside GP104's
    assert manual == [
        "GP104 at r.txt:9:1: Replace nvidia-ml-py: Use amdsmi instead of NVML.",
        "GP302 at k.cu:3:1: do it.",
    ]
