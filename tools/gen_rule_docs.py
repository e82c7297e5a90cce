"""Writes docs/rules.md from the rule declarations: an index, then every rule's page.

.venv/bin/python tools/gen_rule_docs.py          # rewrite docs/rules.md
.venv/bin/python tools/gen_rule_docs.py --check  # exit 1 when it is out of date
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from gpuport.findings import Category
from gpuport.rules import Rule
from gpuport.scan.catalog import all_rules

OUT = Path(__file__).resolve().parent.parent / "docs" / "rules.md"


def anchor(rule: Rule) -> str:
    """Where the index links a rule in docs/rules.md: its section on the same page."""
    return f"#{rule.id.lower()}-{rule.slug}"


def index_lines(rules: list[Rule], link: Callable[[Rule], str] = anchor) -> list[str]:
    """One table per category: id (linked with ``link``), slug, severity, fix, summary.

    The documentation site (tools/gen_docs_site.py) links each id to the rule's own page.
    """
    lines: list[str] = []
    for category in Category:
        chosen = [r for r in rules if r.category is category]
        if not chosen:
            continue
        lines += [
            f"## {category.value}",
            "",
            "| id | slug | severity | fix | summary |",
            "|---|---|---|---|---|",
        ]
        for r in chosen:
            fix = "mechanical" if r.mechanical else "review"
            lines.append(
                f"| [{r.id}]({link(r)}) | `{r.slug}` | {r.severity.label} | {fix} | {r.summary} |"
            )
        lines.append("")
    return lines


def render() -> str:
    rules = all_rules()
    lines = [
        "# gpuport rules",
        "",
        "Generated from the rule declarations by `tools/gen_rule_docs.py`; "
        "`gpuport explain RULE` shows the same page.",
        "",
        *index_lines(rules),
    ]
    for r in rules:
        lines.append(
            r.markdown()
            .replace(f"# {r.id} {r.slug}", f"## {r.id} {r.slug}", 1)
            .replace("\n## ", "\n### ")
            .replace("### " + r.id, "## " + r.id, 1)
        )
    return "\n".join(lines).rstrip() + "\n"


def main() -> int:
    text = render()
    if "--check" in sys.argv:
        current = OUT.read_text(encoding="utf-8") if OUT.exists() else ""
        if current != text:
            print(f"{OUT} is out of date: run tools/gen_rule_docs.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT} ({len(all_rules())} rules)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
