"""`gpuport plan` end to end: flags, exit codes, every output format, and the assess hook."""

from __future__ import annotations

import dataclasses
import io
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
from gpuport.plan.planner import DASH, PlanEntry, PlanResult
from gpuport.plan.speed import Uncertainty
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


# --- engines, sweeps and ranges (issue 12) ---------------------------------------------------

SWEEP_ARGS = ("llama-3.1-8b", "--gpus", "h100,mi300x,rtx-4090", "--batch", "1,8,64")


@pytest.fixture(scope="module")
def sweep_plan() -> PlanResult:
    return build_plan(
        "llama-3.1-8b", gpus="h100,mi300x,rtx-4090", batch=(1, 8, 64), context=(2048, 8192)
    )


def test_the_sweep_prints_a_row_per_gpu_batch_and_context() -> None:
    code, out, _ = run(*SWEEP_ARGS, "--context", "2048,8192")
    assert code == 0
    sweep = out[out.index("\nSweep\n") : out.index("\nWhy\n")]
    rows = [line for line in sweep.splitlines() if {"2,048", "8,192"} & set(line.split())]
    assert len(rows) == 3 * 2 * 3
    for gpu, engine in (("MI300X", "vllm"), ("RTX", "llama.cpp"), ("H100", "vllm")):
        assert any(line.split()[:1] == [gpu] and engine in line for line in sweep.splitlines())


def test_json_has_the_same_sweep_shape_with_one_value_or_many() -> None:
    code, out, _ = run("llama-3.1-8b", "--gpus", "h100,mi300x", "--format", "json")
    assert code == 0
    single = json.loads(out)
    code, out, _ = run(*SWEEP_ARGS, "--context", "4096,1024", "--format", "json")
    assert code == 0
    swept = json.loads(out)
    assert single["sweep"].keys() == swept["sweep"].keys()
    assert single["sweep"]["batches"] == [32] and len(single["sweep"]["points"]) == 2
    assert swept["sweep"]["batches"] == [1, 8, 64] and swept["sweep"]["contexts"] == [1024, 4096]
    assert swept["sweep"]["ranked_at"] == {"batch": 1, "context": 4096}
    assert swept["request"]["batch"] == 1 and swept["request"]["context"] == 4096
    points = swept["sweep"]["points"]
    assert len(points) == 3 * 3 * 2
    assert {tuple(p) for p in points} == {tuple(single["sweep"]["points"][0])}  # same keys
    engines = {p["gpu"]: p["engine"] for p in points}
    assert engines == {"h100-sxm": "vllm", "mi300x": "vllm", "rtx-4090": "llama.cpp"}
    assert {e["engine"] for e in swept["entries"]} == {"vllm", "llama.cpp"}
    assert swept["request"]["engine"] is None
    for entry in swept["entries"]:  # the ranked point of the sweep is the entry itself
        point = next(
            p for p in points if (p["gpu"], p["batch"], p["context"]) == (entry["gpu"], 1, 4096)
        )
        assert point["decode_tokens_per_s"] == entry["decode"]["tokens_per_s"]
        uncertainty = entry["decode"]["uncertainty"]
        span = None if uncertainty is None else uncertainty["range_tokens_per_s"]
        assert point["decode_range_tokens_per_s"] == span
    for point in points:
        span = point["decode_range_tokens_per_s"]
        assert span is None or span[0] < span[1]
    fitting = [p for p in points if p["fits"]]
    assert all(p["decode_tokens_per_s"] > 0 and p["usd_per_1m_output_tokens"] > 0 for p in fitting)


def test_engine_is_shown_in_every_format() -> None:
    args = ("llama-3.1-8b", "--gpus", "h100,rx-7900-xtx", "--engine", "sglang")
    code, out, _ = run(*args)
    assert code == 0 and "· sglang" in out.splitlines()[0]
    assert out.count("sglang") >= 3  # the title and each GPU's row
    document = json.loads(run(*args, "--format", "json")[1])
    assert document["request"]["engine"] == "sglang"
    assert {e["engine"] for e in document["entries"]} == {"sglang"}
    markdown = run(*args, "--format", "markdown")[1]
    assert "| engine |" in markdown and "| sglang |" in markdown
    page = run(*args, "--format", "html")[1]
    assert "<th>engine</th>" in page and "<td>sglang</td>" in page
    _, out, _ = run("llama-3.1-8b", "--gpus", "h100,rx-7900-xtx")
    assert "· engine per GPU" in out and "vllm" in out and "llama.cpp" in out


def test_engine_help_names_the_defaults() -> None:
    result = CliRunner().invoke(main, ["plan", "--help"], terminal_width=200)
    assert result.exit_code == 0
    assert "vllm on datacenter GPUs" in result.stdout
    assert "llama.cpp on workstation and consumer cards" in result.stdout
    assert "1,8,64" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--batch", "0,8"), "--batch must be at least 1 sequence, not 0"),
        (("--batch", "a"), "--batch 'a': 'a' is not a whole number"),
        (("--batch", "8,,64"), "--batch '8,,64': '' is not a whole number"),
        (("--batch", "8,1,8"), "--batch gives 8 twice"),
        (("--context", "-5"), "--context must be at least 1 token, not -5"),
        (("--context", ",".join(str(c) for c in range(1024, 1024 * 18, 1024))), "at most 16"),
        (("--batch", "1,2,4,8,16,32,64,128,256", "--context", "1,2,3,4,5,6,7,8"), "= 72 comb"),
        (("--engine", "tgi"), "--engine"),
    ],
)
def test_bad_sweep_input_exits_2_naming_the_option(args: tuple[str, ...], message: str) -> None:
    code, _, err = run("llama-3.1-8b", "--gpus", "mi300x", *args)
    assert code == 2
    assert message in err.replace("\n", " ")


def _svgs(page: str) -> list[ElementTree.Element]:
    starts = [i for i in range(len(page)) if page.startswith("<svg", i)]
    return [ElementTree.fromstring(page[i : page.index("</svg>", i) + 6]) for i in starts]


def test_html_sweep_has_a_speed_and_a_cost_chart_per_context(sweep_plan: PlanResult) -> None:
    page = render(sweep_plan, Format.HTML, OPTIONS)
    assert "<script" not in page and page.count("<h3>Sweep</h3>") == 1
    charts = _svgs(plan_html_section(sweep_plan))[2:]  # after memory and cost bars
    assert len(charts) == 2 * 2  # tokens/s and $/1M for each of two contexts
    svg = "{http://www.w3.org/2000/svg}"
    titles = [c.findtext(f"{svg}title") or "" for c in charts]
    assert titles[0] == "Decode tokens/s at 2,048 tokens (all sequences)"
    assert titles[1] == "$ per 1M output tokens at 2,048 tokens"
    for chart in charts:
        lines = chart.findall(f"{svg}polyline")
        assert len(lines) == 3  # one per GPU: every one fits at every batch here
        for line in lines:
            xs = [float(p.split(",")[0]) for p in (line.get("points") or "").split()]
            assert len(xs) == 3 and xs == sorted(xs)
        legend = [t.text for t in chart.findall(f"{svg}text")]
        assert "RTX 4090 (llama.cpp)" in legend and "MI300X (vllm)" in legend
    table = page[page.index("<h3>Sweep</h3>") :]
    assert table.count("<tr><td>") == 3 * 3 * 2


def test_html_sweep_draws_ranges_and_escapes_labels(sweep_plan: PlanResult) -> None:
    band = Uncertainty(0.8, 1.1, 0.14, "vllm <b>on</b> datacenter GPUs")
    hostile = dataclasses.replace(sweep_plan.entries[0].gpu, short="<img src=x>")

    def tweak(entry: PlanEntry) -> PlanEntry:
        gpu = hostile if entry.gpu.id == hostile.id else entry.gpu
        if entry.decode is None:
            return dataclasses.replace(entry, gpu=gpu)
        return dataclasses.replace(
            entry, gpu=gpu, decode=dataclasses.replace(entry.decode, uncertainty=band)
        )

    changed = dataclasses.replace(
        sweep_plan,
        entries=tuple(tweak(e) for e in sweep_plan.entries),
        sweep=tuple(tweak(e) for e in sweep_plan.sweep),
    )
    section = plan_html_section(changed)
    assert "<img" not in section and "&lt;img src=x&gt;" in section
    charts = _svgs(section)[2:]
    assert all(len(c.findall("{http://www.w3.org/2000/svg}polygon")) == 3 for c in charts)
    assert "typical range of a measurement" in section
    document = plan_json(changed)
    point = document["sweep"]["points"][0]
    low, high = point["decode_range_tokens_per_s"]
    assert low == pytest.approx(point["decode_tokens_per_s"] * 0.8, rel=1e-3)
    assert high == pytest.approx(point["decode_tokens_per_s"] * 1.1, rel=1e-3)
    uncertainty = document["entries"][0]["decode"]["uncertainty"]
    assert uncertainty["typical_error"] == 0.14 and uncertainty["basis"].startswith("vllm <b>")
    terminal = render(changed, Format.TERMINAL, RenderOptions(width=160, tool_version="9.9.9"))
    assert f"{low:,.0f}{DASH}{high:,.0f}" in terminal
    assert "under decode, the typical range" in terminal


def test_one_batch_size_draws_no_line_chart(small_plan: PlanResult) -> None:
    section = plan_html_section(small_plan)
    assert len(_svgs(section)) == 2 and "<h3>Sweep</h3>" not in section
    assert "### Sweep" not in plan_markdown_section(small_plan)
    assert "\nSweep\n" not in render(small_plan, Format.TERMINAL, OPTIONS)


def test_chart_legend_says_why_a_gpu_has_no_line(sweep_plan: PlanResult) -> None:
    unpriced = sweep_plan.entries[0].gpu.id

    def tweak(entry: PlanEntry) -> PlanEntry:
        return dataclasses.replace(entry, price=None) if entry.gpu.id == unpriced else entry

    changed = dataclasses.replace(sweep_plan, sweep=tuple(tweak(e) for e in sweep_plan.sweep))
    speed, cost = _svgs(plan_html_section(changed))[2:4]
    svg = "{http://www.w3.org/2000/svg}"
    short = sweep_plan.entries[0].gpu.short
    assert len(speed.findall(f"{svg}polyline")) == 3 and len(cost.findall(f"{svg}polyline")) == 2
    legend = [t.text or "" for t in cost.findall(f"{svg}text")]
    assert any(t.startswith(short) and t.endswith(": no price on file") for t in legend)


class _Terminal(io.StringIO):
    """A stdout that says it is a terminal, as a shell's is."""

    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("columns", [80, 120])
def test_the_plan_takes_the_terminal_width_like_assess(
    columns: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    terminal = _Terminal()
    monkeypatch.setattr("sys.stdout", terminal)
    monkeypatch.setenv("COLUMNS", str(columns))
    monkeypatch.setenv("NO_COLOR", "1")
    main.main(["plan", "llama-3.1-8b", "--gpus", "h100-sxm,mi300x"], standalone_mode=False)
    lines = terminal.getvalue().splitlines()
    assert max(len(line) for line in lines) == columns  # the title rule spans the terminal
