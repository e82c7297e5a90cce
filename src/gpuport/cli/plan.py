"""``gpuport plan MODEL``: flags in, a plan from :mod:`gpuport.plan.inputs`, rendered by report/."""

from __future__ import annotations

from pathlib import Path

import click

from gpuport.bench.calibrate import Calibration, find_calibration
from gpuport.bench.store import ResultsStore, StoreError
from gpuport.cli.common import CommandError, format_options, handle_errors, render_options
from gpuport.cli.ui import emit, say
from gpuport.plan.engines import DATACENTER_ENGINE, DESKTOP_ENGINE, ENGINES
from gpuport.plan.inputs import build_plan, parse_count
from gpuport.plan.planner import (
    DEFAULT_BATCH,
    DEFAULT_CONTEXT,
    DEFAULT_PP_MAX,
    DEFAULT_TP_MAX,
    MAX_SWEEP_COMBINATIONS,
    PlanResult,
    parse_values,
)
from gpuport.report import Format, render


@click.command("plan")
@click.argument("model", required=False)
@click.option("--params", "params_text", help="A bare parameter count instead of MODEL (70e9).")
@click.option(
    "--context",
    "context_text",
    default=str(DEFAULT_CONTEXT),
    show_default=True,
    metavar="TOKENS[,TOKENS...]",
    help="Tokens per sequence (prompt + output); a comma list (2048,8192) sweeps them.",
)
@click.option(
    "--batch",
    "batch_text",
    default=str(DEFAULT_BATCH),
    show_default=True,
    metavar="N[,N...]",
    help="Sequences served at once; a comma list (1,8,64) sweeps them, ranked at the first. "
    f"At most {MAX_SWEEP_COMBINATIONS} batch x context combinations.",
)
@click.option(
    "--engine",
    type=click.Choice(ENGINES),
    help=f"Serving engine the speed assumes. Default per GPU: {DATACENTER_ENGINE} on datacenter "
    f"GPUs (continuous batching, CUDA/HIP graphs), {DESKTOP_ENGINE} on workstation and consumer "
    "cards (one request at a time, GGUF weights welcome).",
)
@click.option(
    "--precision",
    help="Weights: fp32, bf16, fp16, fp8, int8, int4[-gN], gptq, awq, mxfp4, or a GGUF type "
    "(Q4_K_M...). Default: the checkpoint's own.",
)
@click.option(
    "--kv-dtype", help="KV cache: bf16, fp16, fp8, int8, fp32, q8_0, q4_0. Default: bf16."
)
@click.option("--gpus", help="GPUs to compare, comma-separated (default: the whole catalog).")
@click.option(
    "--tp",
    "tp_max",
    type=int,
    default=DEFAULT_TP_MAX,
    show_default=True,
    help="Most tensor-parallel GPUs per replica (within one server).",
)
@click.option(
    "--pp",
    "pp_max",
    type=int,
    default=DEFAULT_PP_MAX,
    show_default=True,
    help="Most pipeline stages per replica.",
)
@click.option(
    "--price",
    "price_flags",
    multiple=True,
    metavar="GPU=USD",
    help="Price per GPU-hour, e.g. --price mi300x=1.75 (repeatable).",
)
@click.option(
    "--prices",
    "price_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="TOML file of prices ([prices] gpu = dollars).",
)
@click.option(
    "--measured",
    "measured_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help='JSON of measured rates: {"mi300x": {"mem_bw_gbs": 4200, "tflops_bf16": 700}}.',
)
@click.option(
    "--calibrate",
    "calibrate_run",
    metavar="RUN|GPU",
    help="Use what a `gpuport bench` run measured (a run id, `latest`, or a GPU name for its "
    "latest run) instead of the fitted efficiencies for that GPU.",
)
@click.option(
    "--db",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The bench results store --calibrate reads (default: the per-user one).",
)
@click.option(
    "--utilization",
    type=float,
    default=0.9,
    show_default=True,
    help="Share of GPU memory the serving engine may use.",
)
@format_options(PlanResult)
@handle_errors
def plan(
    model: str | None,
    params_text: str | None,
    context_text: str,
    batch_text: str,
    engine: str | None,
    precision: str | None,
    kv_dtype: str | None,
    gpus: str | None,
    tp_max: int,
    pp_max: int,
    price_flags: tuple[str, ...],
    price_file: Path | None,
    measured_file: Path | None,
    calibrate_run: str | None,
    db: Path | None,
    utilization: float,
    fmt: str,
    output: Path | None,
) -> None:
    """Which GPUs MODEL fits on, how fast it runs and what a million tokens cost.

    MODEL is a preset name (gpuport plan llama-3.1-70b), a config.json, or a folder with
    one. NVIDIA and AMD GPUs are ranked in one table, cheapest per token first; comma lists
    after --batch and --context add a sweep (gpuport plan llama-3.1-8b --batch 1,8,64).
    """
    calibrated = {}
    if calibrate_run is not None:
        found = _calibration(calibrate_run, db)
        calibrated[found.gpu.id] = found.rates
        say(found.summary)
    result = build_plan(
        model,
        params=parse_count(params_text) if params_text is not None else None,
        gpus=gpus,
        context=parse_values(context_text, "--context"),
        batch=parse_values(batch_text, "--batch"),
        engine=engine,
        precision=precision,
        kv_dtype=kv_dtype,
        tp_max=tp_max,
        pp_max=pp_max,
        utilization=utilization,
        price_flags=price_flags,
        price_file=price_file,
        measured_file=measured_file,
        calibrated=calibrated,
    )
    chosen = Format(fmt)
    emit(render(result, chosen, render_options(chosen, output, fit_terminal=True)), output)


def _calibration(wanted: str, db: Path | None) -> Calibration:
    """The measured rates of a stored bench run (the store needs no torch)."""
    try:
        with ResultsStore.open(db) as store:
            return find_calibration(store, wanted)
    except StoreError as exc:
        raise CommandError(f"--calibrate: {exc}") from None
