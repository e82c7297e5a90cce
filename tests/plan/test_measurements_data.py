"""The published-measurement set plan's fit reads (benchmarks/plan_data/measurements.csv):
every row typed, every GPU and model known to plan, sources and dates real, coverage wide."""

from __future__ import annotations

import csv
import datetime
import re
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from gpuport.plan.catalog import catalog
from gpuport.plan.engines import ENGINES
from gpuport.plan.errors import PlanInputError
from gpuport.plan.model_spec import presets
from gpuport.plan.precision import parse_kv_dtype, parse_precision
from kb_checks import TODAY

CSV_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "plan_data" / "measurements.csv"
COLUMNS = (
    "id",
    "gpu",
    "gpus",
    "tp",
    "engine",
    "engine_version",
    "backend",
    "model",
    "weights",
    "kv_dtype",
    "phase",
    "batch",
    "prompt_tokens",
    "output_tokens",
    "measured_tokens_per_s",
    "source",
    "published",
    "checked",
    "note",
)
PHASES = ("decode", "prefill", "offline")
# The build an engine ran on: CUDA on NVIDIA, ROCm or Vulkan (llama.cpp) on AMD.
BACKENDS = {"nvidia": ("cuda",), "amd": ("rocm", "vulkan")}
INTEGERS = ("gpus", "tp", "batch", "prompt_tokens", "output_tokens")
# The oldest figure worth fitting: llama.cpp's CUDA backend and vLLM both date from 2023.
OLDEST_PUBLISHED = datetime.date(2023, 1, 1)
LARGE_BATCH = 32


def _rows() -> list[dict[str, str]]:
    with CSV_PATH.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        assert tuple(reader.fieldnames or ()) == COLUMNS
        return list(reader)


ROWS = _rows()


def _date(text: str) -> datetime.date:
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", text), text
    return datetime.date.fromisoformat(text)


def test_the_header_is_the_documented_schema() -> None:
    readme = (CSV_PATH.parent / "README.md").read_text(encoding="utf-8")
    for column in COLUMNS:
        assert column in readme, f"{column} is not documented"


@pytest.mark.parametrize("row", ROWS, ids=[r["id"] for r in ROWS])
def test_row_is_typed_and_known_to_plan(row: dict[str, str]) -> None:
    assert all(value == value.strip() for value in row.values()), "stray whitespace"
    assert re.fullmatch(r"[a-z0-9][a-z0-9._-]*", row["id"]), "ids are lowercase"
    assert row["gpu"] in catalog(), f"{row['gpu']} is not a catalog id"
    assert row["model"] in presets(), f"{row['model']} is not a preset"
    assert row["engine"] in ENGINES
    assert row["backend"] in BACKENDS[catalog()[row["gpu"]].vendor], "backend of another vendor"
    if "vulkan" in row["note"].lower():
        assert row["backend"] == "vulkan", "a Vulkan run recorded under another backend"
    assert row["phase"] in PHASES
    numbers = {key: int(row[key]) for key in INTEGERS}
    assert numbers["gpus"] >= 1 and 1 <= numbers["tp"] <= numbers["gpus"]
    assert numbers["gpus"] % numbers["tp"] == 0, "replicas of tp devices fill the system"
    # batch 0: an offline run at maximum load, the engine choosing how many run at once.
    assert numbers["batch"] >= (0 if row["phase"] == "offline" else 1)
    if row["phase"] == "decode":
        assert numbers["output_tokens"] >= 1
    if row["phase"] == "prefill":
        assert numbers["prompt_tokens"] >= 1 and numbers["output_tokens"] == 0
    if row["phase"] == "offline":
        assert numbers["prompt_tokens"] >= 1 and numbers["output_tokens"] >= 1
    assert float(row["measured_tokens_per_s"]) > 0
    parse_precision(row["weights"])
    parse_kv_dtype(row["kv_dtype"])
    source = urlsplit(row["source"])
    assert source.scheme == "https" and source.netloc and " " not in row["source"]
    published, checked = _date(row["published"]), _date(row["checked"])
    assert OLDEST_PUBLISHED <= published <= checked <= TODAY


def test_ids_are_unique() -> None:
    counts = Counter(row["id"] for row in ROWS)
    assert [name for name, n in counts.items() if n > 1] == []


def test_the_same_measurement_is_not_recorded_twice() -> None:
    keys = Counter(
        tuple(row[k] for k in COLUMNS if k not in ("id", "note", "checked")) for row in ROWS
    )
    assert [key for key, n in keys.items() if n > 1] == []


def test_bad_weights_or_kv_dtypes_would_be_caught() -> None:
    # The parsers this file's rows go through refuse what they do not know.
    with pytest.raises(PlanInputError):
        parse_precision("Q4_Z")
    with pytest.raises(PlanInputError):
        parse_kv_dtype("fp5")


def test_coverage_is_wide_enough_to_fit_and_validate() -> None:
    gpus = catalog()
    assert len(ROWS) >= 150
    assert len({row["gpu"] for row in ROWS}) >= 10
    assert len({row["engine"] for row in ROWS}) >= 3
    assert {gpus[row["gpu"]].vendor for row in ROWS} == {"nvidia", "amd"}
    assert {"decode", "prefill"} <= {row["phase"] for row in ROWS}
    batches = [int(row["batch"]) for row in ROWS]
    assert 1 in batches
    assert any(batch >= LARGE_BATCH for batch in batches)


def test_the_readme_counts_are_the_files() -> None:
    # benchmarks/plan_data/counts.py prints the README's tables; rerun it when rows change.
    readme = (CSV_PATH.parent / "README.md").read_text(encoding="utf-8")
    gpus = len({row["gpu"] for row in ROWS})
    models = len({row["model"] for row in ROWS})
    assert f"{len(ROWS)} rows, {gpus} GPUs, {models} models" in readme
