"""The machine as the doctor's probes see it: files under a root folder, the environment, the
user's groups, the Python paths, and one command runner with a time-out.

Everything a probe reads goes through :class:`SystemView`, so a test builds a whole machine (an
MI300X node, a laptop without a GPU) as files under a temporary folder, a dictionary of
variables and a fake runner that replays recorded tool output.
"""

from __future__ import annotations

import contextlib
import grp
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

# How long one vendor tool may take before the doctor gives up on it (a wedged GPU can make
# nvidia-smi or rocminfo hang for minutes).
DEFAULT_TIMEOUT_S = 10.0
# The most output kept from one tool or read from one file: sysfs files are a few hundred
# bytes, rocminfo on an 8-GPU node about 100 kB.
MAX_OUTPUT_CHARS = 2_000_000


@dataclass(frozen=True, slots=True)
class CommandResult:
    """What one command did: its exit status and output, or why it did not run."""

    returncode: int | None
    stdout: str = ""
    stderr: str = ""
    error: str = ""  # "not installed", "timed out after 10 s", an OS error; "" when it ran

    @property
    def ran(self) -> bool:
        return not self.error and self.returncode is not None


Runner = Callable[[Sequence[str], float], CommandResult]


def subprocess_runner(env: Mapping[str, str] | None = None) -> Runner:
    """The real runner: runs a command found on ``PATH`` with a time-out, never a shell."""

    def run(argv: Sequence[str], timeout: float) -> CommandResult:
        path = (env or os.environ).get("PATH")
        program = argv[0] if os.sep in argv[0] else shutil.which(argv[0], path=path)
        if program is None:
            return CommandResult(None, error="not installed")
        try:
            done = subprocess.run(
                [program, *argv[1:]],
                capture_output=True,
                timeout=timeout,
                check=False,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired:
            return CommandResult(None, error=f"did not answer within {timeout:g} s")
        except OSError as exc:
            return CommandResult(None, error=exc.strerror or str(exc))
        return CommandResult(
            done.returncode,
            done.stdout[:MAX_OUTPUT_CHARS].decode("utf-8", "replace"),
            done.stderr[:MAX_OUTPUT_CHARS].decode("utf-8", "replace"),
        )

    return run


def _current_groups() -> frozenset[str]:
    names = set()
    for gid in {os.getgid(), *os.getgroups()}:
        with contextlib.suppress(KeyError):
            names.add(grp.getgrgid(gid).gr_name)
    return frozenset(names)


class Unreadable(Exception):
    """A file that exists (or should) but could not be read: the message says why."""


@dataclass(frozen=True)
class SystemView:
    """Where the probes look. ``root`` stands for ``/``; paths are given without the slash."""

    root: Path = Path("/")
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    runner: Runner = field(default_factory=subprocess_runner)
    groups: frozenset[str] = field(default_factory=_current_groups)
    is_root_user: bool = field(default_factory=lambda: os.geteuid() == 0)
    python_paths: tuple[str, ...] = field(default_factory=lambda: tuple(sys.path))
    python: str = sys.executable
    timeout_s: float = DEFAULT_TIMEOUT_S

    def path(self, relative: str) -> Path:
        return self.root / relative.lstrip("/")

    def exists(self, relative: str) -> bool:
        return os.path.lexists(self.path(relative))

    def read(self, relative: str) -> str | None:
        """The text of a file, or None when it does not exist; :class:`Unreadable` otherwise."""
        target = self.path(relative)
        try:
            with open(target, "rb") as handle:
                data = handle.read(MAX_OUTPUT_CHARS)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise Unreadable(f"cannot read /{relative.lstrip('/')}: {exc.strerror or exc}") from exc
        return data.decode("utf-8", "replace")

    def listdir(self, relative: str) -> list[str]:
        """Names in a folder, sorted; [] when it does not exist; :class:`Unreadable` otherwise."""
        try:
            return sorted(os.listdir(self.path(relative)))
        except (FileNotFoundError, NotADirectoryError):
            return []
        except OSError as exc:
            raise Unreadable(f"cannot list /{relative.lstrip('/')}: {exc.strerror or exc}") from exc

    def accessible(self, relative: str) -> bool:
        """Whether this user may open the (device) file for reading and writing."""
        return os.access(self.path(relative), os.R_OK | os.W_OK)

    def run(self, *argv: str) -> CommandResult:
        try:
            return self.runner(argv, self.timeout_s)
        except OSError as exc:
            return CommandResult(None, error=exc.strerror or str(exc))
