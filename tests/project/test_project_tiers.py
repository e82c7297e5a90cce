"""The name table of project/tiers.py: which tier a folder or file name puts a path in."""

from __future__ import annotations

import pytest

from gpuport.findings import Tier
from gpuport.project.tiers import tier_by_name


@pytest.mark.parametrize(
    ("rel", "tier"),
    [
        # A package's test helpers, named like numpy.testing and torch.testing.
        ("pkg/testing.py", Tier.TESTS),
        ("pkg/testing_utils.py", Tier.TESTS),
        ("pkg/testing/asserts.py", Tier.TESTS),
        ("pkg/testing_ops.py", None),  # only the helper module's own name
        # Bug reproducers and scratch folders: a developer's scripts, run by hand.
        ("notes/racecheck_repro_tma.py", Tier.DEV),
        ("repro_issue_123.py", Tier.DEV),
        ("pkg/kernels/attn_repro.py", Tier.DEV),
        ("repro/hang.py", Tier.DEV),
        ("sandbox/try_fp8.py", Tier.DEV),
        ("playground/x.py", Tier.DEV),
        ("pkg/sandbox/runner.py", None),  # a package's own sandbox module ships
        ("pkg/reproducible_seed.py", None),  # not a reproducer
        ("tests/repro_issue_7.py", Tier.TESTS),  # the folder decides first
        ("test_repro_hang.py", Tier.TESTS),  # a test file before a reproducer
    ],
)
def test_tier_by_name(rel: str, tier: Tier | None) -> None:
    assert tier_by_name(rel) is tier
