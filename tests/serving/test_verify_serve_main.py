"""``gpuport verify serve`` through the real ``gpuport`` group, as a user types it (issue 15).

The other verify serve tests call the command object directly; these go through
``gpuport.cli.main``, so the wiring that adds ``serve`` to the ``verify`` group is tested too.
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from fake_server import FakeServer

from gpuport.bench.store import ResultsStore
from gpuport.cli import main

TINY = ["--model", "tiny", "--num-prompts", "4", "--input-len", "4", "--output-len", "6"]


def test_verify_serve_runs_under_gpuport_verify_and_reports_the_divergence(
    server: FakeServer, server_b: FakeServer
) -> None:
    args = ["verify", "serve", "--a", server.url("normal"), "--b", server_b.url("perturbed")]
    result = CliRunner().invoke(main, [*args, *TINY, "--no-progress", "--format", "json"])
    assert result.exit_code == 1, result.output
    document = json.loads(result.stdout)
    assert document["beyond_noise"] is True
    assert document["cross"]["identical"] < document["cross"]["prompts"]
    assert {p["first_difference"] for p in document["prompts"]} <= {None, 3}  # the 4th token
    assert 3 in {p["first_difference"] for p in document["prompts"]}
    assert document["noise_a"]["identical"] == document["noise_a"]["prompts"]
    assert "beyond the noise floor" in result.stderr


def test_verify_serve_is_listed_in_gpuport_verify_help() -> None:
    result = CliRunner().invoke(main, ["verify", "--help"])
    assert result.exit_code == 0
    assert all(name in result.stdout for name in ("record", "compare", "serve"))


def test_verify_serve_store_saves_a_verify_run_bench_shows(
    server: FakeServer, server_b: FakeServer, data_home: Path
) -> None:
    args = ["verify", "serve", "--a", server.url("normal"), "--b", server_b.url("perturbed")]
    result = CliRunner().invoke(main, [*args, *TINY, "--no-progress", "--store"])
    assert result.exit_code == 1, result.output  # storing does not change the verdict
    assert "(kind verify) in" in result.stderr
    with ResultsStore.open(data_home / "gpuport" / "results.sqlite") as store:
        (summary,) = store.runs("verify")
        run = store.load(summary.id)
    assert summary.complete and run.settings["mode"] == "serve"
    assert run.settings["url_b"] == server_b.url("perturbed")
    by_name = {record.name: record for record in run.results}
    assert by_name["A vs B"].status == "failed"
    share = by_name["A vs B"].metrics["identical_share"]
    assert share is not None and share < 1.0
    assert by_name["A vs A (rerun)"].metrics["identical_share"] == 1.0
    differing = [r for r in run.results if r.name.startswith("prompt #")]
    assert len(differing) == round(4 * (1 - share))  # one record per prompt that differs
    assert all(r.params["first_difference"] == 3 for r in differing)

    shown = CliRunner().invoke(main, ["bench", "show", summary.id])
    assert shown.exit_code == 0 and "A vs B" in shown.stdout and "identical" in shown.stdout


def test_verify_serve_with_a_store_that_is_not_one_is_one_error_line(
    server: FakeServer, tmp_path: Path
) -> None:
    not_a_store = tmp_path / "notes.sqlite"
    not_a_store.write_text("my notes\n", encoding="utf-8")
    args = ["verify", "serve", "--a", server.url("normal"), "--b", server.url("normal")]
    result = CliRunner().invoke(main, [*args, *TINY, "--no-progress", "--db", str(not_a_store)])
    assert result.exit_code == 2
    assert "not a gpuport results store" in result.stderr and "Traceback" not in result.stderr
    assert not_a_store.read_text(encoding="utf-8") == "my notes\n"
