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


def _numbers(item: str, dtype: str, numbers: str) -> tuple[float, float]:
    """``RTOL,ATOL`` (relative first) or named parts ``atol=X`` / ``rtol=Y`` in any order."""
    parts = [part.strip() for part in numbers.split(",")]
    rtol, atol = DEFAULT_TOLERANCES[dtype]
    try:
        if any("=" in part for part in parts):
            named: dict[str, float] = {}
            for part in parts:
                key, _, value = part.partition("=")
                key = key.strip().lower()
                if key not in ("rtol", "atol") or key in named:
                    raise ValueError(key)
                named[key] = float(value)
            rtol, atol = named.get("rtol", rtol), named.get("atol", atol)
        else:
            rtol, atol = (float(part) for part in parts)
    except ValueError:
        raise ToleranceError(
            f"--tolerance {item!r}: expected two numbers, relative first (DTYPE=RTOL,ATOL as "
            "assert_close takes them, e.g. bf16=1.6e-2,1e-5), or named: bf16=atol=1e-3,rtol=2e-2"
        ) from None
    if not all(math.isfinite(x) and x >= 0 for x in (rtol, atol)):
        raise ToleranceError(f"--tolerance {item!r}: RTOL and ATOL must be finite and >= 0")
    return rtol, atol


def parse_tolerances(values: Iterable[str]) -> dict[str, tuple[float, float]]:
    """``["bf16=1.6e-2,1e-5"]`` -> ``{"bfloat16": (0.016, 1e-05)}``: DTYPE=RTOL,ATOL each.

    RTOL comes first, the order ``torch.testing.assert_close`` and ``torch.allclose`` take them;
    ``DTYPE=atol=X,rtol=Y`` names them instead (one left out keeps its default). A dtype given
    twice is an error rather than the last one silently winning.
    """
    chosen: dict[str, tuple[float, float]] = {}
    for value in values:
        for item in value.split(";"):
            item = item.strip()
            if not item:
                continue
            name, sep, numbers = item.partition("=")
            dtype = DTYPE_ALIASES.get(name.strip().lower())
            if not sep or dtype is None:
                known = ", ".join(sorted(set(DTYPE_ALIASES)))
                raise ToleranceError(
                    f"--tolerance {item!r}: expected DTYPE=RTOL,ATOL with DTYPE one of {known}"
                )
            if dtype in chosen:
                raise ToleranceError(f"--tolerance {item!r}: {dtype} is given more than once")
            chosen[dtype] = _numbers(item, dtype, numbers)
    return chosen


def tolerance_for(dtype: str, overrides: Mapping[str, tuple[float, float]]) -> Tolerance:
    """The tolerance of ``dtype`` (a torch dtype's name without ``torch.``)."""
    if dtype in overrides:
        rtol, atol = overrides[dtype]
        return Tolerance(dtype, rtol, atol, overridden=True)
    rtol, atol = DEFAULT_TOLERANCES.get(dtype, (0.0, 0.0))
    return Tolerance(dtype, rtol, atol)
