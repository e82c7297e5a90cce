"""The Python file pre-filter knows the project's own packages: a file whose only needle is the
project importing itself is not parsed, and every other import is still found."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from gpuport.files import FileKind, ProjectFacts, ProjectFile, SourceText
from gpuport.findings import Finding, Skipped
from gpuport.scan.catalog import iter_rules
from gpuport.scan.python import scanner
from gpuport.scan.python.checks import dispatch_for
from gpuport.scan.python.prefilter import _name_found, file_prefilter
from gpuport.scan.python.scanner import scan_python

ALL_RULES = frozenset(r.id for r in iter_rules())
DEEPSPEED = frozenset({"deepspeed"})


def scan(tmp_path: Path, text: str, first_party: frozenset[str]) -> list[Finding | Skipped]:
    path = tmp_path / "pkg" / "mod.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    file = ProjectFile(path, "pkg/mod.py", FileKind.PYTHON, len(text))
    return list(
        scan_python(SourceText(file, text, facts=ProjectFacts(first_party=first_party)), ALL_RULES)
    )


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the files the scanner parsed."""
    seen: list[str] = []
    real = scanner._parse

    def counting(text: str, filename: str) -> ast.Module:
        seen.append(filename)
        return real(text, filename)

    monkeypatch.setattr(scanner, "_parse", counting)
    return seen


def test_a_file_that_only_imports_the_project_is_not_parsed(
    tmp_path: Path, parsed: list[str]
) -> None:
    text = "import deepspeed\nfrom deepspeed.ops import adam\n\ndef f(x):\n    return x\n"
    assert scan(tmp_path, text, DEEPSPEED) == []
    assert parsed == []
    scan(tmp_path, text, frozenset())  # without the facts, deepspeed is a package to look up
    assert parsed == ["pkg/mod.py"]


@pytest.mark.parametrize(
    "other_import",
    [
        "import os,pynvml",  # no space before the package: not one of its needles
        "import os, pynvml",
        "import\tpynvml",
        "from pynvml import nvmlInit",
        "mod = __import__('pynvml')",
        "import pynvml.smi as smi",
    ],
)
def test_other_imports_beside_the_project_import_are_still_found(
    tmp_path: Path, other_import: str
) -> None:
    text = f"import deepspeed\n{other_import}\n"
    with_facts = {
        (f.rule_id, f.location.line)
        for f in scan(tmp_path, text, DEEPSPEED)
        if isinstance(f, Finding)
    }
    without = {
        (f.rule_id, f.location.line)
        for f in scan(tmp_path, text, frozenset())
        if isinstance(f, Finding)
    }
    assert ("GP201", 1) in without and ("GP201", 1) not in with_facts
    assert without - {("GP201", 1)} == with_facts
    assert any(rule == "GP201" for rule, _ in with_facts)


def test_a_needle_another_rule_shares_is_kept() -> None:
    dispatch = dispatch_for(ALL_RULES)
    may_fire_in = file_prefilter(dispatch, frozenset({"cuda"}))
    # "cuda" is not an import needle of a package, so a project named cuda changes nothing.
    assert may_fire_in("x = 'cuda'\n")
    assert file_prefilter(dispatch, frozenset()) == dispatch.may_fire_in
    assert not file_prefilter(dispatch, DEEPSPEED)("import deepspeed\n")
    assert file_prefilter(dispatch, DEEPSPEED)("import torch.cuda\n")


def test_a_banner_of_hashes_after_a_string_is_read_once(tmp_path: Path) -> None:
    """The statement pre-filter searches the whole text for a closing quote, blank or comment
    lines and an opening quote; a `####` banner after a string must not make that search try
    every split of the banner into comments (2**60 here: the scan would never end)."""
    banner = "#" * 60
    text = (
        "import os\n\n\ndef f():\n"
        f'    x = "abcd"\n    {banner}\n    {banner} x\n'
        '    os.environ["CUDA_VISIBLE_DEVICES"] = x\n'
    )
    found = [f for f in scan(tmp_path, text, frozenset()) if isinstance(f, Finding)]
    assert found, "the statement below the banner is still walked"


@pytest.mark.parametrize(
    "text",
    [
        "import pynvml",
        "x = 1\nimport os,pynvml",
        "pynvml",
        "my_pynvml = 1",  # part of a longer name
        "a.pynvml",  # an attribute
        "épynvml",  # a word character outside ASCII
        "٣pynvml",  # a digit outside ASCII
        "pynvmlx",
        "a.pynvml pynvml",  # the second one counts
        "xpynvml\n(pynvml)",
        "",
    ],
)
def test_other_imports_are_found_as_whole_names_as_a_look_behind_finds_them(text: str) -> None:
    """The names' test checks the character before each match itself: it finds exactly what
    ``(?<![\\w.])name(?!\\w)`` does."""
    names = re.compile(r"(?:pynvml|cupy)(?!\w)")
    expected = re.search(r"(?<![\w.])(?:pynvml|cupy)(?!\w)", text) is not None
    assert _name_found(names, text) is expected
