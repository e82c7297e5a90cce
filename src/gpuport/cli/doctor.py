"""``gpuport doctor``: placeholder while issue 16 is built; replaced by its branch."""

from __future__ import annotations

import click

from gpuport.cli.common import CommandError, handle_errors


@click.command("doctor")
@handle_errors
def doctor() -> None:
    """Diagnose this machine's GPU software stack (being built)."""
    raise CommandError("gpuport doctor is not built yet")
