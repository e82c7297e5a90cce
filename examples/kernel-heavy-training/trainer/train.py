"""Train the model with DistributedDataParallel over every GPU of the node."""

import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from trainer import _fused


def main() -> None:
    dist.init_process_group("nccl")
    rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(rank)
    model = torch.nn.TransformerEncoder(
        torch.nn.TransformerEncoderLayer(d_model=1024, nhead=16, batch_first=True), num_layers=24
    ).cuda()
    model = DDP(model, device_ids=[rank])
    params = [p for p in model.parameters()]
    moments = [(torch.zeros_like(p), torch.zeros_like(p)) for p in params]
    for step in range(100_000):
        batch = torch.randn(8, 512, 1024, device="cuda")
        loss = model(batch).pow(2).mean()
        loss.backward()
        for p, (m, v) in zip(params, moments):
            _fused.fused_adam_(p.data, p.grad, m, v, 3e-4)
            p.grad = None
        if step % 1000 == 0 and rank == 0:
            torch.save(model.state_dict(), f"checkpoints/step{step}.pt")


if __name__ == "__main__":
    main()
