"""What ``bench serve`` and ``verify serve`` return: frozen result objects that report/ renders.

Kept apart from the HTTP client so that rendering a stored or hand-made result needs no httpx.
Times are in milliseconds, rates per second; text that came from a server (failure details) is
kept as it came and escaped by each renderer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# The latency figures every load step reports, in the order the reports list them.
LATENCY_METRICS: tuple[str, ...] = ("ttft", "tpot", "itl", "e2e")
LATENCY_NAMES: dict[str, str] = {
    "ttft": "time to first token",
    "tpot": "time per output token",
    "itl": "inter-token latency",
    "e2e": "end-to-end latency",
}


@dataclass(frozen=True, slots=True)
class Percentiles:
    """The spread of one latency over a step's successful requests, in milliseconds."""

    count: int
    mean: float
    p50: float
    p90: float
    p99: float


def percentile(sorted_values: list[float], q: float) -> float:
    """The ``q``-th percentile (0..100) of ``sorted_values``, linearly interpolated (numpy's
    default method), so p50 of an even count is the mean of the middle two."""
    if not sorted_values:
        raise ValueError("no values")
    position = (len(sorted_values) - 1) * q / 100.0
    low = math.floor(position)
    high = min(low + 1, len(sorted_values) - 1)
    fraction = position - low
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * fraction


def spread(values: list[float]) -> Percentiles | None:
    """Mean and p50/p90/p99 of ``values``; ``None`` when there are none."""
    if not values:
        return None
    ordered = sorted(values)
    return Percentiles(
        count=len(ordered),
        mean=sum(ordered) / len(ordered),
        p50=percentile(ordered, 50),
        p90=percentile(ordered, 90),
        p99=percentile(ordered, 99),
    )


@dataclass(frozen=True, slots=True)
class FailureCount:
    """Requests that failed for one reason, with the first one's detail as an example."""

    reason: str
    count: int
    example: str = ""


@dataclass(frozen=True, slots=True)
class LoadStep:
    """One arrival rate (or concurrency) of ``bench serve``: what was sent and how it went."""

    label: str
    rate: float | None  # requests per second; math.inf: all at once; None: concurrency only
    concurrency: int | None
    requests: int  # planned for this step
    completed: int  # answered in full
    failed: int
    failures: tuple[FailureCount, ...]
    duration_s: float
    input_words: int
    output_tokens: int
    token_source: str  # "usage", "chunks" or "mixed": where the output token counts came from
    latencies: tuple[tuple[str, Percentiles | None], ...] = ()  # (metric, spread)
    good: int | None = None  # requests within every --slo limit; None without --slo
    complete: bool = True  # False: stopped (Ctrl-C) before every request was answered

    def latency(self, metric: str) -> Percentiles | None:
        return dict(self.latencies).get(metric)

    @property
    def request_throughput(self) -> float:
        return self.completed / self.duration_s if self.duration_s > 0 else 0.0

    @property
    def output_tokens_per_s(self) -> float:
        return self.output_tokens / self.duration_s if self.duration_s > 0 else 0.0

    @property
    def goodput(self) -> float | None:
        if self.good is None:
            return None
        return self.good / self.duration_s if self.duration_s > 0 else 0.0

    @property
    def failure_rate(self) -> float:
        answered = self.completed + self.failed
        return self.failed / answered if answered else 0.0


@dataclass(frozen=True, slots=True)
class ServeBenchResult:
    """``gpuport bench serve``: one server, one model, a load step per rate or concurrency."""

    url: str
    model: str
    endpoint: str  # "completions" or "chat"
    prompt_source: str  # how the prompts were made, in words
    prompts: int
    steps: tuple[LoadStep, ...]
    slo_ms: tuple[tuple[str, float], ...] = ()  # (metric, limit in ms), from --slo
    max_failure_rate: float = 0.0
    notes: tuple[str, ...] = ()
    complete: bool = True

    @property
    def failed(self) -> int:
        return sum(step.failed for step in self.steps)

    @property
    def failure_rate(self) -> float:
        answered = sum(step.completed + step.failed for step in self.steps)
        return self.failed / answered if answered else 0.0

    @property
    def too_many_failures(self) -> bool:
        return self.failure_rate > self.max_failure_rate


@dataclass(frozen=True, slots=True)
class PairSummary:
    """Two sets of answers to the same prompts compared: how alike they are."""

    prompts: int  # prompts both sides answered
    identical: int  # prompts whose generated tokens are the same throughout
    topk_agreement: float | None  # mean share of top-k tokens in common over the common prefix
    mean_kl: float | None  # mean per-token KL divergence estimate (nats) over the common prefix
    max_kl: float | None

    @property
    def identical_share(self) -> float:
        return self.identical / self.prompts if self.prompts else 0.0


@dataclass(frozen=True, slots=True)
class PromptDivergence:
    """One prompt's answers from server A and server B (each side's first run)."""

    index: int  # 0-based, in prompt order
    tokens_a: int
    tokens_b: int
    first_difference: int | None  # 0-based token position; None: identical
    topk_agreement: float | None
    mean_kl: float | None


@dataclass(frozen=True, slots=True)
class ServeVerifyResult:
    """``gpuport verify serve``: two servers given the same prompts at temperature 0."""

    url_a: str
    url_b: str
    model: str
    endpoint: str
    top_k: int
    with_logprobs: bool  # False: a server answered without logprobs, so tokens only
    prompts: tuple[PromptDivergence, ...]
    cross: PairSummary  # A against B
    noise_a: PairSummary | None  # A against A (its second run)
    noise_b: PairSummary | None
    kl_margin: float
    failures: tuple[tuple[str, int, str], ...] = ()  # (side and run, prompt index, reason)
    notes: tuple[str, ...] = ()
    complete: bool = True

    @property
    def noise_identical_share(self) -> float | None:
        shares = [s.identical_share for s in (self.noise_a, self.noise_b) if s and s.prompts]
        return min(shares) if shares else None

    @property
    def noise_kl(self) -> float | None:
        values = [s.mean_kl for s in (self.noise_a, self.noise_b) if s and s.mean_kl is not None]
        return max(values) if values else None

    @property
    def beyond_noise(self) -> bool:
        """Whether A and B differ more than each server differs from itself.

        Fewer identical prompts than the noisier side's own rerun, or (with logprobs) a mean KL
        above the noisier side's plus ``kl_margin``. Without a noise floor (its requests
        failed) any difference counts.
        """
        if not self.cross.prompts:
            return False
        floor_share = self.noise_identical_share
        if self.cross.identical_share < (1.0 if floor_share is None else floor_share) - 1e-12:
            return True
        if self.with_logprobs and self.cross.mean_kl is not None:
            floor_kl = self.noise_kl or 0.0
            return self.cross.mean_kl > floor_kl + self.kl_margin
        return False
