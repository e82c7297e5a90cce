"""The terminal and HTML reports in pieces: the same text as whole, never the whole at once."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from html import escape
from types import ModuleType

import pytest
from report_samples import TOOL_VERSION, sample_assessment, sample_scan

from gpuport.assess.verdict import Assessment
from gpuport.findings import Finding
from gpuport.report import Format, RenderOptions, html, render, render_chunks, terminal
from gpuport.report.common import content_security_policy
from gpuport.rules import Rule
from gpuport.scan.engine import ScanResult

OPTIONS = RenderOptions(color=False, width=100, tool_version=TOOL_VERSION)
COPIES = 150  # the sample's findings, once per copy of its files: ~2,000 findings


def _big_scan() -> ScanResult:
    """The sample scan's findings, in COPIES folders (so many files and many findings)."""
    scan = sample_scan()
    findings: list[Finding] = [
        dataclasses.replace(
            f, location=dataclasses.replace(f.location, path=f"copy{n:03}/{f.location.path}")
        )
        for n in range(COPIES)
        for f in scan.findings
    ]
    return dataclasses.replace(scan, findings=sorted(findings, key=lambda f: f.sort_key))


def _big_assessment() -> Assessment:
    return dataclasses.replace(sample_assessment(), scan=_big_scan())


CASES: list[tuple[Format, Callable[[], ScanResult | Assessment], ModuleType]] = [
    (Format.TERMINAL, _big_scan, terminal),
    (Format.TERMINAL, _big_assessment, terminal),
    (Format.HTML, _big_scan, html),
    (Format.HTML, _big_assessment, html),
]
IDS = ["terminal-scan", "terminal-assess", "html-scan", "html-assess"]


@pytest.mark.parametrize(("fmt", "build", "module"), CASES, ids=IDS)
def test_pieces_join_to_the_text_rendered_whole(
    fmt: Format,
    build: Callable[[], ScanResult | Assessment],
    module: ModuleType,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    result = build()
    chunk_chars = module.CHUNK_CHARS
    pieces = list(render_chunks(result, fmt, OPTIONS))
    # one piece as big as the report: the text the console or the template made whole
    monkeypatch.setattr(module, "CHUNK_CHARS", 10**12)
    whole = render(result, fmt, OPTIONS)
    assert "".join(pieces) == whole
    if isinstance(result, ScanResult):  # an assessment's terminal text lists ten findings
        assert len(pieces) >= len(whole) // chunk_chars > 3
        # no piece much over the size it is taken at (one finding's text at most)
        assert max(len(p) for p in pieces) < 2 * chunk_chars


def test_html_pieces_keep_the_policy_of_the_whole_page() -> None:
    pieces = list(render_chunks(_big_scan(), Format.HTML, OPTIONS))
    page = "".join(pieces)
    policy = escape(content_security_policy(page), quote=True)
    assert f'content="{policy}"' in pieces[0]  # in the head: the hash of every <style>
    assert page.count('http-equiv="Content-Security-Policy"') == 1


def test_html_views_are_made_only_as_the_page_reaches_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made: list[int] = []
    make = html._finding_view

    def counted(index: int, finding: Finding, rules: dict[str, Rule]) -> html.FindingView:
        made.append(index)
        return make(index, finding, rules)

    monkeypatch.setattr(html, "_finding_view", counted)
    scan = _big_scan()
    written = ""
    for piece in render_chunks(scan, Format.HTML, OPTIONS):
        written += piece
        # made as written: only the findings of the piece being gathered are ahead of the text
        ahead = len(made) - written.count("<article ")
        assert 0 <= ahead <= html.CHUNK_CHARS // 500
    assert made == list(range(1, len(scan.findings) + 1))
