"""Hand-made ``bench serve`` and ``verify serve`` results for the report tests.

Every figure is written out; the model's name and a server's failure text carry markup and
control characters, which every format must show as text.
"""

from __future__ import annotations

import math

from gpuport.serving.results import (
    FailureCount,
    LoadStep,
    PairSummary,
    Percentiles,
    PromptDivergence,
    ServeBenchResult,
    ServeVerifyResult,
)

HOSTILE_MODEL = "llama-[bold]8b*_|`x`<b>@team \x1b[31mred"
HOSTILE_DETAIL = (
    "upstream said \x1b]0;title\x07 <script>alert(1)</script> | **bold** https://evil.example"
)


def _latencies(scale: float) -> tuple[tuple[str, Percentiles | None], ...]:
    return (
        ("ttft", Percentiles(98, 41.25 * scale, 38.5 * scale, 72.0 * scale, 140.75 * scale)),
        ("tpot", Percentiles(98, 8.125 * scale, 7.9 * scale, 9.4 * scale, 12.0 * scale)),
        ("itl", Percentiles(12_348, 8.0 * scale, 7.5 * scale, 9.25 * scale, 15.5 * scale)),
        (
            "e2e",
            Percentiles(98, 1_074.0 * scale, 1_050.0 * scale, 1_210.5 * scale, 1_402.0 * scale),
        ),
    )


def sample_serve_bench() -> ServeBenchResult:
    """Two rates (one with failures), a concurrency step cut short by Ctrl-C, and limits."""
    steps = (
        LoadStep(
            label="rate 4/s",
            rate=4.0,
            concurrency=None,
            requests=100,
            completed=100,
            failed=0,
            failures=(),
            duration_s=25.5,
            input_words=12_800,
            output_tokens=12_800,
            token_source="usage",
            latencies=_latencies(1.0),
            good=97,
        ),
        LoadStep(
            label="rate inf",
            rate=math.inf,
            concurrency=None,
            requests=100,
            completed=98,
            failed=2,
            failures=(
                FailureCount("HTTP 500", 1, HOSTILE_DETAIL),
                FailureCount("timed out", 1, "no complete answer within 300 s"),
            ),
            duration_s=9.75,
            input_words=12_544,
            output_tokens=12_544,
            token_source="usage",
            latencies=_latencies(3.5),
            good=40,
        ),
        LoadStep(
            label="concurrency 8",
            rate=None,
            concurrency=8,
            requests=100,
            completed=3,
            failed=0,
            failures=(),
            duration_s=0.5,
            input_words=384,
            output_tokens=0,
            token_source="none",
            latencies=(("ttft", None), ("tpot", None), ("itl", None), ("e2e", None)),
            good=0,
            complete=False,
        ),
    )
    return ServeBenchResult(
        url="http://gpu-box:8000",
        model=HOSTILE_MODEL,
        endpoint="completions",
        prompt_source="made from seed 0, input 128 words (about 1.3 tokens a word; no tokenizer), "
        "output 128 tokens (max_tokens)",
        prompts=100,
        steps=steps,
        slo_ms=(("ttft", 500.0), ("tpot", 50.0)),
        max_failure_rate=0.01,
        notes=("interrupted: the figures cover only the requests answered before it",),
        complete=False,
    )


def sample_serve_verify() -> ServeVerifyResult:
    """A ROCm server that differs beyond the noise floor, with one failed request."""
    return ServeVerifyResult(
        url_a="http://cuda-box:8000",
        url_b="http://rocm-box:8000/v1",
        model=HOSTILE_MODEL,
        endpoint="chat",
        top_k=5,
        with_logprobs=True,
        prompts=(
            PromptDivergence(0, 32, 32, None, 1.0, 0.00012),
            PromptDivergence(1, 32, 32, 17, 0.9625, 0.0421),
            PromptDivergence(2, 32, 30, 4, 0.85, 0.1875),
        ),
        cross=PairSummary(3, 1, 0.9375, 0.0401, 0.9),
        noise_a=PairSummary(3, 3, 1.0, 0.0, 0.0),
        noise_b=PairSummary(3, 3, 0.99, 0.0002, 0.004),
        kl_margin=0.01,
        failures=(("B2", 3, "HTTP 500: " + HOSTILE_DETAIL),),
        notes=("a note with <markup> and [brackets]",),
    )
