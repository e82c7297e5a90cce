"""What the Python and dependency scanners do with the project's facts (ProjectFacts): a project
importing or listing itself is not a third-party dependency."""

from __future__ import annotations

from pathlib import Path

from gpuport.files import FileKind, ProjectFacts, ProjectFile, SourceText
from gpuport.findings import Finding
from gpuport.scan.catalog import iter_rules
from gpuport.scan.deps import scan_dependencies
from gpuport.scan.python.scanner import scan_python

ALL_RULES = frozenset(r.id for r in iter_rules())


def source(root: Path, rel: str, text: str, kind: FileKind, **facts: frozenset[str]) -> SourceText:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    file = ProjectFile(path, rel, kind, len(text))
    return SourceText(file, text, facts=ProjectFacts(**facts))


def python_findings(src: SourceText) -> list[Finding]:
    return [f for f in scan_python(src, ALL_RULES) if isinstance(f, Finding)]


def dependency_findings(src: SourceText) -> list[Finding]:
    return [f for f in scan_dependencies(src, ALL_RULES) if isinstance(f, Finding)]


# deepspeed's tests and unsloth's scripts import the project they belong to.
SELF_IMPORTS = "import deepspeed\nfrom deepspeed.ops.adam import FusedAdam\nimport xformers.ops\n"


def test_first_party_imports_are_no_dependency(tmp_path: Path) -> None:
    src = source(
        tmp_path,
        "tests/unit/test_adam.py",
        SELF_IMPORTS,
        FileKind.PYTHON,
        first_party=frozenset({"deepspeed"}),
    )
    found = [(f.rule_id, f.location.line) for f in python_findings(src)]
    assert ("GP201", 1) not in found and ("GP201", 2) not in found
    assert ("GP201", 3) in found  # a real third-party import is still reported


def test_without_facts_a_self_import_outside_the_package_is_reported(tmp_path: Path) -> None:
    src = source(tmp_path, "tests/unit/test_adam.py", SELF_IMPORTS, FileKind.PYTHON)
    lines = {f.location.line for f in python_findings(src) if f.rule_id == "GP201"}
    assert 1 in lines  # nothing says deepspeed is this project's own


def test_a_file_inside_a_package_importing_that_package_is_first_party(tmp_path: Path) -> None:
    # No facts at all: deepspeed/ops/adam.py importing deepspeed is the project itself.
    src = source(tmp_path, "deepspeed/ops/adam.py", SELF_IMPORTS, FileKind.PYTHON)
    lines = {f.location.line for f in python_findings(src) if f.rule_id == "GP201"}
    assert lines == {3}


UNSLOTH_PYPROJECT = """\
[project]
name = "unsloth"
dependencies = ["xformers>=0.0.27"]

[project.optional-dependencies]
huggingface = ["unsloth_zoo>=2025.1", "transformers"]
colab = ["unsloth[huggingface]", "unsloth[cu121]"]
"""


def test_the_project_listing_itself_in_its_extras_is_no_dependency(tmp_path: Path) -> None:
    src = source(tmp_path, "pyproject.toml", UNSLOTH_PYPROJECT, FileKind.PYPROJECT)
    found = {f.location.line for f in dependency_findings(src)}
    assert 3 in found  # xformers: a real dependency with a ROCm build elsewhere
    assert 7 not in found  # unsloth[huggingface] in unsloth's own pyproject


def test_first_party_names_match_across_spellings(tmp_path: Path) -> None:
    text = "flash-attn>=2.6\nxformers\n"
    src = source(
        tmp_path,
        "requirements/dev.txt",
        text,
        FileKind.REQUIREMENTS,
        first_party=frozenset({"flash_attn"}),
    )
    found = {f.location.line for f in dependency_findings(src)}
    assert found == {2}
