"""CMake commands and arguments with their offsets, comments left out.

The reader follows the CMake language manual
(https://cmake.org/cmake/help/latest/manual/cmake-language.7.html): bracket and line comments,
quoted, bracket and unquoted arguments (``${...}``, ``$ENV{...}`` and ``$<...>`` kept whole), and
stops at the first syntax error, saying where. It is kept over tree-sitter-cmake after measuring
both (``benchmarks/syntax_readers.py``; results in ``benchmarks/results/syntax_readers.md``):
the grammar gives the same 60 commands, with identical argument offsets and the same hits, on
the fixture files, but reads 400 KB of CMake in 0.29 s against this reader's 0.07 s (its parse
alone takes 0.09 s), and would add two compiled dependencies.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from gpuport.syntax.shell import Word


@dataclass(frozen=True, slots=True)
class CMakeArg:
    """One argument; ``value`` is the text inside quotes or brackets, ``start:end`` the raw span."""

    value: str
    start: int
    end: int
    quoted: bool


@dataclass(frozen=True, slots=True)
class CMakeCommand:
    name: str  # lower case
    start: int  # offset of the command name
    end: int  # offset after the closing parenthesis
    args: tuple[CMakeArg, ...]


@dataclass(frozen=True, slots=True)
class CMakeProblem:
    """Where reading stopped, and why."""

    offset: int
    reason: str


_BRACKET_OPEN_RE = re.compile(r"\[(=*)\[")
IDENTIFIER_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def cmake_commands(text: str) -> tuple[list[CMakeCommand], CMakeProblem | None]:
    """Every command invocation of a CMake file, comments left out; stops at a syntax error."""
    commands: list[CMakeCommand] = []
    i = 0
    n = len(text)
    while i < n:
        char = text[i]
        if char in " \t\r\n\f\v":
            i += 1
            continue
        if char == "#":
            i = _skip_comment(text, i)
            if i < 0:
                return commands, CMakeProblem(n - 1, "unterminated bracket comment")
            continue
        ident = IDENTIFIER_RE.match(text, i)
        if not ident:
            return commands, CMakeProblem(i, f"unexpected {char!r} where a command should start")
        name_start = i
        i = ident.end()
        while i < n and text[i] in " \t":
            i += 1
        if i >= n or text[i] != "(":
            return commands, CMakeProblem(name_start, f"command {ident.group(0)!r} has no '('")
        args, i, problem = _arguments(text, i + 1)
        if problem is not None:
            return commands, problem
        commands.append(CMakeCommand(ident.group(0).lower(), name_start, i, tuple(args)))
    return commands, None


def _skip_comment(text: str, i: int) -> int:
    bracket = _BRACKET_OPEN_RE.match(text, i + 1)
    if bracket:
        close = text.find("]" + bracket.group(1) + "]", bracket.end())
        return -1 if close < 0 else close + len(bracket.group(1)) + 2
    newline = text.find("\n", i)
    return len(text) if newline < 0 else newline


def _arguments(text: str, i: int) -> tuple[list[CMakeArg], int, CMakeProblem | None]:
    args: list[CMakeArg] = []
    n = len(text)
    depth = 1
    open_at = i - 1
    while i < n:
        char = text[i]
        if char in " \t\r\n\f\v":
            i += 1
        elif char == "#":
            i = _skip_comment(text, i)
            if i < 0:
                return args, n, CMakeProblem(n - 1, "unterminated bracket comment")
        elif char == "(":
            depth += 1
            i += 1
        elif char == ")":
            depth -= 1
            i += 1
            if depth == 0:
                return args, i, None
        elif char == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            if j >= n:
                return args, n, CMakeProblem(i, "unterminated quoted argument")
            args.append(CMakeArg(text[i + 1 : j], i, j + 1, True))
            i = j + 1
        elif char == "[" and (bracket := _BRACKET_OPEN_RE.match(text, i)):
            close = text.find("]" + bracket.group(1) + "]", bracket.end())
            if close < 0:
                return args, n, CMakeProblem(i, "unterminated bracket argument")
            args.append(
                CMakeArg(text[bracket.end() : close], i, close + len(bracket.group(1)) + 2, True)
            )
            i = close + len(bracket.group(1)) + 2
        else:
            j = i
            while j < n and text[j] not in " \t\r\n\f\v()#":
                if text[j] == "\\":
                    j += 2
                elif text[j] == '"':  # legacy unquoted argument with a quoted part inside
                    close = text.find('"', j + 1)
                    j = n if close < 0 else close + 1
                elif text.startswith(("${", "$<"), j) or text.startswith("$ENV{", j):
                    j = _reference_end(text, j)
                else:
                    j += 1
            args.append(CMakeArg(text[i:j], i, j, False))
            i = j
    return args, n, CMakeProblem(open_at, "unterminated command (no closing ')')")


def _reference_end(text: str, i: int) -> int:
    """The end of ``${...}``, ``$ENV{...}`` or ``$<...>`` starting at ``i`` (nesting respected)."""
    opener = "<" if text.startswith("$<", i) else "{"
    closer = ">" if opener == "<" else "}"
    depth = 0
    j = i
    while j < len(text):
        if text[j] == opener:
            depth += 1
        elif text[j] == closer:
            depth -= 1
            if depth == 0:
                return j + 1
        elif text[j] in "\n" and opener == "{":
            return j
        j += 1
    return len(text)


def argument_word(arg: CMakeArg) -> Word:
    """An argument as a word of its value, spanning the text inside its quotes."""
    return Word(arg.value, arg.start + (1 if arg.quoted else 0), arg.end - (1 if arg.quoted else 0))


def genex_content(word: Word) -> Word:
    """``word`` without the generator-expression syntax around it.

    ``$<$<COMPILE_LANGUAGE:CUDA>:-arch=sm_80>`` is read as ``-arch=sm_80``, so that an edit of
    the flag leaves the ``$<...:`` and ``>`` around it alone.
    https://cmake.org/cmake/help/latest/manual/cmake-generator-expressions.7.html
    """
    text, start, end = word.text, word.start, word.end
    while text.startswith("$<"):  # skip the condition, up to its ':' at the outer level
        depth, i = 0, 0
        while i < len(text):
            if text.startswith("$<", i):
                depth += 1
                i += 2
                continue
            if text[i] == ">":
                depth -= 1
            elif text[i] == ":" and depth == 1:
                break
            i += 1
        if i >= len(text):
            return word  # no ':': a plain expression such as $<TARGET_FILE:x> stays whole
        text, start = text[i + 1 :], start + i + 1
    while text.endswith(">") and text.count(">") > text.count("<"):
        text, end = text[:-1], end - 1
    return Word(text, start, end) if (start, end) != (word.start, word.end) else word


def project_languages(args: Sequence[CMakeArg]) -> list[CMakeArg]:
    """The language arguments of ``project()``: after ``LANGUAGES``, or the short form's."""
    keywords = {"VERSION", "DESCRIPTION", "HOMEPAGE_URL", "LANGUAGES"}
    values = [a.value for a in args]
    if "LANGUAGES" in values:
        out = []
        for arg in args[values.index("LANGUAGES") + 1 :]:
            if arg.value in keywords:
                break
            out.append(arg)
        return out
    if any(v in keywords for v in values[1:]):
        return []
    return list(args[1:])


def assigned_values(command: CMakeCommand, position: int) -> list[CMakeArg]:
    """The values a command gives the variable or property named at argument ``position``.

    ``set(NAME a b CACHE ...)``, ``set_target_properties(t PROPERTIES NAME v)``,
    ``set_property(... PROPERTY NAME v...)`` and ``list(APPEND NAME v...)``; empty otherwise.
    """
    args = command.args
    stop_words = {"CACHE", "PARENT_SCOPE", "FORCE", "PROPERTIES"}
    if command.name == "set" and position == 0:
        values = []
        for arg in args[1:]:
            if arg.value in stop_words:
                break
            values.append(arg)
        return values
    if command.name == "set_target_properties" and position + 1 < len(args):
        return [args[position + 1]]
    if command.name == "set_property" and position > 0 and args[position - 1].value == "PROPERTY":
        return list(args[position + 1 :])
    if command.name == "list" and position == 1 and args[0].value == "APPEND":
        return list(args[2:])
    return []
