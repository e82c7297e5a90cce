"""'One decision' mentions (GP300 renames, a CUTLASS type per file) are listed once per folder by
the human formats, with the count and the files; JSON and SARIF keep every finding."""

from __future__ import annotations

import json

from report_samples import render_sample

from gpuport.assess import assess
from gpuport.findings import Category, Confidence, Finding, Fix, Location, Severity
from gpuport.report import Format
from gpuport.report.common import listed_findings
from gpuport.scan.engine import ScanResult

FILES = [f"csrc/kernels/k{i}.cu" for i in range(8)]


def rename(path: str, line: int = 3) -> Finding:
    return Finding(
        rule_id="GP300",
        message="2 CUDA API names to rename (cudaStream_t x2).",
        location=Location(path, line, 1),
        severity=Severity.INFO,
        confidence=Confidence.HIGH,
        category=Category.KERNELS,
        fix=Fix("run gpuport port", mechanical=True),
    )


def other(path: str) -> Finding:
    return Finding(
        rule_id="GP301",
        message="inline PTX must be rewritten for AMD.",
        location=Location(path, 9, 1),
        severity=Severity.HIGH,
        confidence=Confidence.HIGH,
        category=Category.KERNELS,
        fix=Fix("rewrite it", mechanical=False),
    )


def scan() -> ScanResult:
    result = ScanResult(
        root="proj",
        findings=[*(rename(p) for p in FILES), rename("tools/one.cu"), other(FILES[0])],
    )
    result.stats.files_scanned = len(FILES) + 1
    return result


def test_listed_findings_fold_a_folder_and_name_its_files() -> None:
    result = scan()
    listed = listed_findings(result.findings)
    renames = [f for f in listed.findings if f.rule_id == "GP300"]
    assert len(renames) == 2  # csrc/kernels folded; tools/one.cu alone stays as it is
    folded = next(f for f in renames if f.location.path.startswith("csrc/"))
    assert folded.message.startswith("8 files in csrc/kernels/ ")
    assert folded.message.endswith("Files: k0.cu, k1.cu, k2.cu, k3.cu, k4.cu, k5.cu and 2 more.")
    assert any(f.location.path == "tools/one.cu" for f in renames)
    assert [f.rule_id for f in listed.findings].count("GP301") == 1  # other rules untouched
    first = result.findings[3]
    assert listed.shown_as(first) is folded  # each folded finding knows its line
    assert listed.shown_as(result.findings[-1]) is result.findings[-1]
    assert len(result.findings) == 10  # the scan itself keeps every finding


def test_terminal_markdown_and_html_list_the_folder_once() -> None:
    result = scan()
    for fmt in (Format.TERMINAL, Format.MARKDOWN, Format.HTML):
        text = render_sample(result, fmt)
        assert text.count("8 files in csrc/kernels/") == 1, fmt
        assert "k7.cu" not in text.replace("and 2 more", ""), fmt  # named only in the count
        assert text.count("tools/one.cu") >= 1, fmt
    assessment = assess(result)
    for fmt in (Format.TERMINAL, Format.MARKDOWN, Format.HTML):
        assert render_sample(assessment, fmt).count("8 files in csrc/kernels/") == 1, fmt


def test_json_and_sarif_keep_every_finding() -> None:
    result = scan()
    document = json.loads(render_sample(result, Format.JSON))
    assert len(document["findings"]) == 10
    assert not any("files in csrc" in f["message"] for f in document["findings"])
    sarif = json.loads(render_sample(result, Format.SARIF))
    assert len(sarif["runs"][0]["results"]) == 10


def test_a_top_finding_folded_into_its_folder_links_to_the_folder_line() -> None:
    cutlass = [
        Finding(
            rule_id="GP312",
            message="CUTLASS/CuTe in this file: 1 reference (cutlass::half_t).",
            location=Location(f"csrc/gemm/inst{i}.cu", 2, 1),
            severity=Severity.HIGH,
            confidence=Confidence.HIGH,
            category=Category.KERNELS,
            fix=Fix("use hipBLASLt", mechanical=False),
        )
        for i in range(3)
    ]
    result = ScanResult(root="proj", findings=cutlass)
    result.stats.files_scanned = 3
    assessment = assess(result)
    assert [f.rule_id for f in assessment.top] == ["GP312"]
    page = render_sample(assessment, Format.HTML)
    anchor = page.split('href="#finding-', 1)[1].split('"', 1)[0]
    assert anchor != "0"
    article = page.split(f'id="finding-{anchor}"', 1)[1].split("</article>", 1)[0]
    assert "3 files in csrc/gemm/" in article
    assert "Files: inst0.cu, inst1.cu, inst2.cu." in article
