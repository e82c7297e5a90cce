#!/bin/sh
# Start vLLM's OpenAI-compatible server: Llama 3.1 70B over two GPUs, up to 64 sequences each.
exec python -m vllm.entrypoints.openai.api_server \
  --model meta-llama/Llama-3.1-70B-Instruct \
  --tensor-parallel-size 2 \
  --max-num-seqs 64 \
  --max-model-len 8192 \
  --port 8000
