"""Counts of benchmarks/plan_data/measurements.csv by engine, GPU, phase, source and batch size.

Prints Markdown tables (the ones in README.md's "What is in it" section):

    .venv/bin/python benchmarks/plan_data/counts.py
"""

from __future__ import annotations

import csv
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import urlsplit

CSV_PATH = Path(__file__).resolve().parent / "measurements.csv"


def read_rows(path: Path = CSV_PATH) -> list[dict[str, str]]:
    """Every row of the measurement file as a column -> text mapping."""
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def batch_class(batch: int) -> str:
    """The batch sizes the fit tells apart: one sequence, a few, many, or engine-chosen."""
    if batch == 0:
        return "max load (0)"
    if batch == 1:
        return "1"
    return "2-31" if batch < 32 else ">= 32"


def source_site(url: str) -> str:
    """The site and, for GitHub, the repository a row was read at."""
    parts = urlsplit(url)
    if parts.netloc == "github.com":
        return "github.com/" + "/".join(parts.path.strip("/").split("/")[:2])
    return parts.netloc


def table(title: str, counts: Iterable[tuple[str, int]]) -> str:
    """A two-column Markdown table, largest count first."""
    lines = [f"| {title} | rows |", "|---|---:|"]
    lines += [f"| {name} | {count} |" for name, count in counts]
    return "\n".join(lines)


def main() -> None:
    rows = read_rows()
    print(
        f"{len(rows)} rows, {len({r['gpu'] for r in rows})} GPUs, "
        f"{len({r['model'] for r in rows})} models\n"
    )
    for title, key in (
        ("engine", lambda r: r["engine"]),
        ("phase", lambda r: r["phase"]),
        ("batch", lambda r: batch_class(int(r["batch"]))),
        ("GPU", lambda r: r["gpu"]),
        ("source", lambda r: source_site(r["source"])),
    ):
        print(table(title, Counter(key(r) for r in rows).most_common()))
        print()


if __name__ == "__main__":
    main()
