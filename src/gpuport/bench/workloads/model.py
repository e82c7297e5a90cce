"""A Llama-shaped decoder built in code with random weights: no download, no user code.

The shape comes from one of plan's presets (plan/presets/, the published config.json of a
model) or, on the CPU, from a tiny built-in one. RMSNorm, rotary embeddings, grouped-query
attention through ``scaled_dot_product_attention``, a SwiGLU MLP and an untied output head:
the layout whose decode speed ``gpuport plan`` models.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from gpuport.plan.model_spec import find_preset, spec_from_preset


class UnknownModel(ValueError):
    """The preset named with ``--model`` is not one of plan's presets."""


@dataclass(frozen=True, slots=True)
class Shape:
    name: str
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    vocab: int

    def params(self) -> int:
        attention = self.hidden * self.head_dim * (2 * self.heads + 2 * self.kv_heads)
        mlp = 3 * self.hidden * self.intermediate
        return self.layers * (attention + mlp + 2 * self.hidden) + 2 * self.vocab * self.hidden

    def matmul_params(self) -> int:
        """Parameters a token multiplies with (the embedding is a look-up)."""
        return self.params() - self.vocab * self.hidden


# Small enough for a quick run on a laptop CPU, Llama-shaped (GQA 2:1, SwiGLU 8/3 width).
TINY = Shape("tiny (built in)", 256, 4, 4, 2, 64, 688, 8192)
SMALL = Shape("small (built in)", 512, 8, 8, 4, 64, 1376, 16384)
GPU_PRESET = "llama-3.2-1b"


def shape_for(model: str | None, on_gpu: bool, quick: bool) -> Shape:
    """The shape ``--model`` names, or the default for the device."""
    if model is None:
        if on_gpu:
            model = GPU_PRESET
        else:
            return TINY if quick else SMALL
    if model in ("tiny", "small"):
        return TINY if model == "tiny" else SMALL
    preset = find_preset(model)
    if preset is None:
        raise UnknownModel(f"unknown model preset {model!r}; see `gpuport kb` or plan/presets")
    spec = spec_from_preset(preset)
    if spec.mla is not None or spec.moe is not None:
        raise UnknownModel(f"{model}: the decode workload builds dense models only (no MoE/MLA)")
    return Shape(
        spec.name,
        spec.hidden_size,
        spec.num_layers,
        spec.num_heads,
        spec.num_kv_heads,
        spec.head_dim,
        spec.intermediate_size,
        spec.vocab_size,
    )


class Decoder:
    """The model's forward pass over plain weight tensors (``torch.nn.functional`` only).

    No ``nn.Module``: a handful of named tensors is all a benchmark needs, and the training
    step hands :meth:`parameters` to AdamW as a module would.
    """

    def __init__(self, torch: Any, shape: Shape, device: str, dtype: Any) -> None:
        self.torch, self.shape = torch, shape
        h, d = shape.hidden, shape.head_dim

        def weight(rows: int, cols: int) -> Any:
            scale = 1.0 / math.sqrt(cols)
            return (torch.randn(rows, cols, device=device) * scale).to(dtype)

        def ones() -> Any:
            return torch.ones(h, device=device, dtype=dtype)

        self.embed = weight(shape.vocab, h)
        self.layers = [
            {
                "norm1": ones(),
                "norm2": ones(),
                "q": weight(shape.heads * d, h),
                "kv": weight(2 * shape.kv_heads * d, h),
                "o": weight(h, shape.heads * d),
                "gate_up": weight(2 * shape.intermediate, h),
                "down": weight(h, shape.intermediate),
            }
            for _ in range(shape.layers)
        ]
        self.norm = ones()
        self.head = weight(shape.vocab, h)

    def parameters(self) -> list[Any]:
        return [self.embed, self.norm, self.head] + [
            w for layer in self.layers for w in layer.values()
        ]

    def requires_grad_(self) -> Decoder:
        for w in self.parameters():
            w.requires_grad_(True)
        return self

    def _rope(self, x: Any, positions: Any) -> Any:
        torch = self.torch
        half = x.shape[-1] // 2
        freqs = 1.0 / (10000.0 ** (torch.arange(half, device=x.device, dtype=torch.float32) / half))
        angles = positions.to(torch.float32)[:, None] * freqs[None, :]
        cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
        x1, x2 = x[..., :half], x[..., half:]
        return torch.cat((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)

    def _block(self, w: dict[str, Any], x: Any, positions: Any, cache: Any, start: int) -> Any:
        f = self.torch.nn.functional
        shape = self.shape
        b, t, hidden = x.shape
        d = shape.head_dim
        h = f.rms_norm(x, (hidden,), w["norm1"])
        q = f.linear(h, w["q"]).view(b, t, shape.heads, d).transpose(1, 2)
        k, v = f.linear(h, w["kv"]).view(b, t, 2, shape.kv_heads, d).unbind(2)
        k, v = k.transpose(1, 2), v.transpose(1, 2)
        q, k = self._rope(q, positions), self._rope(k, positions)
        if cache is not None:
            cache[0][:, :, start : start + t] = k
            cache[1][:, :, start : start + t] = v
            k, v = cache[0][:, :, : start + t], cache[1][:, :, : start + t]
        if shape.kv_heads != shape.heads:
            repeat = shape.heads // shape.kv_heads
            k = k.repeat_interleave(repeat, dim=1)
            v = v.repeat_interleave(repeat, dim=1)
        attn = f.scaled_dot_product_attention(q, k, v, is_causal=t > 1)
        x = x + f.linear(attn.transpose(1, 2).reshape(b, t, shape.heads * d), w["o"])
        gate, up = f.linear(f.rms_norm(x, (hidden,), w["norm2"]), w["gate_up"]).chunk(2, dim=-1)
        return x + f.linear(f.silu(gate) * up, w["down"])

    def __call__(self, tokens: Any, caches: Any = None, start: int = 0) -> Any:
        f = self.torch.nn.functional
        positions = self.torch.arange(start, start + tokens.shape[1], device=tokens.device)
        x = f.embedding(tokens, self.embed)
        for i, layer in enumerate(self.layers):
            x = self._block(layer, x, positions, None if caches is None else caches[i], start)
        return f.linear(f.rms_norm(x, (x.shape[-1],), self.norm), self.head)


def build(torch: Any, shape: Shape, device: str, dtype: Any) -> Decoder:
    """The model with random weights, on ``device`` in ``dtype``."""
    return Decoder(torch, shape, device, dtype)


def new_caches(torch: Any, shape: Shape, batch: int, length: int, device: str, dtype: Any) -> Any:
    """One (keys, values) pair per layer, room for ``length`` tokens."""
    size = (batch, shape.kv_heads, length, shape.head_dim)
    return [
        (
            torch.zeros(size, device=device, dtype=dtype),
            torch.zeros(size, device=device, dtype=dtype),
        )
        for _ in range(shape.layers)
    ]
