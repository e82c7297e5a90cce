"""Goldens of the signature rewrites and clash guards: each tests/corpus/sig_*.cu program's
translation for ROCm 6.4 and 7.2, and every change port records on it, byte for byte.

Regenerate with ``GPUPORT_UPDATE_GOLDENS=1 pytest tests/port/test_signature_goldens.py`` and
review the diff: a golden that moves is a translation that moved.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gpuport.port.translate import translate_source

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "corpus"
GOLDEN_DIR = Path(__file__).resolve().parent / "golden"
PROGRAMS = sorted(p.name for p in CORPUS.glob("sig_*.cu"))
RELEASES = ("6.4", "7.2")  # named, not the default: a new default must not move these


def rendered(program: str, rocm: str) -> str:
    """The translation, then one line per change: where, what became what, and why."""
    text = (CORPUS / program).read_text(encoding="utf-8")
    result = translate_source(program, text, rocm)
    lines = [result.translated if result.translated is not None else text]
    lines.append("// ---- changes (line:column status [family] before -> after: note)")
    for c in result.changes:
        note = f": {c.note}" if c.note else ""
        lines.append(
            f"// {c.line}:{c.column} {c.status.value} [{c.family}] {c.before} -> {c.after}{note}"
        )
    return "\n".join(lines) + "\n"


def test_every_signature_program_has_goldens() -> None:
    assert len(PROGRAMS) >= 8
    expected = {f"{p}.rocm{r}.golden" for p in PROGRAMS for r in RELEASES}
    assert {p.name for p in GOLDEN_DIR.glob("sig_*.golden")} == expected


@pytest.mark.parametrize("rocm", RELEASES)
@pytest.mark.parametrize("program", PROGRAMS)
def test_translation_matches_its_golden(program: str, rocm: str) -> None:
    actual = rendered(program, rocm)
    path = GOLDEN_DIR / f"{program}.rocm{rocm}.golden"
    if os.environ.get("GPUPORT_UPDATE_GOLDENS") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8", newline="\n")
        return
    assert path.exists(), f"no golden {path.name}: run with GPUPORT_UPDATE_GOLDENS=1"
    assert actual == path.read_text(encoding="utf-8"), (
        f"{path.name} differs; if intended, regenerate with GPUPORT_UPDATE_GOLDENS=1 and review"
    )
