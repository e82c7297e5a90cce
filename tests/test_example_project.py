"""The bundled example deserves exactly these findings, and the verdict "ready with work".

The example is the README's demo: if a rule change moves what it reports, this test says so,
and the README's description must be checked too.
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from gpuport.assess import Verdict, assess
from gpuport.cli import main
from gpuport.findings import Severity
from gpuport.scan.engine import ScanOptions, scan_path

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "llm-service"

# (rule, file, line): what an engineer porting this service would want to be told.
EXPECTED = {
    ("GP501", "CMakeLists.txt", 3),
    ("GP504", "CMakeLists.txt", 5),
    ("GP503", "CMakeLists.txt", 6),
    ("GP507", "CMakeLists.txt", 8),
    ("GP505", "CMakeLists.txt", 9),
    ("GP401", "Dockerfile", 2),
    ("GP402", "Dockerfile", 4),
    ("GP402", "Dockerfile", 5),
    ("GP504", "Dockerfile", 6),
    ("GP300", "csrc/fused_softmax.cu", 3),
    ("GP308", "csrc/fused_softmax.cu", 11),
    ("GP303", "csrc/fused_softmax.cu", 12),
    ("GP308", "csrc/fused_softmax.cu", 18),
    ("GP303", "csrc/fused_softmax.cu", 19),
    ("GP302", "csrc/fused_softmax.cu", 26),
    ("GP302", "csrc/fused_softmax.cu", 27),
    ("GP402", "docker-compose.yml", 9),
    ("GP407", "docker-compose.yml", 14),
    ("GP409", "k8s/deployment.yaml", 18),
    ("GP410", "k8s/deployment.yaml", 20),
    ("GP408", "k8s/deployment.yaml", 30),
    ("GP201", "llm_service/serve.py", 7),
    ("GP207", "llm_service/serve.py", 14),
    ("GP212", "llm_service/serve.py", 16),
    ("GP209", "llm_service/serve.py", 21),
    ("GP206", "llm_service/serve.py", 33),
    ("GP205", "llm_service/train.py", 13),
    ("GP208", "llm_service/train.py", 24),
    ("GP202", "llm_service/train.py", 38),
    ("GP102", "requirements.txt", 2),
    ("GP101", "requirements.txt", 3),
    ("GP101", "requirements.txt", 4),
    ("GP112", "requirements.txt", 7),
    ("GP105", "requirements.txt", 8),
    ("GP104", "requirements.txt", 9),
    ("GP108", "requirements.txt", 10),
    ("GP405", "scripts/run_local.sh", 5),
    ("GP104", "setup.py", 12),
    ("GP210", "setup.py", 15),
}


def test_example_has_exactly_the_findings_it_deserves() -> None:
    result = scan_path(EXAMPLE, ScanOptions(jobs=1))
    got = {(f.rule_id, f.location.path, f.location.line) for f in result.findings}
    assert got == EXPECTED
    assert result.skipped == []


def test_example_verdict_is_ready_with_work_and_mostly_mechanical_outside_python() -> None:
    assessment = assess(scan_path(EXAMPLE, ScanOptions(jobs=1)))
    assert assessment.verdict is Verdict.READY_WITH_WORK
    assert assessment.blockers == []
    assert all(f.severity < Severity.BLOCKER for f in assessment.scan.findings)
    assert 0 < assessment.mechanical < assessment.actionable
    reasons = " ".join(assessment.reasons)
    assert "GP104" in reasons  # nvidia-ml-py has no ROCm build: the most serious thing here


def test_example_next_steps_are_the_readmes() -> None:
    assessment = assess(scan_path(EXAMPLE, ScanOptions(jobs=1)))
    steps = assessment.next_steps
    # port applies fixes in every tier (a test's or a script's too), so the step counts them all
    fixable = sum(
        1
        for f in assessment.scan.findings
        if f.severity >= Severity.LOW and f.fix is not None and f.fix.mechanical
    )
    assert fixable > assessment.mechanical  # the example has a fix outside product code
    assert steps[0].text.startswith(f"Apply the {fixable} fixes gpuport makes")
    assert steps[0].command == f"gpuport port {EXAMPLE} --out {EXAMPLE}-rocm"
    assert steps[1].text.startswith("GP201 at llm_service/serve.py:7:1: NVML exists only")
    readme = (EXAMPLE.parent.parent / "README.md").read_text(encoding="utf-8")
    shown = readme[readme.index("$ gpuport assess examples/llm-service") :]
    assert "1. Apply the 15 fixes gpuport makes" in shown
    assert "2. GP201 at llm_service/serve.py:7:1: NVML exists only" in shown


def test_assess_cli_writes_the_html_report_and_exits_by_fail_on(tmp_path: Path) -> None:
    runner = CliRunner()
    html = tmp_path / "report.html"
    out = runner.invoke(main, ["assess", str(EXAMPLE), "--html", str(html), "--format", "json"])
    assert out.exit_code == 1, out.output  # medium findings, default --fail-on medium
    data = json.loads(out.stdout)
    assert data["verdict"] == "ready with work"
    page = html.read_text(encoding="utf-8")
    assert "ready with work" in page.lower() and "fused_softmax.cu" in page
    never = runner.invoke(
        main, ["assess", str(EXAMPLE), "--no-html", "--fail-on", "never", "--format", "json"]
    )
    assert never.exit_code == 0
    blocker_only = runner.invoke(
        main, ["assess", str(EXAMPLE), "--no-html", "--fail-on", "blocker", "--format", "json"]
    )
    assert blocker_only.exit_code == 0


def test_assess_with_a_model_adds_the_plan_for_that_workload() -> None:
    out = CliRunner().invoke(
        main,
        [
            "assess", str(EXAMPLE), "--no-html", "--fail-on", "never", "--format", "json",
            "--model", "llama-3.1-8b", "--gpus", "h100,mi300x", "--context", "4096", "--batch", "8",
        ],
    )  # fmt: skip
    assert out.exit_code == 0, out.output
    plan = json.loads(out.stdout)["plan"]
    text = json.dumps(plan)
    assert "llama-3.1-8b" in text and "4096" in text.replace(",", "")
    bad = CliRunner().invoke(main, ["assess", str(EXAMPLE), "--no-html", "--model", "llama-9"])
    assert bad.exit_code == 2 and "llama" in bad.stderr


def test_the_demo_shows_the_economics_of_its_declared_model_and_volume() -> None:
    out = CliRunner().invoke(
        main, ["assess", str(EXAMPLE), "--no-html", "--fail-on", "never", "--format", "json"]
    )
    assert out.exit_code == 0, out.output
    recommendation = json.loads(out.stdout)["recommendation"]
    economics = recommendation["economics"]
    assert economics["today"]["gpu_id"] == "a100-80gb-sxm"  # pyproject.toml current_gpu
    assert {o["gpu_id"] for o in economics["options"]} >= {"mi300x"}
    assert recommendation["outcome"] in {"move", "pilot-first", "stay-on-cuda", "move-part"}
