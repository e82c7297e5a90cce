"""Command-line pieces shared by the commands: ``--format`` and ``-o``, and the PATH argument.

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


class ProjectPath(click.Path):
    """A PATH argument that refuses the empty string.

    ``Path("")`` is ``Path(".")``: an empty argument (an unset shell variable, say) would
    otherwise scan or port the current folder without a word.
    """

    def __init__(self) -> None:
        super().__init__(path_type=Path)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not value.strip():
            self.fail("the path is empty", param, ctx)
        return super().convert(value, param, ctx)
