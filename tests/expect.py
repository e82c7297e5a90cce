"""Fixture files say what they expect, line by line; this checks a scan against them.

Markers live in comments of the fixture itself:

    torch==2.3.0+cu121        # expect: GP101
    numpy==1.26               # ok: GP101
    # expect: GP401           <- a comment-only line applies to the next line
    FROM nvidia/cuda:12.1.0-runtime-ubuntu22.04

``expect: A, B`` says rules A and B fire on that line (and nothing else does); ``ok: A``
says A must not fire there. Every finding in the file must be expected, so a rule that
fires on the wrong line fails the test. Markers work behind ``#``, ``//``, ``/*`` and ``;``.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

from gpuport.findings import Finding, Skipped
from gpuport.scan.engine import ScanOptions, ScanResult, scan_path

_MARKER_RE = re.compile(r"(?:#|//|/\*|;|<!--)\s*(expect|ok):\s*([A-Z0-9,\s]+?)\s*(?:\*/|-->)?\s*$")
_COMMENT_ONLY_RE = re.compile(r"^\s*(?:#|//|/\*|;|<!--)\s*(?:expect|ok):")


def markers(text: str) -> tuple[dict[int, set[str]], dict[int, set[str]]]:
    """(line -> rule ids expected there, line -> rule ids that must not fire there)."""
    expected: dict[int, set[str]] = defaultdict(set)
    forbidden: dict[int, set[str]] = defaultdict(set)
    for number, line in enumerate(text.splitlines(), start=1):
        m = _MARKER_RE.search(line)
        if not m:
            continue
        target = number + 1 if _COMMENT_ONLY_RE.match(line) else number
        ids = {p.strip() for p in m.group(2).split(",") if p.strip()}
        (expected if m.group(1) == "expect" else forbidden)[target] |= ids
    return expected, forbidden


def check_findings(text: str, findings: list[Finding], label: str) -> None:
    expected, forbidden = markers(text)
    assert expected or forbidden, f"{label}: fixture has no expect/ok markers"
    got: dict[int, set[str]] = defaultdict(set)
    for f in findings:
        got[f.location.line].add(f.rule_id)
    problems: list[str] = []
    for line in sorted(set(expected) | set(got)):
        missing = expected.get(line, set()) - got.get(line, set())
        extra = got.get(line, set()) - expected.get(line, set())
        for rid in sorted(missing):
            problems.append(f"{label}:{line}: expected {rid}, it did not fire")
        for rid in sorted(extra):
            problems.append(f"{label}:{line}: {rid} fired but was not expected")
    for line, ids in forbidden.items():
        for rid in sorted(ids & got.get(line, set())):
            problems.append(f"{label}:{line}: {rid} fired on a line marked ok")
    assert not problems, "\n".join(problems)


def scan_fixture(path: Path) -> ScanResult:
    return scan_path(path, ScanOptions(jobs=1), display_root=path.name)


def check_fixture(path: Path, allow_skipped: bool = False) -> ScanResult:
    """Scan one fixture file and compare its findings with its markers."""
    result = scan_fixture(path)
    if not allow_skipped:
        problems: list[Skipped] = [s for s in result.skipped]
        assert not problems, f"{path.name}: unexpected input problems: {problems}"
    check_findings(path.read_text(encoding="utf-8"), result.findings, path.name)
    return result
