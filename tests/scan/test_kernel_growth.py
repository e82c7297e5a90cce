"""scan's kernel scanner on adversarial input: time grows linearly with the input's size."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# The shapes of benchmarks/lexer_adversarial.py, which times them up to 1 MB against a bound.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import lexer_adversarial


@pytest.mark.parametrize("shape", list(lexer_adversarial.SHAPES))
def test_kernel_scanning_time_grows_linearly_on_adversarial_input(shape: str) -> None:
    # the whole kernel scanner on a .cu file, every GP3xx rule enabled
    size, at_n, at_2n = lexer_adversarial.growth(
        lexer_adversarial.runner("scan"), lexer_adversarial.SHAPES[shape]
    )
    # the time at 2N is under 3 times the time at N (a quadratic path gives 4)
    assert at_2n < max(3 * at_n, 0.001), f"{size:,} chars: {at_n:.4f} s, twice: {at_2n:.4f} s"
