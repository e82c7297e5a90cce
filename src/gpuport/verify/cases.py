"""The op suite: each case makes its inputs on the CPU from a fixed seed, then computes.

Imports torch: only :mod:`gpuport.verify.run` and the ``verify`` command import this module,
after checking torch is there. Inputs are drawn on the CPU from a generator seeded with the run's
seed and the case's name, so both machines compute on identical inputs (and the inputs are stored
in the reference file too). Weights are inputs, so no case depends on a module's initialisation,
which may change between torch releases.

A case's ``run`` is what both machines compute in the case's dtype; its ``reference`` (``run``
itself unless given) computes the fp64 CPU answer from the same inputs cast to float64.
"""

from __future__ import annotations

import contextlib
import zlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

import torch
import torch.nn.functional as F  # the name every PyTorch user knows
from torch import Tensor

Inputs = Mapping[str, Tensor]
Outputs = dict[str, Tensor]

# How big the tensors are: a scale factor on each case's dimensions. "tiny" is for tests.
SIZES: Mapping[str, int] = {"tiny": 1, "small": 4, "default": 16}

NONDETERMINISTIC_ADD = (
    "non-deterministic on GPUs (atomic adds in any order): last-bit differences between runs "
    "are expected"
)


@dataclass(frozen=True, slots=True)
class Case:
    name: str
    dtype: torch.dtype
    make_inputs: Callable[[torch.Generator, int, torch.dtype], dict[str, Tensor]]
    run: Callable[[Inputs], Outputs]
    reference: Callable[[Inputs], Outputs] | None = None
    # Why this case cannot run on `device` with this torch, or None when it can.
    unavailable: Callable[[str], str | None] | None = None
    nondeterministic: str = ""

    @property
    def dtype_name(self) -> str:
        return str(self.dtype).removeprefix("torch.")


def case_generator(seed: int, name: str) -> torch.Generator:
    """A CPU generator for one case: the run's seed and the case's name, nothing else."""
    return torch.Generator(device="cpu").manual_seed(seed * 1_000_003 + zlib.crc32(name.encode()))


def make_case_inputs(case: Case, seed: int, size: str) -> dict[str, Tensor]:
    return case.make_inputs(case_generator(seed, case.name), SIZES[size], case.dtype)


def _randn(gen: torch.Generator, *shape: int, dtype: torch.dtype, scale: float = 1.0) -> Tensor:
    # Drawn in float32 and rounded to the case's dtype, so every dtype sees the same values.
    return (torch.randn(*shape, generator=gen, dtype=torch.float32) * scale).to(dtype)


# --- the operations --------------------------------------------------------------------------


def _matmul_inputs(gen: torch.Generator, m: int, dtype: torch.dtype) -> dict[str, Tensor]:
    n = 16 * m
    return {"a": _randn(gen, n, n, dtype=dtype), "b": _randn(gen, n, n, dtype=dtype)}


def _matmul(x: Inputs) -> Outputs:
    return {"out": x["a"] @ x["b"]}


def _bmm_inputs(gen: torch.Generator, m: int, dtype: torch.dtype) -> dict[str, Tensor]:
    n = 8 * m
    return {"a": _randn(gen, 4, n, 2 * n, dtype=dtype), "b": _randn(gen, 4, 2 * n, n, dtype=dtype)}


def _bmm(x: Inputs) -> Outputs:
    return {"out": torch.bmm(x["a"], x["b"])}


def _conv_inputs(gen: torch.Generator, m: int, dtype: torch.dtype) -> dict[str, Tensor]:
    side = 8 * m
    return {
        "x": _randn(gen, 2, 4, side, side, dtype=dtype),
        "weight": _randn(gen, 8, 4, 3, 3, dtype=dtype, scale=0.3),
        "bias": _randn(gen, 8, dtype=dtype),
    }


def _conv2d(x: Inputs) -> Outputs:
    return {"out": F.conv2d(x["x"], x["weight"], x["bias"], padding=1)}


def _rows_inputs(gen: torch.Generator, m: int, dtype: torch.dtype) -> dict[str, Tensor]:
    hidden = 32 * m
    return {
        "x": _randn(gen, 4 * m, hidden, dtype=dtype, scale=2.0),
        "weight": _randn(gen, hidden, dtype=dtype),
        "bias": _randn(gen, hidden, dtype=dtype),
    }


def _softmax(x: Inputs) -> Outputs:
    return {"out": torch.softmax(x["x"], dim=-1)}


def _layer_norm(x: Inputs) -> Outputs:
    shape = x["x"].shape[-1:]
    return {"out": F.layer_norm(x["x"], shape, x["weight"], x["bias"], eps=1e-5)}


def _rms_norm(x: Inputs) -> Outputs:
    return {"out": F.rms_norm(x["x"], x["x"].shape[-1:], x["weight"], eps=1e-6)}


def _no_rms_norm(device: str) -> str | None:
    return None if hasattr(F, "rms_norm") else "torch.nn.functional.rms_norm needs torch 2.4+"


def _gelu(x: Inputs) -> Outputs:
    return {"out": F.gelu(x["x"])}


def _gelu_tanh(x: Inputs) -> Outputs:
    return {"out": F.gelu(x["x"], approximate="tanh")}


def _silu(x: Inputs) -> Outputs:
    return {"out": F.silu(x["x"])}


def _reductions(x: Inputs) -> Outputs:
    v = x["x"]
    return {"sum": v.sum(dim=-1), "mean": v.mean(dim=-1), "var": v.var(dim=-1)}


def _cumsum(x: Inputs) -> Outputs:
    return {"out": torch.cumsum(x["x"], dim=-1)}


def _scatter_inputs(gen: torch.Generator, m: int, dtype: torch.dtype) -> dict[str, Tensor]:
    rows, width, sources = 8 * m, 16 * m, 64 * m
    return {
        "base": _randn(gen, rows, width, dtype=dtype),
        "src": _randn(gen, sources, width, dtype=dtype),
        "index": torch.randint(0, rows, (sources,), generator=gen),
    }


def _scatter_add(x: Inputs) -> Outputs:
    index = x["index"].unsqueeze(-1).expand_as(x["src"])
    return {"out": x["base"].scatter_add(0, index, x["src"])}


def _index_add(x: Inputs) -> Outputs:
    return {"out": x["base"].index_add(0, x["index"], x["src"])}


def _embedding_inputs(gen: torch.Generator, m: int, dtype: torch.dtype) -> dict[str, Tensor]:
    vocab = 64 * m
    return {
        "weight": _randn(gen, vocab, 32 * m, dtype=dtype),
        "ids": torch.randint(0, vocab, (4, 8 * m), generator=gen),
    }


def _embedding(x: Inputs) -> Outputs:
    return {"out": F.embedding(x["ids"], x["weight"])}


def _attention_inputs(gen: torch.Generator, m: int, dtype: torch.dtype) -> dict[str, Tensor]:
    shape = (2, 4, 8 * m, 16)
    return {name: _randn(gen, *shape, dtype=dtype) for name in ("q", "k", "v")}


def _sdpa(x: Inputs) -> Outputs:
    return {"out": F.scaled_dot_product_attention(x["q"], x["k"], x["v"], is_causal=True)}


# The SDPA backends, by the names torch.nn.attention.SDPBackend gives them.
SDPA_BACKENDS = ("MATH", "FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION")
_SDPA_SHORT = {
    "MATH": "math",
    "FLASH_ATTENTION": "flash",
    "EFFICIENT_ATTENTION": "efficient",
    "CUDNN_ATTENTION": "cudnn",
}


@contextlib.contextmanager
def _only_backend(backend: str) -> Iterator[None]:
    from torch.nn.attention import SDPBackend, sdpa_kernel

    with sdpa_kernel([getattr(SDPBackend, backend)]):
        yield


def _sdpa_with(backend: str) -> Callable[[Inputs], Outputs]:
    def run(x: Inputs) -> Outputs:
        with _only_backend(backend):
            try:
                return _sdpa(x)
            except RuntimeError as exc:
                if "no viable backend" not in str(exc).lower():
                    raise
        raise NotImplementedError(
            f"the {backend} SDPA backend does not take these inputs on {x['q'].device.type}"
        )

    return run


def _sdpa_unavailable(backend: str) -> Callable[[str], str | None]:
    def unavailable(device: str) -> str | None:
        try:
            from torch.nn.attention import SDPBackend
        except ImportError:
            return "torch.nn.attention needs torch 2.3+"
        if not hasattr(SDPBackend, backend):
            return f"this torch has no SDPA backend {backend}"
        return None

    return unavailable


def _block_inputs(gen: torch.Generator, m: int, dtype: torch.dtype) -> dict[str, Tensor]:
    d, seq = 32 * m, 8 * m
    s = d**-0.5
    return {
        "x": _randn(gen, 2, seq, d, dtype=dtype),
        "ln1_weight": 1 + _randn(gen, d, dtype=dtype, scale=0.1),
        "ln1_bias": _randn(gen, d, dtype=dtype, scale=0.1),
        "w_qkv": _randn(gen, 3 * d, d, dtype=dtype, scale=s),
        "w_out": _randn(gen, d, d, dtype=dtype, scale=s),
        "ln2_weight": 1 + _randn(gen, d, dtype=dtype, scale=0.1),
        "ln2_bias": _randn(gen, d, dtype=dtype, scale=0.1),
        "w_up": _randn(gen, 4 * d, d, dtype=dtype, scale=s),
        "w_down": _randn(gen, d, 4 * d, dtype=dtype, scale=(4 * d) ** -0.5),
    }


def _transformer_block(x: Inputs) -> Outputs:
    """A pre-norm block: attention (4 heads, causal) then a GELU MLP, with residuals."""
    h = x["x"]
    batch, seq, d = h.shape
    heads = 4
    a = F.layer_norm(h, (d,), x["ln1_weight"], x["ln1_bias"])
    q, k, v = F.linear(a, x["w_qkv"]).chunk(3, dim=-1)

    def split(t: Tensor) -> Tensor:
        return t.reshape(batch, seq, heads, d // heads).transpose(1, 2)

    attn = F.scaled_dot_product_attention(split(q), split(k), split(v), is_causal=True)
    h = h + F.linear(attn.transpose(1, 2).reshape(batch, seq, d), x["w_out"])
    m = F.layer_norm(h, (d,), x["ln2_weight"], x["ln2_bias"])
    return {"out": h + F.linear(F.gelu(F.linear(m, x["w_up"])), x["w_down"])}


def _build_suite() -> dict[str, Case]:
    cases: list[Case] = []
    for dtype, short in (
        (torch.float32, "fp32"),
        (torch.float16, "fp16"),
        (torch.bfloat16, "bf16"),
    ):
        cases.append(Case(f"matmul[{short}]", dtype, _matmul_inputs, _matmul))
    cases += [
        Case("bmm[fp32]", torch.float32, _bmm_inputs, _bmm),
        Case("bmm[bf16]", torch.bfloat16, _bmm_inputs, _bmm),
        Case("conv2d[fp32]", torch.float32, _conv_inputs, _conv2d),
        Case("softmax[fp32]", torch.float32, _rows_inputs, _softmax),
        Case("layer_norm[fp32]", torch.float32, _rows_inputs, _layer_norm),
        Case("layer_norm[bf16]", torch.bfloat16, _rows_inputs, _layer_norm),
        Case("rms_norm[fp32]", torch.float32, _rows_inputs, _rms_norm, None, _no_rms_norm),
    ]
    for backend in SDPA_BACKENDS:
        cases.append(
            Case(
                f"sdpa[{_SDPA_SHORT[backend]},bf16]",
                torch.bfloat16,
                _attention_inputs,
                _sdpa_with(backend),
                reference=_sdpa,  # the fp64 answer comes from whatever backend takes float64
                unavailable=_sdpa_unavailable(backend),
            )
        )
    cases += [
        Case("gelu[fp32]", torch.float32, _rows_inputs, _gelu),
        Case("gelu_tanh[fp32]", torch.float32, _rows_inputs, _gelu_tanh),
        Case("silu[fp32]", torch.float32, _rows_inputs, _silu),
        Case("silu[bf16]", torch.bfloat16, _rows_inputs, _silu),
        Case("reductions[fp32]", torch.float32, _rows_inputs, _reductions),
        Case("cumsum[fp32]", torch.float32, _rows_inputs, _cumsum),
        Case(
            "scatter_add[fp32]",
            torch.float32,
            _scatter_inputs,
            _scatter_add,
            nondeterministic=NONDETERMINISTIC_ADD,
        ),
        Case(
            "index_add[fp32]",
            torch.float32,
            _scatter_inputs,
            _index_add,
            nondeterministic=NONDETERMINISTIC_ADD,
        ),
        Case("embedding[fp32]", torch.float32, _embedding_inputs, _embedding),
        Case("transformer_block[fp32]", torch.float32, _block_inputs, _transformer_block),
        Case("transformer_block[bf16]", torch.bfloat16, _block_inputs, _transformer_block),
    ]
    return {case.name: case for case in cases}


# The suite, by name, in the order it runs. Tests replace an entry to perturb one case.
SUITE: dict[str, Case] = _build_suite()
