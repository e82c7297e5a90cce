"""``gpuport verify``: placeholder while issue 15 is built; replaced by its branch."""

from __future__ import annotations

import click

from gpuport.cli.common import CommandError, handle_errors


@click.group("verify", invoke_without_command=True)
@handle_errors
def verify() -> None:
    """Compare numerical results across machines (being built)."""
    raise CommandError("gpuport verify is not built yet")
