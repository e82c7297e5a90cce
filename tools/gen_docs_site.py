"""Writes the documentation site's Markdown pages from the code: rules, KB tables, commands.

.venv/bin/python tools/gen_docs_site.py                 # pages into build/docs-site
.venv/bin/python tools/gen_docs_site.py --out DIR       # pages into DIR (emptied first)

Nothing here is written by hand or committed: every page comes from a declaration the code
holds (``gpuport.scan.catalog.all_rules()``, the tables ``gpuport kb list`` lists, the click
commands' help), so the site cannot drift from the code. ``make docs`` runs this and then
``mkdocs build --strict`` (mkdocs.yml reads build/docs-site, writes build/site); the test suite
does the same into a temporary folder (tests/packaging/test_docs_site.py).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

sys.path.insert(0, str(Path(__file__).resolve().parent))  # gen_rule_docs, beside this file

from gen_rule_docs import index_lines

from gpuport import __version__
from gpuport import kb as knowledge
from gpuport.cli import COMMANDS, main
from gpuport.kb.query import TABLES, kb_counts, kb_table
from gpuport.report import Format, render
from gpuport.report.common import md_text
from gpuport.rules import Rule
from gpuport.scan.catalog import all_rules

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "build" / "docs-site"
# The knowledge base's folder: MkDocs names a section after its folder ("Knowledge base").
KB_DIR = "knowledge-base"
HELP_WIDTH = 78  # the help fits the content column of a laptop screen, unscrolled

KB_ABOUT = {
    "packages": "Python packages: whether each has a ROCm build, and what to install instead.",
    "libraries": "CUDA libraries (headers, link names, CMake targets) and their ROCm counterparts.",
    "env": "CUDA and NVIDIA environment variables and what ROCm reads instead.",
    "commands": "NVIDIA command-line tools and the ROCm tools that do their job.",
    "docker": "CUDA container images and docker flags, and their ROCm counterparts.",
    "indexes": "pip indexes that serve CUDA builds, and the ROCm ones.",
    "gpus": "AMD GPU architectures (gfx ids), the products built on them and ROCm's support.",
}


def rule_page(rule: Rule) -> str:
    return rule.markdown()


def rules_index(rules: list[Rule]) -> str:
    lines = [
        "# Rules",
        "",
        f"The {len(rules)} rules `gpuport scan` and `gpuport assess` apply, by category. "
        "`gpuport explain RULE` prints a rule's page in the terminal.",
        "",
        *index_lines(rules, link=lambda r: f"{r.id}.md"),
    ]
    return "\n".join(lines).rstrip() + "\n"


def _code(text: str) -> str:
    """``text`` as an inline code span that no backtick inside it can close."""
    text = " ".join(text.split())
    ticks = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    return f"{ticks} {text} {ticks}" if len(ticks) > 1 else f"`{text}`"


def _value(value: Any) -> str:
    """A KB field's value as Markdown: sources as links, URLs and templates as code."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        if all(isinstance(v, str) and v.startswith("https://") for v in value):
            return "\n" + "\n".join(f"    - <{v}>" for v in value)
        return ", ".join(_value(v) for v in value)
    if isinstance(value, dict):
        return "; ".join(f"{md_text(str(k))}: {_value(v)}" for k, v in value.items())
    if not isinstance(value, str):
        return md_text(json.dumps(value))
    if "://" in value and " " not in value.strip():
        return _code(value)
    return md_text(value)


def kb_page(table: str) -> str:
    """One KB table as ``gpuport kb list TABLE --format json`` gives it, one section an entry."""
    listing = kb_table(table, knowledge.DEFAULT_ROCM_VERSION)
    entries = json.loads(render(listing, Format.JSON))
    lines = [
        f"# {table}",
        "",
        f"{KB_ABOUT.get(table, '')} {len(entries)} entries; `gpuport kb list {table}` lists "
        f"them, `gpuport kb show NAME` finds one. Index URLs and image tags are filled in for "
        f"ROCm {knowledge.DEFAULT_ROCM_VERSION}.",
        "",
    ]
    for entry in entries:
        title = next((v for v in entry.values() if isinstance(v, str) and v), "(entry)")
        lines += [f"## {md_text(title)}", ""]
        for key, value in entry.items():
            if value in ("", None, [], {}):
                continue
            lines.append(f"- **{key.replace('_', ' ')}**: {_value(value)}")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def kb_index() -> str:
    counts = dict(kb_counts().counts)
    lines = [
        "# Knowledge base",
        "",
        "What CUDA packages, libraries, variables, tools, images, pip indexes and GPUs become on "
        "ROCm: the data behind the rules, with a source and a date per entry "
        "(`src/gpuport/kb/*.toml`).",
        "",
        "| table | entries | what it holds |",
        "|---|---|---|",
    ]
    lines += [f"| [{t}]({t}.md) | {counts.get(t, 0)} | {KB_ABOUT.get(t, '')} |" for t in TABLES]
    return "\n".join(lines) + "\n"


def _commands(command: click.Command, path: list[str]) -> Iterator[tuple[list[str], click.Command]]:
    yield path, command
    if isinstance(command, click.Group):
        for name in sorted(command.commands):
            yield from _commands(command.commands[name], [*path, name])


def _help(path: list[str]) -> str:
    ctx = click.Context(
        main, info_name="gpuport", terminal_width=HELP_WIDTH, max_content_width=HELP_WIDTH
    )
    command: click.Command = main
    for name in path:
        assert isinstance(command, click.Group)
        command = command.commands[name]
        ctx = click.Context(
            command,
            info_name=name,
            parent=ctx,
            terminal_width=HELP_WIDTH,
            max_content_width=HELP_WIDTH,
        )
    return command.get_help(ctx)


def command_page(command: click.Command) -> str:
    assert command.name is not None
    lines: list[str] = []
    for path, sub in _commands(command, [command.name]):
        level = "#" if len(path) == 1 else "##"
        lines += [f"{level} gpuport {' '.join(path)}", ""]
        if sub.help:
            lines += [md_text(sub.help.split("\n\n")[0]), ""]
        lines += ["```text", _help(path), "```", ""]
    return "\n".join(lines).rstrip() + "\n"


def commands_index() -> str:
    lines = [
        "# Commands",
        "",
        "Each command's `--help`, as `gpuport COMMAND --help` prints it.",
        "",
        "```text",
        main.get_help(
            click.Context(
                main, info_name="gpuport", terminal_width=HELP_WIDTH, max_content_width=HELP_WIDTH
            )
        ),
        "```",
        "",
    ]
    lines += [f"- [gpuport {c.name}]({c.name}.md)" for c in COMMANDS]
    return "\n".join(lines) + "\n"


def home(rules: list[Rule]) -> str:
    return (
        "# gpuport\n\n"
        "What breaks when an ML project moves from NVIDIA CUDA to AMD ROCm, and how to fix it.\n\n"
        f"This site documents gpuport {__version__}. Every page is generated from the code "
        "(`tools/gen_docs_site.py`): the rule declarations, the knowledge base and the "
        "commands' help, so it says what the installed version does.\n\n"
        f"- [Commands](commands/index.md): {len(COMMANDS)} commands and their options.\n"
        f"- [Rules](rules/index.md): the {len(rules)} rules, one page each.\n"
        f"- [Knowledge base]({KB_DIR}/index.md): what each CUDA name becomes on ROCm.\n"
    )


def pages() -> dict[str, str]:
    """Every page of the site: its path under the docs folder, and its Markdown."""
    rules = list(all_rules())
    site = {"index.md": home(rules), "commands/index.md": commands_index()}
    for command in COMMANDS:
        site[f"commands/{command.name}.md"] = command_page(command)
    site["rules/index.md"] = rules_index(rules)
    for rule in rules:
        site[f"rules/{rule.id}.md"] = rule_page(rule)
    site[f"{KB_DIR}/index.md"] = kb_index()
    for table in TABLES:
        site[f"{KB_DIR}/{table}.md"] = kb_page(table)
    return site


def write(out: Path) -> int:
    if out.exists():
        shutil.rmtree(out)
    site = pages()
    for rel, text in site.items():
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return len(site)


def main_(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="folder for the pages")
    args = parser.parse_args(argv)
    count = write(args.out)
    print(f"wrote {count} pages to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main_())
