"""Dockerfile instructions with their offsets: continuations, comments, here-documents, ARG values.

The reader follows the Dockerfile reference (https://docs.docker.com/reference/dockerfile/):
parser directives (``# escape=```), line continuations with comment and empty lines inside them
dropped, here-documents of RUN/COPY/ADD, exec-form JSON arrays, and ``ARG`` defaults substituted
into later values the way the builder does. It is kept after measuring the libraries
(``benchmarks/syntax_readers.py``; results in ``benchmarks/results/syntax_readers.md``): the
``dockerfile`` package, which binds BuildKit's own parser, finds the same 45 instructions on the
fixtures, about as fast (0.07 s against 0.09 s for 400 KB), but gives line numbers only, no
character offsets, so no edit could be placed; tree-sitter-dockerfile misreads a comment line
inside a continued ENV (which Docker drops), loses 13 of the 45 instructions, and is 2x slower.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from gpuport.syntax.shell import Word, shell_commands


@dataclass(frozen=True, slots=True)
class Instruction:
    """One Dockerfile instruction; ``segments`` are the file spans of its argument text."""

    keyword: str  # upper case
    start: int  # offset of the keyword
    end: int  # offset after the last character of the instruction (heredocs included)
    segments: tuple[tuple[int, int], ...]
    heredocs: tuple[tuple[int, int], ...] = ()  # spans of here-document bodies


def logical_text(text: str, instruction: Instruction) -> str:
    """An instruction's argument text with its line continuations joined."""
    return "".join(text[s:e] for s, e in instruction.segments)


class _OffsetMap:
    """Offsets in an instruction's logical text (continuations joined) back to the file."""

    def __init__(self, instruction: Instruction) -> None:
        self.segments = instruction.segments
        self.firsts: list[int] = []  # logical offset where each segment starts
        consumed = 0
        for start, stop in self.segments:
            self.firsts.append(consumed)
            consumed += stop - start
        self.fallback = self.segments[-1][1] if self.segments else instruction.end

    def file_offset(self, position: int, *, end: bool = False) -> int:
        index = bisect.bisect_right(self.firsts, position - 1 if end else position) - 1
        if index < 0 or not self.segments:
            return self.segments[0][0] if self.segments else self.fallback
        start, stop = self.segments[index]
        return min(start + position - self.firsts[index], stop)


_DIRECTIVE_RE = re.compile(r"^#\s*([A-Za-z]+)\s*=\s*(\S+)\s*$")
_HEREDOC_RE = re.compile(r"<<(-?)([\"']?)([A-Za-z_][A-Za-z0-9_]*)\2")
_KEYWORD_RE = re.compile(r"\s*([A-Za-z]+)")


def dockerfile_instructions(text: str) -> list[Instruction]:
    """The instructions of a Dockerfile, honouring the ``escape`` parser directive."""
    lines = text.splitlines(keepends=True)
    offsets = []
    position = 0
    for line in lines:
        offsets.append(position)
        position += len(line)
    escape = "\\"
    for line in lines:  # parser directives come first, before any other line
        directive = _DIRECTIVE_RE.match(line.strip())
        if not directive:
            break
        if directive.group(1).lower() == "escape":
            escape = directive.group(2)[:1]
    instructions: list[Instruction] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            i += 1
            continue
        keyword_match = _KEYWORD_RE.match(line)
        if not keyword_match:
            i += 1
            continue
        keyword = keyword_match.group(1).upper()
        start = offsets[i] + keyword_match.start(1)
        segments: list[tuple[int, int]] = []
        seg_begin = offsets[i] + keyword_match.end(1)
        end = start
        while True:
            body = lines[i].rstrip("\r\n")
            continued = body.rstrip().endswith(escape)
            stop = offsets[i] + len(body.rstrip()) - 1 if continued else offsets[i] + len(body)
            segments.append((seg_begin, max(seg_begin, stop)))
            end = offsets[i] + len(body)
            i += 1
            if not continued:
                break
            # Comment and empty lines inside a continued instruction are dropped by Docker.
            while i < len(lines) and (not lines[i].strip() or lines[i].lstrip().startswith("#")):
                i += 1
            if i >= len(lines):
                break
            seg_begin = offsets[i]
        heredocs: list[tuple[int, int]] = []
        joined = "".join(text[s:e] for s, e in segments)
        if keyword in ("RUN", "COPY", "ADD"):
            for heredoc in _HEREDOC_RE.finditer(joined):
                body_start = offsets[i] if i < len(lines) else len(text)
                strip_tabs = bool(heredoc.group(1))
                while i < len(lines):
                    content = lines[i].rstrip("\r\n")
                    i += 1
                    if (content.lstrip("\t") if strip_tabs else content) == heredoc.group(3):
                        heredocs.append((body_start, offsets[i - 1]))
                        end = offsets[i - 1] + len(content)
                        break
                else:
                    heredocs.append((body_start, len(text)))
                    end = len(text)
        instructions.append(Instruction(keyword, start, end, tuple(segments), tuple(heredocs)))
    return instructions


def instruction_words(text: str, instruction: Instruction) -> list[list[Word]]:
    """The shell commands of an instruction's argument text, with offsets into the file."""
    logical = logical_text(text, instruction)
    offsets = _OffsetMap(instruction)
    stripped = logical.lstrip()
    if stripped.startswith("["):  # exec form: a JSON array of strings
        words = []
        for match in re.finditer(r'"((?:[^"\\]|\\.)*)"', logical):
            words.append(
                Word(
                    match.group(1),
                    offsets.file_offset(match.start()),
                    offsets.file_offset(match.end(), end=True),
                )
            )
        return [words]
    commands = []
    for words in shell_commands(logical, heredocs=False):
        commands.append(
            [
                Word(
                    w.text,
                    offsets.file_offset(w.start),
                    offsets.file_offset(w.end, end=True),
                )
                for w in words
            ]
        )
    for start, stop in instruction.heredocs:
        commands.extend(shell_commands(text, start, stop))
    return commands


def first_words(text: str, instruction: Instruction) -> list[Word]:
    """The words of an instruction's first command (all of them, for ARG, ENV and FROM)."""
    commands = instruction_words(text, instruction)
    return commands[0] if commands else []


_VARIABLE_RE = re.compile(
    r"\$(?:\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)(?P<op>:?[-+])?(?P<word>[^}]*)\}|(?P<bare>[A-Za-z_][A-Za-z0-9_]*))"
)


def expand_arguments(value: str, arguments: Mapping[str, str]) -> str:
    """Substitute ``$VAR``, ``${VAR}``, ``${VAR:-default}`` and ``${VAR:+alt}`` like Docker does."""

    def substitute(match: re.Match[str]) -> str:
        name = match.group("braced") or match.group("bare")
        current = arguments.get(name, "")
        op = match.group("op") or ""
        if op.endswith("-"):
            return current or match.group("word")
        if op.endswith("+"):
            return match.group("word") if current else ""
        return current

    return _VARIABLE_RE.sub(substitute, value)


@dataclass(frozen=True, slots=True)
class ArgDefault:
    """A global ``ARG NAME=value``: the value with earlier ARGs filled in, and its raw span."""

    value: str
    span: tuple[int, int]  # the default as written, inside its quotes


def global_arguments(text: str, instructions: Sequence[Instruction]) -> dict[str, ArgDefault]:
    """The ARG defaults declared before the first FROM, which FROM lines may use."""
    defaults: dict[str, ArgDefault] = {}
    for instruction in instructions:
        if instruction.keyword == "FROM":
            break
        if instruction.keyword != "ARG":
            continue
        for word in first_words(text, instruction):
            name, sep, value = word.text.partition("=")
            if not sep:
                continue
            offset = text.find("=", word.start, word.end) + 1
            raw_value = text[offset : word.end]
            if raw_value[:1] in ("'", '"') and raw_value[-1:] == raw_value[:1]:
                offset, end = offset + 1, word.end - 1
            else:
                end = word.end
            # Docker expands earlier ARGs in a default (ARG BASE=cuda:${CUDA_VERSION}).
            known = {arg_name: arg.value for arg_name, arg in defaults.items()}
            defaults[name] = ArgDefault(expand_arguments(value, known), (offset, end))
    return defaults


@dataclass(frozen=True, slots=True)
class FromLine:
    """A FROM instruction: the image word (options skipped) and the stage it names, if any."""

    image: Word
    stage: str | None  # lower case


def from_line(text: str, instruction: Instruction) -> FromLine | None:
    words = [w for w in first_words(text, instruction) if not w.text.startswith("--")]
    if not words:
        return None
    stage = words[2].text.lower() if len(words) >= 3 and words[1].text.lower() == "as" else None
    return FromLine(words[0], stage)


@dataclass(frozen=True, slots=True)
class EnvPair:
    """One ``NAME=value`` (or legacy ``NAME value``) of an ENV instruction, as raw spans."""

    name: str
    name_span: tuple[int, int]
    value_span: tuple[int, int]
    span: tuple[int, int]  # the whole pair


def env_pairs(text: str, instruction: Instruction) -> list[EnvPair]:
    words = first_words(text, instruction)
    if not words:
        return []
    pairs: list[EnvPair] = []
    if "=" in words[0].text:
        for word in words:
            name, sep, _ = word.text.partition("=")
            if not sep:
                continue
            equals = text.find("=", word.start, word.end)
            pairs.append(
                EnvPair(name, (word.start, equals), (equals + 1, word.end), (word.start, word.end))
            )
    else:  # legacy form: ENV NAME value with blanks
        name_word = words[0]
        value_start = words[1].start if len(words) > 1 else name_word.end
        value_end = words[-1].end
        pairs.append(
            EnvPair(
                name_word.text,
                (name_word.start, name_word.end),
                (value_start, value_end),
                (name_word.start, value_end),
            )
        )
    return pairs
