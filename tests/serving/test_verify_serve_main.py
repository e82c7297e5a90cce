"""``gpuport verify serve`` through the real ``gpuport`` group, as a user types it (issue 15).

The other verify serve tests call the command object directly; these go through
``gpuport.cli.main``, so the wiring that adds ``serve`` to the ``verify`` group is tested too.
"""

from __future__ import annotations

import json

from click.testing import CliRunner
from fake_server import FakeServer

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
