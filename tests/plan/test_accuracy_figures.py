"""The README's plan accuracy figures are the ones benchmarks/plan_accuracy.md reports."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _reported() -> dict[str, tuple[str, str, str]]:
    """phase -> (rows, median error, before) from plan_accuracy.md's summary table."""
    text = (ROOT / "benchmarks" / "plan_accuracy.md").read_text(encoding="utf-8")
    found = re.findall(r"^\| (decode|prefill) \| (\d+) \| (\d+%) \| (\d+%) \|$", text, re.M)
    return {phase: (rows, after, before) for phase, rows, after, before in found}


def test_the_readme_states_the_validated_errors() -> None:
    reported = _reported()
    assert set(reported) == {"decode", "prefill"}
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## plan:") : readme.index("## How it works")]
    flat = " ".join(section.split())
    for phase, (rows, after, before) in reported.items():
        stated = re.search(rf"\*\*{phase} (\d+%)\*\* \((\d+) rows; [a-z ]*:? ?(\d+%)\)", flat)
        assert stated is not None, f"the README states no {phase} figure"
        assert (stated[2], stated[1], stated[3]) == (rows, after, before), phase
    measured = re.search(
        r"^(\d+) measurements \(measurements.csv\), (\d+) GPUs",
        (ROOT / "benchmarks" / "plan_accuracy.md").read_text(encoding="utf-8"),
        re.M,
    )
    assert measured is not None
    assert f"on {measured[1]} published measurements of {measured[2]} GPUs" in flat
