"""An OpenAI-compatible streaming client for ``/v1/completions`` and ``/v1/chat/completions``.

One request is one :class:`Completion`: when each piece of text arrived, the text, the tokens'
logprobs where asked for, and how many tokens came out. Token counts come from the server's
``usage`` (asked for with ``stream_options: {"include_usage": true}``, which vLLM, SGLang and
OpenAI honour) and, where a server sends none, from the stream's chunks, one token per chunk
with text (how vLLM, SGLang, TGI and llama.cpp stream); :attr:`Completion.token_source` says
which. A request never raises: a refused connection, an HTTP error, a time-out, malformed SSE
or a stream that stops before ``[DONE]`` is a failed :class:`Completion` with its reason.

Streaming format: https://platform.openai.com/docs/api-reference/completions/create and
https://html.spec.whatwg.org/multipage/server-sent-events.html (read 2026-11-25).
"""

from __future__ import annotations

import asyncio
import enum
import importlib.util
import json
import sys
import time
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, cast
from urllib.parse import urlsplit

import httpx

if "sniffio" not in sys.modules and importlib.util.find_spec("sniffio") is None:
    # httpcore tries `import sniffio` several times per request (each lock it sets up) and falls
    # back to asyncio when it is missing; a failed import is not cached, so every try searches
    # sys.path again (~0.3 ms each, inside the timed request: benchmarks/serve_client.py).
    # None in sys.modules makes the import fail at once, with the same fallback.
    cast("dict[str, ModuleType | None]", sys.modules)["sniffio"] = None

# How much of a server's error text a failure keeps as its example.
DETAIL_CHARS = 160
# How much of an error answer is read to find its message.
MAX_ERROR_BODY = 64 * 1024


class Endpoint(enum.StrEnum):
    COMPLETIONS = "completions"
    CHAT = "chat"

    @property
    def path(self) -> str:
        return "/v1/completions" if self is Endpoint.COMPLETIONS else "/v1/chat/completions"


class UrlError(ValueError):
    """A server URL that is not an http(s) URL with a host."""


def endpoint_url(base: str, endpoint: Endpoint) -> str:
    """The full URL of ``endpoint`` under ``base`` (``http://host:8000`` or ``…/v1``)."""
    parts = urlsplit(base)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UrlError(f"{base!r} is not an http:// or https:// URL with a host")
    if parts.query or parts.fragment:
        raise UrlError(f"{base!r}: give the server's base URL, without ? or #")
    root = base.rstrip("/")
    if root.endswith("/v1"):
        root = root[: -len("/v1")]
    return root + endpoint.path


@dataclass(frozen=True, slots=True)
class Target:
    """Where to send requests and how long to wait."""

    base_url: str
    model: str
    endpoint: Endpoint = Endpoint.COMPLETIONS
    timeout_s: float = 300.0
    api_key: str = field(default="", repr=False)

    @property
    def url(self) -> str:
        return endpoint_url(self.base_url, self.endpoint)

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}


@dataclass(frozen=True, slots=True)
class TokenStep:
    """One generated token with its logprob and the server's top-k alternatives."""

    token: str
    logprob: float | None
    top: tuple[tuple[str, float], ...]


@dataclass(frozen=True, slots=True)
class Completion:
    """The outcome of one streamed request. Times are seconds from the request's start."""

    ok: bool
    reason: str = ""  # why it failed, a short category ("HTTP 500", "timed out")
    detail: str = ""  # the server's words, if any
    started: float = 0.0  # time.perf_counter() when sent
    ttft_s: float | None = None
    e2e_s: float = 0.0
    chunk_times: tuple[float, ...] = ()  # arrival of every chunk with text
    pieces: tuple[str, ...] = ()  # the text of those chunks
    steps: tuple[TokenStep, ...] = ()  # logprobs, when asked for and given
    prompt_tokens: int | None = None
    output_tokens: int = 0
    token_source: str = "chunks"  # "usage": the server's count; "chunks": chunks with text

    @property
    def text(self) -> str:
        return "".join(self.pieces)

    @property
    def tokens(self) -> tuple[str, ...]:
        """The generated tokens: from the logprobs where given, else the stream's pieces."""
        return tuple(step.token for step in self.steps) if self.steps else self.pieces


@dataclass(frozen=True, slots=True)
class Request:
    prompt: str
    max_tokens: int
    temperature: float | None = None
    top_logprobs: int = 0  # ask for this many alternatives per token (0: no logprobs)
    ignore_eos: bool = False  # vLLM's extension: generate max_tokens whatever the model says


def payload(target: Target, request: Request) -> dict[str, Any]:
    """The JSON body of ``request`` for ``target``'s endpoint."""
    body: dict[str, Any] = {
        "model": target.model,
        "max_tokens": request.max_tokens,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if target.endpoint is Endpoint.CHAT:
        body["messages"] = [{"role": "user", "content": request.prompt}]
        if request.top_logprobs:
            body["logprobs"] = True
            body["top_logprobs"] = request.top_logprobs
    else:
        body["prompt"] = request.prompt
        if request.top_logprobs:
            body["logprobs"] = request.top_logprobs
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.ignore_eos:
        body["ignore_eos"] = True
    return body


class _StreamError(Exception):
    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.detail = detail[:DETAIL_CHARS]


@dataclass
class _Accumulator:
    started: float
    ttft_s: float | None = None
    chunk_times: list[float] = field(default_factory=list)
    pieces: list[str] = field(default_factory=list)
    steps: list[TokenStep] = field(default_factory=list)
    usage_prompt: int | None = None
    usage_completion: int | None = None
    events: int = 0  # data: payloads read
    finished: bool = False  # a choice said why it stopped
    done: bool = False  # [DONE] arrived

    def completion(self) -> Completion:
        now = time.perf_counter() - self.started
        counted = self.usage_completion
        return Completion(
            ok=True,
            started=self.started,
            ttft_s=self.ttft_s,
            e2e_s=now,
            chunk_times=tuple(self.chunk_times),
            pieces=tuple(self.pieces),
            steps=tuple(self.steps),
            prompt_tokens=self.usage_prompt,
            output_tokens=len(self.pieces) if counted is None else counted,
            token_source="chunks" if counted is None else "usage",
        )


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _top_pairs(entries: object) -> tuple[tuple[str, float], ...]:
    """Top-k alternatives as (token, logprob), from a chat list or a completions mapping."""
    pairs: list[tuple[str, float]] = []
    if isinstance(entries, dict):
        for token, logprob in entries.items():
            value = _number(logprob)
            if isinstance(token, str) and value is not None:
                pairs.append((token, value))
    elif isinstance(entries, list):
        for entry in entries:
            if isinstance(entry, dict) and isinstance(entry.get("token"), str):
                value = _number(entry.get("logprob"))
                if value is not None:
                    pairs.append((entry["token"], value))
    return tuple(pairs)


def _steps(choice: dict[str, Any], endpoint: Endpoint) -> list[TokenStep]:
    """The logprobs a chunk's choice carries, in either endpoint's shape."""
    logprobs = choice.get("logprobs")
    if not isinstance(logprobs, dict):
        return []
    steps: list[TokenStep] = []
    if endpoint is Endpoint.CHAT or isinstance(logprobs.get("content"), list):
        for entry in logprobs.get("content") or []:
            if isinstance(entry, dict) and isinstance(entry.get("token"), str):
                steps.append(
                    TokenStep(
                        entry["token"],
                        _number(entry.get("logprob")),
                        _top_pairs(entry.get("top_logprobs")),
                    )
                )
        return steps
    tokens = logprobs.get("tokens")
    if not isinstance(tokens, list):
        return []
    values = logprobs.get("token_logprobs")
    tops = logprobs.get("top_logprobs")
    for i, token in enumerate(tokens):
        if not isinstance(token, str):
            continue
        value = _number(values[i]) if isinstance(values, list) and i < len(values) else None
        top = _top_pairs(tops[i]) if isinstance(tops, list) and i < len(tops) else ()
        steps.append(TokenStep(token, value, top))
    return steps


def _take_event(data: str, acc: _Accumulator, endpoint: Endpoint) -> None:
    """Fold one SSE ``data:`` payload into ``acc``."""
    if data.strip() == "[DONE]":
        acc.done = True
        return
    try:
        event = json.loads(data)
    except ValueError:
        raise _StreamError("malformed SSE", f"not JSON: {data}") from None
    if not isinstance(event, dict):
        raise _StreamError("malformed SSE", f"not a JSON object: {data}")
    if "error" in event:
        error = event["error"]
        message = error.get("message") if isinstance(error, dict) else error
        raise _StreamError("error in stream", str(message))
    usage = event.get("usage")
    if isinstance(usage, dict):
        completion_tokens = usage.get("completion_tokens")
        if isinstance(completion_tokens, int) and not isinstance(completion_tokens, bool):
            acc.usage_completion = completion_tokens
        prompt_tokens = usage.get("prompt_tokens")
        if isinstance(prompt_tokens, int) and not isinstance(prompt_tokens, bool):
            acc.usage_prompt = prompt_tokens
    choices = event.get("choices")
    if not isinstance(choices, list):
        if usage is None:
            raise _StreamError("malformed SSE", f"a chunk without choices: {data}")
        return
    for choice in choices:
        if not isinstance(choice, dict):
            raise _StreamError("malformed SSE", f"a choice that is not an object: {data}")
        if endpoint is Endpoint.CHAT:
            delta = choice.get("delta")
            text = delta.get("content") if isinstance(delta, dict) else None
        else:
            text = choice.get("text")
        if isinstance(text, str) and text:
            arrived = time.perf_counter() - acc.started
            if acc.ttft_s is None:
                acc.ttft_s = arrived
            acc.chunk_times.append(arrived)
            acc.pieces.append(text)
        acc.steps.extend(_steps(choice, endpoint))
        if choice.get("finish_reason"):
            acc.finished = True


async def _read_stream(response: httpx.Response, acc: _Accumulator, endpoint: Endpoint) -> None:
    # SSE: events are separated by blank lines; the payload is on `data:` lines (one per event
    # from every OpenAI-compatible server seen); comments (`:`) and other fields are skipped.
    async for line in response.aiter_lines():
        if not line.startswith("data:"):
            continue
        acc.events += 1
        _take_event(line[5:].lstrip(" "), acc, endpoint)
        if acc.done:
            return


def _http_detail(body: bytes) -> str:
    text = body.decode("utf-8", "replace")
    try:
        document = json.loads(text)
    except ValueError:
        return text.strip()
    if isinstance(document, dict):
        error = document.get("error", document.get("detail", document.get("message")))
        if isinstance(error, dict):
            error = error.get("message", error)
        if error is not None:
            return str(error)
    return text.strip()


def _refused(exc: BaseException) -> bool:
    """Whether a connection error was a refusal (httpx keeps the OS error in its chain)."""
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return False
        if isinstance(seen, ConnectionRefusedError) or "refused" in str(seen).lower():
            return True
        seen = seen.__cause__ or seen.__context__
    return False


async def stream_completion(
    client: httpx.AsyncClient, target: Target, request: Request
) -> Completion:
    """Send ``request`` to ``target`` and read its stream to the end; never raises for the
    server's faults (the :class:`Completion` says what went wrong)."""
    started = time.perf_counter()
    acc = _Accumulator(started)

    def failed(reason: str, detail: str = "") -> Completion:
        return Completion(
            ok=False,
            reason=reason,
            detail=" ".join(detail.split())[:DETAIL_CHARS],  # one line, however it came
            started=started,
            ttft_s=acc.ttft_s,
            e2e_s=time.perf_counter() - started,
            chunk_times=tuple(acc.chunk_times),
            pieces=tuple(acc.pieces),
        )

    try:
        async with asyncio.timeout(target.timeout_s):
            async with client.stream(
                "POST", target.url, json=payload(target, request), headers=target.headers()
            ) as response:
                if response.status_code >= 400:
                    body = b""
                    async for piece in response.aiter_bytes():
                        body += piece
                        if len(body) >= MAX_ERROR_BODY:  # enough to say what went wrong
                            break
                    return failed(f"HTTP {response.status_code}", _http_detail(body))
                await _read_stream(response, acc, target.endpoint)
    except _StreamError as exc:
        return failed(exc.reason, exc.detail)
    except TimeoutError:
        return failed("timed out", f"no complete answer within {target.timeout_s:g} s")
    except httpx.TimeoutException as exc:
        return failed("timed out", type(exc).__name__)
    except httpx.ConnectError as exc:
        if _refused(exc):
            return failed("connection refused", f"nothing listens at {target.url}")
        return failed("cannot connect", str(exc) or type(exc).__name__)
    except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
        if acc.pieces or acc.ttft_s is not None:
            return failed("dropped mid-stream", str(exc) or type(exc).__name__)
        return failed("connection dropped", str(exc) or type(exc).__name__)
    except httpx.HTTPError as exc:
        return failed("HTTP client error", f"{type(exc).__name__}: {exc}")
    if not acc.events:
        kind = response.headers.get("content-type", "no content type")
        return failed("malformed SSE", f"an answer with no data: lines ({kind})")
    if not acc.done and not acc.finished:
        return failed("dropped mid-stream", "the stream ended before [DONE]")
    return acc.completion()
