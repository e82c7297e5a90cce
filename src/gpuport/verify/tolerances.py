"""Per-dtype tolerances: ``torch.testing.assert_close``'s defaults and ``--tolerance`` overrides.

The defaults are the table in PyTorch's documentation of ``torch.testing.assert_close``
(https://pytorch.org/docs/stable/testing.html, read 2026-11-25): ``rtol``/``atol`` of
float16 1e-3/1e-5, bfloat16 1.6e-2/1e-5, float32 1.3e-6/1e-5, float64 1e-7/1e-7; other types
(integers, bool) must match exactly. Kept here without torch so results render without it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from gpuport.verify.result import Tolerance

# dtype -> (rtol, atol), as assert_close's documentation lists them.
DEFAULT_TOLERANCES: Mapping[str, tuple[float, float]] = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
}

# The short names a user may type after --tolerance.
DTYPE_ALIASES: Mapping[str, str] = {
    "fp16": "float16",
    "half": "float16",
    "float16": "float16",
    "bf16": "bfloat16",
    "bfloat16": "bfloat16",
    "fp32": "float32",
    "float": "float32",
    "float32": "float32",
    "fp64": "float64",
    "double": "float64",
    "float64": "float64",
}


class ToleranceError(ValueError):
    """A ``--tolerance`` value that cannot be read; the message says which and why."""


def parse_tolerances(values: Iterable[str]) -> dict[str, tuple[float, float]]:
    """``["bf16=1.6e-2,1e-5"]`` -> ``{"bfloat16": (0.016, 1e-05)}``: DTYPE=RTOL,ATOL each."""
    chosen: dict[str, tuple[float, float]] = {}
    for value in values:
        for item in value.split(";"):
            if not item.strip():
                continue
            name, sep, numbers = item.partition("=")
            dtype = DTYPE_ALIASES.get(name.strip().lower())
            if not sep or dtype is None:
                known = ", ".join(sorted(set(DTYPE_ALIASES)))
                raise ToleranceError(
                    f"--tolerance {item.strip()!r}: expected DTYPE=RTOL,ATOL with DTYPE one of "
                    f"{known}"
                )
            parts = [part.strip() for part in numbers.split(",")]
            try:
                rtol, atol = (float(part) for part in parts)
            except ValueError:
                raise ToleranceError(
                    f"--tolerance {item.strip()!r}: RTOL,ATOL must be two numbers (1.6e-2,1e-5)"
                ) from None
            if not all(math.isfinite(x) and x >= 0 for x in (rtol, atol)):
                raise ToleranceError(
                    f"--tolerance {item.strip()!r}: RTOL and ATOL must be finite and >= 0"
                )
            chosen[dtype] = (rtol, atol)
    return chosen


def tolerance_for(dtype: str, overrides: Mapping[str, tuple[float, float]]) -> Tolerance:
    """The tolerance of ``dtype`` (a torch dtype's name without ``torch.``)."""
    if dtype in overrides:
        rtol, atol = overrides[dtype]
        return Tolerance(dtype, rtol, atol, overridden=True)
    rtol, atol = DEFAULT_TOLERANCES.get(dtype, (0.0, 0.0))
    return Tolerance(dtype, rtol, atol)
