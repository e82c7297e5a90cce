"""The streaming client against the fake server: what each kind of answer becomes."""

from __future__ import annotations

import asyncio

import pytest
from fake_server import FakeServer, answer_tokens, closed_port

from gpuport.serving.client import (
    Completion,
    Endpoint,
    Request,
    Target,
    UrlError,
    endpoint_url,
    payload,
    stream_completion,
)
from gpuport.serving.load import new_client

PROMPT = "0: the model"


def ask(
    url: str,
    endpoint: Endpoint = Endpoint.COMPLETIONS,
    *,
    timeout: float = 5.0,
    temperature: float | None = None,
    top_logprobs: int = 0,
) -> Completion:
    target = Target(url, "tiny", endpoint, timeout_s=timeout)
    request = Request(PROMPT, 5, temperature=temperature, top_logprobs=top_logprobs)

    async def run() -> Completion:
        async with new_client(target) as client:
            return await stream_completion(client, target, request)

    return asyncio.run(run())


@pytest.mark.parametrize("endpoint", list(Endpoint))
def test_a_normal_answer_streams_text_with_the_servers_token_count(
    server: FakeServer, endpoint: Endpoint
) -> None:
    answer = ask(server.url("normal"), endpoint)
    assert answer.ok, answer.reason
    assert answer.pieces == tuple(answer_tokens(PROMPT, 5, "normal"))
    assert answer.output_tokens == 5 and answer.token_source == "usage"
    assert answer.prompt_tokens == 3  # the fake counts words
    assert answer.ttft_s is not None and 0 < answer.ttft_s <= answer.e2e_s
    assert len(answer.chunk_times) == 5
    assert answer.steps == ()  # no logprobs asked for


@pytest.mark.parametrize("endpoint", list(Endpoint))
def test_logprobs_are_read_in_either_endpoints_shape(
    server: FakeServer, endpoint: Endpoint
) -> None:
    answer = ask(server.url("normal"), endpoint, temperature=0.0, top_logprobs=3)
    assert [step.token for step in answer.steps] == list(answer.pieces)
    first = answer.steps[0]
    assert first.logprob == -0.2
    assert len(first.top) == 3 and first.top[0] == (first.token, -0.2)


def test_without_usage_the_tokens_are_counted_from_the_chunks(server: FakeServer) -> None:
    answer = ask(server.url("nousage"))
    assert answer.ok
    assert answer.output_tokens == 5 and answer.token_source == "chunks"


@pytest.mark.parametrize(
    ("mode", "reason", "detail"),
    [
        ("failing", "HTTP 500", "the model fell over"),
        ("malformed", "malformed SSE", "not JSON: {not json"),
        ("disconnect", "dropped mid-stream", ""),
        ("notstream", "malformed SSE", "no data: lines (application/json)"),
        ("streamerror", "error in stream", "out of KV cache"),
    ],
)
def test_a_faulty_server_gives_a_failed_answer_with_its_reason(
    server: FakeServer, mode: str, reason: str, detail: str
) -> None:
    answer = ask(server.url(mode))
    assert not answer.ok
    assert answer.reason == reason
    assert detail in answer.detail


def test_a_drop_mid_stream_keeps_what_had_arrived(server: FakeServer) -> None:
    answer = ask(server.url("disconnect"))
    assert answer.pieces == tuple(answer_tokens(PROMPT, 2, "normal"))


def test_a_server_that_says_nothing_times_out(server: FakeServer) -> None:
    answer = ask(server.url("timeout"), timeout=0.2)
    assert not answer.ok and answer.reason == "timed out"
    assert answer.e2e_s < 5


def test_a_closed_port_is_a_refused_connection() -> None:
    answer = ask(f"http://127.0.0.1:{closed_port()}")
    assert not answer.ok and answer.reason == "connection refused"


def test_the_api_key_is_a_bearer_token_and_not_in_the_repr() -> None:
    target = Target("http://h", "m", api_key="sk-secret")
    assert target.headers() == {"Authorization": "Bearer sk-secret"}
    assert "sk-secret" not in repr(target)
    assert Target("http://h", "m").headers() == {}


def test_the_payload_asks_for_usage_and_logprobs_per_endpoint() -> None:
    request = Request("hi", 7, temperature=0.0, top_logprobs=4)
    body = payload(Target("http://h", "m"), request)
    assert body["prompt"] == "hi" and body["logprobs"] == 4 and body["temperature"] == 0.0
    assert body["stream_options"] == {"include_usage": True}
    chat = payload(Target("http://h", "m", Endpoint.CHAT), request)
    assert chat["messages"] == [{"role": "user", "content": "hi"}]
    assert chat["logprobs"] is True and chat["top_logprobs"] == 4


@pytest.mark.parametrize(
    ("base", "expected"),
    [
        ("http://h:8000", "http://h:8000/v1/completions"),
        ("http://h:8000/", "http://h:8000/v1/completions"),
        ("https://h/v1", "https://h/v1/completions"),
        ("http://h/proxy/v1/", "http://h/proxy/v1/completions"),
    ],
)
def test_the_endpoint_goes_under_the_base_url(base: str, expected: str) -> None:
    assert endpoint_url(base, Endpoint.COMPLETIONS) == expected


@pytest.mark.parametrize("base", ["h:8000", "ftp://h", "http://", "http://h/?x=1", ""])
def test_a_url_that_is_not_http_is_refused(base: str) -> None:
    with pytest.raises(UrlError):
        endpoint_url(base, Endpoint.CHAT)


def test_the_cli_knows_every_endpoint() -> None:
    from gpuport.cli.serve import ENDPOINTS

    assert tuple(e.value for e in Endpoint) == ENDPOINTS
