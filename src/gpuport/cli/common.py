"""What every command shares: one set of exit codes, one error handler and the common options.

Data goes to stdout (or ``-o FILE``); the human summary, notes and errors go to stderr. Every
command exits with an :class:`ExitCode`; an input or usage problem is one ``error:`` line on
stderr that names the file (and line, where the problem has one), never a traceback.
"""

from __future__ import annotations

import contextlib
import enum
import functools
import os
import re
import shutil
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn, ParamSpec, TextIO, TypeVar

import click

from gpuport import __version__
from gpuport.cli.ui import no_color, say, stderr_console
from gpuport.config import ConfigError
from gpuport.files import classify
from gpuport.read_policy import what_is
from gpuport.report import Format, RenderOptions, formats_for

F = TypeVar("F", bound=Callable[..., Any])
P = ParamSpec("P")
R = TypeVar("R")


class ExitCode(enum.IntEnum):
    """The exit status of every ``gpuport`` command."""

    CLEAN = 0
    # Findings at or above --fail-on; for `port`, something left unconverted or a
    # translation that does not compile.
    FINDINGS = 1
    # A usage, configuration or input error, including files that could not be analysed
    # and internal rule failures.
    ERROR = 2
    # Stopped with Ctrl-C: 128 + SIGINT, as shells report it.
    INTERRUPTED = 130


class CommandError(Exception):
    """A usage or input problem told in one sentence: printed as ``error: ...``, exit 2."""


# C0 and C1 control characters and DEL, which a terminal obeys (colours, titles, links, clearing
# the screen: https://invisible-island.net/xterm/ctlseqs/ctlseqs.html); newline and tab pass.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def visible(text: str) -> str:
    """``text`` with every control character shown as an escape (``\\x1b``), never sent raw."""
    return _CONTROL.sub(lambda m: ascii(m.group())[1:-1], text)


def fail(message: str) -> NoReturn:
    """Print ``error: message`` on stderr (the message as the text it is) and exit 2.

    The message is plain text, never rich markup (``[tool.gpuport]`` and ``[link=...]`` are shown
    as written), and its control characters are shown as escapes.
    """
    from rich.text import Text

    stderr_console().print(Text.assemble(("error:", "bold red"), " ", visible(message)))
    sys.exit(ExitCode.ERROR)


def interrupted() -> NoReturn:
    """Ctrl-C: one word on stderr and exit 130, whatever was running."""
    with contextlib.suppress(OSError, ValueError):
        say("interrupted")
    sys.exit(ExitCode.INTERRUPTED)


def output_gone() -> NoReturn:
    """The reader of stdout went away (``gpuport scan | head``): exit 2 without a word.

    Quiet, as other command-line tools are when their pipe closes; exit 2 because the output
    was not delivered. stdout is pointed at the null device so that Python's own flush at exit
    does not complain (https://docs.python.org/3/library/signal.html#note-on-sigpipe).
    """
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    sys.exit(ExitCode.ERROR)


def handle_errors(command: Callable[P, R]) -> Callable[P, R]:
    """Turn the errors a user can cause into one ``error:`` line and an exit code.

    Configuration and input errors (:class:`~gpuport.config.ConfigError`, which the plan's
    input errors are too, and :class:`CommandError`) carry their own sentence; a file that
    cannot be read or written is named with the system's reason; an output that cannot be
    written (a full disk, ``> /dev/full``, a closed stdout) says so; a closed pipe ends quietly
    (:func:`output_gone`); Ctrl-C exits 130.
    """

    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            try:
                return command(*args, **kwargs)
            finally:
                # What is still buffered for stdout fails here, inside the handler, not at exit.
                if sys.stdout is not None:
                    sys.stdout.flush()
        except (CommandError, ConfigError) as exc:
            fail(str(exc))
        except BrokenPipeError:
            output_gone()
        except OSError as exc:
            if exc.filename:
                fail(f"cannot use {exc.filename}: {exc.strerror or exc}")
            fail(f"cannot write the output: {exc.strerror or exc}")
        except KeyboardInterrupt:
            interrupted()

    return wrapper


def check_project_path(path: Path) -> None:
    """PATH must be a folder or a file gpuport reads, and readable: a usage error otherwise.

    Checked before anything runs, so that no report (``-o``, ``--html``) is written for a
    project that is not there.
    """
    try:
        st = path.stat()
    except FileNotFoundError:
        raise CommandError(f"{path}: no such file or folder") from None
    except OSError as exc:
        raise CommandError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    try:
        if stat.S_ISDIR(st.st_mode):
            with os.scandir(path):
                pass
        elif stat.S_ISREG(st.st_mode):
            os.close(os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)))
        else:
            raise CommandError(f"{path}: {what_is(st.st_mode)}, not a file or folder to scan")
    except OSError as exc:
        raise CommandError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    if stat.S_ISREG(st.st_mode) and classify(path.name, path.parent.name) is None:
        raise CommandError(f"{path}: not a kind of file gpuport reads")


# --- options ---------------------------------------------------------------------------------


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


def path_argument(function: F) -> F:
    """The project (or file) to work on: ``PATH``, the current folder when left out."""
    return click.argument("path", type=ProjectPath(), default=Path("."), required=False)(function)


def format_option(*result_types: type, help: str = "Output format.") -> Callable[[F], F]:
    """``--format`` (as ``fmt``): the formats all of ``result_types`` declare, in their order."""
    choices = [
        fmt.value
        for fmt in formats_for(result_types[0])
        if all(fmt in formats_for(other) for other in result_types[1:])
    ]
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(choices),
        default=Format.TERMINAL.value,
        show_default=True,
        help=help,
    )


def output_option(
    help: str = "Write the report to FILE (atomically) instead of stdout.",
) -> Callable[[F], F]:
    """``-o/--output FILE``."""
    return click.option(
        "-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help=help
    )


def format_options(
    *result_types: type,
    format_help: str = "Output format.",
    output_help: str = "Write the report to FILE (atomically) instead of stdout.",
) -> Callable[[F], F]:
    """``--format`` (the formats ``result_types`` declare) and ``-o/--output``."""

    def decorate(function: F) -> F:
        function = output_option(output_help)(function)
        return format_option(*result_types, help=format_help)(function)

    return decorate


def no_progress_option(function: F) -> F:
    return click.option("--no-progress", is_flag=True, help="No progress bar.")(function)


def scan_options(function: F) -> F:
    """PATH and the options of every command that scans a project (``scan``, ``assess``)."""
    decorators = [
        path_argument,
        click.option(
            "--fail-on",
            help="Exit 1 when a finding is at or above this severity "
            "(info, low, medium, high, blocker, never). Default: medium.",
        ),
        click.option("--select", multiple=True, help="Only these rule ids or prefixes (GP3)."),
        click.option("--ignore", multiple=True, help="Leave out these rule ids or prefixes."),
        click.option("--exclude", multiple=True, help="Glob of paths to leave out."),
        click.option("--max-file-size", help="Skip files larger than this (e.g. 8M)."),
        click.option(
            "--baseline",
            type=click.Path(dir_okay=False, path_type=Path),
            help="Leave out findings recorded in this baseline file.",
        ),
        click.option(
            "--write-baseline",
            type=click.Path(dir_okay=False, path_type=Path),
            help="Record the current findings as the baseline in FILE.",
        ),
        click.option(
            "--jobs",
            type=click.IntRange(0, 256),
            default=0,
            help="Processes that scan, this one included (0: one per core).",
        ),
        no_progress_option,
    ]
    for decorator in reversed(decorators):
        function = decorator(function)
    return function


# --- how to render ---------------------------------------------------------------------------


def render_options(
    chosen: Format,
    output: Path | None,
    *,
    stream: TextIO | None = None,
    fit_terminal: bool = False,
) -> RenderOptions:
    """Options for a report going to ``stream`` (stdout by default), or to ``output``.

    Colour only in the terminal format, on a terminal, and never with ``NO_COLOR``; with
    ``fit_terminal`` the report takes the terminal's width there (100 columns elsewhere).
    """
    on_terminal = chosen is Format.TERMINAL and output is None and (stream or sys.stdout).isatty()
    width = shutil.get_terminal_size((100, 24)).columns if on_terminal and fit_terminal else 100
    return RenderOptions(
        color=on_terminal and not no_color(), width=width, tool_version=__version__
    )


def console_render_options() -> RenderOptions:
    """Width and colour as rich sees stdout (``COLUMNS``, ``NO_COLOR``, ``FORCE_COLOR``...).

    ``kb`` and ``explain`` have always printed their terminal format through a plain rich
    console, so their lines wrap where rich would wrap them.
    """
    from rich.console import Console

    probe = Console()
    return RenderOptions(
        color=probe.is_terminal and not probe.no_color, width=probe.width, tool_version=__version__
    )
