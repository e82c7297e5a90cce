"""Hourly GPU prices (kb/prices.toml), and the user's own from a file or flags.

A price is per device per hour; an MI250X entry is per package and is halved per GCD.
Every price keeps where it came from, so the report can say whose number it used.
"""

from __future__ import annotations

import datetime
import math
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuport.kb.loader import KbError, entries, load_toml
from gpuport.plan.catalog import Gpu, find_gpu
from gpuport.plan.errors import PlanInputError, read_input

PRICES_TOML = "prices.toml"
PRICE_KINDS = ("market median", "list price", "spot", "user")
_TOML_LINE_RE = re.compile(r"at line (\d+)")


@dataclass(frozen=True, slots=True)
class Price:
    usd_per_hour: float  # per device (per GCD for an MI250X)
    kind: str
    provider: str
    source: str
    date: datetime.date | None

    @property
    def label(self) -> str:
        when = f", {self.date.isoformat()}" if self.date else ""
        return f"{self.kind}, {self.provider}{when}"


def prices_document() -> dict[str, Any]:
    """kb/prices.toml as parsed TOML (for the schema test and the loader)."""
    return load_toml(PRICES_TOML)


def _per_device(gpu: Gpu, usd: float) -> float:
    return usd / gpu.devices_per_package


def default_prices() -> dict[str, Price]:
    """The shipped prices by GPU id."""
    table: dict[str, Price] = {}
    for entry in entries(prices_document(), "price", PRICES_TOML, "gpu"):
        gpu = find_gpu(entry.text("gpu"))
        if gpu is None:
            raise KbError(f"{entry.where}: not a GPU of kb/gpus.toml")
        if gpu.id in table:
            raise KbError(f"{entry.where}: a second price for {gpu.id}")
        checked = entry.date()
        seen = entry.date("date")
        if seen > checked:
            raise KbError(f"{entry.where}: the page's date {seen} is after `checked` {checked}")
        table[gpu.id] = Price(
            usd_per_hour=_per_device(gpu, entry.number("usd_per_hour")),
            kind=entry.choice("kind", PRICE_KINDS),
            provider=entry.text("provider"),
            source=entry.text("source"),
            date=seen,
        )
    return table


def _line_of(text: str, key: str) -> int:
    """The first line that mentions ``key`` (for messages about a value's meaning)."""
    pattern = re.compile(rf"(^|[^\w-]){re.escape(key)}([^\w-]|$)")
    for number, line in enumerate(text.splitlines(), start=1):
        if pattern.search(line):
            return number
    return 1


def _checked_usd(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise PlanInputError(f"{where}: the price must be a number of dollars, not {value!r}")
    usd = float(value)
    if not math.isfinite(usd) or usd <= 0:
        raise PlanInputError(f"{where}: the price must be more than zero, not {value!r}")
    return usd


def load_price_file(path: Path) -> dict[str, Price]:
    """Prices from a TOML file: ``[prices]`` with ``gpu = dollars`` and/or ``[[price]]``
    tables like kb/prices.toml; dollars per GPU as rented (per package for an MI250X).
    Errors name the file and line."""
    try:
        text = read_input(path).decode("utf-8")
    except UnicodeDecodeError:
        raise PlanInputError(f"{path}:1: not UTF-8 text") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        match = _TOML_LINE_RE.search(str(exc))
        line = match.group(1) if match else "1"
        reason = _TOML_LINE_RE.sub("", str(exc)).strip(" ()")
        raise PlanInputError(f"{path}:{line}: not valid TOML ({reason})") from None
    found: dict[str, Price] = {}

    def add(name: str, usd_value: Any, extra: Mapping[str, Any]) -> None:
        where = f"{path}:{_line_of(text, name)}"
        gpu = find_gpu(name)
        if gpu is None:
            raise PlanInputError(f"{where}: unknown GPU {name!r}")
        usd = _checked_usd(usd_value, where)
        date = extra.get("date")
        if date is not None and not isinstance(date, datetime.date):
            raise PlanInputError(f"{where}: date must be a TOML date like 2026-01-31")
        found[gpu.id] = Price(
            usd_per_hour=_per_device(gpu, usd),
            kind=str(extra.get("kind", "user")),
            provider=str(extra.get("provider", "your price file")),
            source=str(extra.get("source", path)),
            date=date,
        )

    simple = data.get("prices", {})
    if not isinstance(simple, dict):
        raise PlanInputError(f"{path}:{_line_of(text, 'prices')}: [prices] must be a table")
    for name, value in simple.items():
        if isinstance(value, dict):
            add(name, value.get("usd_per_hour"), value)
        else:
            add(name, value, {})
    rows = data.get("price", [])
    if not isinstance(rows, list):
        raise PlanInputError(f"{path}:{_line_of(text, 'price')}: 'price' must be [[price]] tables")
    for row in rows:
        if not isinstance(row, dict) or "gpu" not in row:
            raise PlanInputError(f"{path}:{_line_of(text, 'price')}: a [[price]] needs gpu = ...")
        add(str(row["gpu"]), row.get("usd_per_hour"), row)
    unknown = set(data) - {"prices", "price", "meta"}
    if unknown:
        key = sorted(unknown)[0]
        raise PlanInputError(
            f"{path}:{_line_of(text, key)}: unexpected {key!r}; write [prices] with "
            "gpu = dollars, or [[price]] tables"
        )
    if not found:
        raise PlanInputError(f"{path}: no prices in the file")
    return found


def parse_price_flag(text: str) -> tuple[str, Price]:
    """``mi300x=1.75`` -> (gpu id, price)."""
    name, sep, value = text.partition("=")
    if not sep or not name.strip() or not value.strip():
        raise PlanInputError(f"--price {text!r}: write GPU=DOLLARS_PER_HOUR, e.g. mi300x=1.75")
    gpu = find_gpu(name)
    if gpu is None:
        raise PlanInputError(f"--price {text!r}: unknown GPU {name.strip()!r}")
    try:
        number = float(value)
    except ValueError:
        raise PlanInputError(f"--price {text!r}: {value.strip()!r} is not a number") from None
    usd = _checked_usd(number, f"--price {text!r}")
    return gpu.id, Price(_per_device(gpu, usd), "user", "--price", "command line", None)
