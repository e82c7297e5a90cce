"""What every renderer shares: making text safe to show, ordering and counting findings, the
effort's wording, JSON text, and the in-memory rich console the terminal formats print into.
"""

from __future__ import annotations

import html
import re
from io import StringIO

from rich.console import Console

from gpuport.assess.verdict import Assessment, day_range
from gpuport.findings import Finding, Severity, Skipped
from gpuport.report import RenderOptions
from gpuport.report.json_stream import json_chunks

TOOL_NAME = "gpuport"
TAB_SIZE = 4  # the width a tab of a scanned file takes in the terminal formats

# Most serious first: the order every format lists severities in.
SEVERITIES_DESC: tuple[Severity, ...] = tuple(sorted(Severity, reverse=True))

# C0/C1 control characters (tab and newline excepted) and the bidirectional overrides and
# isolates used in "Trojan Source" attacks (https://trojansource.codes/, CVE-2021-42574):
# shown as visible escapes so scanned text can neither drive a terminal nor reorder what a
# reader sees.
_INVISIBLE_RE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def tool_version(options: RenderOptions) -> str:
    """The version to print: the caller's, or this installation's."""
    if options.tool_version:
        return options.tool_version
    from gpuport import __version__

    return __version__


# --- text safe to show -----------------------------------------------------------------------


def display_text(text: str) -> str:
    """``text`` made safe to show: control and bidi characters and undecodable bytes visible.

    Paths and file contents may hold bytes that were not UTF-8 (kept by Python as lone
    surrogates); they are shown as ``\\xNN`` rather than crashing the writer.
    """
    if any("\ud800" <= ch <= "\udfff" for ch in text):
        try:
            raw = text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            raw = text.encode("utf-8", "backslashreplace")
        text = raw.decode("utf-8", "backslashreplace")
    return _INVISIBLE_RE.sub(lambda m: _escape_char(m.group()), text)


def _escape_char(ch: str) -> str:
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def path_bytes(path: str) -> bytes:
    """A path's original bytes (undecodable ones come back from surrogateescape)."""
    try:
        return path.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate that did not come from a file name
        return path.encode("utf-8", "backslashreplace")


def html_text(text: object) -> str:
    """Text safe inside HTML elements and quoted attributes."""
    return html.escape(display_text(str(text)), quote=True)


def dumps(document: object) -> str:
    """JSON text, UTF-8 friendly; undecodable path bytes stay as JSON ``\\udcNN`` escapes."""
    return "".join(json_chunks(document))  # a Deferred array in it is made here


def plural(count: int, noun: str) -> str:
    """``1 file``, ``2 files``."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


# --- findings --------------------------------------------------------------------------------


def sorted_findings(findings: list[Finding]) -> list[Finding]:
    """Findings in file order (path, line, column, rule)."""
    return sorted(findings, key=lambda f: f.sort_key)


def by_severity(findings: list[Finding]) -> list[Finding]:
    """Findings most serious first, then in file order."""
    return sorted(findings, key=lambda f: (-f.severity, f.sort_key))


def line_text(finding: Finding) -> str:
    """The text of the finding's own line, from its excerpt ("" when unknown)."""
    excerpt = finding.excerpt
    if excerpt is None or finding.location.line <= 0:
        return ""
    index = finding.location.line - excerpt.start_line
    return excerpt.lines[index] if 0 <= index < len(excerpt.lines) else ""


def fingerprint(finding: Finding) -> str:
    """The finding's baseline fingerprint (the same one ``--write-baseline`` records)."""
    return finding.fingerprint(line_text(finding))


def is_mechanical(finding: Finding) -> bool:
    return finding.fix is not None and finding.fix.mechanical


def fixable_counts(findings: list[Finding]) -> tuple[int, int]:
    """(findings gpuport can fix, actionable findings) — low severity or above."""
    actionable = [f for f in findings if f.severity >= Severity.LOW]
    return sum(1 for f in actionable if is_mechanical(f)), len(actionable)


def severity_counts(findings: list[Finding]) -> dict[str, int]:
    """Findings per severity label, most serious first, only severities that occur."""
    counts = {s.label: 0 for s in SEVERITIES_DESC}
    for f in findings:
        counts[f.severity.label] += 1
    return {k: v for k, v in counts.items() if v}


def category_severity_table(assessment: Assessment) -> dict[str, dict[str, int]]:
    """The assessment's category-by-severity counts with severities most serious first."""
    table = assessment.by_category_and_severity()
    return {
        category: {s.label: row[s.label] for s in SEVERITIES_DESC if s.label in row}
        for category, row in table.items()
    }


def skipped_where(skipped: Skipped) -> str:
    """``path:line`` of an input problem, or the path when it concerns the whole file."""
    return f"{skipped.path}:{skipped.line}" if skipped.line else skipped.path


# --- effort ----------------------------------------------------------------------------------


def hours_text(hours: float) -> str:
    """Hours for people: one decimal; under an hour, two significant digits (0.25, not 0.2)."""
    return f"{hours:.1f}" if hours >= 1 or hours == 0 else f"{hours:.2g}"


def days_text(hours: float) -> str:
    """The day range of an estimate, as the effort model states it."""
    low, high = day_range(hours)
    return f"{low:.1f}\u2013{high:.1f}"  # an en dash between the two ends


# --- the terminal formats' console -----------------------------------------------------------


def memory_console(options: RenderOptions) -> Console:
    """A console that writes into memory, deaf to the environment (stable goldens).

    Markup and emoji codes are off: text from files and data is printed as the text it is.
    """
    return Console(
        file=StringIO(),
        width=options.width,
        force_terminal=options.color,
        force_jupyter=False,
        force_interactive=False,
        color_system="standard" if options.color else None,
        no_color=not options.color,
        highlight=False,
        markup=False,
        emoji=False,
        legacy_windows=False,
        tab_size=TAB_SIZE,
        _environ={},
    )


def console_text(console: Console) -> str:
    """What was printed, without the trailing blanks rich pads lines and tables with."""
    file = console.file
    assert isinstance(file, StringIO)
    return "".join(line.rstrip() + "\n" for line in file.getvalue().splitlines())
