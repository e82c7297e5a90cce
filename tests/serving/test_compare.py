"""verify serve's comparison: the KL estimate, the first difference, and two real servers."""

from __future__ import annotations

import asyncio
import math

import pytest
from fake_server import FakeServer

from gpuport.serving.client import Completion, Endpoint, Target, TokenStep
from gpuport.serving.compare import (
    VerifyRecorder,
    VerifySettings,
    compare_answers,
    kl_topk,
    run_verify,
    summarize_verify,
    topk_overlap,
)
from gpuport.serving.prompts import LengthDistribution, synthetic_prompts
from gpuport.serving.results import PairSummary, ServeVerifyResult

L = math.log


def test_kl_is_zero_for_the_same_lists_and_exact_without_missing_tokens() -> None:
    same = (("x", L(0.5)), ("y", L(0.3)))
    assert kl_topk(same, same) == 0.0
    a = (("x", L(0.6)), ("y", L(0.4)))
    b = (("x", L(0.4)), ("y", L(0.6)))
    assert kl_topk(a, b) == pytest.approx(0.6 * L(1.5) + 0.4 * L(0.4 / 0.6))


def test_a_token_one_side_did_not_list_gets_that_sides_leftover_mass() -> None:
    a = (("x", L(0.7)), ("y", L(0.2)))  # 0.1 unlisted: z gets it
    b = (("x", L(0.7)), ("z", L(0.2)))  # 0.1 unlisted: y gets it
    assert kl_topk(a, b) == pytest.approx(0.2 * L(2) + 0.1 * L(0.5))


def test_the_floor_keeps_the_estimate_finite_when_nothing_is_left() -> None:
    a = (("x", 0.0),)  # all the mass on x
    b = (("y", 0.0),)
    assert math.isfinite(kl_topk(a, b)) and kl_topk(a, b) > 5


def test_topk_overlap_is_the_shared_share() -> None:
    assert topk_overlap((("x", -1.0), ("y", -2.0)), (("y", -1.0), ("z", -2.0))) == 0.5


def _answer(tokens: list[str], logprobs: bool = True) -> Completion:
    steps = tuple(TokenStep(t, -0.1, ((t, -0.1), ("other", -3.0))) for t in tokens)
    return Completion(ok=True, pieces=tuple(tokens), steps=steps if logprobs else ())


def test_the_first_difference_and_a_shorter_answer() -> None:
    same = compare_answers(_answer(["a", "b"]), _answer(["a", "b"]), True)
    assert same.identical and same.first_difference is None and same.kls == (0.0, 0.0)
    differ = compare_answers(_answer(["a", "b", "c"]), _answer(["a", "x", "c"]), True)
    assert not differ.identical and differ.first_difference == 1 and len(differ.kls) == 1
    shorter = compare_answers(_answer(["a", "b"]), _answer(["a"]), True)
    assert shorter.first_difference == 1


def test_without_logprobs_the_text_decides_whatever_the_chunking() -> None:
    one = Completion(ok=True, pieces=("ab", "c"))
    other = Completion(ok=True, pieces=("a", "bc"))
    assert compare_answers(one, other, False).identical
    assert (
        compare_answers(one, Completion(ok=True, pieces=("ab", "d")), False).first_difference == 1
    )


def _verdict(cross: PairSummary, noise: PairSummary, logprobs: bool = True) -> bool:
    result = ServeVerifyResult(
        "a", "b", "m", "completions", 5, logprobs, (), cross, noise, noise, 0.01
    )
    return result.beyond_noise


def test_beyond_the_noise_floor() -> None:
    clean = PairSummary(4, 4, 1.0, 0.0, 0.0)
    assert not _verdict(clean, clean)
    assert _verdict(PairSummary(4, 3, 1.0, 0.0, 0.0), clean)  # fewer identical
    assert _verdict(PairSummary(4, 4, 1.0, 0.05, 0.1), clean)  # KL above floor + margin
    assert not _verdict(PairSummary(4, 4, 1.0, 0.005, 0.1), clean)  # within the margin
    noisy = PairSummary(4, 3, 0.9, 0.2, 0.5)
    assert not _verdict(PairSummary(4, 3, 0.9, 0.15, 0.4), noisy)  # no worse than a rerun
    assert not _verdict(PairSummary(4, 4, None, None, None), clean, logprobs=False)


def _settings(url_a: str, url_b: str, endpoint: Endpoint = Endpoint.COMPLETIONS) -> VerifySettings:
    prompts = synthetic_prompts(
        4, LengthDistribution("fixed", 3), LengthDistribution("fixed", 6), seed=0
    )
    return VerifySettings(
        target_a=Target(url_a, "tiny", endpoint, timeout_s=5),
        target_b=Target(url_b, "tiny", endpoint, timeout_s=5),
        prompts=tuple(prompts),
        top_k=3,
    )


@pytest.mark.parametrize("endpoint", list(Endpoint))
def test_two_servers_of_the_same_model_agree(
    server: FakeServer, server_b: FakeServer, endpoint: Endpoint
) -> None:
    settings = _settings(server.url("normal"), server_b.url("normal"), endpoint)
    result = asyncio.run(run_verify(settings, VerifyRecorder(settings)))
    assert result.with_logprobs and result.cross.identical == 4
    assert result.cross.mean_kl == 0.0 and result.cross.topk_agreement == 1.0
    assert result.noise_a == result.noise_b == result.cross
    assert not result.beyond_noise


def test_a_server_with_perturbed_logprobs_is_flagged(
    server: FakeServer, server_b: FakeServer
) -> None:
    settings = _settings(server.url("normal"), server_b.url("perturbed"))
    result = asyncio.run(run_verify(settings, VerifyRecorder(settings)))
    assert result.beyond_noise
    assert result.cross.mean_kl is not None and result.cross.mean_kl > 0.1
    assert result.noise_b is not None and result.noise_b.mean_kl == 0.0
    differing = [p for p in result.prompts if p.first_difference is not None]
    assert differing and all(p.first_difference == 3 for p in differing)


def test_a_server_without_logprobs_means_tokens_only_and_says_so(
    server: FakeServer, server_b: FakeServer
) -> None:
    settings = _settings(server.url("normal"), server_b.url("nologprobs"))
    result = asyncio.run(run_verify(settings, VerifyRecorder(settings)))
    assert not result.with_logprobs and result.cross.mean_kl is None
    assert result.cross.identical == 4 and not result.beyond_noise
    assert any("server B answered without logprobs" in note for note in result.notes)


def test_failed_requests_are_listed_and_left_out(server: FakeServer) -> None:
    settings = _settings(server.url("normal"), server.url("failing"))
    result = asyncio.run(run_verify(settings, VerifyRecorder(settings)))
    assert result.cross.prompts == 0 and len(result.failures) == 8
    assert result.failures[0][0] == "B1" and "HTTP 500" in result.failures[0][2]


def test_the_same_text_in_differently_spelled_tokens_counts_as_identical() -> None:
    a = _answer([" the", " cat"])
    b = Completion(
        ok=True,
        pieces=(" the", " cat"),
        steps=tuple(TokenStep(t, -0.1, ((t, -0.1),)) for t in ("Ġthe", "Ġcat")),
    )
    compared = compare_answers(a, b, True)
    assert compared.identical and compared.spelled_differently and compared.kls == ()


def test_differently_spelled_tokens_are_said() -> None:
    settings = _settings("http://a", "http://b")
    plain = _answer([" x"])
    spelled = Completion(ok=True, pieces=(" x",), steps=(TokenStep("Ġx", -0.1, (("Ġx", -0.1),)),))
    answers = {}
    for index in range(len(settings.prompts)):
        for run in (1, 2):
            answers[("a", run, index)] = plain
            answers[("b", run, index)] = spelled
    result = summarize_verify(settings, answers)
    assert result.cross.identical == 4 and not result.beyond_noise
    assert any("differently spelled tokens" in note for note in result.notes)
