"""The kernel scanner's findings on a translated file, as changes a person must make."""

from __future__ import annotations

import re

from gpuport.findings import Severity
from gpuport.port.model import Change
from gpuport.port.translate.translation import NEEDS_REVIEW, UNCONVERTED
from gpuport.scan.kernels import analyze as scan_cuda_text
from gpuport.syntax.cxx import ID_CHARS as _ID


def scanner_findings(rel: str, text: str, code: str) -> list[Change]:
    """The kernel scanner's findings, as changes a person must make (not mechanical ones)."""
    findings = scan_cuda_text(rel, text, code=code, renames=False)
    lines = text.splitlines()
    out: list[Change] = []
    for item in findings:
        if item.fix is not None and item.fix.mechanical:
            continue  # what gpuport port does itself
        if item.severity is Severity.INFO:
            continue
        loc = item.location
        status = UNCONVERTED if item.severity >= Severity.HIGH else NEEDS_REVIEW
        snippet = ""
        if 0 < loc.line <= len(lines):
            line_text = lines[loc.line - 1]
            word = (
                re.match(rf"[{_ID}]+", line_text[max(0, loc.column - 1) :]) if loc.column else None
            )
            snippet = word.group() if word else line_text.strip()[:120]
        note = item.message
        if item.fix is not None and item.fix.text:
            note += f" — {item.fix.text}"
        out.append(
            Change(loc.line, loc.column, "kernel", snippet, snippet, status, note, item.rule_id)
        )
    return out
