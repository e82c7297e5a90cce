"""Made prompts are deterministic; a user's JSONL file is read, and its bad lines are named."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from gpuport.serving.prompts import (
    LengthDistribution,
    PromptError,
    load_prompts,
    synthetic_prompts,
)

FIXED_8 = LengthDistribution.parse("8", "--output-len")


def test_the_same_seed_makes_the_same_prompts_and_another_seed_others() -> None:
    inputs = LengthDistribution.parse("5-40", "--input-len")
    first = synthetic_prompts(20, inputs, FIXED_8, seed=3)
    assert first == synthetic_prompts(20, inputs, FIXED_8, seed=3)
    assert first != synthetic_prompts(20, inputs, FIXED_8, seed=4)


def test_made_prompts_have_the_asked_lengths_in_words() -> None:
    prompts = synthetic_prompts(50, LengthDistribution.parse("10-20", "x"), FIXED_8, seed=0)
    assert all(10 <= p.words <= 20 and len(p.text.split()) == p.words for p in prompts)
    assert len({p.words for p in prompts}) > 3  # drawn, not one length
    assert all(p.max_tokens == 8 for p in prompts)
    assert len({p.text.split()[0] for p in prompts}) == 50  # no shared prefix


@pytest.mark.parametrize(
    ("text", "kind", "low", "high"),
    [("16", "fixed", 16, 16), ("4-9", "uniform", 4, 9), ("30~5", "normal", 1, 10_000)],
)
def test_length_distributions(text: str, kind: str, low: int, high: int) -> None:
    dist = LengthDistribution.parse(text, "--input-len")
    assert dist.kind == kind
    rng = random.Random(1)
    assert all(low <= dist.draw(rng) <= high for _ in range(200))


@pytest.mark.parametrize("text", ["0", "-3", "9-4", "abc", "5~", "1e9", ""])
def test_a_bad_length_names_its_flag(text: str) -> None:
    with pytest.raises(PromptError, match="--output-len"):
        LengthDistribution.parse(text, "--output-len")


def test_a_jsonl_file_is_read_with_optional_max_tokens(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text('{"prompt": "one two", "max_tokens": 3}\n\n{"prompt": "three", "id": 7}\n')
    prompts = load_prompts(path, FIXED_8, seed=0)
    assert [(p.text, p.max_tokens, p.words) for p in prompts] == [
        ("one two", 3, 2),
        ("three", 8, 1),
    ]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "p.jsonl:2: not JSON"),
        ('["a list"]', "p.jsonl:2: expected an object"),
        ('{"text": "no prompt"}', 'p.jsonl:2: "prompt" must be'),
        ('{"prompt": "x", "max_tokens": 0}', 'p.jsonl:2: "max_tokens" must be'),
        ('{"prompt": "x", "max_tokens": true}', 'p.jsonl:2: "max_tokens" must be'),
    ],
)
def test_a_bad_line_is_named_by_its_number(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text('{"prompt": "fine"}\n' + line + "\n")
    with pytest.raises(PromptError, match=message.replace("[", r"\[")):
        load_prompts(path, FIXED_8, seed=0)


def test_an_empty_or_undecodable_file_is_refused(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n")
    with pytest.raises(PromptError, match="no prompts"):
        load_prompts(empty, FIXED_8, seed=0)
    binary = tmp_path / "bin.jsonl"
    binary.write_bytes(b'{"prompt": "\xff"}\n')
    with pytest.raises(PromptError, match=r"bin\.jsonl:1: not UTF-8"):
        load_prompts(binary, FIXED_8, seed=0)
