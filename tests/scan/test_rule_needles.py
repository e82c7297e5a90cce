"""Each rule, enabled on its own, still fires on every fixture line that expects it.

Scanners skip work for the rules that are not enabled, using the words each rule declares it
needs (``Rule.needles``). A rule whose needles miss a word it really fires on would still pass
the full-fixture tests (another rule's needle lets the file through) but never fire alone, or
on real code where that other word is absent: this test enables one rule at a time.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from expect import markers
from gpuport.scan.catalog import all_rules
from gpuport.scan.engine import ScanOptions, scan_path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def _expected_lines(path: Path) -> dict[int, set[str]]:
    """Line -> rule ids expected there: from the file's markers, or its ``.expected`` sidecar.

    A sidecar (for a notebook, whose JSON has no comments) has rows ``RULE cell:line "text"``,
    where the text is on exactly one line of the file: the line the finding points at.
    """
    text = path.read_text(encoding="utf-8", errors="replace")
    sidecar = path.with_name(path.name + ".expected")
    if not sidecar.is_file():
        return markers(text)[0]
    lines = text.splitlines()
    expected: dict[int, set[str]] = defaultdict(set)
    for row in sidecar.read_text(encoding="utf-8").splitlines():
        if row.strip() and not row.startswith("#"):
            rule_id, _, needle = row.split(maxsplit=2)
            (number,) = [n for n, line in enumerate(lines, start=1) if needle in line]
            expected[number].add(rule_id)
    return expected


def _expected_by_rule() -> dict[str, list[Path]]:
    found: dict[str, list[Path]] = defaultdict(list)
    for path in sorted(FIXTURES.rglob("*")):
        if not path.is_file() or path.suffix == ".expected":
            continue
        expected = _expected_lines(path)
        for rule_id in sorted(set().union(*expected.values()) if expected else set()):
            found[rule_id].append(path)
    return found


EXPECTED = _expected_by_rule()


def test_every_rule_is_tried_on_its_own() -> None:
    assert {r.id for r in all_rules()} <= set(EXPECTED)


def _project_of(path: Path) -> Path:
    """The folder scanned as one project: a kind's fixture folder, or one project of
    fixtures/project/, whose projects differ in what the model concludes (one builds through
    torch's hipify, another has none) and so are never scanned as one."""
    parts = path.relative_to(FIXTURES).parts
    return FIXTURES.joinpath(*parts[:2]) if parts[0] == "project" else FIXTURES / parts[0]


# Rules whose one line gathers other findings: the folds (project/triage.py, file_folds.py and
# unreached_helpers.py), the dependency rules whose line takes the imports of a package that
# needs its ROCm build, and GP509, whose nvcc-only flag line takes the CUDA setting on the same
# line (scan/build).
_GATHERING = frozenset(
    r.id
    for r in all_rules()
    if r.id in {"GP509", "GP601", "GP602", "GP603"} or r.id.startswith("GP1")
)


@pytest.mark.parametrize("rule_id", sorted(EXPECTED))
def test_rule_fires_alone_where_its_fixtures_expect_it(rule_id: str) -> None:
    """Each fixture folder that expects the rule is scanned whole, as a project would be.

    A whole folder, not file by file: a requirements file reached only through another's
    ``-r`` is scanned through that file.
    """
    want: dict[Path, set[int]] = {}
    for path in EXPECTED[rule_id]:
        expected = _expected_lines(path)
        want[path] = {line for line, ids in expected.items() if rule_id in ids}
    listed: dict[Path, set[int]] = defaultdict(set)
    fired: dict[Path, set[int]] = defaultdict(set)  # listed, or set aside under a gathering line
    # The lines that gather others stay on, as in a real scan, and only the rule's own findings
    # are compared: one a gathering line set aside still fired (it satisfies an expectation,
    # GP309's own fold included), but only a listed one must be marked.
    # A gathering rule needs the findings it gathers (a twin fold is made of GP201s): all on.
    select = frozenset() if rule_id in _GATHERING else frozenset({rule_id}) | _GATHERING
    options = ScanOptions(jobs=1, select=select)
    for folder in sorted({_project_of(path) for path in want}):
        result = scan_path(folder, options)
        for finding in result.findings:
            if finding.rule_id == rule_id:
                listed[folder / finding.location.path].add(finding.location.line)
        for finding in [*result.findings, *result.set_aside]:
            if finding.rule_id == rule_id:
                fired[folder / finding.location.path].add(finding.location.line)
    problems: list[str] = []
    for path in sorted(set(want) | set(listed)):
        label = path.relative_to(FIXTURES)
        missing = sorted(want.get(path, set()) - fired[path])
        extra = sorted(listed[path] - want.get(path, set()))
        problems += [f"{label}:{n}: {rule_id} did not fire alone" for n in missing]
        problems += [f"{label}:{n}: {rule_id} fired alone, unmarked" for n in extra]
    assert not problems, "\n".join(problems)
