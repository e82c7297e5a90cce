"""``bench serve`` and ``verify serve`` as a user runs them: output, exit codes, bad input.

The commands are invoked directly (their ``bench`` and ``verify`` groups are built elsewhere).
"""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from fake_server import FakeServer, closed_port

from gpuport.cli.serve import bench_serve, verify_serve
from gpuport.serving import compare, load
from gpuport.serving.client import Completion

TINY = ["--model", "tiny", "--num-prompts", "3", "--input-len", "4", "--output-len", "4"]


def run(command: click.Command, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(command, list(args))
    assert not isinstance(result.exception, Exception) or isinstance(
        result.exception, SystemExit
    ), result.exception
    return result.exit_code, result.stdout, result.stderr


def test_bench_serve_reports_latency_percentiles(server: FakeServer) -> None:
    code, out, err = run(
        bench_serve, "--url", server.url("normal"), *TINY, "--rate", "40,inf",
        "--slo", "ttft=5s", "--format", "json",
    )  # fmt: skip
    assert code == 0, err
    document = json.loads(out)
    assert document["kind"] == "serve-bench" and document["failure_rate"] == 0.0
    assert [s["label"] for s in document["steps"]] == ["rate 40/s", "rate inf"]
    for step in document["steps"]:
        assert step["completed"] == 3 and step["output_tokens"] == 12
        assert set(step["latency_ms"]["ttft"]) == {"count", "mean", "p50", "p90", "p99"}
        assert step["good"] == 3
    assert "rate inf: 3 answered, 0 failed" in err


def test_bench_serve_terminal_and_markdown(server: FakeServer) -> None:
    code, out, _ = run(bench_serve, "--url", server.url("normal"), *TINY, "--concurrency", "2")
    assert code == 0
    assert "concurrency 2 — 3 of 3 answered" in out and "TTFT (time to first token)" in out
    code, out, _ = run(
        bench_serve, "--url", server.url("normal"), *TINY, "--endpoint", "chat",
        "--format", "markdown",
    )  # fmt: skip
    assert code == 0 and out.startswith("# gpuport bench serve") and "| rate inf |" in out


@pytest.mark.parametrize(
    ("url", "reason"),
    [("failing", "HTTP 500"), ("malformed", "malformed SSE"), ("closed", "connection refused")],
)
def test_failures_exit_1_above_the_allowed_rate(server: FakeServer, url: str, reason: str) -> None:
    base = f"http://127.0.0.1:{closed_port()}" if url == "closed" else server.url(url)
    code, out, _ = run(bench_serve, "--url", base, *TINY, "--format", "json")
    assert code == 1
    document = json.loads(out)
    assert document["too_many_failures"] and document["steps"][0]["failures"][0]["reason"] == reason
    code, _, _ = run(bench_serve, "--url", base, *TINY, "--max-failure-rate", "1")
    assert code == 0


def test_a_time_out_is_a_failure_not_a_hang(server: FakeServer) -> None:
    code, out, _ = run(
        bench_serve, "--url", server.url("timeout"), *TINY, "--timeout", "0.2",
        "--format", "json",
    )  # fmt: skip
    assert code == 1
    assert json.loads(out)["steps"][0]["failures"][0]["reason"] == "timed out"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--url", "localhost:8000"], "--url: 'localhost:8000' is not an http"),
        (["--rate", "0"], "--rate '0'"),
        (["--slo", "ttft=soon"], "--slo 'ttft=soon'"),
        (["--input-len", "9-2"], "--input-len '9-2'"),
        (["--api-key-env", "GPUPORT_NO_SUCH_KEY"], "'GPUPORT_NO_SUCH_KEY' is not set"),
    ],
)
def test_bad_flags_are_one_error_line_and_exit_2(args: list[str], message: str) -> None:
    full = ["--url", "http://127.0.0.1:9", *TINY, *args]
    if args[0] == "--url":
        full = [*args, *TINY]
    code, out, err = run(bench_serve, *full)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and message in err and "Traceback" not in err


def test_a_bad_prompt_file_line_is_named(tmp_path: Path) -> None:
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text('{"prompt": "hi"}\n{"prompt": 3}\n')
    code, _, err = run(
        bench_serve, "--url", "http://127.0.0.1:9", "--model", "m", "--prompts", str(prompts)
    )
    assert code == 2 and f"{prompts}:2:" in err


def test_prompts_from_a_file_are_sent(server: FakeServer, tmp_path: Path) -> None:
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text('{"prompt": "hi there", "max_tokens": 2}\n{"prompt": "more"}\n')
    code, out, _ = run(
        bench_serve, "--url", server.url("normal"), "--model", "m", "--prompts", str(prompts),
        "--output-len", "3", "--format", "json",
    )  # fmt: skip
    assert code == 0
    document = json.loads(out)
    assert document["prompts"] == 2 and document["steps"][0]["output_tokens"] == 5
    assert "prompts.jsonl" in document["prompt_source"]


def test_ctrl_c_keeps_what_was_measured(monkeypatch: pytest.MonkeyPatch) -> None:
    async def interrupted_run(
        settings: load.BenchSettings, recorder: load.BenchRecorder, **_: object
    ) -> None:
        recorder.start_step(settings.plans[0])
        recorder.record(
            settings.prompts[0],
            Completion(ok=True, ttft_s=0.1, e2e_s=0.2, pieces=("a",), output_tokens=1),
        )
        raise KeyboardInterrupt

    monkeypatch.setattr(load, "run_bench", interrupted_run)
    code, out, err = run(bench_serve, "--url", "http://127.0.0.1:9", *TINY, "--format", "json")
    assert code == 130 and "interrupted" in err
    document = json.loads(out)
    assert document["complete"] is False and document["steps"][0]["completed"] == 1


def test_verify_serve_passes_two_alike_servers(server: FakeServer, server_b: FakeServer) -> None:
    code, out, err = run(
        verify_serve, "--a", server.url("normal"), "--b", server_b.url("normal"), *TINY
    )
    assert code == 0, err
    assert "A and B agree within the noise floor" in out and "A vs A (rerun)" in out


def test_verify_serve_flags_perturbed_logprobs(server: FakeServer, server_b: FakeServer) -> None:
    code, out, _ = run(
        verify_serve, "--a", server.url("normal"), "--b", server_b.url("perturbed"), *TINY,
        "--num-prompts", "4", "--output-len", "6", "--format", "json",
    )  # fmt: skip
    assert code == 1
    document = json.loads(out)
    assert document["beyond_noise"] and document["cross"]["mean_kl"] > 0.1
    assert document["noise_b"]["mean_kl"] == 0.0


def test_verify_serve_without_logprobs_says_so(server: FakeServer, server_b: FakeServer) -> None:
    code, out, _ = run(
        verify_serve, "--a", server.url("nologprobs"), "--b", server_b.url("normal"), *TINY,
        "--format", "markdown",
    )  # fmt: skip
    assert code == 0 and "tokens only" in out and "server A answered without logprobs" in out


def test_verify_serve_with_a_server_that_refuses_exits_2(server: FakeServer) -> None:
    closed = f"http://127.0.0.1:{closed_port()}"
    code, out, err = run(verify_serve, "--a", server.url("normal"), "--b", closed, *TINY)
    assert code == 2 and out == ""
    assert f"server B ({closed}) answered no request: connection refused" in err


def test_verify_serve_ctrl_c_keeps_what_was_compared(monkeypatch: pytest.MonkeyPatch) -> None:
    async def interrupted_run(
        settings: compare.VerifySettings, recorder: compare.VerifyRecorder, **_: object
    ) -> None:
        answer = Completion(ok=True, pieces=("a",))
        recorder.answers[("a", 1, 0)] = recorder.answers[("b", 1, 0)] = answer
        raise KeyboardInterrupt

    monkeypatch.setattr(compare, "run_verify", interrupted_run)
    code, out, _ = run(
        verify_serve, "--a", "http://h", "--b", "http://h", *TINY, "--format", "json"
    )
    assert code == 130
    document = json.loads(out)
    assert document["complete"] is False and document["cross"]["prompts"] == 1


def test_verify_serve_with_no_prompt_answered_by_both_exits_2(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def crossed_run(
        settings: compare.VerifySettings, recorder: compare.VerifyRecorder, **_: object
    ) -> object:
        good, bad = Completion(ok=True, pieces=("a",)), Completion(ok=False, reason="HTTP 503")
        for run in (1, 2):
            for index in range(len(settings.prompts)):
                a_ok = index % 2 == 0
                recorder.answers[("a", run, index)] = good if a_ok else bad
                recorder.answers[("b", run, index)] = bad if a_ok else good
        return recorder.result()

    monkeypatch.setattr(compare, "run_verify", crossed_run)
    code, out, err = run(verify_serve, "--a", "http://h", "--b", "http://h", *TINY)
    assert code == 2 and out == ""
    assert "no prompt was answered by both servers (first failure: HTTP 503)" in err


def test_bench_serve_runs_under_gpuport_bench(server: FakeServer) -> None:
    from gpuport.cli import main

    result = CliRunner().invoke(
        main, ["bench", "serve", "--url", server.url("normal"), *TINY, "--format", "json"]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["kind"] == "serve-bench"
