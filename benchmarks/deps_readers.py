"""Dependency readers against the libraries that could replace them: same records, same lines, speed.

Compares gpuport's requirements reader (``gpuport.syntax.requirements``) with
``pip-requirements-parser`` and its TOML reading (``tomllib`` + ``gpuport.syntax.toml.TomlLocator``)
with ``tomlkit``, on every fixture under tests/fixtures/deps and on larger generated files, and
writes benchmarks/results/deps_readers.md. The optional libraries are not gpuport dependencies:
the script says which were skipped when they are not installed.

    PYTHONPATH=src .venv/bin/python benchmarks/deps_readers.py
    # with the libraries: pip install pip-requirements-parser tomlkit into a venv of its own
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import os
import platform
import sys
import tempfile
import time
import tomllib
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from gpuport.syntax.pep508 import normalize
from gpuport.syntax.pipfile import parse_pipfile
from gpuport.syntax.pyproject import parse_pyproject
from gpuport.syntax.requirements import parse_requirements
from gpuport.syntax.toml import TomlLocator

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "deps"
OUT = Path(__file__).resolve().parent / "results" / "deps_readers.md"

# One generated requirements line per kind of record the fixtures hold.
GENERATED_LINES = (
    "torch=={i}.3.0+cu121  # pinned\n",
    "pkg-{i}[extra-a,extra-b]>=1.{i},<2 ; python_version >= '3.9'\n",
    "cupy-cuda12x>=13 \\\n    --hash=sha256:{i:064d}\n",
    "--extra-index-url https://download.pytorch.org/whl/cu121\n",
    "# a comment {i}\n",
    "name-{i} @ https://example.org/name_{i}-1.0+cu118-py3-none-any.whl\n",
)


def _optional(name: str) -> ModuleType | None:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def _best_of(repeat: int, run: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def generated_requirements(lines: int) -> str:
    return "".join(GENERATED_LINES[i % len(GENERATED_LINES)].format(i=i) for i in range(lines))


def generated_pyproject(entries: int) -> str:
    deps = "".join(f'  "pkg-{i}>=1.{i}",\n' for i in range(entries))
    poetry = "".join(
        f'pkg-{i} = {{version = "^1.{i}", source = "s{i % 3}"}}\n' for i in range(entries)
    )
    sources = "".join(
        f'[[tool.poetry.source]]\nname = "s{i}"\nurl = "https://example.org/{i}/simple"\n\n'
        for i in range(3)
    )
    return (
        f'[project]\nname = "x"\ndependencies = [\n{deps}]\n\n'
        f"[tool.poetry.dependencies]\n{poetry}\n{sources}"
    )


# ---------------------------------------------------------------------------------------------
# Requirements files: ours vs pip-requirements-parser


def ours_requirements(path: Path) -> set[tuple[str, str, int]]:
    """(normalized name, specifier, line) of every requirement of a file and its includes."""
    root = path.parent

    def read(rel: str) -> str | None:
        target = root / rel
        return target.read_text(encoding="utf-8") if target.is_file() else None

    parsed = parse_requirements(path.read_text(encoding="utf-8"), path.name, read=read)
    return {(r.key, r.specifier, r.line) for r in parsed.all_requirements()}


def pip_parser_requirements(library: Any, path: Path) -> set[tuple[str, str, int]]:
    found = library.RequirementsFile.from_file(str(path), include_nested=True)
    return {
        (normalize(r.name or ""), str(r.specifier or ""), r.line_number) for r in found.requirements
    }


def compare_requirements(library: Any, repeat: int, lines: int) -> list[str]:
    rows = [
        "| file | records (ours) | records (library) | same records and lines |",
        "|---|---:|---:|---|",
    ]
    same_files = 0
    files = sorted(
        p for p in FIXTURES.rglob("*.txt") if p.name.startswith(("requirements", "constraints"))
    )
    for path in files:
        ours = ours_requirements(path)
        theirs = pip_parser_requirements(library, path)
        same = ours == theirs
        same_files += same
        diff = (
            ""
            if same
            else f" (ours only: {sorted(ours - theirs)}; library only: {sorted(theirs - ours)})"
        )
        rows.append(
            f"| {path.relative_to(FIXTURES)} | {len(ours)} | {len(theirs)} | {'yes' if same else 'no'}{diff} |"
        )
    text = generated_requirements(lines)
    with tempfile.TemporaryDirectory() as folder:
        big = Path(folder) / "requirements.txt"
        big.write_text(text, encoding="utf-8")
        ours_s = _best_of(repeat, lambda: parse_requirements(text, "requirements.txt"))
        theirs_s = _best_of(repeat, lambda: library.RequirementsFile.from_file(str(big)))
        same_big = ours_requirements(big) == pip_parser_requirements(library, big)
    rows += [
        "",
        f"Fixtures with the same (name, specifier, line) records: {same_files} of {len(files)}.",
        "",
        f"Generated file of {lines:,} lines ({len(text) / 1e6:.2f} MB), best of {repeat}: "
        f"ours {ours_s * 1000:.1f} ms, pip-requirements-parser {theirs_s * 1000:.1f} ms "
        f"({theirs_s / ours_s:.1f}x); same records and lines: {'yes' if same_big else 'no'}.",
    ]
    return rows


# ---------------------------------------------------------------------------------------------
# TOML: tomllib + TomlLocator vs tomlkit


def ours_toml(text: str) -> None:
    tomllib.loads(text)
    TomlLocator(text)


def compare_toml(library: Any, repeat: int, entries: int) -> list[str]:
    text = generated_pyproject(entries)
    ours_s = _best_of(repeat, lambda: ours_toml(text))
    full_s = _best_of(repeat, lambda: parse_pyproject(text, "pyproject.toml"))
    theirs_s = _best_of(repeat, lambda: library.parse(text))
    document = library.parse(text)
    item = document["project"]["dependencies"]
    positions = [
        name for name in ("line", "lineno", "position", "start", "offset") if hasattr(item, name)
    ]
    rows = [
        f"Generated pyproject.toml with {entries:,} PEP 621 strings and {entries:,} Poetry tables "
        f"({len(text) / 1e6:.2f} MB), best of {repeat}: tomllib + TomlLocator {ours_s * 1000:.1f} ms "
        f"(the whole pyproject reader, records and lines included: {full_s * 1000:.1f} ms); "
        f"tomlkit.parse alone {theirs_s * 1000:.1f} ms ({theirs_s / ours_s:.1f}x).",
        "",
        "Positions: a tomlkit item has "
        + (f"{positions}" if positions else "no line, offset or position attribute")
        + " (checked on `project.dependencies`): lines would still have to be found in the text.",
    ]
    fixture_rows = []
    for path in sorted([*FIXTURES.rglob("pyproject.toml"), *FIXTURES.rglob("Pipfile")]):
        fixture = path.read_text(encoding="utf-8")
        same = library.parse(fixture).unwrap() == tomllib.loads(fixture)
        reader = parse_pipfile if path.name == "Pipfile" else parse_pyproject
        records = len(reader(fixture, path.name).requirements)
        fixture_rows.append(
            f"| {path.relative_to(FIXTURES)} | {records} | {'yes' if same else 'no'} |"
        )
    return [
        *rows,
        "",
        "| fixture | requirement records (ours) | tomlkit reads the same values as tomllib |",
        "|---|---:|---|",
        *fixture_rows,
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--lines", type=int, default=20_000, help="generated requirements lines")
    parser.add_argument("--entries", type=int, default=2_000, help="generated pyproject entries")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    machine = (
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{platform.platform()}"
    )
    lines = [
        "# Dependency readers against libraries",
        "",
        f"Measured {datetime.date.today()} with `benchmarks/deps_readers.py` on: {machine}.",
        "",
    ]
    skipped = []
    pip_parser = _optional("pip_requirements_parser")
    if pip_parser is None:
        skipped.append("pip-requirements-parser")
    else:
        version = importlib.metadata.version("pip-requirements-parser")
        lines += [f"## requirements files: pip-requirements-parser {version}", ""]
        lines += compare_requirements(pip_parser, args.repeat, args.lines)
        lines.append("")
    tomlkit = _optional("tomlkit")
    if tomlkit is None:
        skipped.append("tomlkit")
    else:
        lines += [f"## TOML: tomlkit {tomlkit.__version__}", ""]
        lines += compare_toml(tomlkit, args.repeat, args.entries)
        lines.append("")
    if skipped:
        note = f"Skipped (not installed): {', '.join(skipped)}."
        print(note, file=sys.stderr)
        lines += [note, ""]
    text = "\n".join(lines)
    print(text)
    if not skipped:
        args.out.write_text(text, encoding="utf-8")
        print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    import importlib.metadata

    main()
