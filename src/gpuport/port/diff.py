"""The unified diff of a port, as ``git apply`` and ``patch -p1`` read it, for any bytes.

Lines end at ``\\n`` only: a ``\\r``, form feed, ``\\x1c``-``\\x1e``, NEL or U+2028 is content
(``str.splitlines`` would split on all of them, and the patch would no longer match the
file). A last line without a newline is followed by ``\\ No newline at end of file``, as GNU
diff writes it (https://www.gnu.org/software/diffutils/manual/html_node/Incomplete-Lines.html).
File names are quoted as git quotes them (C-style, in double quotes, bytes over 0x7f in
octal: https://git-scm.com/docs/git-config#Documentation/git-config.txt-corequotePath), which
both ``git apply`` and GNU ``patch`` read back. Bytes that were not UTF-8 are held as lone
surrogates (``surrogateescape``) and come back as the same bytes when the diff is written.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator

from gpuport.port.model import FileResult, PortResult

NO_NEWLINE = "\\ No newline at end of file\n"

# git's C-style escapes for the control characters that have a letter (quote.c, sq_lookup).
_NAMED_ESCAPES = {7: "a", 8: "b", 9: "t", 10: "n", 11: "v", 12: "f", 13: "r", 34: '"', 92: "\\"}


def unified_diff(result: PortResult, context: int = 3) -> str:
    """Every changed file's diff, in path order (``a/`` and ``b/`` prefixes), byte-exact.

    Shown on a terminal, it goes through ``report.common.visible_lines`` first, so control
    characters from file names or code cannot drive the terminal.
    """
    return "".join(chunk for f in result.files for chunk in file_diff(f, context))


def file_diff(file: FileResult, context: int = 3) -> Iterator[str]:
    """The diff of one file; nothing when it did not change."""
    if not file.changed or file.translated is None:
        return
    # The texts leave out a byte-order mark; the file on disk (and the translation written)
    # has it, so the diff's first line carries it for `git apply` to match.
    bom = "\ufeff" if file.bom else ""
    hunks = difflib.unified_diff(
        split_lines(bom + file.original),
        split_lines(bom + file.translated),
        n=context,
        lineterm="\n",
    )
    for number, line in enumerate(hunks):
        if number < 2:  # difflib's own "---" and "+++" lines, without names
            continue
        if number == 2:
            yield f"--- {quote_path('a/' + file.path)}\n"
            yield f"+++ {quote_path('b/' + file.new_path)}\n"
        if line.endswith("\n"):
            yield line
        else:  # only a file's last line can lack its newline
            yield line + "\n"
            yield NO_NEWLINE


def split_lines(text: str) -> list[str]:
    """``text`` cut after each ``\\n``, and only there; every other character is content."""
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


def quote_path(path: str) -> str:
    """A diff header's file name, quoted as git quotes it when it holds special characters.

    A name with a space but nothing to quote gets a trailing tab, as git writes it, so that
    ``patch`` does not take the part after the space for a timestamp.
    """
    try:
        raw = path.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate that did not come from a file name
        raw = path.encode("utf-8", "backslashreplace")
    if not any(b < 0x20 or b in (0x22, 0x5C) or b >= 0x7F for b in raw):
        return path + "\t" if " " in path else path
    parts = []
    for b in raw:
        if b in _NAMED_ESCAPES:
            parts.append("\\" + _NAMED_ESCAPES[b])
        elif b < 0x20 or b >= 0x7F:
            parts.append(f"\\{b:03o}")
        else:
            parts.append(chr(b))
    return '"' + "".join(parts) + '"'
