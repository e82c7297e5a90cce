"""Fine-tunes the reranker on (query, passage, label) triples, one node, several GPUs."""

import argparse
import os

import torch
import torch.distributed as dist
from transformers import AutoModelForSequenceClassification, AutoTokenizer

# Ampere and newer: TF32 matmuls are fast and accurate enough for fine-tuning.
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
torch.backends.cudnn.benchmark = True


def pick_dtype() -> torch.dtype:
    major, minor = torch.cuda.get_device_capability()
    if major >= 8:
        return torch.bfloat16
    return torch.float16


def setup_distributed() -> int:
    os.environ.setdefault("NCCL_P2P_DISABLE", "0")
    os.environ["NCCL_IB_DISABLE"] = "1"
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    return local_rank


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="cross-encoder/ms-marco-MiniLM-L-6-v2")
    parser.add_argument("--epochs", type=int, default=1)
    args = parser.parse_args()

    if torch.version.cuda is None:
        raise SystemExit("this trainer needs a CUDA build of PyTorch")
    print(f"CUDA {torch.version.cuda} on {torch.cuda.get_device_name()}")

    rank = setup_distributed()
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForSequenceClassification.from_pretrained(args.model, torch_dtype=pick_dtype())
    model = torch.nn.parallel.DistributedDataParallel(model.cuda(rank), device_ids=[rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    batch = tokenizer(["what is rocm"], ["ROCm is AMD's GPU software stack"], return_tensors="pt")
    for _ in range(args.epochs):
        out = model(**{k: v.cuda(rank) for k, v in batch.items()}, labels=torch.tensor([1]).cuda(rank))
        out.loss.backward()
        optimizer.step()
        optimizer.zero_grad()


if __name__ == "__main__":
    main()
