"""Answer generation beside the reranker: the top passages go to a small instruction-tuned LLM."""

import os

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

GENERATOR = os.environ.get("GENERATOR", "meta-llama/Llama-3.1-8B-Instruct")

tokenizer = AutoTokenizer.from_pretrained(GENERATOR)
model = AutoModelForCausalLM.from_pretrained(GENERATOR, torch_dtype=torch.bfloat16, device_map="auto")


def answer(question: str, passages: list[str], max_new_tokens: int = 256) -> str:
    prompt = "\n\n".join(passages) + f"\n\nQuestion: {question}\nAnswer:"
    inputs = tokenizer(prompt, return_tensors="pt").to(model.device)
    with torch.inference_mode():
        output = model.generate(**inputs, max_new_tokens=max_new_tokens)
    return tokenizer.decode(output[0, inputs["input_ids"].shape[1] :], skip_special_tokens=True)
