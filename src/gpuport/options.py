"""Command-line options shared by every command that reports: ``--format`` and ``-o``.

Stage commands (plan, port) import this rather than ``gpuport.cli``, which imports them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from gpuport.report import Format

F = TypeVar("F", bound=Callable[..., Any])


def format_options(
    *,
    format_help: str = "Output format.",
    output_help: str = "Write the report to FILE (atomically) instead of stdout.",
) -> Callable[[F], F]:
    """``--format {terminal,json,sarif,markdown,html}`` (as ``fmt``) and ``-o/--output``."""

    def decorate(function: F) -> F:
        function = click.option(
            "-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help=output_help
        )(function)
        function = click.option(
            "--format",
            "fmt",
            type=click.Choice([f.value for f in Format]),
            default=Format.TERMINAL.value,
            show_default=True,
            help=format_help,
        )(function)
        return function

    return decorate
