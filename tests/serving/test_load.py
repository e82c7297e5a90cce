"""bench serve's load: flags parsed, figures computed from answers, a run against the server."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import math
import random

import pytest
from fake_server import FakeServer

from gpuport.serving.client import Completion, Endpoint, Target
from gpuport.serving.load import (
    BenchRecorder,
    BenchSettings,
    SettingError,
    StepPlan,
    arrival_offsets,
    parse_rates,
    parse_slo,
    run_bench,
    step_plans,
    summarize_step,
)
from gpuport.serving.prompts import LengthDistribution, Prompt, synthetic_prompts
from gpuport.serving.results import percentile, spread


def test_rates_and_limits_are_parsed() -> None:
    assert parse_rates("1, 4.5,inf") == (1.0, 4.5, math.inf)
    assert parse_slo("ttft=500ms,tpot=50,e2e=2s") == (
        ("ttft", 500.0),
        ("tpot", 50.0),
        ("e2e", 2000.0),
    )


@pytest.mark.parametrize("text", ["0", "-1", "fast", "1,,2", "nan"])
def test_a_bad_rate_is_refused(text: str) -> None:
    with pytest.raises(SettingError, match="--rate"):
        parse_rates(text)


@pytest.mark.parametrize("text", ["ttft", "latency=5ms", "ttft=fast", "tpot=5min"])
def test_a_bad_limit_is_refused(text: str) -> None:
    with pytest.raises(SettingError, match="--slo"):
        parse_slo(text)


def test_steps_are_one_per_rate_or_one_at_the_concurrency() -> None:
    assert [p.label for p in step_plans((2.0, math.inf), 8)] == [
        "rate 2/s, concurrency 8",
        "rate inf, concurrency 8",
    ]
    assert step_plans((), 4) == [StepPlan("concurrency 4", None, 4)]
    with pytest.raises(SettingError):
        step_plans((), None)


def test_arrivals_are_a_poisson_process_of_the_rate() -> None:
    offsets = arrival_offsets(4000, 8.0, random.Random(0))
    assert offsets[0] == 0.0 and offsets == sorted(offsets)
    gaps = [b - a for a, b in itertools.pairwise(offsets)]
    assert sum(gaps) / len(gaps) == pytest.approx(1 / 8.0, rel=0.05)
    # exponential gaps: their spread equals their mean
    mean = sum(gaps) / len(gaps)
    sd = (sum((g - mean) ** 2 for g in gaps) / len(gaps)) ** 0.5
    assert sd == pytest.approx(mean, rel=0.1)
    assert offsets == arrival_offsets(4000, 8.0, random.Random(0))


def test_an_infinite_rate_or_a_concurrency_sends_everything_at_once() -> None:
    assert arrival_offsets(3, math.inf, random.Random(0)) == [0.0, 0.0, 0.0]
    assert arrival_offsets(2, None, random.Random(0)) == [0.0, 0.0]


def test_percentiles_interpolate_like_numpy() -> None:
    values = [1.0, 2.0, 3.0, 4.0]
    assert percentile(values, 50) == 2.5
    assert percentile(values, 90) == pytest.approx(3.7)
    assert percentile([5.0], 99) == 5.0
    assert spread([]) is None


def _answer(
    ttft: float, e2e: float, tokens: int, *, ok: bool = True, reason: str = ""
) -> Completion:
    times = tuple(ttft + i * (e2e - ttft) / max(tokens - 1, 1) for i in range(tokens))
    return Completion(
        ok=ok,
        reason=reason,
        detail="boom" if reason else "",
        ttft_s=ttft if ok else None,
        e2e_s=e2e,
        chunk_times=times if ok else (),
        pieces=tuple("x" for _ in range(tokens)) if ok else (),
        output_tokens=tokens if ok else 0,
        token_source="usage",
    )


def test_a_steps_figures_come_from_its_answered_requests() -> None:
    prompt = Prompt("a b c", 5, 3)
    answers = [
        (prompt, _answer(0.1, 0.5, 5)),  # tpot 100 ms
        (prompt, _answer(0.3, 0.5, 5)),  # tpot 50 ms
        (prompt, _answer(0.0, 1.0, 0, ok=False, reason="HTTP 500")),
        (prompt, _answer(0.0, 1.0, 0, ok=False, reason="HTTP 500")),
    ]
    step = summarize_step(
        StepPlan("rate 1/s", 1.0, None), 4, answers, 2.0, (("ttft", 200.0),), True
    )
    assert (step.completed, step.failed, step.failure_rate) == (2, 2, 0.5)
    assert step.request_throughput == 1.0 and step.output_tokens_per_s == 5.0
    assert step.input_words == 6
    ttft = step.latency("ttft")
    tpot = step.latency("tpot")
    itl = step.latency("itl")
    assert ttft is not None and ttft.p50 == pytest.approx(200.0)
    assert tpot is not None and tpot.mean == pytest.approx(75.0)
    assert itl is not None and itl.count == 8
    assert step.good == 1 and step.goodput == 0.5  # only the first has TTFT within 200 ms
    assert [(f.reason, f.count, f.example) for f in step.failures] == [("HTTP 500", 2, "boom")]


def _settings(
    url: str, count: int, rates: tuple[float, ...], concurrency: int | None
) -> BenchSettings:
    prompts = synthetic_prompts(
        count, LengthDistribution("fixed", 4), LengthDistribution("fixed", 4), seed=0
    )
    return BenchSettings(
        target=Target(url, "tiny", Endpoint.CHAT, timeout_s=5),
        prompts=tuple(prompts),
        plans=tuple(step_plans(rates, concurrency)),
        prompt_source="test",
        slo_ms=(("ttft", 10_000.0),),
    )


def test_a_run_against_the_server_measures_every_step(server: FakeServer) -> None:
    settings = _settings(server.url("slow"), 4, (50.0, math.inf), 2)
    seen: list[str] = []
    result = asyncio.run(
        run_bench(settings, BenchRecorder(settings), on_step=lambda s: seen.append(s.label))
    )
    assert seen == ["rate 50/s, concurrency 2", "rate inf, concurrency 2"]
    assert result.complete and result.failed == 0 and not result.too_many_failures
    for step in result.steps:
        assert step.completed == 4 and step.output_tokens == 16 and step.token_source == "usage"
        e2e = step.latency("e2e")
        itl = step.latency("itl")
        assert e2e is not None and e2e.p50 >= 30  # the slow server waits 30 ms, then 10 ms a token
        assert itl is not None and itl.count == 12
        assert step.good == 4


def test_failures_are_counted_and_the_run_goes_on(server: FakeServer) -> None:
    settings = _settings(server.url("disconnect"), 3, (), 3)
    result = asyncio.run(run_bench(settings, BenchRecorder(settings)))
    (step,) = result.steps
    assert step.failed == 3 and step.failures[0].reason == "dropped mid-stream"
    assert result.failure_rate == 1.0 and result.too_many_failures


def test_counting_chunks_instead_of_usage_is_said(server: FakeServer) -> None:
    settings = _settings(server.url("nousage"), 2, (), 2)
    result = asyncio.run(run_bench(settings, BenchRecorder(settings)))
    assert result.steps[0].token_source == "chunks"
    assert any("counted as stream chunks" in note for note in result.notes)


def test_an_interrupted_run_keeps_the_step_under_way() -> None:
    settings = _settings("http://127.0.0.1:9", 3, (1.0, 2.0), None)
    recorder = BenchRecorder(settings)
    recorder.start_step(settings.plans[0])
    recorder.record(settings.prompts[0], _answer(0.1, 0.2, 3))
    result = recorder.result(complete=False)
    assert not result.complete and len(result.steps) == 1
    assert not result.steps[0].complete and result.steps[0].completed == 1
    assert any("interrupted" in note for note in result.notes)


def test_warm_up_requests_are_sent_but_not_counted(server: FakeServer) -> None:
    settings = _settings(server.url("normal"), 2, (), 2)
    warm = dataclasses.replace(settings, warmup=1)
    answered: list[Completion] = []
    before = server.requests
    result = asyncio.run(run_bench(warm, BenchRecorder(warm), on_answer=answered.append))
    assert server.requests - before == 3  # the warm-up too
    assert result.steps[0].completed == 2 and len(answered) == 2
