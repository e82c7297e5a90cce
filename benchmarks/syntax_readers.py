"""gpuport's file-format readers against the well-kept libraries: exact offsets, same hits, speed.

For each format the rules read, the reader in ``gpuport.syntax`` is compared with the libraries
one would reach for: bashlex and tree-sitter-bash for shell, tree-sitter-cmake for CMake, the
``dockerfile`` package (BuildKit's own parser) and tree-sitter-dockerfile for Dockerfiles,
ruamel.yaml for YAML with positions (gpuport composes YAML with PyYAML's libyaml loader). On the
fixtures it counts the texts each reader could not read, the words, commands, instructions or
nodes whose offsets agree with gpuport's, and — where a library gives offsets — whether the
rules find exactly the same hits from its output. On a generated larger input it times the
reading alone (best of ``--repeat``). Libraries that are not installed are skipped and said so,
so the script runs with the project's own environment:

    .venv/bin/python benchmarks/syntax_readers.py [--repeat 5] [--write]

With the libraries (e.g. ``pip install bashlex tree-sitter tree-sitter-bash tree-sitter-cmake
tree-sitter-dockerfile dockerfile ruamel.yaml`` into a scratch environment, then
``PYTHONPATH=src:<its site-packages> .venv/bin/python benchmarks/syntax_readers.py --write``)
``--write`` also writes benchmarks/results/syntax_readers.md.
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import os
import platform
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from gpuport.edits import Hit  # noqa: E402
from gpuport.files import FileKind, classify  # noqa: E402
from gpuport.scan.build import BuildWords, analyze_cmake_commands  # noqa: E402
from gpuport.scan.containers import analyze_commands  # noqa: E402
from gpuport.syntax.cmake import CMakeArg, CMakeCommand, cmake_commands  # noqa: E402
from gpuport.syntax.dockerfile import dockerfile_instructions, logical_text  # noqa: E402
from gpuport.syntax.shell import Word, shell_commands  # noqa: E402
from gpuport.syntax.text import LineIndex  # noqa: E402
from gpuport.syntax.yaml import compose_documents  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures"
Commands = list[list[Word]]


def optional(name: str, skipped: list[str], label: str = "") -> ModuleType | None:
    """The module ``name``, or None (its ``label`` added to ``skipped``) when not installed."""
    try:
        return importlib.import_module(name)
    except ImportError:
        skipped.append(label or name)
        return None


def tree_sitter_parser(language: str, skipped: list[str]) -> Any | None:
    """A tree-sitter parser for ``language`` (``bash``: the ``tree_sitter_bash`` grammar), or
    None ("tree-sitter-LANGUAGE" added to ``skipped``) when it or tree-sitter is missing."""
    label = f"tree-sitter-{language}"
    ts = optional("tree_sitter", [])
    grammar = optional(f"tree_sitter_{language}", [])
    if ts is None or grammar is None:
        skipped.append(label)
        return None
    return ts.Parser(ts.Language(grammar.language()))


def fixture_texts(*kinds: FileKind) -> dict[str, str]:
    texts = {}
    for folder in (FIXTURES, ROOT / "examples"):
        for path in sorted(folder.rglob("*")):
            if path.is_file() and classify(path.name) in kinds:
                texts[str(path.relative_to(ROOT))] = path.read_text(encoding="utf-8")
    return texts


def larger(texts: Iterable[str], size: int) -> str:
    """The texts repeated (numbers varied) up to ``size`` characters: the generated input."""
    parts: list[str] = []
    total = n = 0
    items = list(texts)
    while total < size:
        for text in items:
            piece = text.replace("12.1", f"12.{n % 9}").replace("80", str(80 + n % 10))
            parts.append(piece if piece.endswith("\n") else piece + "\n")
            total += len(parts[-1])
            n += 1
    return "".join(parts)


def short(name: str) -> str:
    return name.removeprefix("tests/fixtures/")


def best_time(read: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        read()
        times.append(time.perf_counter() - started)
    return min(times)


def char_offsets(text: str) -> Callable[[int], int]:
    """Byte offsets of the UTF-8 text to character offsets (tree-sitter counts bytes)."""
    if text.isascii():
        return lambda offset: offset
    table = []
    for index, char in enumerate(text):
        table.extend([index] * len(char.encode("utf-8")))
    table.append(len(text))
    return lambda offset: table[offset]


def hit_keys(hits: Iterable[Hit]) -> set[tuple[Any, ...]]:
    return {
        (h.rule.id, h.start, h.end, h.message, h.status, h.edits, h.note, h.fix, h.after)
        for h in hits
    }


class Row:
    """One reader's line in a format's table."""

    def __init__(self, reader: str) -> None:
        self.reader = reader
        self.failed = 0  # texts it raised on or marked as broken
        self.agree = 0  # units (words, commands, ...) identical to gpuport's
        self.total = 0  # gpuport's units
        self.same_hits = 0  # texts whose rule hits are the same as with gpuport's reader
        self.hit_texts = 0
        self.seconds: float | None = None
        self.note = ""
        self.failures: list[str] = []

    def cells(self, unit: str) -> list[str]:
        agree = f"{self.agree}/{self.total} {unit}" if self.total else "n/a"
        hits = f"{self.same_hits}/{self.hit_texts}" if self.hit_texts else "n/a"
        seconds = f"{self.seconds * 1000:.0f} ms" if self.seconds is not None else "n/a"
        return [self.reader, str(self.failed), agree, hits, seconds, self.note]


# --- Shell --------------------------------------------------------------------------------


def shell_hits(text: str, commands: Commands) -> set[tuple[Any, ...]]:
    words = BuildWords(text, "shell")
    words.commands(commands)
    return hit_keys([*words.hits(), *analyze_commands(text, commands)])


def bashlex_commands(bashlex: ModuleType, text: str) -> Commands:
    commands: Commands = []

    def visit(node: Any) -> None:
        if node.kind == "command":
            words = []
            for part in node.parts:
                if part.kind in ("word", "assignment"):
                    words.append(Word(part.word, *part.pos))
                elif part.kind == "redirect" and getattr(part.output, "kind", "") == "word":
                    words.append(Word(part.output.word, *part.output.pos))
            commands.append(words)
            return
        for child in getattr(node, "parts", None) or getattr(node, "list", None) or []:
            visit(child)

    for tree in bashlex.parse(text):
        visit(tree)
    return commands


_TS_WORD_TYPES = {
    "word",
    "string",
    "raw_string",
    "concatenation",
    "simple_expansion",
    "expansion",
    "command_substitution",
    "number",
    "ansi_c_string",
    "variable_assignment",
    "translated_string",
    "arithmetic_expansion",
    "process_substitution",
}


def tree_sitter_shell_commands(parser: Any, text: str) -> tuple[Commands, bool]:
    """Commands as word lists from tree-sitter-bash; the values are unquoted the way gpuport's
    reader does (tree-sitter gives raw spans only)."""
    tree = parser.parse(text.encode("utf-8"))
    offset = char_offsets(text)
    commands: Commands = []

    def word(node: Any) -> Word:
        start, end = offset(node.start_byte), offset(node.end_byte)
        raw = text[start:end]
        unquoted = shell_commands(raw)
        value = unquoted[0][0].text if unquoted and unquoted[0] else raw
        return Word(value, start, end)

    def visit(node: Any, redirects: Sequence[Any] = ()) -> None:
        if node.type in ("command", "declaration_command"):
            words = []
            for child in node.named_children:
                if child.type in _TS_WORD_TYPES or child.type in ("command_name", "variable_name"):
                    words.append(word(child))
            for redirect in redirects:
                destination = redirect.child_by_field_name("destination")
                if destination is not None:
                    words.append(word(destination))
            words.sort(key=lambda w: w.start)
            commands.append(words)
            return
        if node.type == "redirected_statement":
            body = node.child_by_field_name("body")
            found = [c for c in node.named_children if c.type == "file_redirect"]
            if body is not None:
                visit(body, found)
            return
        for child in node.named_children:
            visit(child)

    visit(tree.root_node)
    return commands, tree.root_node.has_error


def word_agreement(ours: Commands, theirs: Commands) -> int:
    mine = {(w.text, w.start, w.end) for c in ours for w in c}
    return len(mine & {(w.text, w.start, w.end) for c in theirs for w in c})


def shell_texts() -> dict[str, str]:
    """The shell scripts, and the RUN lines of the Dockerfiles (continuations joined)."""
    texts = fixture_texts(FileKind.SHELL)
    for name, text in fixture_texts(FileKind.DOCKERFILE).items():
        for number, instruction in enumerate(dockerfile_instructions(text)):
            if instruction.keyword == "RUN":
                texts[f"{name} RUN {number}"] = logical_text(text, instruction).strip() + "\n"
    return texts


def compare_shell(repeat: int) -> tuple[list[Row], list[str]]:
    texts = shell_texts()
    big = larger(fixture_texts(FileKind.SHELL).values(), 400_000)  # whole scripts
    skipped: list[str] = []
    readers: list[tuple[str, Callable[[str], tuple[Commands, bool]]]] = [
        ("gpuport.syntax.shell", lambda t: (shell_commands(t), False))
    ]
    bashlex = optional("bashlex", skipped)
    if bashlex is not None:
        readers.append(("bashlex", lambda t: (bashlex_commands(bashlex, t), False)))
    parser = tree_sitter_parser("bash", skipped)
    if parser is not None:
        readers.append(("tree-sitter-bash", lambda t: tree_sitter_shell_commands(parser, t)))
    rows = []
    name_of = {id(text): name for name, text in texts.items()}
    parse_only = {}
    if parser is not None:
        parse_only["tree-sitter-bash"] = best_time(lambda: parser.parse(big.encode()), repeat)
    for name, read in readers:
        row = Row(name)
        for text in texts.values():
            ours = shell_commands(text)
            row.total += sum(len(c) for c in ours)
            try:
                theirs, broken = read(text)
            except Exception as exc:
                row.failed += 1
                row.hit_texts += 1
                row.failures.append(f"{short(name_of[id(text)])} ({type(exc).__name__})")
                continue
            if broken:
                row.failed += 1
                row.failures.append(f"{short(name_of[id(text)])} (read with errors)")
            row.agree += word_agreement(ours, theirs)
            row.hit_texts += 1
            row.same_hits += shell_hits(text, ours) == shell_hits(text, theirs)
        try:
            row.seconds = best_time(lambda read=read: read(big), repeat)
        except Exception as exc:
            row.note = f"generated script: {type(exc).__name__}"
        if name in parse_only:
            row.note = f"parsing alone {parse_only[name] * 1000:.0f} ms; words unquoted by hand"
        if row.failures:
            row.note = "; ".join(filter(None, [row.note, "failed: " + ", ".join(row.failures)]))
        rows.append(row)
    return rows, skipped


# --- CMake --------------------------------------------------------------------------------


def tree_sitter_cmake_commands(parser: Any, text: str) -> tuple[list[CMakeCommand], bool]:
    tree = parser.parse(text.encode("utf-8"))
    offset = char_offsets(text)
    commands: list[CMakeCommand] = []

    def visit(node: Any) -> None:
        if node.type.endswith("_command"):
            name_node = node.children[0]
            args = []
            for arg_list in (c for c in node.named_children if c.type == "argument_list"):
                for argument in arg_list.named_children:
                    if argument.type != "argument" or not argument.named_children:
                        continue
                    inner = argument.named_children[0]
                    start, end = offset(inner.start_byte), offset(inner.end_byte)
                    if inner.type == "quoted_argument":
                        args.append(CMakeArg(text[start + 1 : end - 1], start, end, True))
                    elif inner.type == "bracket_argument":
                        content = [
                            c for c in inner.children if c.type == "bracket_argument_content"
                        ]
                        value = (
                            text[offset(content[0].start_byte) : offset(content[0].end_byte)]
                            if content
                            else ""
                        )
                        args.append(CMakeArg(value, start, end, True))
                    else:
                        args.append(CMakeArg(text[start:end], start, end, False))
            name = text[offset(name_node.start_byte) : offset(name_node.end_byte)].lower()
            commands.append(
                CMakeCommand(name, offset(node.start_byte), offset(node.end_byte), tuple(args))
            )
        for child in node.named_children:
            visit(child)

    visit(tree.root_node)
    return commands, tree.root_node.has_error


def _own_cmake(text: str) -> tuple[list[CMakeCommand], bool]:
    commands, problem = cmake_commands(text)
    return commands, problem is not None


def compare_cmake(repeat: int) -> tuple[list[Row], list[str]]:
    texts = fixture_texts(FileKind.CMAKE)
    big = larger(texts.values(), 400_000)
    skipped: list[str] = []
    readers: list[tuple[str, Callable[[str], tuple[list[CMakeCommand], bool]]]] = [
        ("gpuport.syntax.cmake", _own_cmake)
    ]
    parser = tree_sitter_parser("cmake", skipped)
    if parser is not None:
        readers.append(("tree-sitter-cmake", lambda t: tree_sitter_cmake_commands(parser, t)))
    rows = []
    parse_only = {}
    if parser is not None:
        parse_only["tree-sitter-cmake"] = best_time(lambda: parser.parse(big.encode()), repeat)
    for name, read in readers:
        row = Row(name)
        for text in texts.values():
            ours, _ = cmake_commands(text)
            row.total += len(ours)
            theirs, broken = read(text)
            row.failed += broken
            row.agree += len(set(ours) & set(theirs))
            row.hit_texts += 1
            row.same_hits += hit_keys(analyze_cmake_commands(text, ours)) == hit_keys(
                analyze_cmake_commands(text, theirs)
            )
        row.seconds = best_time(lambda read=read: read(big), repeat)
        if name in parse_only:
            row.note = f"parsing alone {parse_only[name] * 1000:.0f} ms"
        rows.append(row)
    return rows, skipped


# --- Dockerfile ---------------------------------------------------------------------------


def compare_dockerfile(repeat: int) -> tuple[list[Row], list[str]]:
    texts = fixture_texts(FileKind.DOCKERFILE)
    big = larger(texts.values(), 400_000)

    def ours(text: str) -> list[tuple[str, int]]:
        index = LineIndex(text)
        return [(i.keyword, index.position(i.start)[0]) for i in dockerfile_instructions(text)]

    readers: list[tuple[str, Callable[[str], tuple[list[tuple[str, int]], bool]], str]] = [
        ("gpuport.syntax.dockerfile", lambda t: (ours(t), False), "")
    ]
    skipped: list[str] = []
    buildkit = optional("dockerfile", skipped, "dockerfile (BuildKit)")
    if buildkit is not None:
        readers.append(
            (
                "dockerfile (BuildKit's parser)",
                lambda t: (
                    [(c.cmd.upper(), c.start_line) for c in buildkit.parse_string(t)],
                    False,
                ),
                "line numbers only: no character offsets, so no edit can be placed",
            )
        )
    parser = tree_sitter_parser("dockerfile", skipped)
    if parser is not None:

        def tree_sitter_instructions(text: str) -> tuple[list[tuple[str, int]], bool]:
            tree = parser.parse(text.encode("utf-8"))
            found = [
                (node.children[0].text.decode().upper(), node.start_point[0] + 1)
                for node in tree.root_node.named_children
                if node.type.endswith("_instruction")
            ]
            return found, tree.root_node.has_error

        readers.append(
            (
                "tree-sitter-dockerfile",
                tree_sitter_instructions,
                "instruction spans only: RUN words still need a shell reader",
            )
        )
    rows = []
    for name, read, note in readers:
        row = Row(name)
        row.note = note
        for text in texts.values():
            mine = ours(text)
            row.total += len(mine)
            try:
                theirs, broken = read(text)
            except Exception:
                row.failed += 1
                continue
            row.failed += broken
            row.agree += len(set(mine) & set(theirs))
        row.seconds = best_time(lambda read=read: read(big), repeat)
        rows.append(row)
    return rows, skipped


# --- YAML ---------------------------------------------------------------------------------


def node_marks(documents: Iterable[Any]) -> list[tuple[Any, ...]]:
    """Every node's kind, marks and style, depth first (what the rules' edits are placed by)."""
    out: list[tuple[Any, ...]] = []
    seen: set[int] = set()

    def visit(node: Any) -> None:
        if node is None or id(node) in seen:
            return
        seen.add(id(node))
        start, end = node.start_mark, node.end_mark
        # libyaml writes a plain scalar's style as "", PyYAML's Python parser as None
        style = (getattr(node, "style", None) or "") if type(node).__name__ == "ScalarNode" else ""
        value = node.value if type(node).__name__ == "ScalarNode" else None
        out.append(
            (
                type(node).__name__,
                start.index,
                end.index,
                start.line,
                start.column,
                end.line,
                end.column,
                style,
                value,
            )
        )
        if type(node).__name__ == "MappingNode":
            for key, item in node.value:
                visit(key)
                visit(item)
        elif type(node).__name__ == "SequenceNode":
            for item in node.value:
                visit(item)

    for document in documents:
        visit(document)
    return out


def compare_yaml(repeat: int) -> tuple[list[Row], list[str]]:
    import yaml

    texts = fixture_texts(FileKind.YAML, FileKind.COMPOSE)
    valid = [t for t in texts.values() if compose_documents(t)[1] is None]
    big = "---\n".join(larger(valid, 40_000) for _ in range(10))

    def pyyaml(loader: Any) -> Callable[[str], list[Any]]:
        return lambda t: list(yaml.compose_all(t, Loader=loader))

    readers: list[tuple[str, Callable[[str], list[Any]]]] = [
        ("PyYAML, libyaml (gpuport.syntax.yaml)", pyyaml(getattr(yaml, "CSafeLoader", None))),
        ("PyYAML, pure Python", pyyaml(yaml.SafeLoader)),
    ]
    skipped: list[str] = []
    ruamel = optional("ruamel.yaml", skipped)
    if ruamel is not None:
        readers.append(
            (
                "ruamel.yaml (pure)",
                lambda t: list(ruamel.YAML(typ="safe", pure=True).compose_all(t)),
            )
        )
        readers.append(("ruamel.yaml (round-trip)", lambda t: list(ruamel.YAML().compose_all(t))))
    rows = []
    for name, read in readers:
        row = Row(name)
        for text in texts.values():
            documents, _ = compose_documents(text)
            mine = node_marks(documents)
            row.total += len(mine)
            try:
                theirs = node_marks(read(text))
            except Exception:
                row.failed += 1
                continue
            row.agree += sum(a == b for a, b in zip(mine, theirs, strict=False))
        row.seconds = best_time(lambda read=read: read(big), repeat)
        rows.append(row)
    return rows, skipped


# --- Report -------------------------------------------------------------------------------

HEADER = [
    "reader",
    "texts it failed on",
    "same offsets as gpuport",
    "texts with the same hits",
    "time, generated input",
    "note",
]


def table(title: str, unit: str, size: str, rows: list[Row], skipped: list[str], count: int) -> str:
    lines = [f"## {title}", "", f"{count} fixture and example texts; generated input: {size}.", ""]
    if title == "Shell":
        lines[2] = (
            f"{count} fixture and example scripts and Dockerfile RUN lines; generated input: {size}."
        )
    lines.append("| " + " | ".join(HEADER) + " |")
    lines.append("|" + "---|" * len(HEADER))
    lines.extend("| " + " | ".join(row.cells(unit)) + " |" for row in rows)
    if skipped:
        lines += ["", f"Skipped (not installed): {', '.join(skipped)}."]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--write", action="store_true", help="write the results file")
    args = parser.parse_args()
    sections = [
        ("Shell", "words", "400 KB script", compare_shell, None),
        ("CMake", "commands", "400 KB of CMake", compare_cmake, FileKind.CMAKE),
        (
            "Dockerfile",
            "instructions",
            "400 KB Dockerfile",
            compare_dockerfile,
            FileKind.DOCKERFILE,
        ),
        ("YAML", "nodes", "10 documents, 400 KB", compare_yaml, FileKind.YAML),
    ]
    parts = []
    for title, unit, size, compare, kind in sections:
        rows, skipped = compare(args.repeat)
        if kind is None:
            count = len(shell_texts())
        else:
            kinds = (kind, FileKind.COMPOSE) if kind is FileKind.YAML else (kind,)
            count = len(fixture_texts(*kinds))
        parts.append(table(title, unit, size, rows, skipped, count))
        print(parts[-1])
    if args.write:
        machine = (
            f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
            f"{platform.platform()}"
        )
        head = (
            "# Syntax readers\n\n"
            f"Measured {datetime.date.today()} with `benchmarks/syntax_readers.py` on: {machine}.\n"
            'Times are the best of the repeats, reading only. "Same offsets" counts gpuport\'s '
            "units (words with their value and span, CMake commands with every argument, "
            "instructions with their first line, YAML nodes with their marks and style) that "
            'the library gives identically; "same hits" runs the rules on the library\'s output. '
            "The YAML text every reader fails on is the malformed fixture (_shared/broken.yaml). "
            "What was kept, and why, is in the docstrings of gpuport.syntax's modules.\n\n"
        )
        out = ROOT / "benchmarks" / "results" / "syntax_readers.md"
        out.write_text(head + "\n".join(parts), encoding="utf-8")
        print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
