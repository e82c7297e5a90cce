"""Schema of kb/gpus.toml and kb/prices.toml: every figure has a value, a source and a status."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from gpuport.kb.loader import KbError
from gpuport.plan import catalog as plan_catalog
from gpuport.plan import model_spec
from gpuport.plan import prices as plan_prices
from gpuport.plan.catalog import (
    FIGURE_GROUPS,
    GIB,
    INTERCONNECTS,
    SEGMENTS,
    STATUSES,
    VENDORS,
    catalog,
    catalog_document,
    find_gpu,
)
from gpuport.plan.prices import PRICE_KINDS, default_prices, prices_document
from kb_checks import OLDEST_CHECK, TODAY, check_known_keys

REQUIRED_GPUS = (
    "a100-40gb-sxm",
    "a100-80gb-sxm",
    "h100-sxm",
    "h100-pcie",
    "h200-sxm",
    "b200",
    "b300",
    "l40s",
    "rtx-4090",
    "rtx-5090",
    "mi250x",
    "mi300x",
    "mi325x",
    "mi355x",
    "rx-7900-xtx",
    "rx-9070-xt",
    "radeon-pro-w7900",
    "radeon-pro-w7800",
    "rtx-6000-ada",
    "l4",
    "mi350x",
    "h100-nvl",
    "l40",
    "a40",
    "a30",
    "rtx-5000-ada",
)
NUMBERS = ("memory_gib", "mem_bw_gbs", "fp16_tflops", "tdp_w", "link_gbs")
TEXTS = ("id", "short", "name", "architecture", "arch_id", "memory_type", "seen_in")

DOCUMENT = catalog_document()
ROWS: list[dict[str, Any]] = DOCUMENT["gpu"]


def test_the_catalog_covers_the_required_gpus_of_both_vendors() -> None:
    ids = {row["id"] for row in ROWS}
    assert set(REQUIRED_GPUS) <= ids
    assert len(ids) == len(ROWS), "duplicate ids"
    assert {row["vendor"] for row in ROWS} == set(VENDORS)


def test_every_source_key_is_a_url() -> None:
    for key, url in DOCUMENT["sources"].items():
        assert url.startswith("https://"), key


@pytest.mark.parametrize("row", ROWS, ids=[r["id"] for r in ROWS])
def test_gpu_entry_schema(row: dict[str, Any]) -> None:
    for key in TEXTS:
        assert isinstance(row.get(key), str) and row[key].strip(), key
    for key in NUMBERS:
        value = row.get(key)
        assert isinstance(value, int | float) and not isinstance(value, bool), key
        assert value > 0, key
    for key in ("fp8_tflops", "int8_tops", "usable_gib", "pair_gbs"):
        if key in row:
            assert row[key] > 0, key
    if "usable_gib" in row:
        assert row["usable_gib"] <= row["memory_gib"]
    assert row["vendor"] in VENDORS
    assert row["segment"] in SEGMENTS
    assert row["interconnect"] in INTERCONNECTS
    if row["interconnect"] == "xgmi-mesh":
        assert row.get("links", 0) >= 1
    if row["interconnect"] == "xgmi-gcd":
        assert row.get("pair_gbs", 0) > 0 and row.get("devices_per_package") == 2
    assert isinstance(row["checked"], datetime.date)
    expected_groups = set(FIGURE_GROUPS) | (
        {"efficiency"} if "compute_efficiency" in row else set()
    )
    assert set(row["sources"]) == expected_groups, "a source for every figure group"
    if "compute_efficiency" in row:
        assert 0.2 <= row["compute_efficiency"] <= 1.0
    assert set(row["status"]) == set(FIGURE_GROUPS), "a status for every figure group"
    for group, key in row["sources"].items():
        assert key in DOCUMENT["sources"], f"{group}: unknown source {key}"
    for group, status in row["status"].items():
        assert status in STATUSES, f"{group}: {status}"
    aliases = row.get("aliases", [])
    assert all(isinstance(a, str) and a for a in aliases)


def test_aliases_are_unambiguous() -> None:
    seen: dict[str, str] = {}
    for row in ROWS:
        for name in [row["id"], *row.get("aliases", [])]:
            assert name not in seen, f"{name} names {seen.get(name)} and {row['id']}"
            seen[name] = row["id"]


def test_mi250x_is_two_64_gb_devices() -> None:
    gpu = find_gpu("mi250x")
    assert gpu is not None
    assert gpu.devices_per_package == 2
    assert gpu.memory_gib == 64
    assert gpu.memory_bytes == 64 * GIB
    assert gpu.mem_bw_gbs == pytest.approx(1638.4)
    assert gpu.fp16_tflops == pytest.approx(191.5)


def test_loaded_catalog_matches_the_document() -> None:
    loaded = catalog()
    assert list(loaded) == [row["id"] for row in ROWS]
    h100 = loaded["h100-sxm"]
    assert h100.sources["bandwidth"].startswith("https://")
    assert h100.peak_tflops("fp8") == (1978.9, "")


PRICES = prices_document()


def test_price_file_schema() -> None:
    ids = {row["id"] for row in ROWS}
    seen: set[str] = set()
    for row in PRICES["price"]:
        assert row["gpu"] in ids, row["gpu"]
        assert row["gpu"] not in seen, f"two prices for {row['gpu']}"
        seen.add(row["gpu"])
        value = row["usd_per_hour"]
        assert isinstance(value, int | float) and 0.05 < value < 100
        assert row["kind"] in PRICE_KINDS
        assert row["source"].startswith("https://")
        assert isinstance(row["date"], datetime.date)
        assert row["provider"] and row["note"]
    # Both vendors' flagship data-centre parts have a price to compare.
    assert {"h100-sxm", "mi300x", "h200-sxm", "mi325x"} <= seen


# --- The same bar as every other KB file: known keys, sources, a past `checked` date --------

GPU_KEYS = {
    *TEXTS,
    *NUMBERS,
    "aliases",
    "vendor",
    "segment",
    "interconnect",
    "usable_gib",
    "fp8_tflops",
    "int8_tops",
    "links",
    "pair_gbs",
    "devices_per_package",
    "compute_efficiency",
    "sources",
    "status",
    "checked",
}
PRICE_KEYS = {"gpu", "usd_per_hour", "kind", "provider", "source", "date", "checked", "note"}


def test_gpu_and_price_files_use_only_known_keys_and_tables() -> None:
    assert set(DOCUMENT) == {"meta", "sources", "gpu"}
    check_known_keys("kb/gpus.toml [[gpu]]", ROWS, GPU_KEYS)
    assert set(PRICES) == {"meta", "price"}
    check_known_keys("kb/prices.toml [[price]]", PRICES["price"], PRICE_KEYS)


@pytest.mark.parametrize("row", ROWS, ids=[r["id"] for r in ROWS])
def test_every_gpu_was_checked_on_a_real_past_date(row: dict[str, Any]) -> None:
    assert type(row["checked"]) is datetime.date
    assert OLDEST_CHECK <= row["checked"] <= TODAY


@pytest.mark.parametrize("row", PRICES["price"], ids=[r["gpu"] for r in PRICES["price"]])
def test_every_price_was_checked_on_a_real_past_date(row: dict[str, Any]) -> None:
    assert type(row["checked"]) is datetime.date and type(row["date"]) is datetime.date
    assert OLDEST_CHECK <= row["checked"] <= TODAY
    assert row["date"] <= row["checked"], "the page cannot be newer than the day it was read"


def test_text_fields_have_no_stray_whitespace() -> None:
    for row in [*ROWS, *PRICES["price"]]:
        for key, value in row.items():
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, str):
                    assert item == item.strip(), f"{key}: {item!r}"


def test_default_prices_load() -> None:
    prices = default_prices()
    assert prices["mi300x"].usd_per_hour == 1.99
    assert prices["mi300x"].date == datetime.date(2026, 5, 18)
    assert "mi355x" not in prices  # no citable price: the plan asks the user for one


# --- Malformed data is a KbError naming the file and entry ------------------------------------


def test_a_malformed_gpu_is_refused_with_its_entry_named(monkeypatch: pytest.MonkeyPatch) -> None:
    document = catalog_document()
    h100 = document["gpu"][3]
    document["gpu"][3] = {**h100, "mem_bw_gbs": "3350 GB/s"}
    monkeypatch.setattr(plan_catalog, "load_toml", lambda filename: document)
    catalog.cache_clear()
    try:
        with pytest.raises(
            KbError, match=r"^kb/gpus.toml \[\[gpu\]\] h100-sxm: 'mem_bw_gbs' has the wrong type"
        ):
            catalog()
        document["gpu"][3] = {**h100, "sources": {**h100["sources"], "memory": "nowhere"}}
        with pytest.raises(KbError, match=r"h100-sxm: the memory source 'nowhere' is not in"):
            catalog()
    finally:
        catalog.cache_clear()


def test_a_malformed_price_is_refused_with_its_entry_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    document = prices_document()
    document["price"][0] = {**document["price"][0], "kind": "bargain"}
    monkeypatch.setattr(plan_prices, "load_toml", lambda filename: document)
    with pytest.raises(
        KbError, match=r"^kb/prices.toml \[\[price\]\] h100-sxm: kind 'bargain' is not one of"
    ):
        default_prices()
    document["price"][0] = {**document["price"][0], "kind": "spot", "gpu": "h100-sxm9"}
    with pytest.raises(KbError, match=r"h100-sxm9: not a GPU of kb/gpus.toml"):
        default_prices()


def test_a_malformed_preset_is_refused_with_its_file_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = model_spec.load_json

    def without_source(filename: str, package: str) -> Any:
        document = real(filename, package)
        del document["gpuport"]["published_source"]
        return document

    monkeypatch.setattr(model_spec, "load_json", without_source)
    model_spec.presets.cache_clear()
    try:
        with pytest.raises(
            KbError, match=r"^plan/presets/deepseek-r1.json gpuport: missing 'published_source'"
        ):
            model_spec.presets()
    finally:
        model_spec.presets.cache_clear()
