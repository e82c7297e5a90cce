"""Terminal plumbing for the CLI: the stderr console, progress bars and writing output."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Self

from gpuport.io import write_atomic

if TYPE_CHECKING:  # rich (about 20 ms; rich.progress 15 ms more) is imported where it shows
    from rich.console import Console
    from rich.progress import Progress as RichProgress
    from rich.progress import TaskID
    from rich.text import Text

# A progress bar appears only once a job is clearly long: this many items, or this long.
PROGRESS_AFTER_ITEMS = 300
PROGRESS_AFTER_SECONDS = 1.0


def no_color() -> bool:
    """Whether the user asked for no colour (https://no-color.org/)."""
    return bool(os.environ.get("NO_COLOR"))


def stderr_console() -> Console:
    from rich.console import Console

    return Console(stderr=True, no_color=no_color(), highlight=False, soft_wrap=True)


def say(message: str | Text) -> None:
    """One line for the person on stderr: a note, a summary, where a file went.

    A plain ``str`` is printed as the text it is (no rich markup, no emoji codes), so a path
    with brackets in it, such as ``app/[id]/page.py``, is shown whole. Printable text bound
    for a pipe or a file is written as it is, as rich would write it: the scan of a CI job
    then never loads rich (about 20 ms of CPU, benchmarks/results/python_vs_bandit.md).
    """
    if isinstance(message, str) and message.isprintable() and not sys.stderr.isatty():
        sys.stderr.write(message + "\n")
        sys.stderr.flush()
        return
    from rich.text import Text

    stderr_console().print(Text(message) if isinstance(message, str) else message)


class Progress:
    """A progress display on stderr that shows itself only for long jobs on a terminal."""

    def __init__(self, *, enabled: bool = True, label: str = "working", total: int | None = None):
        self.enabled = enabled and sys.stderr.isatty()
        self.label = label
        self.total = total
        self._started = time.monotonic()
        self._bar: RichProgress | None = None
        self._task: TaskID | None = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._bar is not None:
            self._bar.stop()

    def update(self, done: int, nbytes: int = 0) -> None:
        if not self.enabled:
            return
        if self._bar is None:
            long_enough = time.monotonic() - self._started > PROGRESS_AFTER_SECONDS
            if done < PROGRESS_AFTER_ITEMS and not long_enough:
                return
            from rich.progress import BarColumn, SpinnerColumn, TextColumn, TimeElapsedColumn
            from rich.progress import Progress as RichProgress

            self._bar = RichProgress(
                SpinnerColumn(),
                TextColumn("{task.description}"),
                BarColumn(),
                TextColumn("{task.completed:,} files · {task.fields[mb]:.1f} MB"),
                TimeElapsedColumn(),
                console=stderr_console(),
                transient=True,
            )
            self._bar.start()
            self._task = self._bar.add_task(self.label, total=self.total, mb=0.0)
        assert self._task is not None
        self._bar.update(self._task, completed=done, mb=nbytes / 1e6)


class CountBar:
    """A bar of a known number of things (bench's workloads, bench serve's requests) on stderr,
    on a terminal and unless switched off; lines told while it shows go above it."""

    def __init__(self, total: int, unit: str, *, enabled: bool = True, spinner: bool = False):
        self._bar: RichProgress | None = None
        self._task: TaskID | None = None
        if enabled and sys.stderr.isatty():
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                SpinnerColumn,
                TextColumn,
                TimeElapsedColumn,
            )
            from rich.progress import Progress as RichProgress

            columns = [SpinnerColumn()] if spinner else []
            self._bar = RichProgress(
                *columns,
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn(unit),
                TimeElapsedColumn(),
                console=stderr_console(),
                transient=True,
            )
            self._task = self._bar.add_task(unit, total=total)

    def __enter__(self) -> Self:
        if self._bar is not None:
            self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()

    def update(
        self, *, completed: int | None = None, advance: int = 0, description: str | None = None
    ) -> None:
        if self._bar is None or self._task is None:
            return
        self._bar.update(self._task, completed=completed, advance=advance, description=description)

    def tell(self, line: str) -> None:
        """``line`` on stderr: above the bar while it shows, else as :func:`say` does."""
        if self._bar is None:
            say(line)
        else:
            from rich.text import Text

            self._bar.console.print(Text(line))


def emit(text: str | Iterable[str], output: Path | None) -> None:
    """Write a rendered report (or its pieces, from render_chunks) to ``output`` atomically,
    or to stdout."""
    if output is None:
        last = ""
        for piece in (text,) if isinstance(text, str) else text:
            if piece:
                sys.stdout.write(piece)
                last = piece
        if last and not last.endswith("\n"):
            sys.stdout.write("\n")
        sys.stdout.flush()
        return
    write_atomic(output, text)
    say(f"wrote {output}")


def write_stdout_bytes(text: str) -> None:
    """Write ``text`` to stdout as the bytes it came from (a diff of files that were not UTF-8)."""
    if not text:
        return
    data = text.encode("utf-8", "surrogateescape")  # bytes that were not UTF-8 come back as is
    sys.stdout.flush()
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:  # a text-only stream (some embedders): show the bytes escaped
        sys.stdout.write(data.decode("utf-8", "backslashreplace"))
    else:
        buffer.write(data)
        buffer.flush()


def write_stderr(text: str) -> None:
    """Write a rendered report to stderr (where ``port`` puts its summary beside the diff)."""
    sys.stderr.write(text if text.endswith("\n") else text + "\n")
    sys.stderr.flush()
