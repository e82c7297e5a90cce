"""Price overrides from a file or flags, and clear errors naming file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuport.plan.errors import PlanInputError
from gpuport.plan.prices import load_price_file, parse_price_flag


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "prices.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_simple_table_and_full_entries(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "[prices]\nmi300x = 1.75\nh100 = 2\n\n"
        '[[price]]\ngpu = "b200"\nusd_per_hour = 4.5\nkind = "list price"\n'
        'provider = "Acme Cloud"\nsource = "https://example.com/prices"\ndate = 2026-10-01\n',
    )
    prices = load_price_file(path)
    assert prices["mi300x"].usd_per_hour == 1.75
    assert prices["h100-sxm"].usd_per_hour == 2.0  # aliases resolve
    assert prices["b200"].provider == "Acme Cloud"
    assert prices["b200"].date is not None and prices["b200"].date.month == 10


def test_mi250x_prices_are_per_package_and_halved_per_gcd(tmp_path: Path) -> None:
    prices = load_price_file(_write(tmp_path, "[prices]\nmi250x = 2.0\n"))
    assert prices["mi250x"].usd_per_hour == 1.0
    _, flag = parse_price_flag("mi250x=3")
    assert flag.usd_per_hour == 1.5


def test_broken_toml_names_file_and_line(tmp_path: Path) -> None:
    path = _write(tmp_path, "[prices]\nmi300x = 1.75\nh100 = = 2\n")
    with pytest.raises(PlanInputError, match=rf"{path}:3: not valid TOML"):
        load_price_file(path)


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("[prices]\nmi300x = 1.75\nh1000 = 2\n", 3, "unknown GPU 'h1000'"),
        ("[prices]\n\nmi300x = -1\n", 3, "more than zero"),
        ('[prices]\nmi300x = "cheap"\n', 2, "must be a number"),
        ("[costs]\nmi300x = 1\n", 1, "unexpected 'costs'"),
    ],
)
def test_bad_values_name_file_and_line(tmp_path: Path, text: str, line: int, message: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(PlanInputError, match=message) as caught:
        load_price_file(path)
    assert str(caught.value).startswith(f"{path}:{line}:")


def test_empty_and_missing_files(tmp_path: Path) -> None:
    with pytest.raises(PlanInputError, match="no prices"):
        load_price_file(_write(tmp_path, "# nothing\n"))
    with pytest.raises(PlanInputError, match="cannot read"):
        load_price_file(tmp_path / "absent.toml")


@pytest.mark.parametrize(
    ("flag", "message"),
    [
        ("mi300x", "write GPU=DOLLARS_PER_HOUR"),
        ("mi300x=", "write GPU=DOLLARS_PER_HOUR"),
        ("nope=1", "unknown GPU 'nope'"),
        ("mi300x=abc", "is not a number"),
        ("mi300x=0", "more than zero"),
        ("mi300x=nan", "more than zero"),
    ],
)
def test_price_flag_errors(flag: str, message: str) -> None:
    with pytest.raises(PlanInputError, match=message):
        parse_price_flag(flag)


def test_price_flag() -> None:
    gpu_id, price = parse_price_flag(" MI300X = 1.75 ")
    assert gpu_id == "mi300x" and price.usd_per_hour == 1.75 and price.kind == "user"
