"""The ``gpuport`` command: one click group, one module per sub-command.

Each command module reads its flags, calls its stage's pure functions, picks a renderer from
``gpuport.report`` and writes; what they share (exit codes, the error handler, ``--format``,
``-o``, PATH, ``--fail-on``) is in :mod:`gpuport.cli.common`. A new command is one module here,
named in :data:`COMMAND_MODULES`, plus the renderers of its result type.

A command's module is imported when that command runs (or ``--help`` lists it), not when
``gpuport`` starts: ``gpuport scan`` does not load ``port``'s translation tables (about a third
of its start-up, benchmarks/results/python_vs_bandit.md). :data:`COMMANDS` (every command,
loaded) and ``main.commands`` still give the click commands themselves.
"""

from __future__ import annotations

import errno
import gc
import importlib
import io
import os
import sys
from collections.abc import Iterator, MutableMapping
from typing import Any

# Loading gpuport's modules makes some hundred thousand objects that live as long as the
# process (functions, classes, rule tables, compiled expressions): the cyclic collector would
# walk them again and again while they load. It is held off while the CLI's modules load,
# and while a command's load (GpuportGroup.resolve_command), which then freezes them all.
_COLLECTING = gc.isenabled()
gc.disable()
try:
    import click

    from gpuport import __version__
    from gpuport.cli.common import interrupted
except KeyboardInterrupt:
    # Ctrl-C while the commands load (a second or so on a busy machine): exit 130 as it does
    # later, not a traceback from the middle of an import.
    sys.stderr.write("interrupted\n")
    sys.exit(130)
finally:
    if _COLLECTING:
        gc.enable()

# Command name -> (its module, the click command's name there), in the order help lists them.
# The modules, not their commands: `gpuport.cli.port` must stay the module of that name.
COMMAND_MODULES: dict[str, tuple[str, str]] = {
    "assess": ("gpuport.cli.assess", "assess"),
    "scan": ("gpuport.cli.scan", "scan"),
    "port": ("gpuport.cli.port", "port"),
    "plan": ("gpuport.cli.plan", "plan"),
    "kb": ("gpuport.cli.kb", "kb"),
    "explain": ("gpuport.cli.explain", "explain"),
    "bench": ("gpuport.cli.bench", "bench"),
    "verify": ("gpuport.cli.verify", "verify"),
    "doctor": ("gpuport.cli.doctor", "doctor"),
}

# Sub-commands added to a command when it loads: `bench serve` and `verify serve` share one
# OpenAI-compatible client (gpuport.cli.serve).
SUBCOMMANDS: dict[str, tuple[tuple[str, str], ...]] = {
    "bench": (("gpuport.cli.serve", "bench_serve"),),
    "verify": (("gpuport.cli.serve", "verify_serve"),),
}


def _load(module: str, name: str) -> click.Command:
    try:
        command = getattr(importlib.import_module(module), name)
    except KeyboardInterrupt:  # as above: Ctrl-C while a command's module loads
        sys.stderr.write("interrupted\n")
        sys.exit(130)
    assert isinstance(command, click.Command)
    return command


class _LazyCommands(MutableMapping[str, click.Command]):
    """The group's commands by name, each imported the first time it is asked for."""

    def __init__(self, modules: dict[str, tuple[str, str]]) -> None:
        self._modules = dict(modules)
        self._loaded: dict[str, click.Command] = {}

    def __getitem__(self, name: str) -> click.Command:
        command = self._loaded.get(name)
        if command is None:
            if name not in self._modules:
                raise KeyError(name)
            command = self._loaded[name] = _load(*self._modules[name])
            if isinstance(command, click.Group):
                for sub in SUBCOMMANDS.get(name, ()):
                    command.add_command(_load(*sub))
        return command

    def __setitem__(self, name: str, command: click.Command) -> None:
        self._modules.pop(name, None)
        self._loaded[name] = command

    def __delitem__(self, name: str) -> None:
        if name not in self:
            raise KeyError(name)
        self._modules.pop(name, None)
        self._loaded.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        yield from self._modules
        yield from (name for name in self._loaded if name not in self._modules)

    def __len__(self) -> int:
        return len(self._modules.keys() | self._loaded.keys())

    def __contains__(self, name: object) -> bool:
        return name in self._modules or name in self._loaded


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

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """The command, its modules loaded with no cyclic collection, then frozen (kept out
        of every later collection, the one at exit included): what they made lives as long
        as the process. About 80 ms of the 380 ms that `gpuport scan` of an empty folder
        took (benchmarks/results/python_vs_bandit.md). A caller that runs the CLI in its own
        process (a test) keeps the frozen objects until it calls ``gc.unfreeze()``."""
        collecting = gc.isenabled()
        gc.disable()
        try:
            return super().resolve_command(ctx, args)
        finally:
            gc.freeze()
            if collecting:
                gc.enable()


@click.group(
    cls=GpuportGroup,
    commands=_LazyCommands(COMMAND_MODULES),
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(__version__, "-V", "--version", prog_name="gpuport")
def main() -> None:
    """gpuport: what breaks when your ML project moves from CUDA to ROCm, and how to fix it."""


def __getattr__(name: str) -> Any:
    """``COMMANDS``: every command, loaded (importing each command's module)."""
    if name == "COMMANDS":
        return tuple(main.commands[command] for command in COMMAND_MODULES)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["COMMANDS", "COMMAND_MODULES", "main"]
