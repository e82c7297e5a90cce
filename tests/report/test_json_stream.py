"""JSON in pieces: the same text as json.dumps, with a Deferred array's items made one at a time."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import pytest
from report_samples import TOOL_VERSION, empty_scan, hostile_scan, sample_assessment, sample_scan

from gpuport.findings import Severity, Tier
from gpuport.report import Format, RenderOptions, render, render_chunks
from gpuport.report.common import dumps
from gpuport.report.json_stream import Deferred, json_chunks

ITEMS: list[object] = [
    {"a": 1, "nested": {"b": [1, 2, {"c": None}], "empty": [], "e": {}}},
    "line\nbreak \u2028 and \x1b[31m and caf\u00e9",
    ["x", ["y", []]],
    3.5,
    # what a finding's dict may hold besides: enums, keys that are not strings, odd floats
    {Severity.HIGH: Tier.PRODUCT, 7: 2, 2.5: None, True: (1, (2,)), None: -0.0},
    [1e300, float("inf"), float("nan"), 10**30, False],
    {"empty": (), "nested": [[], [{}], {"k": [()]}]},
]


def _lists(value: object) -> object:
    """``value`` with every Deferred made into the list it stands for."""
    if isinstance(value, Deferred):
        return [_lists(v) for v in value.items()]
    if isinstance(value, dict):
        return {k: _lists(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_lists(v) for v in value]
    return value


DOCUMENTS: dict[str, object] = {
    "top level": Deferred(lambda: iter(ITEMS)),
    "empty": {"findings": Deferred(lambda: iter(())), "after": 1},
    "in a dict": {"k": 1, "findings": Deferred(lambda: iter(ITEMS)), "after": [1]},
    "deep, twice": {
        "runs": [{"results": Deferred(lambda: iter(ITEMS)), "more": Deferred(lambda: iter([{}]))}]
    },
    "in a list": [1, Deferred(lambda: iter(ITEMS)), Deferred(lambda: iter(()))],
    "undecodable path": {"paths": Deferred(lambda: iter(["caf\udce9.cu", {"p": "\udcff"}]))},
    "no deferred": {"a": [1, 2], "b": "\udcff"},
}


@pytest.mark.parametrize("document", list(DOCUMENTS.values()), ids=list(DOCUMENTS))
def test_pieces_make_the_text_json_dumps_makes(document: object) -> None:
    expected = _valid_utf8(json.dumps(_lists(document), indent=2, ensure_ascii=False)) + "\n"
    assert "".join(json_chunks(document)) == expected
    assert dumps(document) == expected
    assert json.loads(expected.encode("utf-8")) is not None  # valid JSON and valid UTF-8


def _valid_utf8(text: str) -> str:
    """What the report's JSON makes of json.dumps' text: lone surrogates (bytes that were not
    UTF-8) as U+FFFD; DEL, C1 controls and U+2028/U+2029 as \\uXXXX escapes."""
    out = []
    for ch in text:
        if "\ud800" <= ch <= "\udfff":
            out.append("\ufffd")
        elif "\x7f" <= ch <= "\x9f" or ch in "\u2028\u2029":
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "".join(out)


def test_a_deferred_arrays_items_are_made_only_as_the_text_is_written() -> None:
    made: list[int] = []

    def items() -> Iterator[dict[str, int]]:
        for i in range(1000):
            made.append(i)
            yield {"i": i}

    pieces = json_chunks({"head": 1, "findings": Deferred(items), "tail": 2})
    written = ""
    for piece in pieces:
        written += piece
        # never more than the item being written has been made
        assert len(made) <= written.count('"i"') + 1
    assert len(made) == 1000 and json.loads(written)["tail"] == 2


SCANS: list[Callable[[], object]] = [sample_scan, empty_scan, hostile_scan, sample_assessment]


@pytest.mark.parametrize("fmt", [Format.JSON, Format.SARIF], ids=["json", "sarif"])
@pytest.mark.parametrize("build", SCANS, ids=[b.__name__ for b in SCANS])
def test_render_chunks_gives_renders_text_in_pieces(
    build: Callable[[], object], fmt: Format
) -> None:
    options = RenderOptions(tool_version=TOOL_VERSION)
    result = build()
    pieces = list(render_chunks(result, fmt, options))
    assert "".join(pieces) == render(result, fmt, options)
    if build is sample_scan:
        assert len(pieces) > 3  # one piece per finding at least: never the whole text at once


def test_render_chunks_of_a_format_without_pieces_is_its_whole_text() -> None:
    options = RenderOptions(tool_version=TOOL_VERSION)
    scan = sample_scan()
    assert list(render_chunks(scan, Format.MARKDOWN, options)) == [
        render(scan, Format.MARKDOWN, options)
    ]
