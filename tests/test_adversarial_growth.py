"""Adversarial input (benchmarks/lexer_adversarial.py's shapes): time grows linearly with size.

Each path gpuport reads C/C++/CUDA through: the lexer (``tokenize``), ``code_only`` (the scan
path), the translator alone, and the whole kernel scanner with every GP3xx rule enabled. The
benchmark times them up to 1 MB against a bound; here the time at 2N is under 3 times the time
at N (a quadratic path gives 4).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import lexer_adversarial


@pytest.mark.parametrize("path", ["tokenize", "code_only", "translate", "scan"])
@pytest.mark.parametrize("shape", list(lexer_adversarial.SHAPES))
def test_time_grows_linearly_on_adversarial_input(shape: str, path: str) -> None:
    size, at_n, at_2n = lexer_adversarial.growth(
        lexer_adversarial.runner(path), lexer_adversarial.SHAPES[shape]
    )
    # Under 10 ms at twice the largest size tried (256K chars), a ratio is timer noise; the
    # quadratic paths this guards against took seconds there (lexer_adversarial.md).
    assert at_2n < max(3 * at_n, 0.01), f"{size:,} chars: {at_n:.4f} s, twice: {at_2n:.4f} s"
