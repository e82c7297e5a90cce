"""What every renderer shares: making text safe to show, ordering and counting findings, the
effort's wording, JSON text, and the in-memory rich console the terminal formats print into.
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
from collections import defaultdict
from dataclasses import dataclass, field, replace
from io import StringIO
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from gpuport.assess.guidance import FoldedComponent
from gpuport.assess.verdict import Assessment, day_range
from gpuport.findings import Finding, Severity, Skipped, Tier
from gpuport.project.file_folds import fold_by_folder
from gpuport.report import RenderOptions
from gpuport.report.json_stream import json_chunks
from gpuport.vcs import ChangedLines

if TYPE_CHECKING:  # rich is loaded by the terminal formats only, not by JSON or SARIF
    from rich.console import Console

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


def visible_lines(text: str) -> str:
    """Lines of ``text`` (a diff, say) for a terminal: each through :func:`display_text`.

    Newlines stay; every other control character, a ``\\r`` included, is shown as an escape,
    so nothing in the text can set the title, clear the screen or open a link.
    """
    lines = text.split("\n")
    return "\n".join(display_text(line) for line in lines)


def _escape_char(ch: str) -> str:
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def path_bytes(path: str) -> bytes:
    """A path's original bytes (undecodable ones come back from surrogateescape)."""
    try:
        return path.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate that did not come from a file name
        return path.encode("utf-8", "backslashreplace")


# --- Markdown (CommonMark https://spec.commonmark.org/0.31.2/ and GFM https://github.github.com/gfm/)

# Every ASCII punctuation character that starts inline markup (CommonMark §2.4 allows a
# backslash before any of them): emphasis, code, links, images, raw HTML, entities, tables
# and strikethrough. Text is kept on one line, so block markers (#, -, +, 1.) need no escape.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]{}()<>&|~!#])")
# GitHub turns @name into a mention (a notification) even when escaped: a zero-width space
# after the @ keeps the text readable and inert.
_MENTION = re.compile(r"@(?=[A-Za-z0-9])")
# GitHub also links a bare https://…, ftp://… or www.… (GFM's autolink extension, §6.9,
# which cmark-gfm starts at the ':' or the "www."): a backslash before that ':' or '.'
# leaves the text as it reads and copies, but no longer a link.
_AUTOLINK = re.compile(r"(?i)(?<![a-z0-9])(?:https?|ftp|mailto|xmpp)(?=:)|(?<![a-z0-9])www(?=\.)")


def md_text(text: str) -> str:
    """Untrusted text as inert inline Markdown, on one line."""
    text = " ".join(display_text(text).splitlines())
    text = _MARKDOWN_SPECIAL.sub(r"\\\1", text)
    text = _AUTOLINK.sub(lambda m: m.group() + "\\", text)
    return _MENTION.sub("@\u200b", text)


def md_code_cell(text: str) -> str:
    """Untrusted text as an inline code span in a GFM table cell, on one line.

    The span's backtick run is longer than any inside the text, so the text cannot close it,
    and a ``|`` is escaped, which GFM requires even inside code (spec example 200).
    """
    text = " ".join(display_text(text).splitlines()).replace("|", "\\|")
    if not text:
        return ""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    return f"{ticks} {text} {ticks}" if longest else f"`{text}`"


def link_target(path: str, line: int = 0, base: str = "") -> str:
    """A link to ``path`` (percent-encoded, so no scheme or markup can sneak in).

    Relative to the project, or under ``base``: an http(s) URL ending in ``/`` that the
    command line checked (``scan --link-base``), such as a repository's file view at a commit.
    """
    target = path_uri(path)
    if base:
        target = base + target.lstrip("/")
    elif target.startswith("/"):  # relative to the project, never a protocol-relative //host
        target = "./" + target.lstrip("/")
    return f"{target}#L{line}" if line > 0 else target


# --- HTML -------------------------------------------------------------------------------------


# https://www.w3.org/TR/CSP3/ : nothing may load or run. The page's own <style> blocks apply
# by their SHA-256 (no 'unsafe-inline'); there is no script, no image, no form, no frame.
_CSP_REST = "default-src 'none'; base-uri 'none'; form-action 'none'"
_STYLE_BLOCK = re.compile(r"<style>(.*?)</style>", re.DOTALL)
_CHARSET_META = re.compile(r"<meta charset=\"?utf-8\"?>", re.IGNORECASE)


def content_security_policy(page: str) -> str:
    """The policy of an HTML ``page``: its own <style> blocks by hash, nothing else at all."""
    hashes = [
        "'sha256-" + base64.b64encode(hashlib.sha256(css.encode("utf-8")).digest()).decode() + "'"
        for css in _STYLE_BLOCK.findall(page)
    ]
    style_src = " ".join(hashes) or "'none'"
    return f"{_CSP_REST}; style-src {style_src}"


def with_content_security_policy(page: str) -> str:
    """``page`` with its Content-Security-Policy meta tag right after the charset declaration.

    The page's text from the project is escaped before this runs, so every <style> it finds
    is the renderer's own.
    """
    policy = html.escape(content_security_policy(page), quote=True)
    meta = f'<meta http-equiv="Content-Security-Policy" content="{policy}">'
    found = _CHARSET_META.search(page)
    assert found is not None, "an HTML report declares its charset first"
    at = found.end()
    if page.startswith("\n", at):  # a page laid out one tag a line keeps that layout
        meta = "\n" + meta
    return page[:at] + meta + page[at:]


def html_text(text: object) -> str:
    """Text safe inside HTML elements and quoted attributes."""
    return html.escape(display_text(str(text)), quote=True)


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def json_path(path: str, shown: str | None = None) -> dict[str, str]:
    """A path's JSON fields: ``path`` as shown, and ``uri`` when that is not the path itself.

    JSON carries valid text only, so a name that was not UTF-8 is shown with U+FFFD for each
    such byte (``shown``, when given, is another display of it); then the ``uri`` field, its
    bytes percent-encoded (RFC 3986, as SARIF's artifact URIs), gives the name back exactly
    (``urllib.parse.unquote_to_bytes``).
    """
    if shown is None:
        shown = _LONE_SURROGATE.sub("\ufffd", path)
    return {"path": shown} if shown == path else {"path": shown, "uri": path_uri(path)}


def path_uri(path: str) -> str:
    """A relative URI reference for a root-relative path: its bytes, percent-encoded."""
    return quote(path_bytes(path), safe="/")


def dumps(document: object) -> str:
    """JSON text that is always valid UTF-8 and valid JSON, whatever the project held.

    Bytes that were not UTF-8 become U+FFFD (a path that must stay exact carries an ``uri``
    beside it: :func:`json_path`); C1 controls, DEL and U+2028/U+2029 are ``\\uXXXX``
    escapes, as JSON writes the C0 controls (:mod:`gpuport.report.json_stream`).
    """
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


def change_dict(change: ChangedLines, outside: int) -> dict[str, Any]:
    """What `scan --diff` limited the findings to, and how many findings were outside it."""
    return {
        "base": change.base,
        "merge_base": change.merge_base,
        "files": len(change.files),
        "outside": outside,
    }


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


# --- mentions folded per folder ---------------------------------------------------------------

MAX_FOLDED_FILES = 6  # file names a folded line spells out; the count says how many in all


@dataclass(frozen=True, slots=True)
class Listed:
    """Findings as the human formats list them, and where each folded finding went."""

    findings: list[Finding]
    # id() of a finding folded into a folder's line -> that line (for links to it)
    folded_into: dict[int, Finding] = field(default_factory=dict)

    def shown_as(self, finding: Finding) -> Finding:
        """The line ``finding`` is listed as: itself, or the folder line it was folded into."""
        return self.folded_into.get(id(finding), finding)


def listed_findings(findings: list[Finding]) -> Listed:
    """``findings`` with "one decision" mentions listed once per folder, with count and files.

    GP300 rename counts and GP312's CUTLASS type per instantiation file share one fix per
    folder (project.file_folds.FOLD_BY_FOLDER): the terminal, Markdown and HTML reports list each
    folder once, naming its files. JSON and SARIF keep every finding, since baselines,
    suppressions and ``port`` work per file.
    """
    kept, folded = fold_by_folder(findings)
    if not folded:
        return Listed(findings)
    originals = {id(f) for f in findings}
    groups: dict[tuple[str, str, Tier], list[Finding]] = defaultdict(list)
    for f in folded:
        groups[(f.rule_id, f.location.path.rpartition("/")[0], f.tier)].append(f)
    out: list[Finding] = []
    folded_into: dict[int, Finding] = {}
    for f in kept:
        group = (
            groups.get((f.rule_id, f.location.path.rpartition("/")[0], f.tier))
            if id(f) not in originals
            else None
        )
        if group:
            files = sorted({g.location.path.rpartition("/")[2] for g in group})
            named = ", ".join(files[:MAX_FOLDED_FILES])
            more = (
                f" and {len(files) - MAX_FOLDED_FILES} more"
                if len(files) > MAX_FOLDED_FILES
                else ""
            )
            f = replace(f, message=f"{f.message} Files: {named}{more}.")
            folded_into.update((id(g), f) for g in group)
        out.append(f)
    return Listed(out, folded_into)


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
    from rich.console import Console

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


# --- the verdict's guidance ------------------------------------------------------------------


def tier_text(assessment: Assessment) -> str:
    """Findings per tier on one line: ``product 12 · tests 3``; "" when there are none."""
    return " · ".join(f"{tier.value} {n}" for tier, n in assessment.tiers.items())


def folded_text(component: FoldedComponent) -> str:
    """One line for a folded component: where, what, how many findings, its ROCm alternative."""
    text = (
        f"{component.path}: {component.status}, {plural(component.findings, 'finding')} set aside"
    )
    if component.alternative:
        text += f"; on ROCm the project uses {component.alternative}"
    if component.evidence:
        text += f" ({component.evidence[0]})"
    return text
