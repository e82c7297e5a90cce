"""Markdown output: a PR comment that renders as intended, whatever the scanned files hold.

The rendered Markdown is parsed with markdown-it-py (CommonMark plus GFM tables), so the
checks are about what a Markdown viewer would build, not about the raw characters.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token
from report_samples import (
    CUDA_RUNTIME_CALL,
    HOSTILE_STRINGS,
    hostile_assessment,
    hostile_decided_assessment,
    hostile_scan,
    render_sample,
    sample_assessment,
    sample_change_scan,
    sample_scan,
)

from gpuport.findings import Severity
from gpuport.report import Format
from gpuport.report.common import fingerprint, link_target, md_text
from gpuport.report.markdown import FINGERPRINTS_OPEN, PR_COMMENT_MARKER
from gpuport.vcs import ChangedLines

# The only raw HTML the renderer writes itself.
OUR_HTML = {"<details>", "<summary>", "</summary>", "</details>", "<sub>", "</sub>"}


def parse(text: str) -> list[Token]:
    md = MarkdownIt("commonmark").enable("table").enable("strikethrough")
    return md.parse(text)


def walk(tokens: list[Token]) -> list[Token]:
    out: list[Token] = []
    for token in tokens:
        out.append(token)
        if token.children:
            out.extend(walk(token.children))
    return out


def html_pieces(tokens: list[Token]) -> list[str]:
    """Every raw-HTML tag in the parsed document."""
    import re

    pieces = []
    for token in walk(tokens):
        if token.type in ("html_inline", "html_block"):
            pieces.extend(re.findall(r"</?[a-zA-Z][^>]*>", token.content))
    return pieces


def plain_text(tokens: list[Token]) -> str:
    return " ".join(t.content for t in walk(tokens) if t.type in ("text", "code_inline"))


def links(tokens: list[Token]) -> list[str]:
    return [str(t.attrs.get("href", "")) for t in walk(tokens) if t.type == "link_open"]


def test_hostile_text_adds_no_markup() -> None:
    for result in (hostile_scan(), hostile_assessment(), hostile_decided_assessment()):
        tokens = parse(render_sample(result, Format.MARKDOWN))
        assert set(html_pieces(tokens)) <= OUR_HTML
        assert not [t for t in walk(tokens) if t.type == "image"]
        for href in links(tokens):
            assert not href.lower().startswith(("javascript:", "data:", "//", "http")), href
        text = plain_text(tokens)
        for hostile in HOSTILE_STRINGS:
            assert hostile in text, hostile


def test_hostile_excerpt_cannot_close_its_fence() -> None:
    tokens = parse(render_sample(hostile_scan(), Format.MARKDOWN))
    fences = [t for t in walk(tokens) if t.type == "fence"]
    assert len(fences) == 1
    assert "```</details><details open>" in fences[0].content
    assert "\\x1b[31mred" in fences[0].content  # control characters shown, not kept


def test_mentions_and_tables_are_inert() -> None:
    text = render_sample(hostile_scan(), Format.MARKDOWN)
    assert "@everyone" not in text  # GitHub would notify; a zero-width space stops it
    assert "@\u200beveryone" in text
    tokens = parse(text)
    tables = [t for t in walk(tokens) if t.type == "table_open"]
    assert len(tables) == 1  # only the summary table; "| a | b |" in a message is text


def test_md_text_escapes() -> None:
    assert md_text("a*b*_c_ `x` [l](u) <b> & | ~~s~~ ! #1") == (
        "a\\*b\\*\\_c\\_ \\`x\\` \\[l\\]\\(u\\) \\<b\\> \\& \\| \\~\\~s\\~\\~ \\! \\#1"
    )
    assert md_text("two\nlines") == "two lines"


def test_links_are_relative_and_encoded() -> None:
    assert link_target("src/train.py", 14) == "src/train.py#L14"
    assert link_target("a b/c#d.py") == "a%20b/c%23d.py"
    assert link_target("javascript:alert(1)") == "javascript%3Aalert%281%29"
    assert link_target("//evil.example/x") == "./evil.example/x"


def test_findings_grouped_by_severity_with_file_links() -> None:
    text = render_sample(sample_scan(), Format.MARKDOWN)
    tokens = parse(text)
    headings = [
        tokens[i + 1].content
        for i, t in enumerate(tokens)
        if t.type == "heading_open" and t.tag == "h4"
    ]
    assert headings == ["Blocker (1)", "High (3)", "Medium (2)", "Low (2)", "Info (1)"]
    hrefs = links(tokens)
    assert "requirements.txt#L3" in hrefs
    assert "csrc/kernels.cu#L57" in hrefs
    assert "CMakeLists.txt" in hrefs  # a whole-file finding links to the file
    assert "csrc/legacy.cu#L7" in hrefs  # skipped items link too
    assert "*(gpuport port can fix this)*" in text


def _summary_table(tokens: list[Token]) -> list[list[str]]:
    rows: list[list[str]] = []
    inside = False
    for token in walk(tokens):
        if token.type == "table_open":
            inside = True
        elif token.type == "table_close":
            return rows
        elif inside and token.type == "tr_open":
            rows.append([])
        elif inside and token.type == "inline":
            rows[-1].append(token.content)
    return rows


def test_scan_summary_table() -> None:
    rows = _summary_table(parse(render_sample(sample_scan(), Format.MARKDOWN)))
    assert rows[0] == ["severity", "findings", "gpuport can fix"]
    assert ["blocker", "1", "0"] in rows
    assert ["medium", "2", "2"] in rows
    assert rows[-1] == ["**total**", "**9**", "**3**"]


def test_minor_and_long_groups_fold() -> None:
    scan = sample_scan()
    scan.findings += [
        CUDA_RUNTIME_CALL.finding("csrc/many.cu", n, severity=Severity.HIGH) for n in range(1, 12)
    ]
    text = render_sample(scan, Format.MARKDOWN)
    assert "<details><summary>Show 14 high findings</summary>" in text
    assert "<details><summary>Show 2 low findings</summary>" in text
    assert "<details><summary>Show 1 info finding</summary>" in text
    # Blockers are never folded away.
    blocker = text[text.index("#### Blocker") : text.index("#### High")]
    assert "<details>" not in blocker


def test_assessment_markdown() -> None:
    text = render_sample(sample_assessment(), Format.MARKDOWN)
    tokens = parse(text)
    assert text.startswith("## gpuport assess: **blocked**\n")
    rows = _summary_table(tokens)
    cells: dict[str, Any] = {row[0]: row[1] for row in rows if len(row) == 2}
    assert cells["gpuport can fix"] == "3 of 8 (38%)"
    assert cells["estimated effort"] == "25.6 hours (2.1–8.5 days)"  # noqa: RUF001
    assert cells["input problems"] == "4 (1 rule crash)"
    assert "### Effort" in text and "Assumptions behind the estimate" in text
    assert "| kernels | 0 | 2 | 0 | 1 | 0 | 3 |" in text


# --- scan --diff: a pull-request comment ---------------------------------------------------


def _with_severities(*severities: Severity) -> Any:
    scan = sample_change_scan()
    scan.findings = [
        dataclasses.replace(scan.findings[0], severity=s, message=f"finding {n}")
        for n, s in enumerate(severities)
    ]
    return scan


@pytest.mark.parametrize(
    ("severities", "sentence"),
    [
        ((), "This change adds no ROCm findings."),
        ((Severity.BLOCKER,), "This change adds **1 ROCm blocker**."),
        (
            (Severity.BLOCKER, Severity.BLOCKER, Severity.HIGH, Severity.LOW),
            "This change adds **2 ROCm blockers** and 2 other findings (1 high, 1 low).",
        ),
        ((Severity.MEDIUM, Severity.MEDIUM), "This change adds **2 ROCm findings** (2 medium)."),
    ],
)
def test_the_comment_says_what_the_change_adds(
    severities: tuple[Severity, ...], sentence: str
) -> None:
    text = render_sample(_with_severities(*severities), Format.MARKDOWN)
    assert text.startswith(PR_COMMENT_MARKER + "\n## gpuport: ROCm findings in this change\n")
    assert f"\n{sentence}\n" in text


def test_the_comment_hides_one_fingerprint_per_listed_finding() -> None:
    scan = sample_change_scan()
    text = render_sample(scan, Format.MARKDOWN)
    block = text.split(FINGERPRINTS_OPEN + "\n", 1)[1].split("\n-->", 1)[0]
    listed = {line.split()[0] for line in block.splitlines()}
    assert listed == {fingerprint(f) for f in scan.findings}
    # hidden: the fingerprints are inside an HTML comment, not in the rendered text
    assert not any(fp in plain_text(parse(text)) for fp in listed)


def test_the_comment_escapes_the_base_ref() -> None:
    scan = sample_change_scan()
    scan.change = ChangedLines("x`|<img src=x>@team", "f" * 40, {})
    tokens = parse(render_sample(scan, Format.MARKDOWN))
    assert set(html_pieces(tokens)) <= OUR_HTML
    assert "x`|<img src=x>@team" in [t.content for t in walk(tokens) if t.type == "code_inline"]


def test_a_plain_scan_is_no_pr_comment() -> None:
    assert PR_COMMENT_MARKER not in render_sample(sample_scan(), Format.MARKDOWN)
