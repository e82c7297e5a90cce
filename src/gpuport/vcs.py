"""The lines a change touched since a git ref, read with git plumbing and never written.

``gpuport scan --diff BASE`` keeps only the findings on these lines. The change is the
working tree against the merge base of BASE and HEAD (what ``git diff BASE...`` shows for a
branch, plus uncommitted edits): a pull request's own lines, not the lines its base branch
gained since it forked. Files that are new since then (also untracked ones that git does not
ignore) count wholly. The repository is only read: the diff is ``git diff-index``, plumbing
that never refreshes the index as ``git diff`` does (a write); git runs without optional locks
(https://git-scm.com/docs/git#Documentation/git.txt-codeGITOPTIONALLOCKScode), without external
diff or textconv programs and without fsmonitor, and with a time-out.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from gpuport.findings import Finding

GIT_TIMEOUT_SECONDS = 120.0
# `@@ -12,3 +14,5 @@`: the new side's first line and count (one line when the count is left out)
_HUNK_RE = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")
_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}
# Settings that would make a read-only `git diff` run programs or write: turned off.
_SAFE_CONFIG = (
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.quotePath=false",
)


class ChangesError(Exception):
    """The change could not be read: not a repository, an unknown ref, git missing or slow."""


@dataclass(frozen=True, slots=True)
class ChangedLines:
    """The lines changed since ``base``, by path relative to the scanned folder.

    ``files`` maps a path to its changed (new-side) line numbers, or to None when the whole
    file is new. A finding is kept when one of its lines changed, or when its file is new.
    A whole-file finding (line 0) in a file that already existed is left out: it was there
    before the change, and the change's lines cannot say otherwise.
    """

    base: str
    merge_base: str
    files: Mapping[str, frozenset[int] | None] = field(default_factory=dict)

    def covers(self, finding: Finding) -> bool:
        loc = finding.location
        if loc.path not in self.files:
            return False
        lines = self.files[loc.path]
        if lines is None:
            return True
        if loc.line <= 0:
            return False
        last = max(loc.line, loc.end_line)
        return any(n in lines for n in range(loc.line, last + 1))

    @property
    def short_base(self) -> str:
        return self.merge_base[:12]


def changed_lines(
    target: Path, base: str, *, timeout: float = GIT_TIMEOUT_SECONDS, git: str = "git"
) -> ChangedLines:
    """The lines changed under ``target`` (a folder or one file) since ``base``'s merge base.

    Paths are relative to ``target`` (to its folder when it is a file), as the scan's are.
    Raises :class:`ChangesError` with a sentence for the user.
    """
    if not base or base.startswith("-"):
        raise ChangesError(f"{base!r} is not a git ref (a branch, tag or commit)")
    folder, pathspec = (target, ".") if target.is_dir() else (target.parent, target.name)
    runner = _Git(folder, timeout, git)
    inside = runner.run("rev-parse", "--is-inside-work-tree", check=False)
    if inside.returncode != 0 or inside.stdout.strip() != b"true":
        raise ChangesError(f"{target}: not inside a git work tree (--diff needs a git checkout)")
    found = runner.run("rev-parse", "--verify", "--quiet", f"{base}^{{commit}}", check=False)
    if found.returncode != 0:
        raise ChangesError(
            f"{target}: unknown git ref {base!r} (fetch it first; a shallow CI clone needs "
            "fetch-depth: 0)"
        )
    commit = found.stdout.decode("ascii", "replace").strip()
    merged = runner.run("merge-base", commit, "HEAD", check=False)
    if merged.returncode != 0:
        raise ChangesError(
            f"{target}: {base!r} and HEAD have no common ancestor (a shallow clone? fetch "
            "with fetch-depth: 0)"
        )
    merge_base = merged.stdout.decode("ascii", "replace").strip()
    spec = f":(literal){pathspec}"
    # diff-index, the plumbing: unlike `git diff` it never refreshes (writes) the index.
    diff = runner.run(
        "diff-index",
        "--patch",
        "--unified=0",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--find-renames",
        "--ignore-submodules=all",
        "--relative",
        "--src-prefix=a/",
        "--dst-prefix=b/",
        merge_base,
        "--",
        spec,
    ).stdout
    files = parse_diff(diff)
    untracked = runner.run("ls-files", "--others", "--exclude-standard", "-z", "--", spec).stdout
    for name in untracked.split(b"\0"):
        if name:
            files[_decode(name)] = None
    return ChangedLines(base=base, merge_base=merge_base, files=files)


def parse_diff(text: bytes) -> dict[str, frozenset[int] | None]:
    """Changed new-side lines by path from ``git diff --unified=0`` output (None: a new file)."""
    files: dict[str, frozenset[int] | None] = {}
    new_file = False
    path: str | None = None
    lines: set[int] = set()

    def close() -> None:
        if path is not None:
            if new_file:
                files[path] = None
            elif lines:  # a deletion alone adds no line a finding could be on
                files[path] = frozenset(lines)

    for raw in text.split(b"\n"):
        if raw.startswith(b"diff --git "):
            close()
            new_file, path, lines = False, None, set()
        elif raw.startswith(b"new file mode"):
            new_file = True
        elif raw.startswith(b"+++ "):
            name = raw[4:]
            path = None if name == b"/dev/null" else _strip_prefix(_unquote(name))
        elif raw.startswith(b"@@ ") and path is not None:
            m = _HUNK_RE.match(raw.decode("ascii", "replace"))
            if m:
                start, count = int(m.group(1)), int(m.group(2) or 1)
                lines.update(range(start, start + count))
    close()
    return files


def _strip_prefix(name: bytes) -> str:
    return _decode(name[2:] if name.startswith(b"b/") else name)


def _decode(name: bytes) -> str:
    # the same decoding as the walk's file names (os.fsdecode), so that paths compare equal
    return os.fsdecode(name)


def _unquote(name: bytes) -> bytes:
    """A path as git writes it: C-quoted (``"a\\tb"``, octal bytes) when it has odd characters."""
    if not (name.startswith(b'"') and name.endswith(b'"') and len(name) >= 2):
        return name
    body = name[1:-1]
    out = bytearray()
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != 0x5C or i + 1 >= len(body):  # not a backslash
            out.append(ch)
            i += 1
            continue
        nxt = chr(body[i + 1])
        if nxt in "01234567" and i + 4 <= len(body):
            out.append(int(body[i + 1 : i + 4], 8) & 0xFF)
            i += 4
        else:
            out.append(_ESCAPES.get(nxt, ord(nxt)))
            i += 2
    return bytes(out)


class _Git:
    """Runs read-only git commands in one folder, with a time-out and safe settings."""

    def __init__(self, folder: Path, timeout: float, executable: str) -> None:
        self.folder = folder
        self.timeout = timeout
        self.executable = executable
        self.env = {
            **os.environ,
            "GIT_OPTIONAL_LOCKS": "0",  # no index refresh: the repository is only read
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_PAGER": "cat",
            "LC_ALL": "C",
        }

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
        command = [self.executable, *_SAFE_CONFIG, *args]
        try:
            # its own process group: on a time-out, whatever git started goes with it
            process = subprocess.Popen(
                command,
                cwd=self.folder,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except FileNotFoundError:
            raise ChangesError(f"git not found ({self.executable}); --diff needs git") from None
        except OSError as exc:
            raise ChangesError(f"cannot run git: {exc.strerror or exc}") from None
        try:
            stdout, stderr = process.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            _stop(process)
            raise ChangesError(
                f"{self.folder}: git {args[0]} took longer than {self.timeout:g} s; gave up"
            ) from None
        except BaseException:  # Ctrl-C: git does not outlive gpuport
            _stop(process)
            raise
        done = subprocess.CompletedProcess(command, process.returncode, stdout, stderr)
        if check and done.returncode != 0:
            message = stderr.decode("utf-8", "replace").strip().splitlines()
            reason = message[-1] if message else f"exit status {done.returncode}"
            raise ChangesError(f"{self.folder}: git {args[0]} failed: {reason}")
        return done


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Kill ``process`` and its process group, and reap it."""
    with contextlib.suppress(OSError, AttributeError):  # no process groups on Windows
        os.killpg(process.pid, signal.SIGKILL)
    process.kill()
    process.communicate()
