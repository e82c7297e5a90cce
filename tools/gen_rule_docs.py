"""Writes docs/rules.md from the rule declarations (an index, then every rule's page) and
src/gpuport/scan/rule_ids.py (every rule's id, which a scan knows without importing the rules).

.venv/bin/python tools/gen_rule_docs.py          # rewrite both
.venv/bin/python tools/gen_rule_docs.py --check  # exit 1 when one is out of date
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from gpuport.findings import Category
from gpuport.rules import Rule
from gpuport.scan.catalog import all_rules

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "rules.md"
IDS_OUT = ROOT / "src" / "gpuport" / "scan" / "rule_ids.py"


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


def render_ids() -> str:
    """The module of every rule's id, one to a line (as ruff formats it)."""
    body = "".join(f'    "{r.id}",\n' for r in all_rules())
    return (
        '"""Every rule\'s id: generated from the declarations by tools/gen_rule_docs.py; do not '
        "edit.\n\nA scan lists its rules by id without importing their modules "
        '(:mod:`gpuport.scan.catalog`).\n"""\n\n'
        f"RULE_IDS: tuple[str, ...] = (\n{body})\n"
    )


def main() -> int:
    outputs = {OUT: render(), IDS_OUT: render_ids()}
    if "--check" in sys.argv:
        stale = [
            path
            for path, text in outputs.items()
            if (path.read_text(encoding="utf-8") if path.exists() else "") != text
        ]
        for path in stale:
            print(f"{path} is out of date: run tools/gen_rule_docs.py", file=sys.stderr)
        return 1 if stale else 0
    for path, text in outputs.items():
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path} ({len(all_rules())} rules)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
