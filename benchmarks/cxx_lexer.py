"""C/C++/CUDA lexing: gpuport's own code_only against the libraries that could replace it.

``gpuport.syntax.cxx.code_only`` blanks comments and the insides of string and character
literals, keeping every offset, so that rules never fire inside them. This measures, over
CUDA sources, how long each engine takes to produce that text and on how many files it gives
exactly the same text as gpuport's token-by-token reference (``code_only_by_tokens``):

- gpuport ``code_only`` (one regular-expression walk) and ``code_only_by_tokens`` (the lexer);
- Pygments' ``CudaLexer`` (already installed: rich depends on it), comment and string tokens
  blanked;
- tree-sitter with the ``tree-sitter-cuda`` grammar, when installed, comment and literal nodes
  blanked (it reports UTF-8 byte offsets, mapped back to characters here).

Writes benchmarks/results/cxx_lexer.md.

    .venv/bin/python benchmarks/cxx_lexer.py [DIR ...]   # default: tests/corpus, tests/fixtures/kernels
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from gpuport.syntax.cxx import _blank, _blank_literal, code_only, code_only_by_tokens  # noqa: E402

SUFFIXES = (".cu", ".cuh", ".h", ".hpp", ".cpp", ".cc", ".inl")


def _pygments() -> Callable[[str], str] | None:
    try:
        from pygments.lexers.c_like import CudaLexer
        from pygments.token import Comment, String
    except ImportError:
        return None
    lexer = CudaLexer(stripnl=False, ensurenl=False, stripall=False, tabsize=0)

    def blank(text: str) -> str:
        out: list[str] = []
        literal: list[str] = []  # a string literal comes as several tokens: quotes, escapes
        for kind, value in lexer.get_tokens(text):
            if kind in String and kind is not String.Char:
                literal.append(value)
                continue
            if literal:
                out.append(_blank_literal("".join(literal)))
                literal = []
            if kind is String.Char:
                out.append(_blank_literal(value))
            elif (
                kind in Comment and kind not in Comment.Preproc and kind not in Comment.PreprocFile
            ):
                out.append(_blank(value))
            else:
                out.append(value)
        if literal:
            out.append(_blank_literal("".join(literal)))
        return "".join(out)

    return blank


def _tree_sitter() -> Callable[[str], str] | None:
    try:
        import tree_sitter
        import tree_sitter_cuda
    except ImportError:
        return None
    parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_cuda.language()))
    kinds = {"comment", "string_literal", "char_literal", "raw_string_literal"}

    def blank(text: str) -> str:
        data = text.encode("utf-8", "surrogateescape")
        spans: list[tuple[int, int, str]] = []
        todo = [parser.parse(data).root_node]
        while todo:
            node = todo.pop()
            if node.type in kinds and not (node.parent and node.parent.type == "preproc_include"):
                spans.append((node.start_byte, node.end_byte, node.type))
            else:
                todo.extend(node.children)
        out = bytearray(data)
        for start, end, kind in spans:
            piece = data[start:end].decode("utf-8", "surrogateescape")
            blanked = _blank(piece) if kind == "comment" else _blank_literal(piece)
            out[start:end] = blanked.encode("utf-8", "surrogateescape").ljust(end - start)[
                : end - start
            ]
        return out.decode("utf-8", "surrogateescape")

    return blank


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="*", type=Path)
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).parent / "results" / "cxx_lexer.md"
    )
    args = parser.parse_args()
    dirs = args.dirs or [ROOT / "tests" / "corpus", ROOT / "tests" / "fixtures" / "kernels"]
    files = sorted(p for d in dirs for p in d.rglob("*") if p.suffix in SUFFIXES and p.is_file())
    texts = [p.read_bytes().decode("utf-8", "surrogateescape") for p in files]
    size = sum(len(t) for t in texts)
    reference = [code_only_by_tokens(t) for t in texts]
    engines: list[tuple[str, Callable[[str], str] | None]] = [
        ("gpuport code_only", code_only),
        ("gpuport lexer (code_only_by_tokens)", code_only_by_tokens),
        ("Pygments CudaLexer", _pygments()),
        ("tree-sitter-cuda", _tree_sitter()),
    ]
    rows = []
    for name, engine in engines:
        if engine is None:
            rows.append(f"| {name} | not installed | | |")
            continue
        best = float("inf")
        outputs: list[str] = []
        for _ in range(3):
            started = time.process_time()
            outputs = [engine(t) for t in texts]
            best = min(best, time.process_time() - started)
        same = sum(o == r for o, r in zip(outputs, reference, strict=True))
        rows.append(f"| {name} | {best:.3f} | {size / best / 1e6:.1f} | {same}/{len(texts)} |")
        print(rows[-1])
    machine = f"{platform.machine()}, Python {platform.python_version()}, {platform.platform()}"
    args.out.write_text(
        "# C/C++/CUDA lexing: code_only against libraries\n\n"
        f"Measured {time.strftime('%Y-%m-%d')} with `benchmarks/cxx_lexer.py` over {len(texts)} "
        f"files ({size / 1e6:.1f} MB) on: {machine}. CPU seconds, best of 3; "
        "'same text' counts files whose blanked text equals gpuport's token-by-token reference.\n\n"
        "| engine | seconds | MB/s | same text |\n|---|---:|---:|---:|\n" + "\n".join(rows) + "\n",
        encoding="utf-8",
    )
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
