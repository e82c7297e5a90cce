"""``gpuport explain`` in its formats: one rule's documentation page, or the index of rules.

A rule's page is its own Markdown (:meth:`~gpuport.rules.Rule.markdown`): as is in the
Markdown format, drawn by rich in the terminal format; the JSON format carries the fields of
the rule's declaration. The index is one line per rule in the terminal and Markdown formats.
"""

from __future__ import annotations

import json
from typing import Any

from rich.markdown import Markdown

from gpuport.report import Format, RenderOptions, renderer
from gpuport.report.common import console_text, memory_console
from gpuport.rules import Rule, RuleIndex


def rule_dict(rule: Rule) -> dict[str, Any]:
    """The rule's declaration as JSON-ready data."""
    return {
        "id": rule.id,
        "slug": rule.slug,
        "category": rule.category.value,
        "severity": rule.severity.label,
        "confidence": rule.confidence.label,
        "summary": rule.summary,
        "what": rule.what,
        "why": rule.why,
        "example": rule.example,
        "instead": rule.instead,
        "fix": rule.fix,
        "mechanical": rule.mechanical,
        "references": list(rule.references),
    }


@renderer(Rule, Format.TERMINAL)
def render_rule_terminal(rule: Rule, options: RenderOptions) -> str:
    """The rule's page drawn by rich: headings, code blocks and lists as a terminal shows them."""
    console = memory_console(options)
    console.print(Markdown(rule.markdown()))
    return console_text(console)


@renderer(Rule, Format.MARKDOWN)
def render_rule_markdown(rule: Rule, options: RenderOptions) -> str:
    # The page ends with a newline, and `gpuport explain` has always put a blank line after it.
    return rule.markdown() + "\n"


@renderer(Rule, Format.JSON)
def render_rule_json(rule: Rule, options: RenderOptions) -> str:
    return json.dumps(rule_dict(rule), indent=2) + "\n"


@renderer(RuleIndex, Format.TERMINAL)
@renderer(RuleIndex, Format.MARKDOWN)
def render_rule_index_lines(index: RuleIndex, options: RenderOptions) -> str:
    """One line per rule: id, slug, severity and summary (the same text in both formats)."""
    return "".join(f"{r.id}  {r.slug:<34} {r.severity.label:<8} {r.summary}\n" for r in index.rules)


@renderer(RuleIndex, Format.JSON)
def render_rule_index_json(index: RuleIndex, options: RenderOptions) -> str:
    return json.dumps([rule_dict(r) for r in index.rules], indent=2) + "\n"
