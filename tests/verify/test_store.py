"""``verify compare --store/--db``: the comparison saved in bench's results store (kind verify)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from verify_helpers import run_cli  # noqa: E402

from gpuport.bench.store import ResultsStore  # noqa: E402
from gpuport.verify import cases  # noqa: E402


@pytest.fixture(scope="module")
def small_reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two ops only (matmul in three dtypes, GELU): each compare here takes a fraction of a second."""
    path = tmp_path_factory.mktemp("verify-store") / "ref.gpv"
    code, _, err = run_cli(
        "verify", "record", "-o", str(path), "--size", "tiny", "--case", "matmul", "--case", "gelu"
    )
    assert code == 0, err
    return path


def _through_bf16(x: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    return {"out": (x["a"].bfloat16() @ x["b"].bfloat16()).float()}


def test_a_stored_comparison_is_a_verify_run_that_bench_lists_and_shows(
    small_reference: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(
        cases.SUITE,
        "matmul[fp32]",
        dataclasses.replace(cases.SUITE["matmul[fp32]"], run=_through_bf16),
    )
    db = tmp_path / "results.sqlite"
    code, _, err = run_cli("verify", "compare", str(small_reference), "--db", str(db))
    assert code == 1, err  # storing does not change the verdict
    assert "(kind verify) in" in err
    with ResultsStore.open(db) as store:
        (summary,) = store.runs("verify")
        run = store.load(summary.id)
    assert summary.complete and summary.label is not None and "ref.gpv" in summary.label
    assert run.settings["file"] == str(small_reference)
    assert run.settings["recorded_on"]["accelerator"] == "cpu"  # type: ignore[index]
    by_name = {record.name: record for record in run.results}
    failed = by_name["matmul[fp32]"]
    assert failed.status == "failed" and failed.metrics["passed"] == 0.0
    assert failed.metrics["max_abs_error"] is not None and failed.metrics["max_abs_error"] > 0
    assert failed.params["closer_to_fp64"] == "recorded"
    assert by_name["gelu[fp32]"].status == "ok" and by_name["gelu[fp32]"].metrics["passed"] == 1.0

    code, out, _ = run_cli("bench", "list", "--db", str(db), "--kind", "verify", "--format", "json")
    assert code == 0 and summary.id in out
    code, out, _ = run_cli("bench", "show", summary.id, "--db", str(db))
    assert code == 0 and "matmul[fp32]" in out and "max abs error" in out
    code, out, _ = run_cli("bench", "export", summary.id, "--db", str(db))
    assert code == 0 and json.loads(out)["run"]["kind"] == "verify"


def test_store_uses_the_default_store_and_a_bad_store_is_one_error_line(
    small_reference: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    code, _, err = run_cli("verify", "compare", str(small_reference), "--store")
    assert code == 0, err
    with ResultsStore.open(tmp_path / "data" / "gpuport" / "results.sqlite") as store:
        assert [run.kind for run in store.runs()] == ["verify"]

    not_a_store = tmp_path / "notes.sqlite"
    not_a_store.write_text("my notes\n", encoding="utf-8")
    code, _, err = run_cli("verify", "compare", str(small_reference), "--db", str(not_a_store))
    assert code == 2
    assert "not a gpuport results store" in err and "Traceback" not in err
    assert not_a_store.read_text(encoding="utf-8") == "my notes\n"


def test_without_store_nothing_is_written(
    small_reference: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    code, _, err = run_cli("verify", "compare", str(small_reference))
    assert code == 0, err
    assert not (tmp_path / "data").exists() and "stored run" not in err
