"""``gpuport bench``: run the workload suite here, and list, show, move and compare stored runs.

With no sub-command it runs the suite (PyTorch needed: the ``gpuport[bench]`` extra) and stores
the run; ``list``, ``show``, ``export``, ``import`` and ``compare`` read the store and need no
torch. ``bench serve`` (a served model) is registered on this group by :mod:`gpuport.cli`.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from gpuport.bench.results import BenchComparison, RunList, RunReport, compare, headline
from gpuport.bench.store import ResultRecord, ResultsStore, StoreError
from gpuport.bench.timing import TimingPlan
from gpuport.bench.workloads import WORKLOAD_NAMES
from gpuport.cli.common import (
    CommandError,
    ExitCode,
    format_options,
    handle_errors,
    interrupted,
    render_options,
)
from gpuport.cli.ui import CountBar, emit, say
from gpuport.report import Format, render
from gpuport.report.bench_formats import number, percent

# --quick leaves the training step (its first AdamW step alone imports for seconds) and the
# collectives (torchrun starts a process per rank) out unless --workload names them.
QUICK_WORKLOADS = ("matmul", "bandwidth", "attention", "decode")
# An export is a few hundred results; anything far larger is not one.
MAX_IMPORT_BYTES = 64 << 20


def db_option(function: click.decorators.FC) -> click.decorators.FC:
    return click.option(
        "--db",
        type=click.Path(dir_okay=False, path_type=Path),
        help="Results store (default: $XDG_DATA_HOME/gpuport/results.sqlite).",
    )(function)


def _open(db: Path | None) -> ResultsStore:
    try:
        return ResultsStore.open(db)
    except StoreError as exc:
        raise CommandError(str(exc)) from None


def _result_line(record: ResultRecord) -> str | None:
    if record.workload == "telemetry":
        return None
    if record.status != "ok":
        return f"  {record.name}: {record.status} ({record.note})"
    _, unit, value = headline(record)
    share = record.metrics.get("fraction_of_peak")
    peak = f", {percent(share)} of peak" if share is not None else ""
    return f"  {record.name}: {number(value)} {unit}{peak}"


class _SuiteProgress(CountBar):
    """One line per result on stderr and, on a terminal, a bar of the workloads below them."""

    def __init__(self, names: tuple[str, ...], enabled: bool) -> None:
        super().__init__(len(names), "workloads", enabled=enabled, spinner=True)
        self.started = 0

    def workload(self, name: str) -> None:
        self.update(completed=self.started, description=name)
        self.started += 1

    def result(self, record: ResultRecord) -> None:
        line = _result_line(record)
        if line is not None:
            self.tell(line)


def _timing(quick: bool, on_gpu: bool) -> TimingPlan:
    """Samples per measurement: a GPU's kernels take milliseconds, so many; a CPU's take
    seconds at the larger shapes (fp16 has no fast CPU kernel), so fewer."""
    if quick:
        return TimingPlan(warmup=1, repeats=3)
    return TimingPlan(warmup=5, repeats=20) if on_gpu else TimingPlan(warmup=2, repeats=7)


@click.group("bench", invoke_without_command=True)
@click.option(
    "--quick",
    is_flag=True,
    help="Small sizes, few samples; no training step or collectives unless --workload names "
    "them (under a minute).",
)
@click.option(
    "--workload",
    "workloads",
    multiple=True,
    type=click.Choice(WORKLOAD_NAMES),
    help="Run only this workload (repeatable). Default: all.",
)
@click.option("--search", is_flag=True, help="Also hunt the best matmul shape (slower).")
@click.option(
    "--model",
    help="Plan preset whose shape the decode and training workloads build "
    "(default: llama-3.2-1b on a GPU, a tiny built-in shape on the CPU).",
)
@click.option("--cpu", "force_cpu", is_flag=True, help="Run on the CPU even when a GPU is there.")
@click.option("--label", help="A name for this run, shown by list and compare.")
@click.option("--no-progress", is_flag=True, help="No progress bar.")
@db_option
@format_options(RunReport)
@click.pass_context
@handle_errors
def bench(
    ctx: click.Context,
    quick: bool,
    workloads: tuple[str, ...],
    search: bool,
    model: str | None,
    force_cpu: bool,
    label: str | None,
    no_progress: bool,
    db: Path | None,
    fmt: str,
    output: Path | None,
) -> None:
    """Benchmark this machine's GPU (or CPU) and store the run.

    Matrix multiply per dtype, memory bandwidth, attention, a decode loop and a training step
    of a Llama-shaped model, all-reduce/all-gather across the node's GPUs (torchrun), each also
    as a fraction of the device's datasheet peak. Then
    `gpuport bench list`, `show`, `export`/`import` and `compare` the stored runs.
    """
    if ctx.invoked_subcommand is not None:
        return
    from gpuport.bench.device import BenchUnavailable, load_torch, open_device
    from gpuport.bench.suite import run_suite
    from gpuport.bench.workloads import SuiteOptions

    try:
        torch = load_torch()
    except BenchUnavailable as exc:
        raise CommandError(str(exc)) from None
    device = open_device(torch, cpu=force_cpu)
    options = SuiteOptions(
        quick=quick,
        search=search,
        model=model,
        timing=_timing(quick, device.is_gpu),
    )
    names = workloads or (QUICK_WORKLOADS if quick else WORKLOAD_NAMES)
    store = _open(db)
    with store:
        say(f"benchmarking {device.machine.label} ({', '.join(names)}); results go to {store.path}")
        records: list[ResultRecord] = []

        started: list[str] = []

        display = _SuiteProgress(names, not no_progress)

        def progress(record: ResultRecord) -> None:
            records.append(record)
            display.result(record)

        try:
            with display:
                outcome = run_suite(
                    store,
                    device,
                    options,
                    names=names,
                    label=label,
                    progress=progress,
                    on_begin=started.append,
                    on_workload=display.workload,
                )
        except KeyboardInterrupt:
            say(
                f"{len(records)} results kept in run {started[0]}, marked incomplete: "
                f"gpuport bench show {started[0]}"
                if started
                else "interrupted before the run began: nothing stored"
            )
            interrupted()
        except StoreError as exc:
            raise CommandError(str(exc)) from None
        run = store.load(outcome.run_id)
    chosen = Format(fmt)
    emit(render(RunReport(run), chosen, render_options(chosen, output)), output)
    failed = sum(1 for r in run.results if r.status == "failed")
    say(
        f"stored run {run.id} ({len(run.results)} results"
        + (f", {failed} failed" if failed else "")
        + f"): gpuport bench show {run.id}"
    )
    if failed:
        ctx.exit(ExitCode.FINDINGS)


@bench.command("list")
@click.option(
    "--kind", type=click.Choice(("micro", "serve", "verify")), help="Only runs of this kind."
)
@db_option
@format_options(RunList)
@handle_errors
def list_runs(kind: str | None, db: Path | None, fmt: str, output: Path | None) -> None:
    """The stored runs, oldest first."""
    with _open(db) as store:
        try:
            runs = store.runs(kind)
        except StoreError as exc:
            raise CommandError(str(exc)) from None
    chosen = Format(fmt)
    emit(render(RunList(tuple(runs)), chosen, render_options(chosen, output)), output)


@bench.command("show")
@click.argument("run")
@db_option
@format_options(RunReport)
@handle_errors
def show(run: str, db: Path | None, fmt: str, output: Path | None) -> None:
    """One stored run: its machine and every result. RUN is an id, a prefix or `latest`."""
    with _open(db) as store:
        try:
            stored = store.load(run)
        except StoreError as exc:
            raise CommandError(str(exc)) from None
    chosen = Format(fmt)
    emit(render(RunReport(stored), chosen, render_options(chosen, output)), output)


@bench.command("export")
@click.argument("run")
@db_option
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the run to FILE (JSON) instead of stdout.",
)
@handle_errors
def export(run: str, db: Path | None, output: Path | None) -> None:
    """Write RUN as one JSON file, for `gpuport bench import` on another machine."""
    with _open(db) as store:
        try:
            document = store.export(run)
        except StoreError as exc:
            raise CommandError(str(exc)) from None
    emit(json.dumps(document, indent=2, sort_keys=False) + "\n", output)


@bench.command("import")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@db_option
@handle_errors
def import_(file: Path, db: Path | None) -> None:
    """Store a run exported on another machine (`gpuport bench export RUN -o FILE`)."""
    try:
        with file.open("rb") as handle:
            data = handle.read(MAX_IMPORT_BYTES + 1)
    except FileNotFoundError:
        raise CommandError(f"{file}: no such file") from None
    except OSError as exc:
        raise CommandError(f"{file}: cannot read it ({exc.strerror or exc})") from None
    if len(data) > MAX_IMPORT_BYTES:
        raise CommandError(f"{file}: larger than {MAX_IMPORT_BYTES >> 20} MiB, not a bench export")
    try:
        document = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise CommandError(f"{file}: not UTF-8 text, not a bench export") from None
    except json.JSONDecodeError as exc:
        raise CommandError(f"{file}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    with _open(db) as store:
        try:
            run_id = store.import_run(document)
        except StoreError as exc:
            raise CommandError(f"{file}: {exc}") from None
        summary = store.load(run_id).summary
    say(
        f"imported run {run_id}: {summary.device_name} on {summary.hostname}, {summary.results} results"
    )


@bench.command("compare")
@click.argument("runs", nargs=-1, required=True)
@db_option
@click.option(
    "--html",
    "html_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write the comparison as one self-contained HTML page with charts.",
)
@format_options(BenchComparison)
@handle_errors
def compare_runs(
    runs: tuple[str, ...], db: Path | None, html_file: Path | None, fmt: str, output: Path | None
) -> None:
    """Runs side by side: each measurement, its share of peak, and its ratio to the first run.

    RUNS are ids, prefixes or `latest`; the first is the baseline (A).
    """
    if len(runs) < 2:
        raise CommandError("compare needs at least two runs (gpuport bench compare A B)")
    with _open(db) as store:
        try:
            loaded = [store.load(run) for run in runs]
        except StoreError as exc:
            raise CommandError(str(exc)) from None
    ids = [run.id for run in loaded]
    if len(set(ids)) != len(ids):
        raise CommandError("the same run is named twice")
    comparison = compare(loaded)
    chosen = Format(fmt)
    emit(render(comparison, chosen, render_options(chosen, output)), output)
    if html_file is not None:
        emit(render(comparison, Format.HTML, render_options(Format.HTML, html_file)), html_file)
