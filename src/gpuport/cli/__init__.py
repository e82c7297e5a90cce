"""The ``gpuport`` command: one click group, one module per sub-command.

Each command module reads its flags, calls its stage's pure functions, picks a renderer from
``gpuport.report`` and writes; what they share (exit codes, the error handler, ``--format``,
``-o``, PATH, ``--fail-on``) is in :mod:`gpuport.cli.common`. A new command is one module here,
added to :data:`COMMANDS`, plus the renderers of its result type.
"""

from __future__ import annotations

import click

from gpuport import __version__

# The modules, not their commands: `gpuport.cli.port` must stay the module of that name.
from gpuport.cli import assess, explain, kb, plan, port, scan

COMMANDS: tuple[click.Command, ...] = (
    assess.assess,
    scan.scan,
    port.port,
    plan.plan,
    kb.kb,
    explain.explain,
)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, "-V", "--version", prog_name="gpuport")
def main() -> None:
    """gpuport: what breaks when your ML project moves from CUDA to ROCm, and how to fix it."""


for _command in COMMANDS:
    main.add_command(_command)

__all__ = ["COMMANDS", "main"]
