"""``gpuport plan --calibrate RUN``: a stored bench run as the measured rates plan uses.

The plan's speed model multiplies each GPU's datasheet peaks by efficiencies fitted from
published measurements (kb/plan_efficiency.toml). A bench run on that GPU measured them: the
best memory bandwidth of its STREAM kernels and the best bf16 matrix multiply (the ``--search``
shape when there is one) replace the fitted shares for that GPU, as ``--measured`` rates do.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuport.bench.device import catalog_gpu
from gpuport.bench.store import ResultsStore, StoredRun, StoreError
from gpuport.plan.catalog import Gpu, MeasuredRates, find_gpu


@dataclass(frozen=True, slots=True)
class Calibration:
    """The rates one run gives one catalog GPU, and the sentence that says so."""

    gpu: Gpu
    rates: MeasuredRates
    run_id: str

    @property
    def summary(self) -> str:
        bw = self.rates.mem_bw_gbs
        tf = self.rates.tflops_bf16
        return (
            f"calibrated {self.gpu.short} from bench run {self.run_id}: {bw:,.0f} GB/s "
            f"({bw / self.gpu.mem_bw_gbs:.0%} of its datasheet bandwidth) and {tf:,.0f} bf16 "
            f"TFLOPS ({tf / self.gpu.fp16_tflops:.0%} of its dense peak) replace the fitted "
            "efficiencies for this GPU"
        )


def calibration(run: StoredRun) -> Calibration:
    """The measured rates of ``run``; :class:`StoreError` when it cannot calibrate a GPU."""
    gpu = catalog_gpu(run.machine)
    if gpu is None:
        raise StoreError(
            f"run {run.id} ran on {run.machine.device_name}, which is not a GPU of the plan "
            "catalog: nothing to calibrate"
        )
    bandwidth = [
        r.metrics.get("gbs")
        for r in run.results
        if r.status == "ok" and r.workload == "bandwidth" and r.params.get("kernel") != "dot"
    ]
    matmul = [
        r.metrics.get("tflops")
        for r in run.results
        if r.status == "ok" and r.workload == "matmul" and r.params.get("dtype") == "bf16"
    ]
    best_bw = max((v for v in bandwidth if v), default=None)
    best_tf = max((v for v in matmul if v), default=None)
    if best_bw is None or best_tf is None:
        missing = "bandwidth" if best_bw is None else "bf16 matmul"
        raise StoreError(f"run {run.id} has no {missing} result to calibrate with")
    source = f"bench run {run.id}, {run.machine.label}"
    return Calibration(gpu, MeasuredRates(best_bw, best_tf, source), run.id)


def find_calibration(store: ResultsStore, wanted: str) -> Calibration:
    """``wanted`` is a run (id, prefix, ``latest``) or a catalog GPU name, whose most recent
    complete suite run is taken."""
    gpu = find_gpu(wanted)
    if gpu is None:
        return calibration(store.load(wanted))
    for summary in reversed(store.runs("micro")):
        if not summary.complete:
            continue
        run = store.load(summary.id)
        if (found := catalog_gpu(run.machine)) is not None and found.id == gpu.id:
            return calibration(run)
    raise StoreError(f"no complete bench run of a {gpu.short} in {store.path}")
