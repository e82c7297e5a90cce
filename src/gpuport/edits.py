"""What a rule found at a place, and the text edits that fix it: shared by scan and port.

A scanner produces :class:`Hit` objects; the scan turns them into findings
(:func:`hits_to_findings`) and ``gpuport port`` applies their :class:`TextEdit` objects, so the
two never disagree about what is wrong or where. :class:`ChangeStatus` says what the port does
with each hit.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from gpuport.findings import Confidence, Finding, Fix
from gpuport.rules import Rule
from gpuport.syntax.text import LineIndex


class ChangeStatus(enum.StrEnum):
    """What the port does at one place."""

    CONVERTED = "converted"  # changed mechanically, no review needed
    NEEDS_REVIEW = "needs-review"  # changed, but a person should check the result
    UNCONVERTED = "unconverted"  # left as it was: gpuport could not translate it


@dataclass(frozen=True, slots=True, order=True)
class TextEdit:
    """Replace ``text[start:end]`` of the original file with ``text`` (an insertion when empty)."""

    start: int
    end: int
    text: str


@dataclass(frozen=True, slots=True)
class Hit:
    """One problem at ``text[start:end]`` and the edits that fix it.

    ``status`` says what the port does: CONVERTED and NEEDS_REVIEW apply ``edits``;
    UNCONVERTED leaves the text alone and ``note`` says why.
    """

    rule: Rule
    start: int
    end: int
    message: str
    family: str
    status: ChangeStatus
    edits: tuple[TextEdit, ...] = ()
    note: str = ""
    fix: str = ""  # the finding's fix text; the rule's own when empty
    before: str = ""  # what the port's change shows as the old text; the span when empty
    after: str = ""  # what it shows as the new text; derived from the edits when empty
    confidence: Confidence | None = None  # the rule's own when None


def hit_after(hit: Hit, text: str) -> str:
    """The new text of a hit's span once its edits are applied (``before`` when none)."""
    if hit.after:
        return hit.after
    inside = [e for e in hit.edits if hit.start <= e.start and e.end <= hit.end]
    if not inside:
        return text[hit.start : hit.end] if hit.status is ChangeStatus.UNCONVERTED else ""
    out = text[hit.start : hit.end]
    for edit in sorted(inside, reverse=True):
        out = out[: edit.start - hit.start] + edit.text + out[edit.end - hit.start :]
    return out


def hits_to_findings(path: str, text: str, hits: Iterable[Hit]) -> Iterator[Finding]:
    """One finding per rule and line: several hits of a rule on one line are told once."""
    index = LineIndex(text)
    grouped: dict[tuple[str, int], list[Hit]] = {}
    for hit in hits:
        line, _ = index.position(hit.start)
        grouped.setdefault((hit.rule.id, line), []).append(hit)
    for (_, line), group in sorted(grouped.items(), key=lambda item: (item[0][1], item[0][0])):
        first = min(group, key=lambda h: h.start)
        _, column = index.position(first.start)
        end_line, end_column = index.position(max(first.end - 1, first.start))
        message = first.message
        if len(group) > 1:
            message += f" (and {len(group) - 1} more on this line)"
        mechanical = first.status is ChangeStatus.CONVERTED and bool(first.edits)
        replacement = None
        if first.status is not ChangeStatus.UNCONVERTED and first.edits:
            replacement = hit_after(first, text) or None
        fix = Fix(first.fix or first.rule.fix, mechanical, replacement)
        yield first.rule.finding(
            path,
            line,
            column,
            message=message,
            fix=fix,
            end_line=end_line,
            end_column=end_column + 1,
            confidence=first.confidence,
        )
