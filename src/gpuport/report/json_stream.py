"""JSON text written in pieces: a big array's items are made and encoded one at a time.

A scan of 50,000 findings is a JSON document of about 70 MB; built whole (every finding as a
dict, then the text, then its bytes) it took over 500 MB (benchmarks/scan_memory.py). A
:class:`Deferred` array in a document is encoded item by item instead, so only one item's dict
and text exist at a time; the text is the same, byte for byte, as ``json.dumps`` with
``indent=2`` gives for the document with a list in its place.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

INDENT = 2
_ENCODER = json.JSONEncoder(indent=INDENT, ensure_ascii=False, default=str)


@dataclass(frozen=True, slots=True)
class Deferred:
    """A JSON array whose items are made only when the text is written (each time it is)."""

    items: Callable[[], Iterable[object]]


def json_chunks(document: object) -> Iterator[str]:
    """The JSON text of ``document`` (``indent=2``, UTF-8 friendly), in pieces.

    The text is always valid UTF-8 (:func:`_writable`); the last piece ends it with a newline.
    """
    token = secrets.token_hex(8)  # no text from a project can hold it
    found: list[Deferred] = []
    skeleton = _with_placeholders(document, token, found)
    text = _ENCODER.encode(skeleton) + "\n"
    placeholder = re.compile(rf'"\\u0000{token}-(\d+)\\u0000"')
    start = 0
    for match in placeholder.finditer(text):
        before = text[start : match.start()]
        yield _writable(before)
        line_start = text.rfind("\n", 0, match.start()) + 1
        line = text[line_start : match.start()]
        level = len(line) - len(line.lstrip(" "))
        yield from _array(found[int(match.group(1))], level)
        start = match.end()
    yield _writable(text[start:])


def _with_placeholders(value: object, token: str, found: list[Deferred]) -> object:
    """``value`` with each Deferred replaced by a string naming it (``found`` gets them)."""
    if isinstance(value, Deferred):
        found.append(value)
        return f"\x00{token}-{len(found) - 1}\x00"
    if isinstance(value, dict):
        return {k: _with_placeholders(v, token, found) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_with_placeholders(v, token, found) for v in value]
    return value


def _array(deferred: Deferred, level: int) -> Iterator[str]:
    """The array's text as the encoder lays out a list whose line is indented ``level`` spaces."""
    inner = "\n" + " " * (level + INDENT)
    separator = "["
    for item in deferred.items():
        yield _writable(separator + inner + _ENCODER.encode(item).replace("\n", inner))
        separator = ","
    yield "[]" if separator == "[" else "\n" + " " * level + "]"


# JSON (RFC 8259) allows these raw inside strings, but a lone surrogate cannot be written as
# UTF-8 at all (json.dumps(ensure_ascii=False) passes the ones surrogateescape made from bytes
# that were not UTF-8), and C1 controls, DEL and U+2028/U+2029 break terminals, log viewers
# and JavaScript that embeds the text.
_JSON_FIX = re.compile("[\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def _json_char(match: re.Match[str]) -> str:
    ch = match.group()
    return "\ufffd" if "\ud800" <= ch <= "\udfff" else f"\\u{ord(ch):04x}"


def _writable(text: str) -> str:
    """``text`` as valid UTF-8 JSON: lone surrogates (bytes that were not UTF-8) as U+FFFD,
    C1 controls, DEL and U+2028/U+2029 as ``\\uXXXX`` escapes."""
    if text.isascii() and "\x7f" not in text:
        return text
    return _JSON_FIX.sub(_json_char, text)
