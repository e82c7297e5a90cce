"""Reading the knowledge base's data files: one typed loader every stage uses.

Each file under ``gpuport/kb`` is TOML whose entries carry their sources and the date they were
checked; :class:`Entry` gives typed access to one entry with errors that name the file and
entry, so a malformed fact fails the schema tests rather than a user's run.
"""

from __future__ import annotations

import datetime
import tomllib
from collections.abc import Callable, Mapping
from importlib import resources
from types import MappingProxyType
from typing import Any, TypeVar


class KbError(ValueError):
    """A knowledge-base data file is malformed (a bug in gpuport's data, caught by the tests)."""


def load_toml(filename: str) -> dict[str, Any]:
    """One TOML file of ``gpuport/kb``, parsed; a malformed file is a :class:`KbError`."""
    data = resources.files("gpuport.kb").joinpath(filename).read_bytes()
    try:
        return tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise KbError(f"kb/{filename}: {exc}") from exc


class Entry:
    """Typed access to one TOML table, with errors that name the file and entry."""

    def __init__(self, raw: Any, where: str) -> None:
        if not isinstance(raw, dict):
            raise KbError(f"{where}: expected a table, got {type(raw).__name__}")
        self.raw: dict[str, Any] = raw
        self.where = where

    def _get(self, key: str, kind: type | tuple[type, ...], default: Any) -> Any:
        if key not in self.raw:
            if default is _REQUIRED:
                raise KbError(f"{self.where}: missing {key!r}")
            return default
        value = self.raw[key]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise KbError(f"{self.where}: {key!r} has the wrong type ({type(value).__name__})")
        return value

    def text(self, key: str, default: Any = None) -> str:
        value: str = self._get(key, str, _REQUIRED if default is None else default)
        return value

    def optional_text(self, key: str) -> str | None:
        value: str | None = self._get(key, str, None)
        return value

    def texts(self, key: str, required: bool = False) -> tuple[str, ...]:
        value = self._get(key, list, _REQUIRED if required else [])
        if not all(isinstance(item, str) for item in value):
            raise KbError(f"{self.where}: {key!r} must be a list of strings")
        return tuple(value)

    def ints(self, key: str) -> tuple[int, ...]:
        value = self._get(key, list, [])
        if not all(isinstance(item, int) and not isinstance(item, bool) for item in value):
            raise KbError(f"{self.where}: {key!r} must be a list of integers")
        return tuple(value)

    def integer(self, key: str) -> int:
        value: int = self._get(key, int, _REQUIRED)
        return value

    def flag(self, key: str) -> bool:
        value: bool = self._get(key, bool, False)
        return value

    def date(self, key: str = "checked") -> datetime.date:
        value = self._get(key, datetime.date, _REQUIRED)
        if isinstance(value, datetime.datetime):
            raise KbError(f"{self.where}: {key!r} must be a date, not a date-time")
        result: datetime.date = value
        return result


_REQUIRED = object()
_T = TypeVar("_T")


def entries(data: dict[str, Any], table: str, filename: str, key: str) -> list[Entry]:
    """The ``[[table]]`` entries of one parsed file, each named by its ``key`` in errors."""
    raw = data.get(table, [])
    if not isinstance(raw, list):
        raise KbError(f"kb/{filename}: [[{table}]] must be an array of tables")
    result = []
    for index, item in enumerate(raw):
        name = item.get(key, f"#{index}") if isinstance(item, dict) else f"#{index}"
        result.append(Entry(item, f"kb/{filename} [[{table}]] {name}"))
    return result


def keyed(
    data: dict[str, Any],
    table: str,
    filename: str,
    key: str,
    duplicate: str,
    build: Callable[[Entry, str], _T],
) -> Mapping[str, _T]:
    """One object per ``[[table]]`` entry, keyed by its ``key`` field; a repeated key is an error."""
    result: dict[str, _T] = {}
    for entry in entries(data, table, filename, key):
        name = entry.text(key)
        if name in result:
            raise KbError(f"{entry.where}: {duplicate}")
        result[name] = build(entry, name)
    return MappingProxyType(result)
