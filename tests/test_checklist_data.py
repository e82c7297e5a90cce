"""benchmarks/precision/checklist.toml is well-formed and its scoring counts the right findings."""

from __future__ import annotations

import datetime
import importlib.util
import re
import sys
import tomllib
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from gpuport.scan.catalog import all_rules

ROOT = Path(__file__).resolve().parent.parent
PRECISION = ROOT / "benchmarks" / "precision"
CHECKLIST = PRECISION / "checklist.toml"
FIXTURES = PRECISION / "checklist"
KINDS = {"kernels", "python", "deps", "build", "containers"}
FIELDS = ("id", "title", "project", "source", "date", "kind", "problem", "fixture", "expected")
# A source is a link to the issue, pull request or commit, or "owner/name <full hash> path".
SOURCE_URL = re.compile(r"^https://github\.com/[\w.-]+/[\w.-]+/(issues|pull|commit)/\w+$")
SOURCE_COMMIT = re.compile(r"^[\w.-]+/[\w.-]+ [0-9a-f]{40} \S+$")


def load_items() -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = tomllib.loads(CHECKLIST.read_text(encoding="utf-8"))["item"]
    return items


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("checklist_script", PRECISION / "checklist.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while building the class
    spec.loader.exec_module(module)
    return module


ITEMS = load_items()


def test_enough_items_with_unique_ids_covering_every_kind() -> None:
    ids = [item["id"] for item in ITEMS]
    assert len(ids) >= 24
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"CL\d{2}", i) for i in ids), ids
    assert {item["kind"] for item in ITEMS} == KINDS


@pytest.mark.parametrize("item", ITEMS, ids=lambda item: str(item["id"]))
def test_item_fields(item: dict[str, Any]) -> None:
    for name in FIELDS:
        assert item.get(name), (item["id"], name)
    assert item["kind"] in KINDS
    source = item["source"]
    assert SOURCE_URL.match(source) or SOURCE_COMMIT.match(source), source
    day = datetime.date.fromisoformat(item["date"])
    assert datetime.date(2015, 1, 1) <= day <= datetime.date.today()
    assert isinstance(item["rules"], list)
    # With no rule that fires today, the item says which rule it needs.
    assert item["rules"] or item["needs"].strip(), item["id"]


@pytest.mark.parametrize("item", ITEMS, ids=lambda item: str(item["id"]))
def test_fixture_and_expected_lines_exist(item: dict[str, Any]) -> None:
    folder = (PRECISION / item["fixture"]).resolve()
    assert folder.is_dir(), folder
    assert folder.parent == FIXTURES.resolve() and folder.name == item["id"]
    assert item["expected"]
    for location in item["expected"]:
        rel, _, line = location.rpartition(":")
        path = folder / rel
        assert path.is_file() and not path.is_symlink(), location
        assert path.resolve().is_relative_to(folder), location
        count = len(path.read_text(encoding="utf-8").splitlines())
        assert 1 <= int(line) <= count, (location, count)


def test_named_rules_exist() -> None:
    known = {rule.id for rule in all_rules()}
    named = {rule for item in ITEMS for rule in item["rules"]}
    assert named and named <= known, sorted(named - known)


def test_every_fixture_folder_is_an_item() -> None:
    folders = {path.name for path in FIXTURES.iterdir() if path.is_dir()}
    assert folders == {item["id"] for item in ITEMS}


def finding(
    rule: str, severity: str, path: str, line: int, end: int | None = None
) -> dict[str, Any]:
    location = {"path": path, "line": line, "end_line": end if end is not None else line}
    return {"rule_id": rule, "severity": severity, "location": location}


def test_scoring_counts_a_finding_at_low_or_above_on_an_expected_line() -> None:
    script = load_script()
    item = script.load_items(CHECKLIST)[0]
    (path, line), *_ = item.expected
    report = {"findings": [finding("GP306", "low", path, line)]}
    outcome = script.judge(item, report)
    assert outcome.found and outcome.hits == [f"GP306 low {path}:{line}"]


def test_scoring_ignores_info_other_lines_and_other_files() -> None:
    script = load_script()
    item = script.load_items(CHECKLIST)[0]
    (path, line), *_ = item.expected
    report = {
        "findings": [
            finding("GP300", "info", path, line),
            finding("GP306", "high", path, line + 1000),
            finding("GP306", "high", "elsewhere/" + path, line),
        ]
    }
    outcome = script.judge(item, report)
    assert not outcome.found
    assert len(outcome.other) == 3


def test_scoring_counts_a_finding_whose_span_covers_the_line() -> None:
    script = load_script()
    item = script.load_items(CHECKLIST)[0]
    (path, line), *_ = item.expected
    outcome = script.judge(item, {"findings": [finding("GP301", "high", path, line - 1, line + 2)]})
    assert outcome.found


def test_expected_location_must_name_a_line() -> None:
    script = load_script()
    assert script.parse_expected("csrc/a.cu:12") == ("csrc/a.cu", 12)
    with pytest.raises(ValueError):
        script.parse_expected("csrc/a.cu")
