"""One training step (forward, backward, AdamW) of a small Llama-shaped model: tokens/s and MFU.

Model FLOPs utilisation as PaLM defines it (https://arxiv.org/abs/2204.02311, appendix B):
(6·N + 12·L·H·Q·T) FLOPs per token, N the parameters a token multiplies with, over the
device's dense 16-bit peak. On the CPU there is no peak, so tokens/s only.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpuport.bench.device import Device
from gpuport.bench.store import ResultRecord
from gpuport.bench.timing import TimingPlan, measure
from gpuport.bench.workloads import SuiteOptions, attempt, fraction, skipped
from gpuport.bench.workloads.model import UnknownModel, build, shape_for


def settings(device: Device, quick: bool) -> tuple[int, int]:
    """(batch, sequence length)."""
    if device.is_gpu:
        return (2, 1024) if quick else (4, 2048)
    return (2, 64) if quick else (4, 128)


class TrainingWorkload:
    name = "training"
    summary = "training step (forward, backward, AdamW): tokens/s and MFU"

    def run(self, device: Device, options: SuiteOptions) -> Iterator[ResultRecord]:
        try:
            shape = shape_for(options.model, device.is_gpu, options.quick)
        except UnknownModel as exc:
            yield skipped(self.name, "training step", {"model": options.model or ""}, str(exc))
            return
        batch, seq = settings(device, options.quick)
        dtype_name = "bf16" if device.is_gpu else "fp32"
        params = {"model": shape.name, "dtype": dtype_name, "batch": batch, "seq": seq}

        def step() -> tuple[dict[str, float | None], str]:
            torch = device.torch
            dtype = torch.bfloat16 if device.is_gpu else torch.float32
            model = build(torch, shape, device.name, dtype).requires_grad_()
            optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
            tokens = torch.randint(0, shape.vocab, (batch, seq + 1), device=device.name)
            inputs, targets = tokens[:, :-1], tokens[:, 1:]

            def once() -> None:
                optimizer.zero_grad(set_to_none=True)
                logits = model(inputs)
                loss = torch.nn.functional.cross_entropy(
                    logits.reshape(-1, shape.vocab).float(), targets.reshape(-1)
                )
                loss.backward()
                optimizer.step()

            plan = TimingPlan(warmup=1 if options.quick else 3, repeats=3 if options.quick else 10)
            samples = measure(device, once, plan)
            tokens_per_s = batch * seq / samples.median
            per_token = 6.0 * shape.matmul_params() + 12.0 * shape.layers * shape.heads * (
                shape.head_dim * seq
            )
            tflops = per_token * tokens_per_s / 1e12
            peak = device.peaks.tflops.get(dtype_name)
            return {
                "tokens_per_s": tokens_per_s,
                "step_ms": samples.median * 1000,
                "spread": samples.spread,
                "tflops": tflops,
                "peak_tflops": peak,
                "fraction_of_peak": fraction(tflops, peak),
            }, ""

        yield attempt(device, self.name, "training step", params, step)
        device.empty_cache()
