"""``gpuport explain [RULE]``: a rule's documentation page, or the list of every rule."""

from __future__ import annotations

import json
import sys
from difflib import get_close_matches
from typing import Any

import click

from gpuport.cli.common import CommandError, format_option, handle_errors
from gpuport.rules import Rule
from gpuport.scan.catalog import all_rules, get_rule


def find_rule(key: str) -> Rule:
    """The rule with id or slug ``key``; a :class:`CommandError` with close names otherwise."""
    try:
        return get_rule(key)
    except KeyError:
        names = [x.id for x in all_rules()] + [x.slug for x in all_rules()]
        close = get_close_matches(key, names, n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise CommandError(f"no rule {key!r}{hint}; `gpuport explain` lists them") from None


@click.command("explain")
@click.argument("rule_id", required=False)
@format_option(("terminal", "markdown", "json"))
@handle_errors
def explain(rule_id: str | None, fmt: str) -> None:
    """Explain RULE_ID (an id like GP301 or a slug); without one, list every rule."""
    if rule_id is None:
        rules = all_rules()
        if fmt == "json":
            click.echo(json.dumps([_rule_dict(r) for r in rules], indent=2))
            return
        for r in rules:
            click.echo(f"{r.id}  {r.slug:<34} {r.severity.label:<8} {r.summary}")
        return
    r = find_rule(rule_id)
    if fmt == "json":
        click.echo(json.dumps(_rule_dict(r), indent=2))
    elif fmt == "markdown" or not sys.stdout.isatty():
        click.echo(r.markdown())
    else:
        from rich.console import Console
        from rich.markdown import Markdown

        Console().print(Markdown(r.markdown()))


def _rule_dict(r: Any) -> dict[str, Any]:
    return {
        "id": r.id,
        "slug": r.slug,
        "category": r.category.value,
        "severity": r.severity.label,
        "confidence": r.confidence.label,
        "summary": r.summary,
        "what": r.what,
        "why": r.why,
        "example": r.example,
        "instead": r.instead,
        "fix": r.fix,
        "mechanical": r.mechanical,
        "references": list(r.references),
    }
