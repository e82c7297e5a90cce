"""``gpuport plan --calibrate RUN``: a bench run's measured rates replace the fitted efficiencies."""

from __future__ import annotations

import json
from pathlib import Path

from bench_samples import machine, matmul_result
from click.testing import CliRunner

from gpuport.bench.store import ResultsStore
from gpuport.cli import main


def stored_run(db: Path, device: str, accelerator: str, gbs: float, tflops: float) -> str:
    with ResultsStore.open(db) as store:
        run_id = store.begin("micro", machine(device, accelerator))
        store.add(run_id, matmul_result("bf16", tflops))
        store.add(run_id, matmul_result("fp16", tflops * 3))  # not bf16: not used
        for kernel, value in (("copy", gbs), ("triad", gbs * 0.9), ("dot", gbs * 5)):
            store.add(
                run_id,
                {
                    "workload": "bandwidth",
                    "name": f"bandwidth {kernel}",
                    "params": {"kernel": kernel},
                    "metrics": {"gbs": value},
                },
            )
        store.finish(run_id)
    return run_id


def plan(*args: str) -> tuple[int, dict[str, object] | None, str]:
    result = CliRunner().invoke(
        main, ["plan", "llama-3.1-8b", "--gpus", "h100-sxm", "--format", "json", *args]
    )
    assert "Traceback" not in result.stdout + result.stderr
    document = json.loads(result.stdout) if result.exit_code == 0 else None
    return result.exit_code, document, result.stderr


def decode_rate(document: dict[str, object] | None) -> float:
    assert document is not None
    text = json.dumps(document)
    assert "tokens_per_s" in text
    entries = document["entries"]
    assert isinstance(entries, list)
    return float(entries[0]["decode"]["tokens_per_s"])


def test_a_run_on_the_gpu_changes_the_estimate_and_says_so(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    run_id = stored_run(db, "NVIDIA H100 80GB HBM3", "cuda", gbs=1675.0, tflops=400.0)
    code, before, _ = plan()
    assert code == 0
    code, after, err = plan("--calibrate", run_id[:6], "--db", str(db))
    assert code == 0
    said = " ".join(err.split())
    assert f"from bench run {run_id}: 1,675 GB/s (50% of its datasheet bandwidth)" in said
    assert "400 bf16 TFLOPS" in said  # the fp16 row and the dot kernel are not taken
    # Half the datasheet bandwidth, against the fitted ~85%: decode (bandwidth-bound) slows.
    assert decode_rate(after) < decode_rate(before) * 0.75
    assert f"bench run {run_id}" in json.dumps(after)


def test_a_gpu_name_takes_its_latest_run(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    stored_run(db, "NVIDIA H100 80GB HBM3", "cuda", gbs=1000.0, tflops=400.0)
    latest = stored_run(db, "NVIDIA H100 80GB HBM3", "cuda", gbs=3000.0, tflops=700.0)
    code, _, err = plan("--calibrate", "h100-sxm", "--db", str(db))
    assert code == 0 and f"bench run {latest}" in err


def test_a_cpu_run_cannot_calibrate(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    run_id = stored_run(db, "AMD EPYC", "cpu", gbs=10.0, tflops=0.1)
    code, _, err = plan("--calibrate", run_id, "--db", str(db))
    assert code == 2 and "not a GPU of the plan catalog" in err
    code, _, err = plan("--calibrate", "mi300x", "--db", str(db))
    assert code == 2 and "no complete bench run of a" in err
