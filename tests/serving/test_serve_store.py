"""bench serve saves each run in the results store: one record per step, incomplete on Ctrl-C."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from fake_server import FakeServer

from gpuport.bench.store import ResultsStore
from gpuport.cli.serve import bench_serve
from gpuport.serving import load
from gpuport.serving.client import Completion
from gpuport.serving.results import LoadStep

TINY = ["--model", "tiny", "--num-prompts", "2", "--input-len", "3", "--output-len", "3"]


def test_a_run_is_stored_step_by_step(server: FakeServer, tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite"
    result = CliRunner().invoke(
        bench_serve,
        ["--url", server.url("normal"), *TINY, "--rate", "50,inf", "--db", str(db),
         "--slo", "ttft=5s", "--label", "rocm box"],
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert f"in {db}" in result.stderr
    with ResultsStore.open(db) as store:
        run = store.load("latest")
    assert run.summary.kind == "serve" and run.summary.complete and run.summary.label == "rocm box"
    assert run.settings["model"] == "tiny" and run.settings["steps"] == ["rate 50/s", "rate inf"]
    assert [r.name for r in run.results] == ["rate 50/s", "rate inf"]
    last = run.results[1]
    assert last.params["rate"] == "inf" and last.status == "ok"
    assert last.metrics["completed"] == 2.0 and last.metrics["goodput"] is not None
    ttft = last.metrics["ttft_p99_ms"]
    assert ttft is not None and ttft > 0


def test_the_default_store_is_in_the_data_folder(server: FakeServer, data_home: Path) -> None:
    result = CliRunner().invoke(bench_serve, ["--url", server.url("failing"), *TINY])
    assert result.exit_code == 1
    with ResultsStore.open(data_home / "gpuport" / "results.sqlite") as store:
        (record,) = store.load("latest").results
    assert record.status == "failed" and "HTTP 500: 2" in record.note


def test_no_store_writes_nothing(server: FakeServer, data_home: Path) -> None:
    result = CliRunner().invoke(bench_serve, ["--url", server.url("normal"), *TINY, "--no-store"])
    assert result.exit_code == 0 and "stored run" not in result.stderr
    assert not data_home.exists()


def test_a_store_that_is_not_one_stops_before_any_request(tmp_path: Path) -> None:
    db = tmp_path / "notes.sqlite"
    db.write_text("not a database at all, just text " * 100)
    result = CliRunner().invoke(
        bench_serve, ["--url", "http://127.0.0.1:9", *TINY, "--db", str(db)]
    )
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith("error: ") and str(db) in result.stderr


def test_ctrl_c_stores_the_steps_so_far_marked_incomplete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "runs.sqlite"
    answer = Completion(ok=True, ttft_s=0.1, e2e_s=0.2, pieces=("a",), output_tokens=1)
    seen_in_store: list[int] = []

    async def interrupted_run(
        settings: load.BenchSettings,
        recorder: load.BenchRecorder,
        on_step: Callable[[LoadStep], None],
        **_: object,
    ) -> None:
        recorder.start_step(settings.plans[0])
        recorder.record(settings.prompts[0], answer)
        recorder.finish_step()
        on_step(recorder.steps[-1])
        with ResultsStore.open(db) as store:  # the finished step is stored at once
            seen_in_store.append(len(store.load("latest").results))
        recorder.start_step(settings.plans[1])
        recorder.record(settings.prompts[0], answer)
        raise KeyboardInterrupt

    monkeypatch.setattr(load, "run_bench", interrupted_run)
    result = CliRunner().invoke(
        bench_serve,
        [
            "--url",
            "http://127.0.0.1:9",
            *TINY,
            "--rate",
            "1,2",
            "--db",
            str(db),
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 130
    assert seen_in_store == [1]
    assert json.loads(result.stdout)["complete"] is False
    with ResultsStore.open(db) as store:
        run = store.load("latest")
    assert not run.summary.complete
    first, second = run.results
    assert "interrupted" not in first.note and "interrupted" in second.note
    assert second.metrics["completed"] == 1.0
