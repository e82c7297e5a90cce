"""``gpuport bench``: placeholder while issue 14 is built; replaced by its branch."""

from __future__ import annotations

import click

from gpuport.cli.common import CommandError, handle_errors


@click.group("bench", invoke_without_command=True)
@handle_errors
def bench() -> None:
    """Benchmark this machine's GPU (being built)."""
    raise CommandError("gpuport bench is not built yet")
