"""What every knowledge-base entry must carry, checked the same way by each KB file's tests."""

from __future__ import annotations

import dataclasses
import datetime
import re
import tomllib
from importlib import resources
from typing import Any
from urllib.parse import urlsplit

TODAY = datetime.date.today()
OLDEST_CHECK = datetime.date(2025, 1, 1)  # older knowledge is due for a re-check


def raw(filename: str) -> dict[str, Any]:
    """One data file of gpuport/kb as plain TOML, without gpuport's loader."""
    text = resources.files("gpuport.kb").joinpath(filename).read_text(encoding="utf-8")
    return tomllib.loads(text)


def check_sources_and_date(sources: tuple[str, ...] | list[str], checked: object) -> None:
    """At least one https source, none twice, and a real date between OLDEST_CHECK and today."""
    assert sources, "no source"
    for source in sources:
        parts = urlsplit(source)
        assert parts.scheme == "https" and parts.netloc and not re.search(r"\s", source), source
    assert len(set(sources)) == len(sources), "a source is listed twice"
    assert type(checked) is datetime.date, f"checked is {checked!r}, not a date"
    assert OLDEST_CHECK <= checked <= TODAY, checked


def check_no_stray_whitespace(entry: Any) -> None:
    """Every text field of a loaded entry (a dataclass) has no blanks at either end."""
    for field in dataclasses.fields(entry):
        value = getattr(entry, field.name)
        for item in value if isinstance(value, tuple) else (value,):
            if isinstance(item, str):
                assert item == item.strip(), f"{field.name}: {item!r}"


def check_entry(entry: Any) -> None:
    """A loaded entry (a dataclass with ``sources`` and ``checked``): sourced, dated, trimmed."""
    check_sources_and_date(entry.sources, entry.checked)
    check_no_stray_whitespace(entry)


def check_known_keys(where: str, items: list[dict[str, Any]], allowed: set[str]) -> None:
    """Every raw entry of a table uses only ``allowed`` keys: a typo would otherwise be ignored."""
    for item in items:
        unknown = set(item) - allowed
        assert not unknown, f"{where} {item}: unknown keys {unknown}"
