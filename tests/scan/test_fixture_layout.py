"""Fixtures live in one folder per rule, ``tests/fixtures/<kind>/GPnnn-<slug>/``.

Each file directly in a folder named after a rule says something about that rule (an
`expect:` or `ok:` marker, or a notebook's `.expected` sidecar row); a fixture project's nested
files (a requirements file's includes) may be about other rules. Files about no single rule sit
in ``_shared/``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from expect import markers
from gpuport.findings import Category
from gpuport.scan.catalog import iter_rules

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
KINDS = {
    "deps": Category.DEPENDENCIES,
    "python": Category.PYTHON,
    "kernels": Category.KERNELS,
    "containers": Category.CONTAINERS,
    "build": Category.BUILD,
}


def _about(path: Path) -> set[str]:
    """The rule ids a fixture file says something about."""
    text = path.read_text(encoding="utf-8", errors="replace")
    expected, ok = markers(text)
    ids = set().union(*expected.values(), *ok.values())
    sidecar = path.with_name(path.name + ".expected")
    if sidecar.is_file():
        rows = sidecar.read_text(encoding="utf-8").splitlines()
        ids |= {row.split()[0] for row in rows if row.strip() and not row.startswith("#")}
    return ids


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_one_folder_per_rule_named_by_id_and_slug(kind: str) -> None:
    rules = [r for r in iter_rules(KINDS[kind]) if r.id != "GP599"]
    folders = {p.name for p in (FIXTURES / kind).iterdir() if p.is_dir()}
    wanted = {f"{r.id}-{r.slug}" for r in rules}
    assert folders - {"_shared"} == wanted
    assert not [p.name for p in (FIXTURES / kind).iterdir() if p.is_file()], "files outside"
    for folder in sorted(folders - {"_shared"}):
        rule_id = folder.split("-", 1)[0]
        files = [p for p in (FIXTURES / kind / folder).rglob("*") if p.is_file()]
        assert files, f"{kind}/{folder} is empty"
        assert any(rule_id in _about(path) for path in files), f"{kind}/{folder}: no {rule_id}"
        for path in files:  # a project's nested files (includes) may be about other rules
            if path.parent.name == folder and path.suffix != ".expected":
                assert rule_id in _about(path), f"{path.relative_to(FIXTURES)}: no {rule_id}"
