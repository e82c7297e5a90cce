"""The decision's evidence reads a file line by line only where one look at the whole file finds
something: the same evidence as reading every line, in a fraction of the time."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuport.assess import project_evidence
from gpuport.assess.project_evidence import (
    _ARCH_LIST,
    _NODE_LABEL,
    _SM,
    _loose,
    _may_match,
    _without_leading_assertion,
    collect,
)
from gpuport.kb.decision_factors import decision_factors, instance_types
from gpuport.project.build import build_model

ROOT = Path(__file__).resolve().parents[2]
PATTERNS = [
    *(p for f in decision_factors().values() for p in f.markers),
    *(i.pattern for i in instance_types()),
    _ARCH_LIST,
    _SM,
    _NODE_LABEL,
]
LINE = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30)


def _lowered(text: str) -> str | None:
    return text.lower() if text.isascii() else None


@settings(max_examples=120, deadline=None)
@given(data=st.data(), pattern=st.sampled_from(PATTERNS), before=st.lists(LINE, max_size=3))
def test_a_file_with_a_matching_line_is_always_read(
    data: st.DataObject, pattern: re.Pattern[str], before: list[str]
) -> None:
    match = data.draw(st.from_regex(pattern, fullmatch=True).filter(lambda s: "\n" not in s))
    prefix, suffix = data.draw(LINE), data.draw(LINE)
    text = "\n".join([*before, prefix + match + suffix, *data.draw(st.lists(LINE, max_size=3))])
    if any(pattern.search(line) for line in text.splitlines()):
        assert _may_match(pattern, text, _lowered(text)), (pattern.pattern, text)


def test_a_file_with_no_match_is_skipped() -> None:
    text = "import torch\nmodel = torch.nn.Linear(4, 4)\n"
    assert not _may_match(re.compile(r"\bTrainer\("), text, _lowered(text))
    instance = re.compile(r"(?<![\w.-])p4de\.\w+(?![\w-])", re.IGNORECASE)
    assert _may_match(instance, "node: P4DE.24XLARGE\n", _lowered("node: P4DE.24XLARGE\n"))
    assert not _may_match(instance, "node: p5.48xlarge\n", _lowered("node: p5.48xlarge\n"))


def test_the_loose_pattern_drops_only_leading_assertions() -> None:
    assert _without_leading_assertion(r"\bTrainer\(") == r"Trainer\("
    assert _without_leading_assertion(r"(?<![\w.-])p4d\.\w+(?![\w-])") == r"p4d\.\w+(?![\w-])"
    assert _without_leading_assertion(r"(?<=[)(])x") == "x"  # parentheses inside a class
    assert _without_leading_assertion(r"a\bb") == r"a\bb"
    assert _without_leading_assertion(r"(?<!unclosed") == r"(?<!unclosed"
    folded, lower = _loose(re.compile(r"(?<![\w.-])P4D\.\w+", re.IGNORECASE))
    assert lower and folded.pattern == r"p4d\.\w+" and not folded.flags & re.IGNORECASE
    kept, lower = _loose(re.compile(r"\Afoo"))
    assert not lower and kept.pattern == r"\Afoo"  # the string's own start: left as it is
    upper_escape, lower = _loose(re.compile(r"\Sgpu", re.IGNORECASE))
    assert not lower and upper_escape.flags & re.IGNORECASE  # \S is not \s in lower case


@pytest.mark.parametrize(
    "project", ["examples/llm-service", "examples/vllm-70b-chat", "tests/fixtures"]
)
def test_the_evidence_is_what_reading_every_line_finds(
    project: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = ROOT / project
    model = build_model(root)
    fast = collect(root, model)
    monkeypatch.setattr(project_evidence, "_may_match", lambda *_: True)
    every_line = collect(root, model)
    assert fast.files_read == every_line.files_read > 0
    for name in ("requirements", "imports", "markers", "current_gpus"):
        assert dict(getattr(fast, name)) == dict(getattr(every_line, name)), name
    assert fast.cloud_instances == every_line.cloud_instances
    assert fast.cuda_files == every_line.cuda_files
    assert fast.markers or fast.current_gpus  # the projects do hold evidence
