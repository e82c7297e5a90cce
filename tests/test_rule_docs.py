"""Every rule is declared once, completely, and docs/rules.md is generated from it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from gpuport.scan.catalog import all_rules, get_rule

ROOT = Path(__file__).resolve().parent.parent


def test_rules_are_complete_and_unique() -> None:
    rules = all_rules()
    assert len(rules) >= 60
    assert len({r.id for r in rules}) == len(rules)
    assert len({r.slug for r in rules}) == len(rules)
    for r in rules:
        assert r.example.strip() and r.instead.strip(), r.id
        for ref in r.references:
            assert re.match(r"https?://", ref), (r.id, ref)
        assert get_rule(r.id) is r and get_rule(r.slug) is r


def test_docs_rules_md_is_up_to_date() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "gen_rule_docs.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_every_rule_has_a_fixture_line_that_expects_it() -> None:
    marker = re.compile(r"expect:\s*([A-Z0-9, ]+)")
    expected: set[str] = set()
    for path in (ROOT / "tests" / "fixtures").rglob("*"):
        if path.is_file():
            for m in marker.finditer(path.read_text(encoding="utf-8", errors="replace")):
                expected |= {p.strip() for p in m.group(1).split(",")}
    missing = [r.id for r in all_rules() if r.id not in expected]
    assert not missing, f"rules with no fixture line marked `expect: ID`: {missing}"
