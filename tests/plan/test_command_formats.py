"""`gpuport plan` end to end: flags, exit codes, every output format, and the assess hook."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree

import jsonschema
import pytest
from click.testing import CliRunner
from plan_samples import LLAMA_LIKE

from gpuport.cli import main
from gpuport.config import ConfigError
from gpuport.plan.inputs import build_plan, plan_for_assess
from gpuport.plan.planner import PlanResult
from gpuport.report import Format, RenderOptions, registered, render
from gpuport.report.plan_formats import (
    plan_html_section,
    plan_json,
    plan_markdown_section,
    plan_terminal_section,
)

ROOT = Path(__file__).resolve().parents[2]
SARIF_SCHEMA = ROOT / "tests" / "data" / "sarif-schema-2.1.0.json"
OPTIONS = RenderOptions(tool_version="9.9.9")


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["plan", *args])
    assert "Traceback" not in result.stdout + result.stderr
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def small_plan() -> PlanResult:
    return build_plan("llama-3.1-8b", gpus="h100,mi300x,mi355x,rtx-4090", context=4096, batch=8)


def test_json_has_one_entry_per_gpu_with_count_memory_speed_and_cost() -> None:
    code, out, _ = run("llama-3.1-8b", "--gpus", "h100,mi300x", "--format", "json")
    assert code == 0
    document = json.loads(out)
    assert document["kind"] == "plan"
    assert [e["gpu"] for e in document["entries"]] == ["mi300x", "h100-sxm"]
    entry = document["entries"][0]
    assert entry["gpus_needed"] == 1
    memory = entry["memory_gb_per_gpu"]
    assert memory["weights"] == pytest.approx(16.06, abs=0.01)
    assert memory["kv_cache"] == pytest.approx(34.36, abs=0.01)  # 32 x 8192 x 131072 bytes
    assert entry["decode"]["bound"] == "memory" and entry["decode"]["tokens_per_s"] > 0
    assert entry["cost"]["usd_per_1m_output_tokens"] > 0
    assert entry["price"]["source"].startswith("https://")
    assert document["model"]["kv_bytes_per_token"] == 131072


def test_terminal_table_and_reasons() -> None:
    code, out, _ = run(
        "llama-3.1-70b", "--context", "8192", "--batch", "32", "--gpus", "h100,mi300x"
    )
    assert code == 0
    assert "MI300X" in out and "H100 SXM" in out
    assert "Why" in out and "Assumptions" in out
    assert "70.55B parameters" in out


def test_bare_parameter_count() -> None:
    code, out, _ = run("--params", "70e9", "--precision", "bf16", "--gpus", "h100,mi300x")
    assert code == 0
    assert "140.0 GB" in out
    assert "only a parameter count was given" in out
    assert "checkpoint's format" not in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("llama-3.1-8b", "--gpus", "h100,mi3000x"), "did you mean mi300x"),
        (("llama-3.1-8b", "--precision", "int3"), "unknown precision"),
        (("llama-3.1-8b", "--kv-dtype", "int2"), "unknown KV-cache dtype"),
        (("llama-3.1-8b", "--params", "7e9"), "not both"),
        ((), "name a model"),
        (("--params", "seventy"), "write a number"),
        (("no-such-model",), "neither a file"),
        (("llama-3.1-8b", "--price", "mi300x=free"), "is not a number"),
        (("llama-3.1-8b", "--batch", "0"), "--batch must be at least 1"),
    ],
)
def test_bad_input_exits_2_with_a_message(args: tuple[str, ...], message: str) -> None:
    code, _, err = run(*args)
    assert code == 2
    assert message in err


def test_broken_price_file_names_file_and_line(tmp_path: Path) -> None:
    prices = tmp_path / "prices.toml"
    prices.write_text("[prices]\nmi300x = 1.5\nh100 = [oops\n", encoding="utf-8")
    code, _, err = run("llama-3.1-8b", "--gpus", "h100", "--prices", str(prices))
    assert code == 2
    assert f"{prices}:3" in err.replace("\n", "")


def test_price_file_and_flag_override(tmp_path: Path) -> None:
    prices = tmp_path / "prices.toml"
    prices.write_text("[prices]\nmi300x = 10\n", encoding="utf-8")
    code, out, _ = run(
        "llama-3.1-8b",
        "--gpus",
        "h100,mi300x",
        "--prices",
        str(prices),
        "--price",
        "h100=0.5",
        "--format",
        "json",
    )
    assert code == 0
    entries = {e["gpu"]: e for e in json.loads(out)["entries"]}
    assert entries["mi300x"]["price"]["usd_per_gpu_hour"] == 10
    assert entries["h100-sxm"]["price"]["usd_per_gpu_hour"] == 0.5
    assert json.loads(out)["entries"][0]["gpu"] == "h100-sxm"


def test_measured_rates_file(tmp_path: Path) -> None:
    measured = tmp_path / "measured.json"
    measured.write_text('{"mi300x": {"mem_bw_gbs": 4000, "tflops_bf16": 650}}', encoding="utf-8")
    code, out, _ = run(
        "llama-3.1-8b", "--gpus", "mi300x", "--measured", str(measured), "--format", "json"
    )
    assert code == 0
    entry = json.loads(out)["entries"][0]
    assert entry["rates"]["source"] == "measured"
    assert entry["rates"]["mem_bw_gbs"] == 4000.0 and entry["rates"]["tflops"] == 650.0
    measured.write_text('{"mi300x": {"mem_bw_gbs": 4000,\n "tflops_bf16": }}', encoding="utf-8")
    code, _, err = run("llama-3.1-8b", "--gpus", "mi300x", "--measured", str(measured))
    assert code == 2 and f"{measured}:2" in err.replace("\n", "")
    measured.write_text('{"mi300x": {"mem_bw_gbs": -1, "tflops_bf16": 5}}', encoding="utf-8")
    code, _, err = run("llama-3.1-8b", "--gpus", "mi300x", "--measured", str(measured))
    assert code == 2 and "positive number" in err


def test_output_file_is_written(tmp_path: Path) -> None:
    target = tmp_path / "out" / "plan.md"
    code, out, err = run(
        "llama-3.1-8b", "--gpus", "mi300x", "--format", "markdown", "-o", str(target)
    )
    assert code == 0 and out == ""
    assert str(target) in err.replace("\n", "")  # "wrote ..." on stderr
    assert target.read_text(encoding="utf-8").startswith("# gpuport plan")


def test_all_five_formats_are_registered_and_render(small_plan: PlanResult) -> None:
    table = registered()
    assert all((PlanResult, f) in table for f in Format)
    for fmt in Format:
        text = render(small_plan, fmt, OPTIONS)
        assert text.strip()
        text.encode("utf-8")


def test_sarif_is_a_valid_run_without_results(small_plan: PlanResult) -> None:
    document = json.loads(render(small_plan, Format.SARIF, OPTIONS))
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    errors = list(cls(schema).iter_errors(document))
    assert errors == []
    run_ = document["runs"][0]
    assert run_["results"] == []
    note = run_["invocations"][0]["toolExecutionNotifications"][0]
    assert note["level"] == "note" and "no findings" in note["message"]["text"]


def test_html_has_inline_svg_charts_and_no_script(small_plan: PlanResult) -> None:
    page = render(small_plan, Format.HTML, OPTIONS)
    assert page.startswith("<!DOCTYPE html>")
    assert page.count("<svg") == 2
    assert "<script" not in page
    section = plan_html_section(small_plan)
    assert section.startswith('<section class="gpuport-plan">') and section.endswith("</section>")
    # Each chart is well-formed XML with one bar segment or bar per fitting GPU at least.
    fitting = [e for e in small_plan.entries if e.fits]
    for start in (i for i in range(len(section)) if section.startswith("<svg", i)):
        svg = section[start : section.index("</svg>", start) + len("</svg>")]
        root = ElementTree.fromstring(svg)
        rects = root.findall("{http://www.w3.org/2000/svg}rect")
        assert len(rects) >= len([e for e in fitting if e.price is not None])


def test_hostile_model_names_are_escaped(write_config) -> None:  # type: ignore[no-untyped-def]
    path = write_config(LLAMA_LIKE, folder="<script>alert(1)<|>")
    result = build_plan(str(path.parent), gpus="mi300x", context=1024, batch=1)
    page = render(result, Format.HTML, OPTIONS)
    assert "<script>" not in page and "&lt;script&gt;" in page
    markdown = plan_markdown_section(result)
    assert "<script>" not in markdown and "\\<script\\>" in markdown
    assert json.loads(render(result, Format.JSON, OPTIONS))["model"]["name"].startswith("<script>")


def test_sections_for_the_project_report(small_plan: PlanResult) -> None:
    terminal = plan_terminal_section(small_plan, OPTIONS)
    assert terminal.startswith("GPU plan: llama-3.1-8b")
    assert "Assumptions" not in terminal  # the report keeps it short
    assert plan_markdown_section(small_plan).startswith("## GPU plan")
    data = plan_json(small_plan)
    assert len(data["entries"]) == 4
    json.dumps(data)


def test_plan_for_assess() -> None:
    result = plan_for_assess("mixtral-8x7b", "h200,mi300x")
    assert isinstance(result, PlanResult)
    assert {e.gpu.id for e in result.entries} == {"h200-sxm", "mi300x"}
    with pytest.raises(ConfigError, match="unknown GPU"):
        plan_for_assess("mixtral-8x7b", "h900")


def test_assess_adds_the_plan(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("numpy\n", encoding="utf-8")
    result = CliRunner().invoke(
        main,
        [
            "assess",
            str(tmp_path),
            "--model",
            "llama-3.1-8b",
            "--gpus",
            "mi300x",
            "--format",
            "json",
            "--no-html",
            "--no-progress",
        ],
    )
    assert result.exit_code in (0, 1), result.stderr
    document = json.loads(result.stdout)
    assert document["plan"]["entries"][0]["gpu"] == "mi300x"
    bad = CliRunner().invoke(main, ["assess", str(tmp_path), "--model", "nope", "--no-html"])
    assert bad.exit_code == 2 and "Traceback" not in bad.stdout + bad.stderr


@pytest.mark.parametrize("flag", ["MODEL", "--prices", "--measured"])
def test_a_fifo_named_as_a_plan_input_is_refused_not_read(tmp_path: Path, flag: str) -> None:
    # Opening a FIFO for reading blocks until a writer comes: a subprocess with a time limit,
    # so that a regression fails the test instead of hanging it.
    import os
    import subprocess
    import sys

    fifo = tmp_path / "config.json"
    os.mkfifo(fifo)
    args = [str(fifo)] if flag == "MODEL" else ["llama-3.1-8b", flag, str(fifo)]
    proc = subprocess.run(
        [sys.executable, "-m", "gpuport.cli", "plan", *args],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert f"{fifo}: cannot read" in proc.stderr and "FIFO" in proc.stderr
