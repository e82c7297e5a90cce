"""What every benchmark does with its report: write it under benchmarks/results/ and say where."""

from __future__ import annotations

import sys
from pathlib import Path


def write_results(path: Path, lines: list[str]) -> None:
    """Write the report's ``lines`` to ``path`` (making its folder) and name it on stderr."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines), encoding="utf-8")
    print(f"wrote {path}", file=sys.stderr)
