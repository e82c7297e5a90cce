"""How far apart two outputs are, in float64, by ``torch.testing.assert_close``'s rule.

An element passes when ``|here - recorded| <= atol + rtol * |recorded|``; NaN never passes and an
infinity passes only against the same infinity (assert_close's defaults, ``equal_nan=False``).
"""

from __future__ import annotations

import torch
from torch import Tensor

from gpuport.verify.result import Closer, OutputComparison, Tolerance

INF = float("inf")


def _distance(a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    """``|a - b|`` in float64 (inf where only one is finite or either is NaN), and where both
    are finite."""
    a, b = a.detach().to("cpu", torch.float64), b.detach().to("cpu", torch.float64)
    finite = torch.isfinite(a) & torch.isfinite(b)
    same_inf = torch.isinf(a) & torch.isinf(b) & (a == b)
    diff = torch.where(finite, (a - b).abs(), torch.zeros_like(a))
    diff = torch.where(finite | same_inf, diff, torch.full_like(a, INF))
    return diff, finite


def _max(t: Tensor) -> float:
    return float(t.max()) if t.numel() else 0.0


def max_error(a: Tensor, b: Tensor) -> float:
    return _max(_distance(a, b)[0])


def compare_output(
    name: str, here: Tensor, recorded: Tensor, reference: Tensor, tolerance: Tolerance
) -> OutputComparison:
    """Compare ``here`` with ``recorded`` (same shape), and both with the fp64 ``reference``."""
    diff, finite = _distance(here, recorded)
    expected = recorded.detach().to("cpu", torch.float64).abs()
    expected = torch.where(finite, expected, torch.zeros_like(expected))
    allowed = torch.where(
        finite, tolerance.atol + tolerance.rtol * expected, torch.zeros_like(expected)
    )
    out = diff > allowed
    nonzero = finite & (expected > 0)
    relative = torch.where(nonzero, diff / torch.where(nonzero, expected, 1.0), 0.0)
    max_rel = INF if bool((~torch.isfinite(diff)).any()) else _max(relative)
    atol_needed = _max((diff - tolerance.rtol * expected).clamp(min=0))
    over = diff > tolerance.atol
    rtol_each = torch.where(
        over,
        torch.where(
            expected > 0, (diff - tolerance.atol) / torch.where(expected > 0, expected, 1.0), INF
        ),
        0.0,
    )
    recorded_error = max_error(recorded, reference)
    here_error = max_error(here, reference)
    if recorded_error == here_error:
        closer = Closer.TIE
    else:
        closer = Closer.HERE if here_error < recorded_error else Closer.RECORDED
    return OutputComparison(
        name=name,
        dtype=str(here.dtype).removeprefix("torch."),
        shape=tuple(here.shape),
        max_abs=_max(diff),
        max_rel=max_rel,
        out_of_tolerance=float(out.double().mean()) if out.numel() else 0.0,
        atol_needed=atol_needed,
        rtol_needed=_max(rtol_each),
        passed=not bool(out.any()),
        recorded_error=recorded_error,
        here_error=here_error,
        closer=closer,
    )
