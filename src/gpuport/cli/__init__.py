"""The ``gpuport`` command: one click group, one module per sub-command.

Each command module reads its flags, calls its stage's pure functions, picks a renderer from
``gpuport.report`` and writes; what they share (exit codes, the error handler, ``--format``,
``-o``, PATH, ``--fail-on``) is in :mod:`gpuport.cli.common`. A new command is one module here,
added to :data:`COMMANDS`, plus the renderers of its result type.
"""

from __future__ import annotations

import errno
import io
import os
import sys
from typing import Any

try:
    import click

    from gpuport import __version__

    # The modules, not their commands: `gpuport.cli.port` must stay the module of that name.
    from gpuport.cli import assess, bench, doctor, explain, kb, plan, port, scan, serve, verify
    from gpuport.cli.common import interrupted
except KeyboardInterrupt:
    # Ctrl-C while the commands load (a second or so on a busy machine): exit 130 as it does
    # later, not a traceback from the middle of an import.
    sys.stderr.write("interrupted\n")
    sys.exit(130)

COMMANDS: tuple[click.Command, ...] = (
    assess.assess,
    scan.scan,
    port.port,
    plan.plan,
    kb.kb,
    explain.explain,
    bench.bench,
    verify.verify,
    doctor.doctor,
)

# `bench serve` and `verify serve` share one OpenAI-compatible client (gpuport.cli.serve).
bench.bench.add_command(serve.bench_serve)
verify.verify.add_command(serve.verify_serve)


class _ClosedStream(io.TextIOBase):
    """Stands for a standard stream that was closed before gpuport started (``gpuport scan >&-``).

    Python leaves such a stream ``None``; writing to it then fails as writing to a closed file
    does, so the error handler can say so instead of a traceback.
    """

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, "standard output is closed")


class GpuportGroup(click.Group):
    """The command group: Ctrl-C anywhere in a command exits 130, never click's 1."""

    def invoke(self, ctx: click.Context) -> Any:
        if sys.stdout is None:
            sys.stdout = _ClosedStream()
        if sys.stderr is None:
            sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the process
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            interrupted()


@click.group(
    cls=GpuportGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(__version__, "-V", "--version", prog_name="gpuport")
def main() -> None:
    """gpuport: what breaks when your ML project moves from CUDA to ROCm, and how to fix it."""


for _command in COMMANDS:
    main.add_command(_command)

__all__ = ["COMMANDS", "main"]
