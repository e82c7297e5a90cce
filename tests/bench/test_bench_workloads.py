"""The workloads on this machine's CPU with tiny sizes: every result stored, skips explained,
out of memory at one shape skipped, Ctrl-C keeps what was measured."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from bench_samples import machine
from click.testing import CliRunner

torch = pytest.importorskip("torch")

from gpuport.bench import suite  # noqa: E402
from gpuport.bench.device import Device, Peaks, catalog_gpu, open_device  # noqa: E402
from gpuport.bench.store import ResultRecord, ResultsStore  # noqa: E402
from gpuport.bench.timing import TimingPlan  # noqa: E402
from gpuport.bench.workloads import (  # noqa: E402
    WORKLOAD_NAMES,
    SuiteOptions,
    attention,
    bandwidth,
    decode,
    matmul,
    training,
)
from gpuport.bench.workloads import model as model_shapes  # noqa: E402
from gpuport.cli import main  # noqa: E402
from gpuport.plan.catalog import find_gpu  # noqa: E402

FAST = SuiteOptions(quick=True, timing=TimingPlan(warmup=1, repeats=2))


@pytest.fixture(autouse=True)
def tiny(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every workload at a size that runs in milliseconds."""
    monkeypatch.setattr(matmul, "shapes", lambda device, quick: [(32, 32, 32), (64, 48, 32)])
    monkeypatch.setattr(matmul, "SEARCH_CPU", (16, 16, 64))
    monkeypatch.setattr(matmul, "FLUSH_BYTES_CPU", 1 << 16)
    monkeypatch.setattr(bandwidth, "array_bytes", lambda device, quick: 1 << 16)
    monkeypatch.setattr(
        attention,
        "shapes",
        lambda device, quick: [("prefill", 1, 2, 16, 16, 8), ("decode", 2, 2, 1, 32, 8)],
    )
    monkeypatch.setattr(decode, "settings", lambda device, quick: ([1, 2], 4, 3, 8))
    monkeypatch.setattr(training, "settings", lambda device, quick: (1, 8))
    monkeypatch.setattr(model_shapes, "TINY", model_shapes.Shape("test", 32, 2, 4, 2, 8, 64, 64))


def cpu() -> Device:
    return open_device(torch, cpu=True)


def by_name(records: list[ResultRecord]) -> dict[str, ResultRecord]:
    return {r.name: r for r in records}


def test_the_suite_stores_every_workload_on_the_cpu(tmp_path: Path) -> None:
    with ResultsStore.open(tmp_path / "r.sqlite") as store:
        # Collectives start torchrun (a process per rank): tested in test_bench_collectives.
        names = [n for n in WORKLOAD_NAMES if n != "collectives"]
        started: list[str] = []
        outcome = suite.run_suite(
            store, cpu(), FAST, names=names, label="test", on_workload=started.append
        )
        run = store.load(outcome.run_id)
    assert started == names  # what the progress bar shows, in suite order
    assert run.summary.complete and run.summary.label == "test"
    results = by_name(list(run.results))
    for name, metric in [
        ("matmul fp32 32x32x32", "tflops"),
        ("matmul bf16 64x48x32", "tflops"),
        ("bandwidth triad", "gbs"),
        ("bandwidth dot", "gbs"),
        ("attention prefill math", "tflops"),
        ("attention decode math", "tflops"),
        ("decode batch 2", "tokens_per_s"),
        ("prefill", "tokens_per_s"),
        ("training step", "tokens_per_s"),
    ]:
        assert results[name].status == "ok", results[name].note
        assert (results[name].metrics[metric] or 0) > 0
        assert results[name].metrics.get("fraction_of_peak") is None  # the CPU has no peak
    assert results["matmul tf32"].status == "skipped" and "CPU" in results["matmul tf32"].note
    assert results["matmul fp8"].status == "skipped" and "FP8" in results["matmul fp8"].note
    assert "no GPU" in results["clocks, power, temperature"].note
    notes = run.settings["notes"]
    assert isinstance(notes, list) and "CPU" in notes[0]


def test_results_are_fractions_of_the_catalog_peak_when_the_device_is_known() -> None:
    h100 = find_gpu("h100-sxm")
    assert h100 is not None
    device = replace(cpu(), peaks=Peaks.of(h100))
    records = by_name(list(matmul.MatmulWorkload().run(device, FAST)))
    record = records["matmul bf16 32x32x32"]
    tflops = record.metrics["tflops"]
    assert tflops is not None
    assert record.metrics["fraction_of_peak"] == pytest.approx(tflops / h100.fp16_tflops)
    copy = by_name(list(bandwidth.BandwidthWorkload().run(device, FAST)))["bandwidth copy"]
    assert copy.metrics["peak_gbs"] == h100.mem_bw_gbs
    assert records["matmul fp32 32x32x32"].metrics["fraction_of_peak"] is None


@pytest.mark.parametrize(
    ("torch_name", "gpu_id"),
    [
        ("NVIDIA H100 80GB HBM3", "h100-sxm"),
        ("AMD Instinct MI300X", "mi300x"),
        ("AMD Instinct MI250X/MI250", "mi250x"),
        ("NVIDIA A100-SXM4-80GB", "a100-80gb-sxm"),
        ("Imaginary GPU 9000", None),
    ],
)
def test_torch_device_names_find_their_catalog_entry(torch_name: str, gpu_id: str | None) -> None:
    found = catalog_gpu(replace(machine(), device_name=torch_name))
    assert (found.id if found else None) == gpu_id


def test_out_of_memory_at_one_shape_skips_it_and_keeps_the_rest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = matmul._operands

    def operands(device: Device, dtype: str, m: int, n: int, k: int) -> object:
        if m == 64:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return real(device, dtype, m, n, k)

    monkeypatch.setattr(matmul, "_operands", operands)
    records = by_name(list(matmul.MatmulWorkload().run(cpu(), FAST)))
    assert records["matmul fp32 64x48x32"].status == "skipped"
    assert "out of memory" in records["matmul fp32 64x48x32"].note
    assert records["matmul fp32 32x32x32"].status == "ok"


def test_a_failing_measurement_is_recorded_not_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object) -> object:
        raise RuntimeError("hipErrorNoBinaryForGpu: no kernel image\nmore detail")

    monkeypatch.setattr(matmul, "_operands", broken)
    records = list(matmul.MatmulWorkload().run(cpu(), FAST))
    failed = [r for r in records if r.status == "failed"]
    assert failed and failed[0].note == "hipErrorNoBinaryForGpu: no kernel image"


def test_search_reports_the_best_shape_it_found() -> None:
    options = replace(FAST, search=True)
    best = list(matmul.MatmulWorkload().search(cpu(), options))
    assert len(best) == 1 and best[0].status == "ok" and best[0].params["search"] is True
    assert "shapes tried" in best[0].note


class Interrupted:
    name = "matmul"
    summary = "measures one thing, then the user presses Ctrl-C"

    def run(self, device: Device, options: SuiteOptions) -> Iterator[ResultRecord]:
        yield ResultRecord("matmul", "matmul fp32 1x1x1", {}, {"tflops": 1.0})
        raise KeyboardInterrupt


def test_ctrl_c_keeps_the_results_and_marks_the_run_incomplete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(suite, "all_workloads", lambda: {"matmul": Interrupted()})
    db = tmp_path / "r.sqlite"
    result = CliRunner().invoke(main, ["bench", "--workload", "matmul", "--cpu", "--db", str(db)])
    assert result.exit_code == 130
    assert "1 results kept in run" in result.stderr and "marked incomplete" in result.stderr
    with ResultsStore.open(db) as store:
        [summary] = store.runs()
        assert summary.complete is False and summary.results == 1


def test_an_unknown_model_preset_is_a_skipped_result() -> None:
    options = replace(FAST, model="no-such-model")
    [record] = list(decode.DecodeWorkload().run(cpu(), options))
    assert record.status == "skipped" and "no-such-model" in record.note


def test_the_decode_loop_with_its_cache_matches_a_full_forward() -> None:
    shape = model_shapes.Shape("check", 32, 2, 4, 2, 8, 64, 64)  # grouped-query, 2 heads per KV
    model = model_shapes.build(torch, shape, "cpu", torch.float32)
    tokens = torch.randint(0, shape.vocab, (2, 7))
    full = model(tokens)
    caches = model_shapes.new_caches(torch, shape, 2, 7, "cpu", torch.float32)
    model(tokens[:, :6], caches, 0)
    step = model(tokens[:, 6:], caches, 6)
    assert torch.allclose(step[:, -1], full[:, -1], atol=1e-4)
    model.native_gqa = not model.native_gqa  # the repeat-KV path agrees too
    assert torch.allclose(model(tokens)[:, -1], full[:, -1], atol=1e-4)


def test_an_unknown_gpu_gets_absolute_numbers_and_how_to_add_it() -> None:
    from gpuport.bench.device import unknown_device_note

    card = replace(machine(), device_name="Imaginary GPU 9000")
    assert catalog_gpu(card) is None
    note = unknown_device_note(card)
    assert "Imaginary GPU 9000 is not in the GPU catalog" in note
    assert "src/gpuport/kb/gpus.toml" in note
    assert Peaks.of(None).tflops == {} and Peaks.of(None).mem_bw_gbs is None
