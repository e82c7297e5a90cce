#!/usr/bin/env bash
# Runs the service on this machine's first GPU.
set -euo pipefail
docker build -t reranker:dev .
docker run --rm --gpus all -p 8000:8000 -e MODEL="${MODEL:-cross-encoder/ms-marco-MiniLM-L-6-v2}" reranker:dev
