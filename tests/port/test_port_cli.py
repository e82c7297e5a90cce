"""``gpuport port``: the diff, --out, --in-place, refusals, exit codes and every summary format."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from gpuport.cli import main
from gpuport.port.apimap import default_rocm_version
from gpuport.port.diff import unified_diff
from gpuport.port.model import ChangeStatus, CheckStatus, CompileCheck
from gpuport.port.project import port_project
from gpuport.report import Format, RenderOptions, render

SCHEMA = Path(__file__).resolve().parents[1] / "data" / "sarif-schema-2.1.0.json"

CLEAN_CU = """\
// vector add
#include <cuda_runtime.h>
__global__ void add(const float* a, float* b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] += a[i];
}
void run(const float* a, float* b, int n, cudaStream_t s) {
  add<<<(n + 255) / 256, 256, 0, s>>>(a, b, n);
  cudaStreamSynchronize(s);
}
"""
UNCONVERTED_CU = """\
#include <cuda_runtime.h>
__global__ void k(int* out) {
#if __CUDA_ARCH__ >= 800
  out[0] = 1;
#endif
}
"""


def make_project(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_bytes(content.encode("utf-8"))
    return root


def invoke(*args: str) -> tuple[int, bytes, str]:
    runner = CliRunner()
    result = runner.invoke(main, ["port", "--no-progress", *args], catch_exceptions=False)
    return result.exit_code, result.stdout_bytes, result.stderr


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(
        tmp_path / "proj",
        {"csrc/add.cu": CLEAN_CU, "README.md": "not ported\n", "tools/plain.cpp": "int x;\n"},
    )


def test_default_prints_a_diff_that_git_applies(project: Path, tmp_path: Path) -> None:
    code, stdout, stderr = invoke(str(project))
    assert code == 0, stderr
    diff = stdout.decode()
    assert diff.startswith("--- a/csrc/add.cu\n+++ b/csrc/add.cu\n")
    assert "-#include <cuda_runtime.h>\n+#include <hip/hip_runtime.h>\n" in diff
    assert "-  cudaStreamSynchronize(s);\n+  hipStreamSynchronize(s);\n" in diff
    assert "csrc/add.cu" in stderr and "converted" in stderr
    # the diff is a real patch: applying it gives the translation
    (tmp_path / "p.diff").write_bytes(stdout)
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    subprocess.run(["git", "apply", str(tmp_path / "p.diff")], cwd=project, check=True)
    assert "hipStreamSynchronize" in (project / "csrc" / "add.cu").read_text()
    assert not (project / "csrc" / "add.cu.orig").exists()


def test_out_writes_a_translated_copy_of_the_whole_tree(project: Path, tmp_path: Path) -> None:
    out = tmp_path / "rocm"
    code, stdout, stderr = invoke(str(project), "--out", str(out))
    assert code == 0, stderr
    assert stdout == b""
    assert (out / "README.md").read_text() == "not ported\n"
    assert (out / "tools" / "plain.cpp").read_text() == "int x;\n"
    ported = (out / "csrc" / "add.cu").read_text()
    assert "hipStreamSynchronize(s);" in ported and "cuda" not in ported.replace("// vector", "")
    assert (project / "csrc" / "add.cu").read_text() == CLEAN_CU  # the source is untouched


def test_out_refuses_a_non_empty_folder_unless_forced(project: Path, tmp_path: Path) -> None:
    out = tmp_path / "rocm"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    code, _, stderr = invoke(str(project), "--out", str(out))
    assert code == 2 and "not empty" in stderr
    assert not (out / "csrc").exists()
    code, _, stderr = invoke(str(project), "--out", str(out), "--force")
    assert code == 0, stderr
    assert (out / "keep.txt").read_text() == "mine" and (out / "csrc" / "add.cu").exists()


def test_out_inside_the_project_is_refused(project: Path) -> None:
    code, _, stderr = invoke(str(project), "--out", str(project / "rocm"))
    assert code == 2 and "inside" in stderr
    assert not (project / "rocm").exists()


def test_in_place_edits_atomically_and_keeps_backups(project: Path) -> None:
    code, stdout, stderr = invoke(str(project), "--in-place")
    assert code == 0, stderr
    assert stdout == b""
    assert "hipStreamSynchronize" in (project / "csrc" / "add.cu").read_text()
    assert (project / "csrc" / "add.cu.orig").read_text() == CLEAN_CU
    assert not (project / "tools" / "plain.cpp.orig").exists()  # unchanged files stay alone
    # a second run has nothing to do and leaves the backup alone
    code, _, stderr = invoke(str(project), "--in-place")
    assert code == 0, stderr
    assert (project / "csrc" / "add.cu.orig").read_text() == CLEAN_CU


def test_in_place_does_not_overwrite_an_existing_backup(project: Path) -> None:
    (project / "csrc" / "add.cu.bak").write_text("older backup")
    code, _, stderr = invoke(str(project), "--in-place", "--backup-suffix", ".bak")
    assert code == 2 and "already exists" in stderr
    assert (project / "csrc" / "add.cu").read_text() == CLEAN_CU
    assert (project / "csrc" / "add.cu.bak").read_text() == "older backup"


def test_usage_errors_exit_2(project: Path, tmp_path: Path) -> None:
    assert invoke(str(tmp_path / "missing"))[0] == 2
    assert invoke(str(project), "--rocm-version", "latest")[0] == 2
    code, _, stderr = invoke(str(project), "--in-place", "--out", str(tmp_path / "x"))
    assert code == 2 and "do not go together" in stderr


def test_unconverted_code_exits_1(tmp_path: Path) -> None:
    root = make_project(tmp_path / "p", {"k.cu": UNCONVERTED_CU})
    code, stdout, stderr = invoke(str(root))
    assert code == 1
    assert "unconverted" in stderr and "k.cu:3:5" in stderr
    assert b"+#include <hip/hip_runtime.h>" in stdout


def test_an_unreadable_source_is_an_input_error(tmp_path: Path) -> None:
    root = make_project(tmp_path / "p", {"bin.cu": b"\x00\x01binary", "ok.cu": CLEAN_CU})
    code, stdout, stderr = invoke(str(root))
    assert code == 2
    assert "bin.cu" in stderr and "binary" in stderr
    assert b"+++ b/ok.cu" in stdout  # the rest is still ported


def test_bytes_that_are_not_utf8_and_a_bom_survive_the_round_trip(tmp_path: Path) -> None:
    raw = b"\xef\xbb\xbf// caf\xe9\r\n#include <cuda_runtime.h>\r\nvoid f() { cudaFree(0); }\r\n"
    root = make_project(tmp_path / "p", {"a.cu": raw})
    out = tmp_path / "out"
    code, _, stderr = invoke(str(root), "--out", str(out))
    assert code == 0, stderr
    expected = raw.replace(b"cuda_runtime.h", b"hip/hip_runtime.h").replace(b"cudaFree", b"hipFree")
    assert (out / "a.cu").read_bytes() == expected
    assert "not valid UTF-8" in stderr


def test_json_summary_goes_to_stdout_without_output_file(project: Path) -> None:
    code, stdout, stderr = invoke(str(project), "--format", "json")
    assert code == 0, stderr
    doc = json.loads(stdout)
    assert doc["kind"] == "port" and doc["rocm_version"] == default_rocm_version() == "7.2"
    (add,) = doc["files"]
    assert add["path"] == "csrc/add.cu" and add["changed"] is True
    assert add["unconverted"] == 0 and add["converted"] == len(add["changes"])
    assert {c["family"] for c in add["changes"]} == {"header", "runtime"}
    assert doc["families"]["runtime"]["converted"] == 2
    assert "converted" in stderr  # the one-line summary


def test_output_file_keeps_the_diff_on_stdout(project: Path, tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    code, stdout, _ = invoke(str(project), "--format", "json", "-o", str(report))
    assert code == 0
    assert stdout.startswith(b"--- a/csrc/add.cu")
    assert json.loads(report.read_text())["summary"]["changed"] == 1


def _sample_result(tmp_path: Path):  # type: ignore[no-untyped-def]
    root = make_project(tmp_path / "p", {"k.cu": UNCONVERTED_CU, "add.cu": CLEAN_CU})
    result = port_project(root, "6.4", display_root="p")
    result.checks = [
        CompileCheck("add.cu", CheckStatus.BOTH_COMPILE),
        CompileCheck("k.cu", CheckStatus.TRANSLATION_FAILS, "", "k.cu:3:1: error: boom", ""),
    ]
    return result


def test_sarif_is_valid_and_lists_what_needs_a_person(tmp_path: Path) -> None:
    result = _sample_result(tmp_path)
    doc = json.loads(render(result, Format.SARIF, RenderOptions(tool_version="0")))
    jsonschema.validate(doc, json.loads(SCHEMA.read_text()))
    results = doc["runs"][0]["results"]
    levels = {(r["ruleId"], r["level"]) for r in results}
    assert ("port/arch", "error") in levels and ("port/compile", "error") in levels
    arch = next(r for r in results if r["ruleId"] == "port/arch")
    region = arch["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (3, 5)


@pytest.mark.parametrize("fmt", [Format.TERMINAL, Format.MARKDOWN, Format.HTML])
def test_people_formats_show_counts_advice_and_checks(tmp_path: Path, fmt: Format) -> None:
    result = _sample_result(tmp_path)
    text = render(result, fmt, RenderOptions(tool_version="0"))
    assert "k.cu" in text and "add.cu" in text
    assert "gfx" in text  # the advice for __CUDA_ARCH__ comparisons
    assert "translation fails" in text and "boom" in text
    assert "unconverted" in text
    if fmt is Format.HTML:
        assert text.startswith("<!DOCTYPE html>") and "<script" not in text


def test_terminal_summary_counts_per_file_and_family(tmp_path: Path) -> None:
    result = _sample_result(tmp_path)
    text = render(result, Format.TERMINAL, RenderOptions())
    lines = text.splitlines()
    add_row = next(line for line in lines if line.startswith("add.cu"))
    assert add_row.split()[1:] == ["3", "0", "0"]
    runtime_row = next(line for line in lines if line.startswith("runtime"))
    assert runtime_row.split()[1:] == ["2", "0", "0"]


def test_diff_marks_a_missing_final_newline(tmp_path: Path) -> None:
    root = make_project(tmp_path / "p", {"a.cpp": "void f() { cudaFree(0); }"})
    result = port_project(root, "6.4")
    assert unified_diff(result).endswith(
        "+void f() { hipFree(0); }\n\\ No newline at end of file\n"
    )
    assert result.files[0].count(ChangeStatus.CONVERTED) == 1


def test_a_single_file_can_be_ported(tmp_path: Path) -> None:
    root = make_project(tmp_path / "p", {"add.cu": CLEAN_CU})
    out = tmp_path / "out"
    code, _, stderr = invoke(str(root / "add.cu"), "--out", str(out))
    assert code == 0, stderr
    assert "hipStreamSynchronize" in (out / "add.cu").read_text()


def test_check_for_a_newer_release_than_hipcc_names_the_rewrites_it_cannot_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gpuport.cli.port as command

    (tmp_path / "requirements.txt").write_text("numpy==1.26.4\n")
    monkeypatch.setattr(command, "hipcc_version", lambda hipcc="hipcc": (6, 4))
    out = CliRunner().invoke(
        main, ["port", str(tmp_path), "--check", "--rocm-version", "7.2", "--format", "json"]
    )
    (note,) = json.loads(out.stdout)["notes"]
    assert note.startswith("hipcc here is HIP 6.4, older than the target ROCm 7.2")
    assert "nor the rewrites made for the newer release: hipblas-v2 (ROCm 7.0+)" in note
    assert "warp-masks" not in note  # 6.4 has it already
    assert note.endswith("(--rocm-version 6.4 checks against this compiler)")


def test_check_without_a_version_translates_for_the_older_hipcc_it_will_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gpuport.cli.port as command

    (tmp_path / "requirements.txt").write_text("numpy==1.26.4\n")
    monkeypatch.setattr(command, "hipcc_version", lambda hipcc="hipcc": (5, 2))

    def target(*args: str) -> tuple[str, str]:
        out = CliRunner().invoke(main, ["port", str(tmp_path), "--format", "json", *args])
        return json.loads(out.stdout)["rocm_version"], out.stderr

    version, err = target("--check")
    assert version == "5.2" and "translating for ROCm 5.2" in err
    # it says what that changes: each difference between 5.2 and the default, as data
    assert "not the default 7.2" in err
    for said in ("warp-masks (ROCm 6.4+:", "hipblas-v2 (ROCm 7.0+:", "memory-location (ROCm 7.0+"):
        assert said in " ".join(err.split()), said
    assert "here the masks are dropped" in " ".join(err.split())
    # the report says so too, in every format, not only stderr
    for fmt, said in (
        ("json", '"notes": [\n    "translating for ROCm 5.2'),
        ("markdown", "> **Note:** translating for ROCm 5.2"),
        ("sarif", '"level": "note"'),
        ("html", "<strong>Note:</strong> translating for ROCm 5.2"),
        ("terminal", "note: translating for ROCm 5.2"),
    ):
        report = tmp_path.parent / f"port-report.{fmt}"
        out = CliRunner().invoke(
            main, ["port", str(tmp_path), "--check", "--format", fmt, "-o", str(report)]
        )
        assert out.exit_code in (0, 1), out.output
        assert said in report.read_text(encoding="utf-8"), fmt
        assert "not the default" in report.read_text(encoding="utf-8"), fmt
    asked = CliRunner().invoke(
        main, ["port", str(tmp_path), "--check", "--rocm-version", "5.2", "--format", "json"]
    )
    assert json.loads(asked.stdout)["notes"] == []  # asked for: nothing to say
    assert target("--check", "--rocm-version", "6.4")[0] == "6.4"  # asked for: kept
    assert target()[0] == command.default_rocm_version()  # no --check: the default


def test_tool_gpuport_table_sets_the_rocm_version_and_flags_win(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.gpuport]\nrocm-version = "6.1"\n')
    (tmp_path / "requirements.txt").write_text("numpy==1.26.4\n")

    def target(*args: str) -> str:
        out = CliRunner().invoke(main, ["port", str(tmp_path), "--format", "json", *args])
        return str(json.loads(out.stdout)["rocm_version"])

    assert target() == "6.1"
    assert target("--rocm-version", "6.4") == "6.4"
    (tmp_path / "pyproject.toml").write_text('[tool.gpuport]\nrocm-version = "x.y"\n')
    broken = CliRunner().invoke(main, ["port", str(tmp_path)])
    assert broken.exit_code == 2 and "pyproject.toml" in broken.stderr


def test_a_missing_path_writes_no_report(tmp_path: Path) -> None:
    report = tmp_path / "port.md"
    code, stdout, stderr = invoke(
        str(tmp_path / "missing"), "--format", "markdown", "-o", str(report)
    )
    assert code == 2 and not stdout and "no such file or folder" in stderr
    assert not report.exists()
