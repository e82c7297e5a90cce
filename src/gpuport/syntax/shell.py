"""Shell words with their offsets: the simple commands of a script, a RUN line or a CI step.

This reader finds words, it is not a shell grammar: it never fails, so a broken script still
yields the words around the break. It is kept over the libraries after measuring them
(``benchmarks/syntax_readers.py``; results and machine in
``benchmarks/results/syntax_readers.md``). On the 19 fixture scripts and Dockerfile RUN lines,
bashlex gives the same 188 words but raises on a RUN line with a here-document (every finding
of that text would be lost) and reads a 400 KB script 15x slower (2.4 s against 0.16 s).
tree-sitter-bash parses that script in 0.07 s but gives raw spans only: the words' values
(quotes and escapes removed, which the rules match on) still need this reader, and with its
tree walked in Python it is 1.6x slower (0.25 s); it also reports errors on 2 of the 19 texts
and gives 8 of the 188 words other spans. Makefile recipes, which no shell grammar covers,
are read here too.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Word:
    """A shell word: its value with quotes and escapes removed, and its raw span."""

    text: str
    start: int
    end: int


_BLANKS = " \t\r\f\v"
# `NAME=value` and `NAME+=value`: a variable assignment before (or instead of) a command.
ASSIGNMENT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\+?=")
# Programs that run the next word as the command (sudo nvcc ..., env X=1 nvcc ...).
_WRAPPERS = frozenset({"sudo", "env", "exec", "time", "nohup", "command", "nice", "stdbuf"})
_HEREDOC_START_RE = re.compile(r"<<(-?)[ \t]*(['\"]?)([A-Za-z0-9_.-]+)\2")


def shell_commands(
    text: str, start: int = 0, end: int | None = None, *, heredocs: bool = True
) -> list[list[Word]]:
    """The simple commands of a shell text, as words with offsets into ``text``.

    Quotes, escapes, ``$(...)``, ``${...}`` and backquotes stay inside their word; comments
    are dropped; line continuations are blanks; ``;``, ``&&``, ``||``, ``|``, ``&``, parentheses
    and newlines end a command. Here-document bodies are skipped unless ``heredocs`` is False.
    This is a reader for finding things, not a full shell grammar.
    """
    stop = len(text) if end is None else end
    commands: list[list[Word]] = []
    words: list[Word] = []
    buf: list[str] = []
    word_start = -1
    pending_heredocs: list[tuple[str, bool]] = []
    i = start

    def flush(at: int) -> None:
        nonlocal word_start
        if word_start >= 0:
            words.append(Word("".join(buf), word_start, at))
            buf.clear()
            word_start = -1

    def end_command() -> None:
        nonlocal words
        if words:
            commands.append(words)
            words = []

    while i < stop:
        char = text[i]
        if char in _BLANKS:
            flush(i)
            i += 1
            continue
        if char == "\\" and text.startswith(("\\\n", "\\\r\n"), i):
            flush(i)
            i += 2 if text[i + 1] == "\n" else 3
            continue
        if char == "\n":
            flush(i)
            end_command()
            i += 1
            if pending_heredocs and heredocs:
                i = _skip_heredoc_bodies(text, i, stop, pending_heredocs)
            pending_heredocs.clear()
            continue
        if char == "#" and word_start < 0:
            newline = text.find("\n", i, stop)
            i = stop if newline < 0 else newline
            continue
        if char in ";&|()":
            flush(i)
            if char == "&" and text.startswith(">", i + 1):  # &> and &>> redirections
                i += 2
                continue
            pair = text[i : i + 2]
            i += 2 if pair in ("&&", "||", ";;", "|&") else 1
            end_command()
            continue
        if char in "<>":
            flush(i)
            if text.startswith("<<", i) and not text.startswith("<<<", i):
                match = _HEREDOC_START_RE.match(text, i, stop)
                if match:
                    pending_heredocs.append((match.group(3), bool(match.group(1))))
                    i = match.end()
                    continue
            i += 1
            while i < stop and text[i] in "<>&|":
                i += 1
            continue
        if word_start < 0:
            word_start = i
        if char == "'":
            close = text.find("'", i + 1, stop)
            close = stop if close < 0 else close
            buf.append(text[i + 1 : close])
            i = close + 1
        elif char == '"':
            i += 1
            while i < stop and text[i] != '"':
                if text[i] == "\\" and i + 1 < stop and text[i + 1] in '"\\$`\n':
                    if text[i + 1] != "\n":
                        buf.append(text[i + 1])
                    i += 2
                    continue
                buf.append(text[i])
                i += 1
            i += 1
        elif char == "\\":
            buf.append(text[i + 1 : i + 2])
            i += 2
        elif char == "$" and text.startswith(("$(", "${"), i):
            close = matching_bracket(text, i + 1, stop)
            buf.append(text[i:close])
            i = close
        elif char == "`":
            close = text.find("`", i + 1, stop)
            close = stop if close < 0 else close + 1
            buf.append(text[i:close])
            i = close
        else:
            buf.append(char)
            i += 1
    flush(min(i, stop))
    end_command()
    return commands


def matching_bracket(text: str, open_at: int, stop: int) -> int:
    """The offset after the bracket closing the ``(`` or ``{`` at ``open_at`` (quotes respected)."""
    pairs = {"(": ")", "{": "}"}
    opener = text[open_at]
    closer = pairs[opener]
    depth = 0
    i = open_at
    while i < stop:
        char = text[i]
        if char in "'\"":
            close = text.find(char, i + 1, stop)
            i = stop if close < 0 else close + 1
            continue
        if char == "\\":
            i += 2
            continue
        if char == opener:
            depth += 1
        elif char == closer:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return stop


def _skip_heredoc_bodies(text: str, i: int, stop: int, pending: list[tuple[str, bool]]) -> int:
    for delimiter, strip_tabs in pending:
        while i < stop:
            newline = text.find("\n", i, stop)
            line_end = stop if newline < 0 else newline
            line = text[i:line_end].rstrip("\r")
            i = line_end + 1 if newline >= 0 else stop
            if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                break
    return i


def program_index(words: Sequence[Word]) -> int | None:
    """The index of the word naming the program, past assignments and wrappers like sudo."""
    i = 0
    while i < len(words):
        word = words[i].text
        if ASSIGNMENT_RE.match(word):
            i += 1
            continue
        name = word.rsplit("/", 1)[-1]
        if name in _WRAPPERS:
            i += 1
            while i < len(words) and (
                words[i].text.startswith("-") or ASSIGNMENT_RE.match(words[i].text)
            ):
                takes_value = name == "sudo" and words[i].text in ("-u", "-g", "-C", "-D")
                i += 2 if takes_value else 1
            continue
        return i
    return None


def program_name(words: Sequence[Word]) -> str:
    """The program a command runs, without its folder (and a Make recipe's ``@-+`` prefix)."""
    index = program_index(words)
    if index is None:
        return ""
    return words[index].text.lstrip("@-+").rsplit("/", 1)[-1]


def split_word(text: str, word: Word) -> list[Word]:
    """Blank-separated pieces of a quoted word (``NVCCFLAGS="-O3 -arch=sm_80"``), with spans.

    Pieces keep their raw spelling as ``text``; a word without blanks comes back whole.
    """
    raw = text[word.start : word.end]
    if not any(blank in word.text for blank in " \t"):
        return [word]
    pieces = []
    for match in re.finditer(r"[^\s'\"]+", raw):
        pieces.append(Word(match.group(0), word.start + match.start(), word.start + match.end()))
    return pieces
