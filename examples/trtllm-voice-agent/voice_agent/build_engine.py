"""Compile Llama 3.1 8B into a TensorRT-LLM engine tuned for batch 1 and short prompts."""

from tensorrt_llm import BuildConfig, LLM
from tensorrt_llm.llmapi import KvCacheConfig

MODEL = "meta-llama/Llama-3.1-8B-Instruct"


def build(out_dir: str) -> None:
    config = BuildConfig(max_batch_size=1, max_input_len=2048, max_seq_len=4096)
    llm = LLM(model=MODEL, build_config=config, kv_cache_config=KvCacheConfig(free_gpu_memory_fraction=0.9))
    llm.save(out_dir)


if __name__ == "__main__":
    build("engines/llama-3.1-8b")
