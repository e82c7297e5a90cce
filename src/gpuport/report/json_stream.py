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
# json.dumps with an indent runs Python's own encoder, a generator per level; the items of a
# Deferred array (thousands of findings) are laid out by _indented instead, which gives the
# same text with the C string and float encoders.
_STRING = json.encoder.encode_basestring  # the C one where there is one (ensure_ascii=False)
_FLOAT = float.__repr__


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
        parts = [separator, inner]
        _indented(item, inner, parts)
        yield _writable("".join(parts))
        separator = ","
    yield "[]" if separator == "[" else "\n" + " " * level + "]"


def _indented(value: object, newline: str, parts: list[str]) -> None:
    """Append ``value``'s text as ``_ENCODER`` lays it out, its lines after the first starting
    with ``newline`` (a newline and the indentation of the line the value starts on)."""
    if isinstance(value, str):
        parts.append(_STRING(value))
    elif value is None:
        parts.append("null")
    elif value is True:
        parts.append("true")
    elif value is False:
        parts.append("false")
    elif isinstance(value, int):
        parts.append(int.__repr__(value))
    elif isinstance(value, float):
        parts.append(_float(value))
    elif isinstance(value, dict):
        if not value:
            parts.append("{}")
            return
        inner = newline + " " * INDENT
        separator = "{" + inner
        for key, item in value.items():
            parts.append(separator)
            parts.append(_STRING(key) if isinstance(key, str) else _key(key))
            parts.append(": ")
            _indented(item, inner, parts)
            separator = "," + inner
        parts.append(newline + "}")
    elif isinstance(value, list | tuple):
        if not value:
            parts.append("[]")
            return
        inner = newline + " " * INDENT
        separator = "[" + inner
        for item in value:
            parts.append(separator)
            _indented(item, inner, parts)
            separator = "," + inner
        parts.append(newline + "]")
    else:  # what the encoder's default=str makes of it
        parts.append(_ENCODER.encode(value).replace("\n", newline))


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    return _FLOAT(value)


def _key(key: object) -> str:
    """A dict key that is not a string, as the encoder writes it (a TypeError for the rest)."""
    if isinstance(key, float):
        return _STRING(_float(key))
    if key is True or key is False or key is None:
        return _STRING(json.dumps(key))
    if isinstance(key, int):
        return _STRING(int.__repr__(key))
    return _ENCODER.encode({key: 0})  # raises as json.dumps does


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
