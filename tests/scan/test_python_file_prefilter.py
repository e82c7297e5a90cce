"""The Python file pre-filter knows the project's own packages: a file whose only needle is the
project importing itself is not parsed, and every other import is still found."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from gpuport.files import FileKind, ProjectFacts, ProjectFile, SourceText
from gpuport.findings import Finding, Skipped
from gpuport.scan.catalog import iter_rules
from gpuport.scan.python import scanner
from gpuport.scan.python.checks import dispatch_for
from gpuport.scan.python.prefilter import file_prefilter, import_patterns, imports_found
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


def test_the_project_import_alone_is_no_reason_to_parse() -> None:
    dispatch = dispatch_for(ALL_RULES)
    assert not file_prefilter(dispatch, DEEPSPEED)("import deepspeed\n")
    assert file_prefilter(dispatch, frozenset())("import deepspeed\n")
    assert file_prefilter(dispatch, DEEPSPEED)("import pynvml\n")


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("device = 'cuda'\nx = torch.zeros(1, device=device)\n", False),  # a device, no import
        ("# runs on cuda devices\nx = 1\n", False),
        ("mod = importlib.import_module('cuda')\n", True),
        ("print(torch.version.cuda)\n", True),  # GP202: its needle and the attribute's parts
        ("x = torch.cuda.is_available()\n", False),  # "cuda" without torch.version
        ("print(torch.__version__, torch.cuda.is_available())\n", False),  # not the name
        ("from torch.version import cuda\nprint(cuda)\n", True),
        ("os.environ['CUDA_VISIBLE_DEVICES'] = '0'\n", True),
        ("CUDA_VISIBLE_DEVICES = '0'\n", False),  # no environment access: no "env"
        ("from triton.language.extra.cuda import libdevice\n", True),
    ],
)
def test_a_rule_is_looked_for_only_where_its_checks_can_be_called(text: str, parsed: bool) -> None:
    """A conditional rule needs its needles and the words its checks need (the parts of the
    qualified name it looks at, "env" for an environment access); the import rule's names
    count only where an import can name a module."""
    assert file_prefilter(dispatch_for(ALL_RULES), DEEPSPEED)(text) is parsed


def test_a_text_outside_ascii_may_spell_the_words_differently() -> None:
    """Identifiers are NFKC-normalised: "torch" in fullwidth letters is ``torch`` to the
    parser."""
    dispatch = dispatch_for(ALL_RULES)
    assert not dispatch.conditional_in("x = cuda.version\n")
    fullwidth = "".join(chr(ord(c) + 0xFEE0) for c in "torch")  # FULLWIDTH LATIN SMALL LETTERs
    assert dispatch.conditional_in(f"x = {fullwidth}.version.cuda\n")


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
    ("text", "found"),
    [
        ("import pynvml", True),
        ("x = 1\nimport os,pynvml", True),
        ("import\tpynvml", True),
        ("from pynvml.smi import x", True),
        ("import numpy as np, pynvml", True),
        ("import os, \\\n    pynvml", True),  # a backslash-continued line
        ("import os, \\\r\n    pynvml", True),
        ("__import__('pynvml')", True),
        ('importlib.import_module(name="pynvml")', True),
        ("x = 'pynvml'", False),  # a string, and no import call in the text
        ("pynvml", False),
        ("x = pynvml", False),
        ("my_pynvml = 1", False),  # part of a longer name
        ("import a.pynvml", False),  # an attribute
        ("import épynvml", False),  # a word character outside ASCII
        ("importpynvml", True),  # no look-behind for a whole word: a parse too many, no more
        ("frompynvml", True),
        ("import pynvmlx", False),
        ("import os\n# pynvml", False),
        ("import" + " " * 300 + "pynvml", True),
        ("", False),
    ],
)
def test_imported_names_are_found_where_an_import_can_name_them(text: str, found: bool) -> None:
    patterns = import_patterns(["pynvml", "cupy"])
    assert patterns is not None
    assert imports_found(patterns, text) is found
    assert import_patterns([]) is None


def test_a_notebook_import_continued_on_the_next_line_is_found() -> None:
    """In a notebook's JSON each line of a cell starts with a quote: the module of a
    backslash-continued import follows one."""
    cell = '{"cells": [{"cell_type": "code", "source": ["import os, \\\\\\n", "    pynvml\\n"]}]}'
    dispatch = dispatch_for(ALL_RULES)
    assert file_prefilter(dispatch, DEEPSPEED, notebook=True)(cell)
    assert not file_prefilter(dispatch, DEEPSPEED)(cell)
