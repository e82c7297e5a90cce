"""A small OpenAI-compatible streaming server for the serving tests (starlette, run by uvicorn).

The behaviour is chosen by the first part of the URL path, so one server plays every part:
``http://127.0.0.1:PORT/<mode>/v1/completions``. Modes:

- ``normal``: streams one token per chunk, ``usage`` when asked, logprobs when asked;
- ``slow``: the same, 30 ms before the first token and 10 ms between tokens;
- ``failing``: HTTP 500 with an OpenAI-style error body;
- ``timeout``: says nothing for 10 s (the client's time-out must fire first);
- ``malformed``: a chunk whose ``data:`` is not JSON;
- ``disconnect``: two tokens, then the connection is dropped;
- ``streamerror``: one token, then an OpenAI-style error object in the stream (vLLM does so);
- ``nousage``: never sends ``usage``;
- ``nologprobs``: never sends logprobs;
- ``notstream``: a whole JSON answer instead of a stream (a server that ignores ``stream``);
- ``perturbed``: logprobs shifted, and on even-numbered prompts the 4th token changed.

A closed port (``closed_port()``) plays the server that refuses connections.

The "model" is a hash: the answer to a prompt is the same every time, so two servers in the
same mode agree token for token and their logprobs exactly.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import socket
import threading
import time
from collections.abc import AsyncIterator
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

VOCAB = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta", "iota", "kappa"]
MAX_TOKENS = 64


def _digest(*parts: object) -> int:
    text = "\x00".join(str(part) for part in parts)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def answer_tokens(prompt: str, count: int, mode: str) -> list[str]:
    tokens = [" " + VOCAB[_digest(prompt, i) % len(VOCAB)] for i in range(count)]
    if mode == "perturbed" and count > 3 and _digest(prompt) % 2 == 0:
        tokens[3] = " changed"
    return tokens


def top_logprobs(prompt: str, position: int, token: str, k: int, mode: str) -> list[list[Any]]:
    """The chosen token first at logprob -0.2, then k-1 others decreasing."""
    others = [t for t in (" " + v for v in VOCAB) if t != token]
    start = _digest(prompt, position, "alt") % len(others)
    picked = [others[(start + j) % len(others)] for j in range(k - 1)]
    values = [-0.2] + [-2.0 - j for j in range(k - 1)]
    if mode == "perturbed":
        values = [-0.6] + [-1.2 - 0.5 * j for j in range(k - 1)]
    return [[tok, val] for tok, val in zip([token, *picked], values, strict=True)]


def _chunk(body: dict[str, Any], token: str, position: int, mode: str, chat: bool) -> str:
    prompt = _prompt_of(body)
    k = _top_k(body, chat)
    choice: dict[str, Any] = {"index": 0, "finish_reason": None}
    if chat:
        choice["delta"] = {"content": token}
    else:
        choice["text"] = token
    if k and mode != "nologprobs":
        top = top_logprobs(prompt, position, token, k, mode)
        if chat:
            choice["logprobs"] = {
                "content": [
                    {
                        "token": token,
                        "logprob": top[0][1],
                        "top_logprobs": [{"token": t, "logprob": v} for t, v in top],
                    }
                ]
            }
        else:
            choice["logprobs"] = {
                "tokens": [token],
                "token_logprobs": [top[0][1]],
                "top_logprobs": [{t: v for t, v in top}],
            }
    return "data: " + json.dumps({"id": "x", "object": "chunk", "choices": [choice]}) + "\n\n"


def _prompt_of(body: dict[str, Any]) -> str:
    if "messages" in body:
        return str(body["messages"][-1]["content"])
    return str(body.get("prompt", ""))


def _top_k(body: dict[str, Any], chat: bool) -> int:
    if chat:
        return int(body.get("top_logprobs") or 0) if body.get("logprobs") else 0
    value = body.get("logprobs")
    return int(value) if isinstance(value, int) else 0


async def _stream(body: dict[str, Any], mode: str, chat: bool) -> AsyncIterator[str]:
    count = min(int(body.get("max_tokens", 8)), MAX_TOKENS)
    tokens = answer_tokens(_prompt_of(body), count, mode)
    if mode == "timeout":
        await asyncio.sleep(10)
    if mode == "slow":
        await asyncio.sleep(0.03)
    for position, token in enumerate(tokens):
        if mode == "disconnect" and position == 2:
            raise ConnectionResetError("dropped on purpose")
        if mode == "streamerror" and position == 1:
            yield 'data: {"error": {"message": "out of KV cache", "code": 500}}\n\n'
            return
        if mode == "malformed" and position == 1:
            yield "data: {not json\n\n"
            continue
        yield _chunk(body, token, position, mode, chat)
        if mode == "slow":
            await asyncio.sleep(0.01)
    finish = {"index": 0, "finish_reason": "length"}
    finish.update({"delta": {}} if chat else {"text": ""})
    yield "data: " + json.dumps({"id": "x", "choices": [finish]}) + "\n\n"
    wants_usage = bool((body.get("stream_options") or {}).get("include_usage"))
    if wants_usage and mode != "nousage":
        usage = {"prompt_tokens": len(_prompt_of(body).split()), "completion_tokens": count}
        yield "data: " + json.dumps({"id": "x", "choices": [], "usage": usage}) + "\n\n"
    yield "data: [DONE]\n\n"


async def _handle(request: Request) -> Response:
    mode = request.path_params["mode"]
    request.app.state.requests += 1
    chat = request.url.path.endswith("/chat/completions")
    body = await request.json()
    if mode == "failing":
        error = {"error": {"message": "the model fell over", "type": "server_error"}}
        return JSONResponse(error, status_code=500)
    if mode == "notstream":
        return JSONResponse({"choices": [{"index": 0, "text": " alpha", "finish_reason": "stop"}]})
    return StreamingResponse(_stream(body, mode, chat), media_type="text/event-stream")


def app() -> Starlette:
    served = Starlette(
        routes=[
            Route("/{mode}/v1/completions", _handle, methods=["POST"]),
            Route("/{mode}/v1/chat/completions", _handle, methods=["POST"]),
        ]
    )
    served.state.requests = 0  # how many requests it has had, of every mode
    return served


class FakeServer:
    """The app run by uvicorn in a background thread on 127.0.0.1, on a free port."""

    def __init__(self) -> None:
        self.app = app()
        config = uvicorn.Config(
            self.app,
            host="127.0.0.1",
            port=0,
            log_level="critical",
            access_log=False,
            lifespan="off",
            timeout_graceful_shutdown=1,
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> FakeServer:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the test server did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=5)

    @property
    def requests(self) -> int:
        return int(self.app.state.requests)

    @property
    def port(self) -> int:
        sockets = self.server.servers[0].sockets
        return int(sockets[0].getsockname()[1])

    def url(self, mode: str) -> str:
        return f"http://127.0.0.1:{self.port}/{mode}"


def closed_port() -> int:
    """A port nothing listens on: bound, then closed again."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
