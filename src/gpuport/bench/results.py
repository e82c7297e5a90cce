"""What ``bench`` shows: a run, the list of runs, and a comparison of runs side by side.

These are the result objects :mod:`gpuport.report` renders (terminal, JSON, Markdown, HTML);
they are built from stored runs only, so they need no torch. Every text in them that came from
another machine (labels, device names, notes) is escaped by the renderers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gpuport.bench.store import ResultRecord, RunSummary, StoredRun

# The figure each workload is judged by: (metric key, unit).
HEADLINE: dict[str, tuple[str, str]] = {
    "verify": ("max_abs_error", "max abs error"),  # a verify compare --store run
    "verify-serve": ("identical_share", "identical"),  # a verify serve --store run
    "matmul": ("tflops", "TFLOPS"),
    "bandwidth": ("gbs", "GB/s"),
    "attention": ("tflops", "TFLOPS"),
    "decode": ("tokens_per_s", "tok/s"),
    "training": ("tokens_per_s", "tok/s"),
    "collectives": ("busbw_gbs", "GB/s bus"),
    "serve": ("output_tokens_per_s", "tok/s"),
}

# Workloads compared on more than their headline: (metric key, unit, what the row adds to the
# result's name). A serving step is judged by its throughput and its latencies together.
COMPARED: dict[str, tuple[tuple[str, str, str], ...]] = {
    "serve": (
        ("output_tokens_per_s", "tok/s", "output"),
        ("request_throughput", "req/s", "requests"),
        ("goodput", "req/s", "goodput"),
        ("ttft_p50_ms", "ms", "TTFT p50"),
        ("ttft_p99_ms", "ms", "TTFT p99"),
        ("tpot_p50_ms", "ms", "TPOT p50"),
        ("itl_p99_ms", "ms", "ITL p99"),
        ("e2e_p99_ms", "ms", "E2E p99"),
        ("failure_rate", "share", "failed"),
    ),
}


def headline(record: ResultRecord) -> tuple[str, str, float | None]:
    """(metric, unit, value) of a result: its workload's headline, else its first metric."""
    key, unit = HEADLINE.get(record.workload, ("", ""))
    if not key:
        for name, value in record.metrics.items():
            if value is not None:
                return name, "", value
        return "", "", None
    return key, unit, record.metrics.get(key)


@dataclass(frozen=True, slots=True)
class RunReport:
    """One stored run (``bench show``, and what ``gpuport bench`` prints when it is done)."""

    run: StoredRun


@dataclass(frozen=True, slots=True)
class RunList:
    """The runs in a store (``bench list``)."""

    runs: tuple[RunSummary, ...]


@dataclass(frozen=True, slots=True)
class ComparisonRow:
    """One measurement across runs; ``values[i]`` is run i's, None where it has none."""

    workload: str
    name: str
    metric: str
    unit: str
    values: tuple[float | None, ...]
    fractions: tuple[float | None, ...]  # of each device's datasheet peak

    @property
    def ratios(self) -> tuple[float | None, ...]:
        """Each run's value over the first run's (the baseline)."""
        base = self.values[0]
        return tuple(
            v / base if v is not None and base is not None and base > 0 else None
            for v in self.values
        )


@dataclass(frozen=True, slots=True)
class BenchComparison:
    """Runs side by side (``bench compare A B [C...]``); the first is the baseline."""

    runs: tuple[StoredRun, ...]
    rows: tuple[ComparisonRow, ...]
    notes: tuple[str, ...]
    charts: bool = True  # the HTML page's charts (goldens leave them out: matplotlib's SVG
    # changes between its releases)


def _best_rows(run: StoredRun) -> dict[tuple[str, str], ResultRecord]:
    """A run's results by (workload, name), plus the best matmul shape per dtype.

    Sweeps on different machines may use different shapes (a CPU's are small); the best of
    each dtype is the row every machine has.
    """
    rows: dict[tuple[str, str], ResultRecord] = {}
    for record in run.results:
        if record.status != "ok" or record.workload == "telemetry":
            continue
        if record.workload == "matmul" and not record.params.get("search"):
            dtype = str(record.params.get("dtype", ""))
            key = ("matmul", f"matmul {dtype} best shape")
            old = rows.get(key)
            value = record.metrics.get("tflops") or 0.0
            if old is None or value > (old.metrics.get("tflops") or 0.0):
                rows[key] = record
        rows.setdefault((record.workload, record.name), record)
    return rows


def compare(runs: Sequence[StoredRun]) -> BenchComparison:
    """Match the runs' results by workload and name, in the first run's order."""
    tables = [_best_rows(run) for run in runs]
    order: list[tuple[str, str]] = []
    for table in tables:
        for key in table:
            if key not in order:
                order.append(key)
    # The best-shape rows first within matmul, then everything in the order it ran.
    order.sort(key=lambda k: (k[0] != "matmul", "best shape" not in k[1]))
    rows = []
    for key in order:
        present = [table.get(key) for table in tables]
        first = next(r for r in present if r is not None)
        metric, unit, _ = headline(first)
        if not metric:
            continue
        if key[0] in COMPARED:
            for metric, unit, what in COMPARED[key[0]]:
                values = tuple(r.metrics.get(metric) if r is not None else None for r in present)
                if any(v is not None for v in values):
                    nones = tuple(None for _ in present)
                    rows.append(
                        ComparisonRow(key[0], f"{key[1]} {what}", metric, unit, values, nones)
                    )
            continue
        values = tuple(r.metrics.get(metric) if r is not None else None for r in present)
        fractions = tuple(
            r.metrics.get("fraction_of_peak") if r is not None else None for r in present
        )
        rows.append(ComparisonRow(key[0], key[1], metric, unit, values, fractions))
    notes = []
    for run in runs:
        if run.summary.kind != runs[0].summary.kind:
            notes.append(
                f"run {run.id} is a {run.summary.kind} run; the first is {runs[0].summary.kind}"
            )
        if not run.summary.complete:
            notes.append(f"run {run.id} is incomplete (interrupted): some rows are missing")
    # A note several runs share (two CPU runs: no peak) is said once, naming them all.
    shared: dict[str, list[str]] = {}
    for run in runs:
        run_notes = run.settings.get("notes")
        for note in run_notes if isinstance(run_notes, list) else []:
            if isinstance(note, str):
                shared.setdefault(note, []).append(run.id)
    for note, ids in shared.items():
        notes.append(f"run {ids[0]}: {note}" if len(ids) == 1 else f"runs {', '.join(ids)}: {note}")
    return BenchComparison(tuple(runs), tuple(rows), tuple(notes))
