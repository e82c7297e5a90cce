"""``bench serve``'s load: open-loop Poisson arrivals at set rates, or a fixed concurrency.

Open loop: request *i* is sent at its arrival time whether or not earlier ones have been
answered, the inter-arrival gaps drawn from an exponential distribution (a Poisson process) with
the step's rate; ``inf`` sends every request at once. A concurrency limit holds at most that
many requests in flight (alone it is a closed loop at that concurrency). What each request did
goes into a :class:`BenchRecorder` as it finishes, so Ctrl-C keeps every answer already in.

Metrics, per step, over the requests answered in full:

- TTFT: time from sending to the first chunk with text;
- TPOT: ``(e2e - ttft) / (output tokens - 1)``, per request (requests of one token have none);
- ITL: every gap between successive chunks with text;
- e2e: time from sending to the end of the stream;
- throughput: answered requests and output tokens per second of the step's wall time (from its
  first request sent to its last answer);
- goodput: requests per second that met every ``--slo`` limit (ttft, tpot, e2e).
"""

from __future__ import annotations

import asyncio
import itertools
import math
import random
import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx

from gpuport.serving.client import Completion, Request, Target, stream_completion
from gpuport.serving.prompts import Prompt
from gpuport.serving.results import (
    FailureCount,
    LoadStep,
    Percentiles,
    ServeBenchResult,
    spread,
)

SLO_METRICS = ("ttft", "tpot", "e2e")
MAX_RATES = 32


class SettingError(ValueError):
    """A --rate or --slo value that cannot be used; the message says which and why."""


def parse_rates(text: str) -> tuple[float, ...]:
    """``1,4,inf`` as request rates per second (``inf``: every request at once)."""
    rates: list[float] = []
    for part in text.split(","):
        word = part.strip().lower()
        try:
            value = math.inf if word in ("inf", "infinity") else float(word)
        except ValueError:
            value = math.nan
        if not (value > 0) or math.isnan(value):
            raise SettingError(f"--rate {part.strip()!r}: give requests per second > 0, or inf")
        rates.append(value)
    if len(rates) > MAX_RATES:
        raise SettingError(f"--rate: at most {MAX_RATES} rates")
    return tuple(rates)


_DURATION = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*(ms|s)?\s*$")


def parse_slo(text: str) -> tuple[tuple[str, float], ...]:
    """``ttft=500ms,tpot=50ms,e2e=10s`` as (metric, milliseconds); a bare number is ms."""
    limits: dict[str, float] = {}
    for part in text.split(","):
        name, sep, value = part.partition("=")
        name = name.strip().lower()
        match = _DURATION.match(value)
        if not sep or name not in SLO_METRICS or match is None:
            raise SettingError(
                f"--slo {part.strip()!r}: give METRIC=TIME with METRIC one of "
                f"{', '.join(SLO_METRICS)} and TIME like 500ms or 2s"
            )
        number = float(match.group(1))
        limits[name] = number * 1000.0 if match.group(2) == "s" else number
    return tuple(limits.items())


@dataclass(frozen=True, slots=True)
class StepPlan:
    label: str
    rate: float | None
    concurrency: int | None


def step_plans(rates: tuple[float, ...], concurrency: int | None) -> list[StepPlan]:
    """One step per rate (each capped at ``concurrency``), or one step at ``concurrency``."""
    if not rates:
        if concurrency is None:
            raise SettingError("give --rate or --concurrency")
        return [StepPlan(f"concurrency {concurrency}", None, concurrency)]
    plans = []
    for rate in rates:
        label = "rate inf" if math.isinf(rate) else f"rate {rate:g}/s"
        if concurrency is not None:
            label += f", concurrency {concurrency}"
        plans.append(StepPlan(label, rate, concurrency))
    return plans


@dataclass(frozen=True, slots=True)
class BenchSettings:
    target: Target
    prompts: tuple[Prompt, ...]
    plans: tuple[StepPlan, ...]
    prompt_source: str
    seed: int = 0
    slo_ms: tuple[tuple[str, float], ...] = ()
    max_failure_rate: float = 0.0
    ignore_eos: bool = False
    warmup: int = 0
    notes: tuple[str, ...] = ()


def _ms(seconds: float) -> float:
    return seconds * 1000.0


def tpot_ms(answer: Completion) -> float | None:
    if answer.ttft_s is None or answer.output_tokens <= 1:
        return None
    return _ms(answer.e2e_s - answer.ttft_s) / (answer.output_tokens - 1)


def _within(answer: Completion, slo_ms: tuple[tuple[str, float], ...]) -> bool:
    for metric, limit in slo_ms:
        if metric == "ttft":
            value = None if answer.ttft_s is None else _ms(answer.ttft_s)
        elif metric == "tpot":
            value = tpot_ms(answer)
        else:
            value = _ms(answer.e2e_s)
        if value is not None and value > limit:
            return False
    return True


def _failures(answers: list[Completion]) -> tuple[FailureCount, ...]:
    counts = Counter(answer.reason for answer in answers if not answer.ok)
    examples: dict[str, str] = {}
    for answer in answers:
        if not answer.ok:
            examples.setdefault(answer.reason, answer.detail)
    return tuple(
        FailureCount(reason, count, examples[reason])
        for reason, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    )


def summarize_step(
    plan: StepPlan,
    requests: int,
    answers: list[tuple[Prompt, Completion]],
    duration_s: float,
    slo_ms: tuple[tuple[str, float], ...],
    complete: bool,
) -> LoadStep:
    """A step's figures from its answers (failed ones counted, not measured)."""
    done = [answer for _, answer in answers if answer.ok]
    sources = {answer.token_source for answer in done}
    latencies: dict[str, Percentiles | None] = {
        "ttft": spread([_ms(a.ttft_s) for a in done if a.ttft_s is not None]),
        "tpot": spread([t for t in (tpot_ms(a) for a in done) if t is not None]),
        "itl": spread([_ms(b - a) for ans in done for a, b in itertools.pairwise(ans.chunk_times)]),
        "e2e": spread([_ms(a.e2e_s) for a in done]),
    }
    return LoadStep(
        label=plan.label,
        rate=plan.rate,
        concurrency=plan.concurrency,
        requests=requests,
        completed=len(done),
        failed=len(answers) - len(done),
        failures=_failures([answer for _, answer in answers]),
        duration_s=duration_s,
        input_words=sum(prompt.words for prompt, answer in answers if answer.ok),
        output_tokens=sum(answer.output_tokens for answer in done),
        token_source=sources.pop() if len(sources) == 1 else ("mixed" if sources else "none"),
        latencies=tuple(latencies.items()),
        good=sum(1 for a in done if _within(a, slo_ms)) if slo_ms else None,
        complete=complete,
    )


@dataclass
class BenchRecorder:
    """Collects answers as they come, so an interrupted run still has what it measured."""

    settings: BenchSettings
    steps: list[LoadStep] = field(default_factory=list)
    _plan: StepPlan | None = None
    _answers: list[tuple[Prompt, Completion]] = field(default_factory=list)
    _started: float = 0.0
    _last: float = 0.0

    def start_step(self, plan: StepPlan) -> None:
        self._plan, self._answers = plan, []
        self._started = self._last = time.perf_counter()

    def record(self, prompt: Prompt, answer: Completion) -> None:
        self._answers.append((prompt, answer))
        self._last = time.perf_counter()

    def finish_step(self, complete: bool = True) -> None:
        if self._plan is None:
            return
        self.steps.append(
            summarize_step(
                self._plan,
                len(self.settings.prompts),
                self._answers,
                self._last - self._started,
                self.settings.slo_ms,
                complete,
            )
        )
        self._plan = None

    def result(self, complete: bool = True) -> ServeBenchResult:
        """What was measured; with ``complete=False`` the step under way is kept, marked so."""
        if self._plan is not None and self._answers:
            self.finish_step(complete=False)
        settings = self.settings
        notes = list(settings.notes)
        sources = {step.token_source for step in self.steps if step.completed}
        if "chunks" in sources or "mixed" in sources:
            notes.append(
                "the server sent no usage for some answers: their output tokens were counted "
                "as stream chunks with text (one token per chunk)"
            )
        if not complete:
            notes.append("interrupted: the figures cover only the requests answered before it")
        return ServeBenchResult(
            url=settings.target.base_url,
            model=settings.target.model,
            endpoint=settings.target.endpoint.value,
            prompt_source=settings.prompt_source,
            prompts=len(settings.prompts),
            steps=tuple(self.steps),
            slo_ms=settings.slo_ms,
            max_failure_rate=settings.max_failure_rate,
            notes=tuple(notes),
            complete=complete and len(self.steps) == len(settings.plans),
        )


def arrival_offsets(count: int, rate: float | None, rng: random.Random) -> list[float]:
    """When each of ``count`` requests is sent, in seconds from the step's start: a Poisson
    process of ``rate`` per second (exponential gaps, the first at 0), or all at 0 for an
    infinite rate or none (a concurrency alone)."""
    if rate is None or math.isinf(rate):
        return [0.0] * count
    offsets, now = [], 0.0
    for index in range(count):
        if index:
            now += rng.expovariate(rate)
        offsets.append(now)
    return offsets


def new_client(target: Target) -> httpx.AsyncClient:
    """One connection pool for a run: no limit on connections (an open loop must not queue in
    the client), and no proxy from the environment (it would be measured too)."""
    connect = min(target.timeout_s, 10.0)
    return httpx.AsyncClient(
        timeout=httpx.Timeout(target.timeout_s, connect=connect),
        limits=httpx.Limits(max_connections=None, max_keepalive_connections=None),
        trust_env=False,
    )


async def _run_step(
    client: httpx.AsyncClient,
    settings: BenchSettings,
    plan: StepPlan,
    recorder: BenchRecorder,
    rng: random.Random,
    on_answer: Callable[[Completion], None] | None,
    on_step: Callable[[LoadStep], None] | None,
) -> None:
    gate = asyncio.Semaphore(plan.concurrency) if plan.concurrency else None

    async def one(prompt: Prompt) -> None:
        request = Request(prompt.text, prompt.max_tokens, ignore_eos=settings.ignore_eos)
        if gate is None:
            answer = await stream_completion(client, settings.target, request)
        else:
            async with gate:
                answer = await stream_completion(client, settings.target, request)
        recorder.record(prompt, answer)
        if on_answer is not None:
            on_answer(answer)

    recorder.start_step(plan)
    offsets = arrival_offsets(len(settings.prompts), plan.rate, rng)
    started = time.perf_counter()
    tasks = []
    for offset, prompt in zip(offsets, settings.prompts, strict=True):
        # Sleep to each arrival's time from the step's start, so delays do not add up.
        wait = started + offset - time.perf_counter()
        if wait > 0:
            await asyncio.sleep(wait)
        tasks.append(asyncio.create_task(one(prompt)))
    await asyncio.gather(*tasks)
    recorder.finish_step()
    if on_step is not None:
        on_step(recorder.steps[-1])


async def run_bench(
    settings: BenchSettings,
    recorder: BenchRecorder,
    on_answer: Callable[[Completion], None] | None = None,
    on_step: Callable[[LoadStep], None] | None = None,
) -> ServeBenchResult:
    """Every step in turn; a warm-up of ``settings.warmup`` requests first, not counted."""
    rng = random.Random(settings.seed)
    async with new_client(settings.target) as client:
        for prompt in settings.prompts[: settings.warmup]:
            request = Request(prompt.text, prompt.max_tokens, ignore_eos=settings.ignore_eos)
            await stream_completion(client, settings.target, request)
        for plan in settings.plans:
            await _run_step(client, settings, plan, recorder, rng, on_answer, on_step)
    return recorder.result()
