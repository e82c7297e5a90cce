"""``gpuport kb show NAME`` and ``gpuport kb list [TABLE]``: what a CUDA name becomes on ROCm."""

from __future__ import annotations

import click

from gpuport import kb as knowledge
from gpuport.cli.common import console_render_options, fail, format_option, handle_errors
from gpuport.cli.ui import emit
from gpuport.kb.query import (
    TABLES,
    KbCounts,
    KbLookup,
    KbTable,
    kb_counts,
    kb_lookup,
    kb_table,
    suggestions,
)
from gpuport.report import Format, render

rocm_option = click.option(
    "--rocm",
    "rocm_version",
    default=knowledge.DEFAULT_ROCM_VERSION,
    show_default=True,
    metavar="VERSION",
    help="ROCm version to fill into index URLs and image tags.",
)


@click.group("kb")
def kb() -> None:
    """The knowledge base: what CUDA packages, libraries, variables, tools and images become on ROCm."""


@kb.command("show")
@click.argument("name")
@format_option(KbLookup)
@rocm_option
@handle_errors
def show(name: str, fmt: str, rocm_version: str) -> None:
    """Show every entry NAME designates: a package, import, library, header, variable, command,
    image, flag, pip index or gfx id. Put `--` before a NAME that starts with a dash
    (gpuport kb show -- --gpus)."""
    found = kb_lookup(name, rocm_version)
    if not found.matches:
        close = suggestions(name)
        hint = f" (did you mean: {', '.join(close)}?)" if close else ""
        fail(f"nothing in the knowledge base for {name!r}{hint}")
    emit(render(found, Format(fmt), console_render_options()), None)


@kb.command("list")
@click.argument("table", required=False, type=click.Choice(TABLES))
@format_option(KbTable, KbCounts)
@rocm_option
@handle_errors
def list_table(table: str | None, fmt: str, rocm_version: str) -> None:
    """List one TABLE of the knowledge base; without TABLE, count the entries of each."""
    listing = kb_counts() if table is None else kb_table(table, rocm_version)
    emit(render(listing, Format(fmt), console_render_options()), None)
