"""``verify serve``: the same prompts, at temperature 0, to two servers, each asked twice.

Per prompt: the first token position where server A's and server B's answers differ. Over the
common prefix (the tokens before that position, where both saw the same context): the share of
top-k tokens both list, and an estimate of the KL divergence KL(A || B) per token.

**The KL estimate.** A server gives only its top-k logprobs per position, not the whole
distribution. At each position the two top-k lists are put on their union U of tokens. A token
of U that one side did not list gets, on that side, an equal share of that side's unlisted mass
(1 minus the sum of its listed probabilities) — capped at its smallest listed probability, since
an unlisted token cannot be likelier than a listed one, and at least ``KL_FLOOR`` so the ratio
stays finite. Each side is then renormalised over U and KL(A || B) = sum over U of
p_A log(p_A / p_B), in nats. It is an estimate: it sees only what the top-k lists show, and is
0 when both lists carry the same probabilities.

**The noise floor.** Each server answers every prompt twice; A against A and B against B show
how much a server differs from itself (batching and non-deterministic kernels make even
temperature 0 vary). A and B differ *beyond the noise floor* when fewer prompts are identical
than in the noisier rerun, or their mean KL exceeds the noisier rerun's plus a margin.

A server that answers without logprobs leaves tokens only: the answers' stream pieces are
compared, and no top-k agreement or KL is given.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from dataclasses import dataclass, field

from gpuport.serving.client import Completion, Request, Target, stream_completion
from gpuport.serving.load import new_client
from gpuport.serving.prompts import Prompt
from gpuport.serving.results import PairSummary, PromptDivergence, ServeVerifyResult

# The least probability a token missing from a top-k list is given (keeps the log finite).
KL_FLOOR = 1e-6
SIDES = ("a", "b")
RUNS = (1, 2)


def _probabilities(top: tuple[tuple[str, float], ...]) -> dict[str, float]:
    """A top-k list as token → probability; a token listed twice adds up."""
    probs: dict[str, float] = {}
    for token, logprob in top:
        probs[token] = probs.get(token, 0.0) + math.exp(min(logprob, 0.0))
    return probs


def _on_union(probs: dict[str, float], union: list[str]) -> list[float]:
    listed = sum(probs.values())
    missing = [token for token in union if token not in probs]
    fill = 0.0
    if missing:
        leftover = max(1.0 - listed, 0.0) / len(missing)
        fill = max(min(leftover, min(probs.values(), default=1.0)), KL_FLOOR)
    values = [max(probs.get(token, fill), KL_FLOOR) for token in union]
    total = sum(values)
    return [value / total for value in values]


def kl_topk(top_a: tuple[tuple[str, float], ...], top_b: tuple[tuple[str, float], ...]) -> float:
    """KL(A || B) in nats from two top-k lists, by the estimator in this module's docstring."""
    probs_a, probs_b = _probabilities(top_a), _probabilities(top_b)
    union = sorted(set(probs_a) | set(probs_b))
    if not union:
        return 0.0
    p = _on_union(probs_a, union)
    q = _on_union(probs_b, union)
    return max(sum(pa * math.log(pa / qb) for pa, qb in zip(p, q, strict=True)), 0.0)


def topk_overlap(
    top_a: tuple[tuple[str, float], ...], top_b: tuple[tuple[str, float], ...]
) -> float:
    tokens_a, tokens_b = {token for token, _ in top_a}, {token for token, _ in top_b}
    size = max(len(tokens_a), len(tokens_b))
    return len(tokens_a & tokens_b) / size if size else 1.0


@dataclass(frozen=True, slots=True)
class AnswerComparison:
    identical: bool
    first_difference: int | None
    topk_agreement: float | None  # mean over the common prefix
    kls: tuple[float, ...]  # one per position of the common prefix
    # The same text in other token strings (say, byte-level "Ġthe" against " the"): the two
    # servers' tokenizers spell tokens differently, so their top-k lists cannot be matched.
    spelled_differently: bool = False


def compare_answers(a: Completion, b: Completion, with_logprobs: bool) -> AnswerComparison:
    """Two answers to one prompt, token by token."""
    if with_logprobs:
        tokens_a, tokens_b = a.tokens, b.tokens
    else:
        tokens_a, tokens_b = a.pieces, b.pieces
    # Without logprobs, streams may cut the same text into different chunks: compare the text.
    identical = tokens_a == tokens_b if with_logprobs else a.text == b.text
    if with_logprobs and not identical and a.text == b.text and a.text:
        return AnswerComparison(True, None, None, (), spelled_differently=True)
    first = None
    if not identical:
        common = min(len(tokens_a), len(tokens_b))
        first = next((i for i in range(common) if tokens_a[i] != tokens_b[i]), common)
    prefix = min(len(tokens_a), len(tokens_b)) if first is None else first
    if not with_logprobs:
        return AnswerComparison(identical, first, None, ())
    pairs = [
        (sa.top, sb.top)
        for sa, sb in zip(a.steps[:prefix], b.steps[:prefix], strict=False)
        if sa.top and sb.top
    ]
    agreement = sum(topk_overlap(x, y) for x, y in pairs) / len(pairs) if pairs else None
    return AnswerComparison(identical, first, agreement, tuple(kl_topk(x, y) for x, y in pairs))


def summarize_pair(comparisons: list[AnswerComparison]) -> PairSummary:
    agreements = [c.topk_agreement for c in comparisons if c.topk_agreement is not None]
    kls = [kl for c in comparisons for kl in c.kls]
    return PairSummary(
        prompts=len(comparisons),
        identical=sum(1 for c in comparisons if c.identical),
        topk_agreement=sum(agreements) / len(agreements) if agreements else None,
        mean_kl=sum(kls) / len(kls) if kls else None,
        max_kl=max(kls) if kls else None,
    )


@dataclass(frozen=True, slots=True)
class VerifySettings:
    target_a: Target
    target_b: Target
    prompts: tuple[Prompt, ...]
    top_k: int = 5
    concurrency: int = 4
    kl_margin: float = 0.01
    notes: tuple[str, ...] = ()


@dataclass
class VerifyRecorder:
    """Every answer as it comes in, keyed by (side, run, prompt index)."""

    settings: VerifySettings
    answers: dict[tuple[str, int, int], Completion] = field(default_factory=dict)

    def result(self, complete: bool = True) -> ServeVerifyResult:
        return summarize_verify(self.settings, self.answers, complete)


def _pairs(
    answers: dict[tuple[str, int, int], Completion],
    first: tuple[str, int],
    second: tuple[str, int],
    count: int,
) -> list[tuple[int, Completion, Completion]]:
    pairs = []
    for index in range(count):
        x, y = answers.get((*first, index)), answers.get((*second, index))
        if x is not None and y is not None and x.ok and y.ok:
            pairs.append((index, x, y))
    return pairs


def summarize_verify(
    settings: VerifySettings,
    answers: dict[tuple[str, int, int], Completion],
    complete: bool = True,
) -> ServeVerifyResult:
    """The comparison of what both servers answered (failed requests listed, left out)."""
    count = len(settings.prompts)
    good = [answer for answer in answers.values() if answer.ok]
    with_logprobs = bool(good) and all(answer.steps for answer in good)
    notes = list(settings.notes)
    for side in SIDES:
        side_good = [a for (s, _, _), a in answers.items() if s == side and a.ok]
        if side_good and not all(answer.steps for answer in side_good):
            notes.append(
                f"server {side.upper()} answered without logprobs: tokens compared only "
                "(no top-k agreement or KL)"
            )
    cross_pairs = _pairs(answers, ("a", 1), ("b", 1), count)
    cross = [compare_answers(x, y, with_logprobs) for _, x, y in cross_pairs]
    spelled = sum(1 for c in cross if c.spelled_differently)
    if spelled:
        notes.append(
            f"{spelled} prompt(s) came back as the same text in differently spelled tokens (the "
            "servers' tokenizers differ?): counted identical by their text, without top-k "
            "agreement or KL"
        )
    noise = {
        side: summarize_pair(
            [
                compare_answers(x, y, with_logprobs)
                for _, x, y in _pairs(answers, (side, 1), (side, 2), count)
            ]
        )
        for side in SIDES
    }
    prompts = tuple(
        PromptDivergence(
            index=index,
            tokens_a=len(x.tokens if with_logprobs else x.pieces),
            tokens_b=len(y.tokens if with_logprobs else y.pieces),
            first_difference=c.first_difference,
            topk_agreement=c.topk_agreement,
            mean_kl=sum(c.kls) / len(c.kls) if c.kls else None,
        )
        for (index, x, y), c in zip(cross_pairs, cross, strict=True)
    )
    failures = tuple(
        (f"{side.upper()}{run}", index, f"{answer.reason}: {answer.detail}".rstrip(": "))
        for (side, run, index), answer in sorted(answers.items())
        if not answer.ok
    )
    if not complete:
        notes.append("interrupted: only the prompts answered before it are compared")
    return ServeVerifyResult(
        url_a=settings.target_a.base_url,
        url_b=settings.target_b.base_url,
        model=settings.target_a.model,
        endpoint=settings.target_a.endpoint.value,
        top_k=settings.top_k,
        with_logprobs=with_logprobs,
        prompts=prompts,
        cross=summarize_pair(cross),
        noise_a=noise["a"] if noise["a"].prompts else None,
        noise_b=noise["b"] if noise["b"].prompts else None,
        kl_margin=settings.kl_margin,
        failures=failures,
        notes=tuple(notes),
        complete=complete,
    )


async def run_verify(
    settings: VerifySettings,
    recorder: VerifyRecorder,
    on_answer: Callable[[Completion], None] | None = None,
) -> ServeVerifyResult:
    """Both servers, each twice, every prompt at temperature 0 with top-k logprobs."""
    gates = {side: asyncio.Semaphore(settings.concurrency) for side in SIDES}
    targets = {"a": settings.target_a, "b": settings.target_b}

    async with new_client(settings.target_a) as client:

        async def one(side: str, run: int, index: int, prompt: Prompt) -> None:
            request = Request(
                prompt.text, prompt.max_tokens, temperature=0.0, top_logprobs=settings.top_k
            )
            async with gates[side]:
                answer = await stream_completion(client, targets[side], request)
            recorder.answers[(side, run, index)] = answer
            if on_answer is not None:
                on_answer(answer)

        for run in RUNS:  # the second run after the first: a rerun, not a concurrent twin
            await asyncio.gather(
                *(
                    one(side, run, index, prompt)
                    for side in SIDES
                    for index, prompt in enumerate(settings.prompts)
                )
            )
    return recorder.result()
