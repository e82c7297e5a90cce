"""Reading the knowledge base's data files: one typed loader every stage uses.

Each file under ``gpuport/kb`` is TOML whose entries carry their sources and the date they were
checked; :class:`Entry` gives typed access to one entry with errors that name the file and
entry, so a malformed fact fails the schema tests rather than a user's run. The same reader
serves the two other shapes shipped data takes: the generated CUDA→HIP table (TSV, read by
:func:`load_tsv`) and the plan's model presets (Hugging Face ``config.json`` documents, which
hold JSON ``null``s TOML cannot write, read by :func:`load_json`).
"""

from __future__ import annotations

import datetime
import json
import pickle
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from importlib import resources
from types import MappingProxyType
from typing import Any, NamedTuple, TypeVar

KB_PACKAGE = "gpuport.kb"


class KbError(ValueError):
    """A knowledge-base data file is malformed (a bug in gpuport's data, caught by the tests)."""


def data_label(filename: str, package: str = KB_PACKAGE) -> str:
    """How errors name a shipped data file: ``kb/gpus.toml``, ``plan/presets/phi-4.json``."""
    folder = package.removeprefix("gpuport.").replace(".", "/")
    return f"{folder}/{filename}"


def _read_text(filename: str, package: str) -> str:
    data = resources.files(package).joinpath(filename).read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise KbError(f"{data_label(filename, package)}: not UTF-8 text ({exc})") from exc


# Text of a TOML file -> its parsed document, pickled: several tables are read from one file
# (ptx.toml five times while `gpuport scan` starts), and unpickling a fresh copy costs about
# 1/80 of parsing the text again. Keyed by the text, so a changed file is parsed anew.
_PARSED: dict[str, bytes] = {}


def load_toml(filename: str, package: str = KB_PACKAGE) -> dict[str, Any]:
    """One TOML file of ``gpuport/kb``, parsed; a malformed file is a :class:`KbError`.

    Each call returns a document of its own (callers may change it).
    """
    text = _read_text(filename, package)
    parsed = _PARSED.get(text)
    if parsed is not None:
        document: dict[str, Any] = pickle.loads(parsed)
        return document
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise KbError(f"{data_label(filename, package)}: {exc}") from exc
    if len(_PARSED) >= 64:
        _PARSED.clear()
    _PARSED[text] = pickle.dumps(document, pickle.HIGHEST_PROTOCOL)
    return document


def load_json(filename: str, package: str = KB_PACKAGE) -> Any:
    """One shipped JSON document, parsed; a malformed one is a :class:`KbError` naming its line."""
    text = _read_text(filename, package)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        label = data_label(filename, package)
        raise KbError(f"{label}:{exc.lineno}: not valid JSON ({exc.msg})") from exc


def json_files(folder: str, package: str = KB_PACKAGE) -> tuple[str, ...]:
    """The ``*.json`` files of a shipped data folder, as names for :func:`load_json`, sorted."""
    names = (item.name for item in resources.files(package).joinpath(folder).iterdir())
    return tuple(sorted(f"{folder}/{name}" for name in names if name.endswith(".json")))


_REQUIRED: Any = object()
_T = TypeVar("_T")
_Enum = TypeVar("_Enum", bound=StrEnum)


class Entry:
    """Typed access to one TOML table (or JSON object), with errors that name the file and entry.

    A key that is absent, or JSON ``null``, takes the accessor's default; without a default it
    is an error.
    """

    def __init__(self, raw: Any, where: str) -> None:
        if not isinstance(raw, dict):
            raise KbError(f"{where}: expected a table, got {type(raw).__name__}")
        self.raw: dict[str, Any] = raw
        self.where = where

    def _get(self, key: str, kind: type | tuple[type, ...], default: Any) -> Any:
        value = self.raw.get(key)
        if value is None:
            if default is _REQUIRED:
                raise KbError(f"{self.where}: missing {key!r}")
            return default
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

    def sources(self, key: str = "sources") -> tuple[str, ...]:
        """Where the entry's facts come from: a list of at least one string."""
        value = self.texts(key, required=True)
        if not value:
            raise KbError(f"{self.where}: {key!r} needs at least one source")
        return value

    def ints(self, key: str) -> tuple[int, ...]:
        value = self._get(key, list, [])
        if not all(isinstance(item, int) and not isinstance(item, bool) for item in value):
            raise KbError(f"{self.where}: {key!r} must be a list of integers")
        return tuple(value)

    def integer(self, key: str, default: int | None = None) -> int:
        value: int = self._get(key, int, _REQUIRED if default is None else default)
        return value

    def number(self, key: str, default: float | None = None) -> float:
        """An integer or float value, as a float."""
        value = self._get(key, (int, float), _REQUIRED if default is None else default)
        if isinstance(value, bool):
            raise KbError(f"{self.where}: {key!r} has the wrong type (bool)")
        return float(value)

    def optional_number(self, key: str) -> float | None:
        if self.raw.get(key) is None:
            return None
        return self.number(key)

    def flag(self, key: str) -> bool:
        value: bool = self._get(key, bool, False)
        return value

    def choice(self, key: str, choices: tuple[str, ...]) -> str:
        """A text that must be one of ``choices``."""
        value = self.text(key)
        if value not in choices:
            raise KbError(f"{self.where}: {key} {value!r} is not one of {', '.join(choices)}")
        return value

    def member(self, key: str, kind: type[_Enum]) -> _Enum:
        """A text that must be the value of one of ``kind``'s members."""
        value = self.text(key)
        try:
            return kind(value)
        except ValueError:
            choices = ", ".join(member.value for member in kind)
            raise KbError(f"{self.where}: {key} {value!r} is not one of {choices}") from None

    def table(self, key: str) -> Entry:
        """A nested table, as an entry of its own."""
        return Entry(self._get(key, dict, _REQUIRED), f"{self.where} {key}")

    def text_table(self, key: str) -> Mapping[str, str]:
        """A nested table whose values are all strings, in file order."""
        value = self.table(key).raw
        if not all(isinstance(item, str) for item in value.values()):
            raise KbError(f"{self.where}: {key!r} must be a table of strings")
        return dict(value)

    def date(self, key: str = "checked") -> datetime.date:
        value = self._get(key, datetime.date, _REQUIRED)
        if isinstance(value, datetime.datetime):
            raise KbError(f"{self.where}: {key!r} must be a date, not a date-time")
        result: datetime.date = value
        return result

    def iso_date(self, key: str = "checked") -> datetime.date:
        """A date written as ``YYYY-MM-DD`` text (JSON has no date type)."""
        value = self.text(key)
        try:
            return datetime.date.fromisoformat(value)
        except ValueError:
            raise KbError(f"{self.where}: {key!r} must be a date like 2026-01-31") from None


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


def table_entry(data: dict[str, Any], name: str, filename: str) -> Entry:
    """The single ``[name]`` table of one parsed file, as an entry."""
    return Entry(data.get(name), f"kb/{filename} [{name}]")


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


class TsvRow(NamedTuple):
    """One data row of a TSV file: its line number and its cells by column name."""

    line: int
    cells: dict[str, str]


@dataclass(frozen=True, slots=True)
class TsvTable:
    """A tab-separated file: ``# key: value`` comment lines, a header row, then data rows."""

    label: str  # the file as errors name it, e.g. "kb/cuda_hip_api.tsv"
    meta: Mapping[str, str]  # the comment lines' ``key: value`` pairs, the first of each key
    rows: tuple[TsvRow, ...]

    def where(self, row: TsvRow) -> str:
        """The row as errors name it: ``kb/cuda_hip_api.tsv:12``."""
        return f"{self.label}:{row.line}"


def load_tsv(filename: str, columns: tuple[str, ...], package: str = KB_PACKAGE) -> TsvTable:
    """A shipped TSV file whose header row must be exactly ``columns``.

    Cells are split on tabs as written (no quoting: the generator never writes a tab into a
    cell); a row with another number of cells is a :class:`KbError` naming its line.
    """
    label = data_label(filename, package)
    meta: dict[str, str] = {}
    rows: list[TsvRow] = []
    header: list[str] | None = None
    width = len(columns)
    for number, line in enumerate(_read_text(filename, package).splitlines(), 1):
        if line.startswith("#"):
            key, _, value = line[1:].partition(":")
            if value:
                meta.setdefault(key.strip(), value.strip())
            continue
        if not line.strip():
            continue
        cells = line.split("\t")
        if header is None:
            header = cells
            if tuple(header) != columns:
                raise KbError(f"{label}:{number}: the header row must be {' '.join(columns)}")
            continue
        if len(cells) != width:
            raise KbError(f"{label}:{number}: {len(cells)} cells, expected {width}")
        rows.append(TsvRow(number, dict(zip(columns, cells, strict=True))))
    return TsvTable(label, MappingProxyType(meta), tuple(rows))
