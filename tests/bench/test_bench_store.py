"""The results store: runs kept as they are measured, moved between machines, never corrupted."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from bench_samples import machine, matmul_result

from gpuport.bench.store import (
    EXPORT_VERSION,
    SCHEMA_VERSION,
    ResultsStore,
    StoreError,
    default_path,
)


def test_a_run_is_stored_result_by_result_and_read_back(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    with ResultsStore.open(db) as store:
        run = store.begin("micro", machine(), label="first", settings={"quick": True})
        store.add(run, matmul_result("bf16", 700.0))
        # Another connection sees the result before the run finishes: committed at once.
        with ResultsStore.open(db) as other:
            seen = other.load(run)
            assert [r.name for r in seen.results] == ["matmul bf16 8192x8192x8192"]
            assert seen.summary.complete is False
        store.add(run, {**matmul_result("fp16"), "status": "skipped", "note": "out of memory"})
        store.finish(run)
        loaded = store.load(run[:5])
    assert loaded.summary.complete and loaded.summary.label == "first"
    assert loaded.settings == {"quick": True}
    assert loaded.machine == machine()
    assert [r.status for r in loaded.results] == ["ok", "skipped"]
    assert loaded.results[0].metrics["tflops"] == 700.0
    assert loaded.results[1].note == "out of memory"


def test_runs_lists_every_run_oldest_first_and_filters_by_kind(tmp_path: Path) -> None:
    with ResultsStore.open(tmp_path / "r.sqlite") as store:
        a = store.begin("micro", machine())
        b = store.begin("serve", machine())
        store.finish(a, complete=False)
        assert [r.id for r in store.runs()] == [a, b]
        assert [r.id for r in store.runs("serve")] == [b]
        assert store.runs()[0].complete is False
        assert store.resolve("latest") == b


def test_a_bad_result_is_refused_with_the_field_named(tmp_path: Path) -> None:
    with ResultsStore.open(tmp_path / "r.sqlite") as store:
        run = store.begin("micro", machine())
        with pytest.raises(StoreError, match="metric 'tflops' is not a number"):
            store.add(run, {**matmul_result(), "metrics": {"tflops": "fast"}})
        with pytest.raises(StoreError, match="status"):
            store.add(run, {**matmul_result(), "status": "great"})
        with pytest.raises(StoreError, match="no run"):
            store.add("0123456789ab", matmul_result())


def test_unknown_and_ambiguous_run_names_say_so(tmp_path: Path) -> None:
    with ResultsStore.open(tmp_path / "r.sqlite") as store:
        with pytest.raises(StoreError, match="no runs"):
            store.load("latest")
        with pytest.raises(StoreError, match="not a run id"):
            store.load("../etc")
        with pytest.raises(StoreError, match="no run 'abc'"):
            store.load("abc")
        ids = {store.begin("micro", machine()) for _ in range(40)}
        # 40 ids over 16 first digits: some digit starts two of them.
        shared = next(c for c in "0123456789abcdef" if sum(i[0] == c for i in ids) > 1)
        with pytest.raises(StoreError, match="several runs"):
            store.load(shared)


def test_export_and_import_move_a_run_between_stores(tmp_path: Path) -> None:
    with ResultsStore.open(tmp_path / "a.sqlite") as a:
        run = a.begin("micro", machine("AMD Instinct MI300X", "rocm"), label="rocm box")
        a.add(run, matmul_result())
        a.finish(run)
        document = json.loads(json.dumps(a.export(run)))
    assert document["version"] == EXPORT_VERSION
    with ResultsStore.open(tmp_path / "b.sqlite") as b:
        assert b.import_run(document) == run
        got = b.load(run)
        assert got.summary.imported and got.machine.accelerator == "rocm"
        assert [r.to_dict() for r in got.results] == document["results"]
        with pytest.raises(StoreError, match="already in"):
            b.import_run(document)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.update(format="other"), "not a gpuport bench export"),
        (lambda d: d.update(version=EXPORT_VERSION + 1), "newer than this gpuport"),
        (lambda d: d["run"].update(id="../../x"), "12 hex digits"),
        (lambda d: d["machine"].pop("device_name"), "device_name"),
        (lambda d: d["machine"].update(accelerator="tpu"), "accelerator"),
        (lambda d: d["results"][0]["metrics"].update(tflops=[1]), "export's result 1"),
        (lambda d: d["run"].update(started="yesterday"), "ISO 8601"),
        (lambda d: d.update(results={}), "results list"),
    ],
)
def test_an_untrusted_export_is_validated(tmp_path: Path, change: object, message: str) -> None:
    with ResultsStore.open(tmp_path / "a.sqlite") as a:
        run = a.begin("micro", machine())
        a.add(run, matmul_result())
        document = a.export(run)
    document = json.loads(json.dumps(document))
    change(document)  # type: ignore[operator]
    with ResultsStore.open(tmp_path / "b.sqlite") as b:
        with pytest.raises(StoreError, match=message):
            b.import_run(document)
        assert b.runs() == []


def test_a_corrupt_file_is_refused_without_being_changed(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    db.write_bytes(b"not a database at all" * 100)
    with pytest.raises(StoreError, match="not a gpuport results store"):
        ResultsStore.open(db)
    assert db.read_bytes() == b"not a database at all" * 100


def test_a_foreign_database_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "other.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE things (x)")
    conn.close()
    with pytest.raises(StoreError, match="not a gpuport results store"):
        ResultsStore.open(db)


def test_a_store_of_a_newer_schema_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    ResultsStore.open(db).close()
    conn = sqlite3.connect(db)
    conn.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(StoreError, match="newer than this gpuport"):
        ResultsStore.open(db)


def test_the_store_uses_wal_and_refuses_a_symlink(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    ResultsStore.open(db).close()
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()
    (tmp_path / "link.sqlite").symlink_to(db)
    with pytest.raises(StoreError, match="symbolic link"):
        ResultsStore.open(tmp_path / "link.sqlite")


def test_the_default_store_follows_xdg_data_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_path() == tmp_path / "gpuport" / "results.sqlite"
    monkeypatch.setenv("XDG_DATA_HOME", "relative/ignored")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_path() == tmp_path / "home" / ".local" / "share" / "gpuport" / "results.sqlite"
