"""The kernel scanner's per-file constant index answers as one search per name would."""

from __future__ import annotations

import random

import pytest

from gpuport.scan.kernels.constants import Constants, find_constant

# Pieces of #define lines and declarations, and what breaks them: mixed at random, these reach
# the corners (a name inside a longer one, a chain `X = int M = 1;`, CRLF, lone CR, `{v}`).
PIECES = (
    *("M", "XM", "N", " ", "\t", "=", "==", "{", "}", ";", ",", "int ", "unsigned ", "const "),
    *("0xffffffff", "1", "#define ", "\n", "\r\n", "\r", "#", "  #define M ", "$", "(", ")"),
    *("auto ", "long long "),
)


@pytest.mark.parametrize("seed", range(4))
def test_the_index_finds_what_a_search_per_name_finds(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(5000):
        code = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 25)))
        constants = Constants(code)
        for name in ("M", "N", "XM"):
            assert constants.get(name) == find_constant(code, name), (code, name)


def test_a_chained_assignment_hides_the_declaration_inside_it() -> None:
    # a search for `M = ...;` matches from XM's M on to the `;`, over `int M = 1`
    assert Constants("XM = int M = 1;").get("M") is None
    assert Constants("X = int M = 1;").get("M") is not None
