"""``gpuport explain [RULE]``: a rule's documentation page, or the list of every rule."""

from __future__ import annotations

import sys
from difflib import get_close_matches

import click

from gpuport.cli.common import CommandError, console_render_options, format_option, handle_errors
from gpuport.cli.ui import emit
from gpuport.report import Format, render
from gpuport.rules import Rule, RuleIndex
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
@format_option(Rule, RuleIndex)
@handle_errors
def explain(rule_id: str | None, fmt: str) -> None:
    """Explain RULE_ID (an id like GP301 or a slug); without one, list every rule."""
    chosen = Format(fmt)
    if rule_id is None:
        emit(render(RuleIndex(tuple(all_rules())), chosen), None)
        return
    if chosen is Format.TERMINAL and not sys.stdout.isatty():
        chosen = Format.MARKDOWN  # off a terminal, the page is more use as its Markdown
    emit(render(find_rule(rule_id), chosen, console_render_options()), None)
