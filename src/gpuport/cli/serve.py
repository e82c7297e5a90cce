"""``gpuport bench serve`` and ``gpuport verify serve``: placeholders; replaced by their branch."""

from __future__ import annotations

import click

from gpuport.cli.common import CommandError, handle_errors


@click.command("serve")
@handle_errors
def bench_serve() -> None:
    """Benchmark a model served over HTTP (being built)."""
    raise CommandError("gpuport bench serve is not built yet")


@click.command("serve")
@handle_errors
def verify_serve() -> None:
    """Compare two servers' outputs (being built)."""
    raise CommandError("gpuport verify serve is not built yet")
