"""``gpuport bench serve`` and ``gpuport verify serve``: models served over OpenAI-compatible HTTP.

Both read their flags here, build prompts with :mod:`gpuport.serving.prompts`, run the stage's
async core (:mod:`gpuport.serving.load`, :mod:`gpuport.serving.compare`) under ``asyncio.run``
and render with report/. Ctrl-C keeps what was measured: the partial result is rendered, marked
incomplete, and the command exits 130.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from gpuport.bench.store import ResultsStore, StoreError
from gpuport.cli.common import (
    CommandError,
    ExitCode,
    format_options,
    handle_errors,
    interrupted,
    render_options,
)
from gpuport.cli.ui import CountBar, emit, say
from gpuport.cli.verify import store_options
from gpuport.machine import describe_machine
from gpuport.report import Format, render
from gpuport.serving.prompts import (
    LengthDistribution,
    Prompt,
    PromptError,
    load_prompts,
    synthetic_prompts,
)
from gpuport.serving.results import LoadStep, ServeBenchResult, ServeVerifyResult

if TYPE_CHECKING:  # the client's modules (httpx) load only when a serve command runs
    from gpuport.serving.client import Target
    from gpuport.serving.load import BenchSettings

ENDPOINTS = ("completions", "chat")  # gpuport.serving.client.Endpoint's values

F = TypeVar("F", bound=Callable[..., Any])
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
MAX_PROMPTS = 1_000_000


def _api_key(env_name: str | None) -> str:
    """The key in ``env_name`` (``OPENAI_API_KEY`` by default, where it may be unset)."""
    if env_name is None:
        return os.environ.get(DEFAULT_KEY_ENV, "")
    if not env_name or env_name not in os.environ:
        raise CommandError(f"--api-key-env: the environment variable {env_name!r} is not set")
    return os.environ[env_name]


def _target(url: str, model: str, endpoint: str, timeout: float, key: str, flag: str) -> Target:
    from gpuport.serving.client import Endpoint, Target, UrlError, endpoint_url

    target = Target(url, model, Endpoint(endpoint), timeout_s=timeout, api_key=key)
    try:
        endpoint_url(url, target.endpoint)
    except UrlError as exc:
        raise CommandError(f"{flag}: {exc}") from None
    return target


def _prompts(
    prompt_file: Path | None,
    count: int | None,
    input_len: str,
    output_len: str,
    seed: int,
    default_count: int,
) -> tuple[list[Prompt], str]:
    """The prompts and how they were made, in words."""
    try:
        outputs = LengthDistribution.parse(output_len, "--output-len")
        if prompt_file is not None:
            prompts = load_prompts(prompt_file, outputs, seed)
            if count is not None:
                prompts = prompts[:count]
            return prompts, f"from {prompt_file.name} ({len(prompts)} used)"
        inputs = LengthDistribution.parse(input_len, "--input-len")
    except PromptError as exc:
        raise CommandError(str(exc)) from None
    total = default_count if count is None else count
    made = synthetic_prompts(total, inputs, outputs, seed)
    source = (
        f"made from seed {seed}, input {inputs.describe()} words (about 1.3 tokens a word; "
        f"no tokenizer), output {outputs.describe()} tokens (max_tokens)"
    )
    return made, source


def _common_options(
    default_prompts: int, input_len: str, output_len: str
) -> list[Callable[[Any], Any]]:
    return [
        click.option("--model", required=True, help="The model name the server(s) serve."),
        click.option(
            "--endpoint",
            type=click.Choice(ENDPOINTS),
            default=ENDPOINTS[0],
            show_default=True,
            help="/v1/completions or /v1/chat/completions.",
        ),
        click.option(
            "--num-prompts",
            type=click.IntRange(1, MAX_PROMPTS),
            help=f"How many prompts (default: {default_prompts}, or every line of --prompts).",
        ),
        click.option(
            "--input-len",
            default=input_len,
            show_default=True,
            help="Made prompts' length in words: N, A-B (uniform) or M~S (normal).",
        ),
        click.option(
            "--output-len",
            default=output_len,
            show_default=True,
            help="Answer length in tokens (max_tokens): N, A-B or M~S.",
        ),
        click.option(
            "--prompts",
            "prompt_file",
            type=click.Path(dir_okay=False, exists=True, path_type=Path),
            help='JSONL file of prompts: {"prompt": "...", "max_tokens": 64} per line.',
        ),
        click.option("--seed", type=int, default=0, show_default=True, help="Prompt seed."),
        click.option(
            "--timeout",
            type=click.FloatRange(0.001, 86400),
            default=300.0,
            show_default=True,
            help="Seconds one request may take, from sending to the end of its stream.",
        ),
        click.option("--no-progress", is_flag=True, help="No progress bar."),
        click.option(
            "--api-key-env",
            metavar="VAR",
            help=f"Environment variable holding the API key (default: {DEFAULT_KEY_ENV}, "
            "if set). The key is sent as a bearer token and never printed.",
        ),
    ]


def _apply(options: list[Callable[[Any], Any]]) -> Callable[[F], F]:
    def decorate(function: F) -> F:
        for option in reversed(options):
            function = option(function)
        return function

    return decorate


class _RunSaver:
    """A serving run in the results store: begun before the load, each step added as it ends
    (so Ctrl-C keeps them), finished as complete only when every step ran."""

    def __init__(self, store: ResultsStore, run_id: str, settings: BenchSettings) -> None:
        self.store, self.run_id, self.settings = store, run_id, settings
        self.stored = 0  # steps already in the store

    @classmethod
    def start(cls, db: Path | None, settings: BenchSettings, label: str | None) -> _RunSaver:
        from gpuport.serving.storing import KIND, run_settings

        try:
            store = ResultsStore.open(db)
        except StoreError as exc:
            raise CommandError(str(exc)) from None
        try:
            run_id = store.begin(
                KIND,
                describe_machine(None),
                label=label or settings.target.model,
                settings=run_settings(settings),
            )
        except StoreError as exc:
            store.close()
            raise CommandError(str(exc)) from None
        return cls(store, run_id, settings)

    def add(self, step: LoadStep) -> None:
        """Store one finished step now, so that even a killed run keeps it."""
        from gpuport.serving.storing import step_record

        self.store.add(self.run_id, step_record(step, self.settings.target.model))
        self.stored += 1

    def close(self, steps: list[LoadStep]) -> None:
        """Store what of ``steps`` is not yet stored (a step cut short) and end the run."""
        try:
            for step in steps[self.stored :]:
                self.add(step)
            complete = len(steps) == len(self.settings.plans) and all(s.complete for s in steps)
            self.store.finish(self.run_id, complete=complete)
            state = "" if complete else " (marked incomplete)"
            say(f"stored run {self.run_id}{state} in {self.store.path}")
        except StoreError as exc:
            raise CommandError(str(exc)) from None
        finally:
            self.store.close()


class _Answers(CountBar):
    """A progress bar of answered requests on stderr, on a terminal and unless --no-progress."""

    def __init__(self, total: int, enabled: bool) -> None:
        super().__init__(total, "requests", enabled=enabled)

    def answered(self, _: object) -> None:
        self.update(advance=1)

    def step_done(self, step: LoadStep) -> None:
        """One line per finished step, printed above the bar while it shows."""
        self.tell(
            f"{step.label}: {step.completed} answered, {step.failed} failed "
            f"in {step.duration_s:.2f} s"
        )


@click.command("serve")
@click.option("--url", required=True, help="The server's base URL (http://host:8000).")
@_apply(_common_options(100, "128", "128"))
@click.option(
    "--rate",
    "rate_text",
    metavar="R[,R...]",
    help="Request rates per second, one step each, Poisson arrivals (1,4,inf). "
    "Default: inf, unless --concurrency alone is given.",
)
@click.option(
    "--concurrency",
    type=click.IntRange(1, 100_000),
    help="Most requests in flight; alone, a fixed concurrency.",
)
@click.option(
    "--slo",
    "slo_text",
    metavar="M=T[,M=T]",
    help="Latency limits for goodput: ttft, tpot, e2e (ttft=500ms,tpot=50ms).",
)
@click.option(
    "--max-failure-rate",
    type=click.FloatRange(0.0, 1.0),
    default=0.0,
    show_default=True,
    help="Exit 1 when more than this share of requests fail.",
)
@click.option(
    "--warmup",
    type=click.IntRange(0, 1000),
    default=0,
    show_default=True,
    help="Requests sent first and not counted.",
)
@click.option(
    "--ignore-eos",
    is_flag=True,
    help="Ask for exactly max_tokens (vLLM's ignore_eos; other servers may refuse it).",
)
@click.option(
    "--db",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Results store the run is saved to (default: $XDG_DATA_HOME/gpuport/results.sqlite).",
)
@click.option("--no-store", is_flag=True, help="Do not save the run in the results store.")
@click.option("--label", help="A label for the stored run (default: the model's name).")
@format_options(ServeBenchResult)
@handle_errors
def bench_serve(
    url: str,
    model: str,
    endpoint: str,
    num_prompts: int | None,
    input_len: str,
    output_len: str,
    prompt_file: Path | None,
    seed: int,
    timeout: float,
    no_progress: bool,
    api_key_env: str | None,
    rate_text: str | None,
    concurrency: int | None,
    slo_text: str | None,
    max_failure_rate: float,
    warmup: int,
    ignore_eos: bool,
    db: Path | None,
    no_store: bool,
    label: str | None,
    fmt: str,
    output: Path | None,
) -> None:
    """Measure a model served over OpenAI-compatible HTTP: throughput and latency percentiles.

    Open-loop Poisson arrivals at each --rate (or a fixed --concurrency), streaming every
    answer: request and output-token throughput, TTFT, TPOT, inter-token and end-to-end
    latency (p50/p90/p99), goodput under --slo, and the failure rate with its reasons.
    Exit 1 when more requests fail than --max-failure-rate allows.
    """
    from gpuport.serving.load import (
        BenchRecorder,
        BenchSettings,
        SettingError,
        parse_rates,
        parse_slo,
        run_bench,
        step_plans,
    )

    target = _target(url, model, endpoint, timeout, _api_key(api_key_env), "--url")
    try:
        rates: tuple[float, ...]
        if rate_text is None:
            rates = () if concurrency is not None else (float("inf"),)
        else:
            rates = parse_rates(rate_text)
        plans = step_plans(rates, concurrency)
        slo = parse_slo(slo_text) if slo_text else ()
    except SettingError as exc:
        raise CommandError(str(exc)) from None
    prompts, source = _prompts(prompt_file, num_prompts, input_len, output_len, seed, 100)
    settings = BenchSettings(
        target=target,
        prompts=tuple(prompts),
        plans=tuple(plans),
        prompt_source=source,
        seed=seed,
        slo_ms=slo,
        max_failure_rate=max_failure_rate,
        ignore_eos=ignore_eos,
        warmup=warmup,
    )
    recorder = BenchRecorder(settings)
    saver = None if no_store else _RunSaver.start(db, settings, label)
    bar = _Answers(len(prompts) * len(plans), not no_progress)

    def on_step(step: LoadStep) -> None:
        bar.step_done(step)
        if saver is not None:
            saver.add(step)

    stopped = False
    try:
        with bar:
            result = asyncio.run(
                run_bench(settings, recorder, on_answer=bar.answered, on_step=on_step)
            )
    except KeyboardInterrupt:
        result, stopped = recorder.result(complete=False), True
    except StoreError as exc:
        raise CommandError(str(exc)) from None
    finally:
        if saver is not None:
            saver.close(recorder.steps)
    chosen = Format(fmt)
    emit(render(result, chosen, render_options(chosen, output)), output)
    if stopped:
        interrupted()
    say(
        f"bench serve: {sum(s.completed for s in result.steps)} answered, {result.failed} "
        f"failed ({100 * result.failure_rate:.1f}%)"
    )
    if result.too_many_failures:
        raise SystemExit(ExitCode.FINDINGS)


@click.command("serve")
@click.option("--a", "url_a", required=True, help="Server A's base URL (say, the CUDA box's).")
@click.option("--b", "url_b", required=True, help="Server B's base URL (say, the ROCm box's).")
@_apply(_common_options(8, "32", "32"))
@click.option(
    "--api-key-env-b",
    metavar="VAR",
    help="Environment variable of server B's API key (default: the same as A's).",
)
@click.option(
    "--top-k",
    type=click.IntRange(1, 20),
    default=5,
    show_default=True,
    help="Logprobs asked for per token.",
)
@click.option(
    "--concurrency",
    type=click.IntRange(1, 1024),
    default=4,
    show_default=True,
    help="Requests in flight per server.",
)
@click.option(
    "--kl-margin",
    type=click.FloatRange(0.0, 100.0),
    default=0.01,
    show_default=True,
    help="Mean KL (nats/token) allowed above the noise floor.",
)
@store_options
@format_options(ServeVerifyResult)
@handle_errors
def verify_serve(
    url_a: str,
    url_b: str,
    model: str,
    endpoint: str,
    num_prompts: int | None,
    input_len: str,
    output_len: str,
    prompt_file: Path | None,
    seed: int,
    timeout: float,
    no_progress: bool,
    api_key_env: str | None,
    api_key_env_b: str | None,
    top_k: int,
    concurrency: int,
    kl_margin: float,
    store: bool,
    db: Path | None,
    fmt: str,
    output: Path | None,
) -> None:
    """Compare two servers of the same model: the same prompts at temperature 0 to each.

    Per prompt, the first token where A's and B's answers differ; the share of prompts
    identical; over the common prefix the agreement of the top-k tokens and a per-token KL
    estimate from the top-k logprobs. Each server answers twice, to measure the noise floor
    (how much it differs from itself). Exit 1 when A and B differ beyond that floor.
    """
    from gpuport.serving.compare import VerifyRecorder, VerifySettings, run_verify

    key_a = _api_key(api_key_env)
    key_b = key_a if api_key_env_b is None else _api_key(api_key_env_b)
    target_a = _target(url_a, model, endpoint, timeout, key_a, "--a")
    target_b = _target(url_b, model, endpoint, timeout, key_b, "--b")
    prompts, _ = _prompts(prompt_file, num_prompts, input_len, output_len, seed, 8)
    settings = VerifySettings(
        target_a=target_a,
        target_b=target_b,
        prompts=tuple(prompts),
        top_k=top_k,
        concurrency=concurrency,
        kl_margin=kl_margin,
    )
    recorder = VerifyRecorder(settings)
    stopped = False
    try:
        with _Answers(4 * len(prompts), not no_progress) as bar:
            result = asyncio.run(run_verify(settings, recorder, on_answer=bar.answered))
    except KeyboardInterrupt:
        result, stopped = recorder.result(complete=False), True
    if not stopped:
        _check_answered(result, len(prompts))
    chosen = Format(fmt)
    emit(render(result, chosen, render_options(chosen, output)), output)
    if store or db is not None:
        _store_verify(result, db)
    if stopped:
        interrupted()
    say(
        f"verify serve: {result.cross.identical} of {result.cross.prompts} prompts identical; "
        + ("beyond the noise floor" if result.beyond_noise else "within the noise floor")
    )
    if result.beyond_noise:
        raise SystemExit(ExitCode.FINDINGS)


def _store_verify(result: ServeVerifyResult, db: Path | None) -> None:
    """``verify serve --store``: the comparison as a run of kind verify (incomplete on Ctrl-C)."""
    from gpuport.verify.storing import store_serve_comparison

    try:
        run_id, where = store_serve_comparison(result, db)
    except StoreError as exc:
        raise CommandError(str(exc)) from None
    state = "" if result.complete else ", marked incomplete"
    say(f"stored run {run_id} (kind verify{state}) in {where}")


def _check_answered(result: ServeVerifyResult, prompts: int) -> None:
    """Nothing to compare is an error naming why, not a comparison that passes."""
    for side, url in (("A", result.url_a), ("B", result.url_b)):
        failed = [reason for request, _, reason in result.failures if request.startswith(side)]
        if len(failed) == 2 * prompts:
            raise CommandError(f"server {side} ({url}) answered no request: {failed[0]}")
    if not result.cross.prompts:
        reason = result.failures[0][2] if result.failures else "no answers"
        raise CommandError(f"no prompt was answered by both servers (first failure: {reason})")
