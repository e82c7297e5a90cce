"""``gpuport bench list/show/export/import/compare`` on a store filled by hand (no torch)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from bench_samples import machine, matmul_result
from click.testing import CliRunner

from gpuport.bench.store import SCHEMA_VERSION, ResultsStore
from gpuport.cli import main


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["bench", *args])
    assert "Traceback" not in result.stdout + result.stderr
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def store(tmp_path: Path) -> tuple[Path, str, str]:
    """A store with an H100 run and an MI300X run, both of bf16 matmul and copy bandwidth."""
    db = tmp_path / "r.sqlite"
    with ResultsStore.open(db) as s:
        ids = []
        for device, accelerator, tflops in (
            ("NVIDIA H100 80GB HBM3", "cuda", 700.0),
            ("AMD Instinct MI300X", "rocm", 840.0),
        ):
            run_id = s.begin("micro", machine(device, accelerator), label=f"{accelerator} box")
            s.add(run_id, {**matmul_result("bf16", tflops)})
            s.add(
                run_id,
                {
                    "workload": "bandwidth",
                    "name": "bandwidth copy",
                    "metrics": {"gbs": tflops * 4, "fraction_of_peak": 0.8},
                },
            )
            s.finish(run_id)
            ids.append(run_id)
    return db, ids[0], ids[1]


def test_list_shows_every_run(store: tuple[Path, str, str]) -> None:
    db, a, b = store
    code, out, _ = run("list", "--db", str(db))
    assert code == 0
    assert a in out and b in out and "AMD Instinct" in out and "rocm box" in out
    code, out, _ = run("list", "--db", str(db), "--format", "json")
    assert [r["id"] for r in json.loads(out)["runs"]] == [a, b]


def test_show_by_prefix_and_latest(store: tuple[Path, str, str]) -> None:
    db, a, b = store
    code, out, _ = run("show", a[:6], "--db", str(db))
    assert code == 0 and f"run {a}" in out and "700 TFLOPS" in out
    code, out, _ = run("show", "latest", "--db", str(db), "--format", "json")
    assert json.loads(out)["run"]["id"] == b


def test_export_then_import_into_another_store(
    store: tuple[Path, str, str], tmp_path: Path
) -> None:
    db, a, _ = store
    exported = tmp_path / "run.json"
    code, _, err = run("export", a, "--db", str(db), "-o", str(exported))
    assert code == 0 and "wrote" in err
    other = tmp_path / "other.sqlite"
    code, _, err = run("import", str(exported), "--db", str(other))
    assert code == 0 and f"imported run {a}" in err
    code, out, _ = run("list", "--db", str(other), "--format", "json")
    assert json.loads(out)["runs"][0]["imported"] is True
    code, _, err = run("import", str(exported), "--db", str(other))
    assert code == 2 and "already in" in err


def test_import_of_a_bad_file_names_it(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "gpuport-bench-run",\n "version": }')
    code, _, err = run("import", str(bad), "--db", str(tmp_path / "r.sqlite"))
    assert code == 2 and f"{bad}:2: not valid JSON" in err
    bad.write_text(json.dumps({"format": "gpuport-bench-run", "version": 99}))
    code, _, err = run("import", str(bad), "--db", str(tmp_path / "r.sqlite"))
    assert code == 2 and "newer than this gpuport" in err
    code, _, err = run("import", str(tmp_path / "missing.json"), "--db", str(tmp_path / "r.sqlite"))
    assert code == 2 and "no such file" in err


def test_compare_prints_ratios_and_fractions(store: tuple[Path, str, str], tmp_path: Path) -> None:
    db, a, b = store
    page = tmp_path / "compare.html"
    code, out, _ = run("compare", a, b, "--db", str(db), "--html", str(page))
    assert code == 0
    row = next(line for line in out.splitlines() if line.startswith("bandwidth copy"))
    assert "2,800 (80%)" in row and "3,360 (80%)" in row and "1.20x" in row
    text = page.read_text()
    assert text.count("<svg") == 2 and "<script" not in text and ' style="' not in text
    code, out, _ = run("compare", a, b, "--db", str(db), "--format", "json")
    rows = {r["name"]: r for r in json.loads(out)["rows"]}
    assert rows["matmul bf16 best shape"]["ratios"] == [1.0, 1.2]


def test_compare_needs_two_distinct_runs(store: tuple[Path, str, str]) -> None:
    db, a, _ = store
    assert run("compare", a, "--db", str(db))[0] == 2
    code, _, err = run("compare", a, a[:4], "--db", str(db))
    assert code == 2 and "named twice" in err


def test_a_corrupt_store_is_one_error_line(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    db.write_bytes(b"\0garbage" * 200)
    code, _, err = run("list", "--db", str(db))
    assert code == 2 and err.startswith("error:") and "not a gpuport results store" in err


@pytest.mark.parametrize("kind", ["corrupt", "foreign", "newer"])
@pytest.mark.parametrize("command", [["list"], ["show", "latest"], ["compare", "a1", "b2"]])
def test_a_store_that_cannot_be_read_is_one_error_line(
    tmp_path: Path, kind: str, command: list[str]
) -> None:
    db = tmp_path / "r.sqlite"
    if kind == "corrupt":
        db.write_bytes(b"SQLite format 3\0" + b"\xff" * 4000)
    elif kind == "foreign":
        with sqlite3.connect(db) as conn:
            conn.execute("CREATE TABLE photos (x)")
        conn.close()
    else:
        ResultsStore.open(db).close()
        conn = sqlite3.connect(db)
        conn.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
        conn.close()
    before = db.read_bytes()
    code, out, err = run(*command, "--db", str(db))
    assert code == 2 and out == ""
    assert err.startswith(f"error: {db}") and err.count("\n") == 1
    expected = "newer than this gpuport" if kind == "newer" else "not a gpuport results store"
    assert expected in " ".join(err.split())
    assert db.read_bytes() == before


def serve_run(s: ResultsStore, url: str, tokens_per_s: float, ttft_p99_ms: float) -> str:
    run_id = s.begin("serve", machine("AMD EPYC", "cpu"), label="llama", settings={"url": url})
    s.add(
        run_id,
        {
            "workload": "serve",
            "name": "rate 4/s",
            "params": {"rate": 4.0},
            "metrics": {
                "completed": 100.0,
                "output_tokens_per_s": tokens_per_s,
                "request_throughput": 3.9,
                "ttft_p99_ms": ttft_p99_ms,
            },
        },
    )
    s.finish(run_id)
    return run_id


def test_serving_runs_compare_on_throughput_and_latency(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    with ResultsStore.open(db) as s:
        a = serve_run(s, "http://cuda-box:8000", 1000.0, 80.0)
        b = serve_run(s, "http://rocm-box:8000", 1250.0, 40.0)
    code, out, _ = run("show", a, "--db", str(db))
    assert code == 0 and "1,000 tok/s" in out and "completed" not in out
    assert "server       http://cuda-box:8000" in out and "client       AMD EPYC" in out
    code, out, _ = run("compare", a, b, "--db", str(db))
    assert code == 0
    rows = {line.split("  ")[0]: line.split() for line in out.splitlines()}
    assert rows["rate 4/s output"][-4:] == ["tok/s", "1,000", "1,250", "1.25x"]
    assert rows["rate 4/s TTFT p99"][-4:] == ["ms", "80.0", "40.0", "0.50x"]
    assert "rate 4/s goodput" not in rows  # neither run measured it
    assert "http://rocm-box:8000" in out and "of peak" not in out  # no datasheet peak to serve


def test_the_serve_subcommand_runs_without_the_suite(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    code, _, _ = run("--db", str(db), "serve", "--help")
    assert code == 0
    assert not db.exists()  # the suite did not start a run


def test_without_torch_the_suite_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` raises ImportError
    code, _, err = run("--quick", "--db", str(tmp_path / "r.sqlite"))
    assert code == 2
    assert "pip install torch==2.13.0 && pip install 'gpuport[bench]'" in " ".join(err.split())


def test_the_core_and_the_store_commands_never_import_torch(store: tuple[Path, str, str]) -> None:
    db, a, b = store
    code = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from gpuport.cli import main\n"
        "from gpuport.report import registered\n"
        "registered()\n"
        f"for args in (['list'], ['show', '{a}'], ['compare', '{a}', '{b}', '--format', 'html']):\n"
        f"    assert CliRunner().invoke(main, ['bench', *args, '--db', r'{db}']).exit_code == 0\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_text_from_another_machine_is_shown_as_text(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    hostile = "[bold red]boom[/] \x1b]0;title\x07 | *x* <b>"
    with ResultsStore.open(db) as s:
        run_id = s.begin("micro", machine(f"GPU {hostile}"), label=hostile)
        s.add(run_id, {**matmul_result(), "name": f"matmul {hostile}", "note": hostile})
        s.finish(run_id)
    code, out, _ = run("show", run_id, "--db", str(db))
    assert code == 0 and "[bold red]boom[/]" in out and "\x1b" not in out and "\\x1b]0;title" in out
    code, out, _ = run("show", run_id, "--db", str(db), "--format", "markdown")
    assert "\\*x\\*" in out and "\\| " in out and "<b>" not in out


def test_ratios_far_from_one_keep_their_digits() -> None:
    from gpuport.report.bench_formats import _ratio_tick, ratio

    assert [ratio(1.234), ratio(0.0047), ratio(None)] == ["1.23x", "0.0047x", "\u2014"]
    assert [_ratio_tick(x) for x in (1 / 64, 0.25, 1.0, 16.0)] == ["1/64x", "1/4x", "1x", "16x"]


def test_a_note_runs_share_is_said_once(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    note = "AMD EPYC is a CPU: the GPU catalog has no peaks for it"
    with ResultsStore.open(db) as s:
        ids = []
        for _ in range(2):
            run_id = s.begin("micro", machine("AMD EPYC", "cpu"), settings={"notes": [note]})
            s.add(run_id, matmul_result("bf16", 0.1))
            s.finish(run_id)
            ids.append(run_id)
    code, out, _ = run("compare", *ids, "--db", str(db), "--format", "json")
    assert code == 0 and json.loads(out)["notes"] == [f"runs {ids[0]}, {ids[1]}: {note}"]
