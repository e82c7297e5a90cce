"""A small reranking service: a fine-tuned cross-encoder with a fused softmax kernel."""
