"""Terminal output: what a person reads first, with no way for a file to drive the terminal."""

from __future__ import annotations

import dataclasses
import re

from report_samples import (
    CUDA_RUNTIME_CALL,
    TOOL_VERSION,
    decided_assessment,
    empty_assessment,
    hostile_scan,
    sample_assessment,
    sample_scan,
)

from gpuport.findings import Excerpt
from gpuport.report import Format, RenderOptions, render

PLAIN = RenderOptions(color=False, width=100, tool_version=TOOL_VERSION)
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def test_scan_groups_findings_by_file_in_order() -> None:
    text = render(sample_scan(), Format.TERMINAL, PLAIN)
    headers = [line for line in text.splitlines() if line and not line.startswith(" ")]
    files = [
        h
        for h in headers
        if h
        in {"CMakeLists.txt", "Dockerfile", "csrc/kernels.cu", "requirements.txt", "src/train.py"}
    ]
    assert files == [
        "CMakeLists.txt",
        "Dockerfile",
        "csrc/kernels.cu",
        "requirements.txt",
        "src/train.py",
    ]
    kernels = text[text.index("csrc/kernels.cu\n") : text.index("requirements.txt\n")]
    assert kernels.index("12:5  low") < kernels.index("42:5  high") < kernels.index("57  high")


def test_scan_finding_shows_location_rule_excerpt_and_fix() -> None:
    text = render(sample_scan(), Format.TERMINAL, PLAIN)
    block = text[text.index("12:5  low") : text.index("42:5  high")]
    assert "GP302 cuda-runtime-call" in block
    assert "cudaMalloc becomes hipMalloc" in block
    assert "> 12 │     cudaMalloc(&x, n * sizeof(float));" in block
    # The caret line underlines the finding's columns 5..14.
    caret = next(line for line in block.splitlines() if "^" in line)
    code = next(line for line in block.splitlines() if "> 12 │" in line)
    assert caret.index("^") == code.index("cudaMalloc")
    assert caret.count("^") == len("cudaMalloc")
    assert "fix: Rename the call." in block
    assert "replacement: hipMalloc" in block
    assert "gpuport port can fix this" in block
    review = text[text.index("42:5  high") : text.index("57  high")]
    assert "gpuport port can fix this" not in review


def test_scan_lists_input_problems_and_a_summary() -> None:
    text = render(sample_scan(), Format.TERMINAL, PLAIN)
    problems = text[text.index("Input problems (4)") :]
    assert "assets/model.bin" in problems and "skipped (binary)" in problems
    assert "csrc/legacy.cu:7" in problems and "partly analysed (not-utf8)" in problems
    assert "src/train.py" in problems and "rule crash" in problems
    summary = " ".join(text.strip().splitlines()[-2:])
    assert summary.startswith("9 findings (1 blocker, 3 high, 2 medium, 2 low, 1 info) in 5 files")
    assert "gpuport can fix 3 of 8" in summary
    assert "4 input problems (1 rule crash)" in summary


def test_assessment_puts_the_verdict_first() -> None:
    text = render(sample_assessment(), Format.TERMINAL, PLAIN)
    first = "\n".join(text.splitlines()[:5])
    assert "Verdict: BLOCKED" in first
    assert "GP101 at requirements.txt:3:1" in first
    order = [
        "Blockers (1)",
        "gpuport can fix 3 of 8",
        "Estimated effort: 25.6 hours (2.1–8.5 days)",  # noqa: RUF001
        "Assumptions:",
        "Findings by category and severity",
        "Top findings (9 of 9",
        "Input problems (4)",
    ]
    positions = [text.index(marker) for marker in order]
    assert positions == sorted(positions)
    effort = text[text.index("Estimated effort") : text.index("Assumptions:")]
    assert re.search(r"dependencies\s+2\s+1\s+16\.1\s+1\.3–5\.4", effort)  # noqa: RUF001
    assert re.search(r"build\s+1\s+0\s+0\.25\s+0\.0–0\.1", effort)  # noqa: RUF001
    table = text[text.index("Findings by category") : text.index("Top findings")]
    assert re.search(r"kernels\s+·\s+2\s+·\s+1\s+·\s+3", table)


def test_assessment_top_findings_are_the_most_serious() -> None:
    assessment = sample_assessment()
    extra = [
        CUDA_RUNTIME_CALL.finding("csrc/more.cu", n, 1, excerpt=Excerpt(n, ("cudaFree(x);",)))
        for n in range(1, 8)
    ]
    assessment.scan.findings = sorted(assessment.scan.findings + extra, key=lambda f: f.sort_key)
    text = render(assessment, Format.TERMINAL, PLAIN)
    top = text[text.index("Top findings") : text.index("Input problems")]
    assert "Top findings (10 of 16, most serious first)" in top
    assert top.index("blocker GP101") < top.index("high    GP301")
    assert "… and 6 more" in top
    assert "info    GP202" not in top


def test_ready_assessment() -> None:
    text = render(empty_assessment(), Format.TERMINAL, PLAIN)
    assert "Verdict: READY" in text
    assert "nothing to fix" in text
    assert "Estimated effort" not in text


def test_colour_only_when_asked() -> None:
    plain = render(sample_assessment(), Format.TERMINAL, PLAIN)
    coloured = render(
        sample_assessment(), Format.TERMINAL, RenderOptions(color=True, tool_version=TOOL_VERSION)
    )
    assert "\x1b[" not in plain
    assert ANSI.search(coloured)
    assert ANSI.sub("", coloured).split() == plain.split()


def test_width_is_respected() -> None:
    for width in (60, 100, 140):
        options = RenderOptions(width=width, tool_version=TOOL_VERSION)
        for result in (sample_scan(), sample_assessment()):
            text = render(result, Format.TERMINAL, options)
            assert max(len(line) for line in text.splitlines()) <= width


def test_hostile_text_cannot_drive_the_terminal() -> None:
    for options in (PLAIN, RenderOptions(color=True, tool_version=TOOL_VERSION)):
        text = render(hostile_scan(), Format.TERMINAL, options)
        # The escape codes in the excerpt are shown, not sent; so is the bidi override.
        assert "\x1b[31mred" not in text
        assert "\\x1b[31mred\\x1b[0m" in text
        assert "\u202e" not in text and "\\u202eevil" in text
        assert "bad\\xffname.cu" in text
        # Brackets in file content are text, never rich markup.
        assert "docs/[click me](javascript:alert(4)).md" in ANSI.sub("", text)
        assert "<script>alert(1)</script>" in ANSI.sub("", text)


def test_a_long_verdict_reason_wraps_under_its_first_word() -> None:
    assessment = sample_assessment()
    assessment.reasons = ["GP999 at a/very/long/path.cu:1:1: " + "word " * 40]
    text = render(assessment, Format.TERMINAL, RenderOptions(width=80))
    lines = [line for line in text.splitlines() if "word" in line]
    assert len(lines) >= 3 and "• GP999" in lines[0]
    bullet_text_column = lines[0].index("GP999")
    for continuation in lines[1:]:
        inner = continuation.lstrip("│ ")
        assert continuation.index(inner) == bullet_text_column, continuation


def _assumption_blocks(text: str) -> list[list[str]]:
    """The lines under each "Assumptions:" heading, up to the next blank line."""
    lines, blocks = text.splitlines(), []
    for index, line in enumerate(lines):
        if line == "Assumptions:":
            block = []
            for following in lines[index + 1 :]:
                if not following.strip():
                    break
                block.append(following)
            blocks.append(block)
    return blocks


def test_assumptions_wrap_under_their_text_not_at_the_margin() -> None:
    text = render(decided_assessment(), Format.TERMINAL, RenderOptions(width=40))
    blocks = _assumption_blocks(text)
    assert len(blocks) == 2  # the economics' and the effort's
    for block in blocks:
        assert any(not line.startswith("  - ") for line in block)  # something did wrap
        for line in block:
            assert line.startswith(("  - ", "    ")), line


def test_an_amd_option_that_costs_more_says_so_in_words() -> None:
    assessment = decided_assessment()
    assert assessment.recommendation is not None
    economics = assessment.recommendation.economics
    assert economics is not None
    assessment.recommendation = dataclasses.replace(
        assessment.recommendation,
        economics=dataclasses.replace(economics, monthly_saving_usd=-117.0, payback_months=None),
    )
    text = " ".join(render(assessment, Format.TERMINAL, PLAIN).split())
    assert "4 x AMD Instinct MI300X, costing $117 a month more than today" in text
    assert "saving -$117" not in text


def test_a_narrow_terminal_lists_each_factor_with_its_evidence_under_it() -> None:
    wide = render(decided_assessment(), Format.TERMINAL, PLAIN)
    assert re.search(r"^ factor +holds +direction +evidence$", wide, re.M)
    assert "· kernels/attn.cu:12: __global__ void attn(...)" in wide  # one item per line
    narrow = render(decided_assessment(), Format.TERMINAL, RenderOptions(width=80))
    assert not re.search(r"^ factor +holds", narrow, re.M)
    lines = narrow.splitlines()
    head = lines.index(" custom-cuda-kernels: yes, towards CUDA")
    assert lines[head + 1 : head + 3] == [
        "  · kernels/attn.cu:12: __global__ void attn(...)",
        "  · setup.py:9: CUDAExtension",
    ]
    assert " vllm-stack: yes, towards ROCm" in lines


def test_a_long_url_in_an_assumption_breaks_across_lines_and_is_never_cut() -> None:
    assessment = decided_assessment()
    assert assessment.recommendation is not None
    economics = assessment.recommendation.economics
    assert economics is not None
    url = "https://example.com/" + "a-very-long-path-segment/" * 4 + "prices.html"
    assessment.recommendation = dataclasses.replace(
        assessment.recommendation,
        economics=dataclasses.replace(economics, assumptions=(f"price: see {url}",)),
    )
    text = render(assessment, Format.TERMINAL, RenderOptions(width=60))
    block = _assumption_blocks(text)[0]
    assert "…" not in "".join(block)
    assert url in "".join(line.strip().removeprefix("- ") for line in block)


def test_a_top_finding_header_that_wraps_hangs_under_the_rule_not_at_the_margin() -> None:
    text = render(sample_assessment(), Format.TERMINAL, RenderOptions(width=64))
    lines = text[text.index("Top findings") :].splitlines()
    heads = [n for n, line in enumerate(lines) if re.match(r"  \S.*  (blocker|high) +GP", line)]
    assert len(heads) >= 3
    for n in heads:  # at 64 columns each of these goes on to a second line, under its rule id
        rule = lines[n].index(" GP") + 1
        after = lines[n + 1]
        assert after[:rule].strip() == "" and after[rule] != " ", (lines[n], after)


def test_the_declared_settings_are_listed_in_the_terminal_and_markdown_as_in_html() -> None:
    assessment = decided_assessment()
    for fmt in (Format.TERMINAL, Format.MARKDOWN, Format.HTML):
        text = " ".join(render(assessment, fmt, PLAIN).split())
        assert "Declared" in text and "pyproject.toml" in text, fmt
        assert "tokens_per_month" in text and "20,000,000,000" in text, fmt


def test_an_unknown_factor_points_at_the_asks_instead_of_repeating_its_own() -> None:
    assessment = decided_assessment()
    recommendation = assessment.recommendation
    assert recommendation is not None
    for fmt in (Format.TERMINAL, Format.MARKDOWN, Format.HTML):
        text = " ".join(render(assessment, fmt, PLAIN).split())
        assert text.count("tell gpuport") == 1, fmt  # in the asks alone
        assert "unknown: see “To decide the unknown factors” below" in text, fmt
    unlisted = dataclasses.replace(recommendation, asks=())  # made without the merged asks
    assessment.recommendation = unlisted
    text = " ".join(render(assessment, Format.TERMINAL, PLAIN).split())
    assert "unknown: tell gpuport `latency_target_ms`" in text
