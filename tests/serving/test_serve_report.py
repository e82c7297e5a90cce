"""What a server sent is shown as text in every format, never obeyed."""

from __future__ import annotations

import json

import pytest
from markdown_it import MarkdownIt

from gpuport.report import Format, RenderOptions, render
from gpuport.serving.results import (
    FailureCount,
    LoadStep,
    PairSummary,
    ServeBenchResult,
    ServeVerifyResult,
)

EVIL = "\x1b]0;pwned\x07 <script>alert(1)</script> [click](https://evil.example) @admin"


def _bench() -> ServeBenchResult:
    step = LoadStep(
        label="rate inf",
        rate=float("inf"),
        concurrency=None,
        requests=2,
        completed=0,
        failed=2,
        failures=(FailureCount("HTTP 500", 2, EVIL),),
        duration_s=0.1,
        input_words=0,
        output_tokens=0,
        token_source="none",
    )
    return ServeBenchResult("http://h:1", EVIL, "chat", "test", 2, (step,))


def _verify() -> ServeVerifyResult:
    empty = PairSummary(0, 0, None, None, None)
    return ServeVerifyResult(
        "http://a", "http://b", EVIL, "completions", 5, False, (), empty, None, None, 0.01,
        failures=(("A1", 0, EVIL),), notes=(EVIL,),
    )  # fmt: skip


@pytest.mark.parametrize("build", [_bench, _verify])
def test_no_control_character_reaches_the_terminal(build: object) -> None:
    assert callable(build)
    text = render(build(), Format.TERMINAL, RenderOptions())
    assert "\x1b" not in text and "\x07" not in text
    assert "\\x1b]0;pwned\\x07" in text


@pytest.mark.parametrize("build", [_bench, _verify])
def test_markdown_holds_no_html_or_link(build: object) -> None:
    assert callable(build)
    text = render(build(), Format.MARKDOWN, RenderOptions())
    md = MarkdownIt("commonmark").enable("table")
    tokens = md.parse(text)
    children = [child for token in tokens for child in (token.children or [])]
    assert not [c for c in children if c.type == "link_open"]
    html = [c.content for c in children if c.type == "html_inline"]
    assert set(html) <= {"<sub>", "</sub>"}, html  # the footer's own
    assert "<script>" not in md.render(text)


@pytest.mark.parametrize("build", [_bench, _verify])
def test_json_keeps_the_text_as_it_came(build: object) -> None:
    assert callable(build)
    document = json.loads(render(build(), Format.JSON, RenderOptions()))
    assert document["model"] == EVIL
