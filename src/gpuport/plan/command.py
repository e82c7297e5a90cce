"""``gpuport plan``: flags in, a :class:`PlanResult` out, rendered by report/.

Also :func:`plan_for_assess`, which ``gpuport assess --model`` calls to add the plan to the
project report.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from gpuport.options import format_options
from gpuport.plan.catalog import load_measured, resolve_gpus
from gpuport.plan.errors import PlanInputError
from gpuport.plan.model_spec import load_model, presets, spec_from_params
from gpuport.plan.planner import (
    DEFAULT_BATCH,
    DEFAULT_CONTEXT,
    DEFAULT_PP_MAX,
    DEFAULT_TP_MAX,
    PlanResult,
    request_for,
)
from gpuport.plan.planner import plan as make_plan
from gpuport.plan.precision import parse_kv_dtype
from gpuport.plan.prices import Price, default_prices, load_price_file, parse_price_flag

EXIT_ERROR = 2


def build_plan(
    model: str | None,
    *,
    params: float | None = None,
    gpus: str | None = None,
    context: int = DEFAULT_CONTEXT,
    batch: int = DEFAULT_BATCH,
    precision: str | None = None,
    kv_dtype: str | None = None,
    tp_max: int = DEFAULT_TP_MAX,
    pp_max: int = DEFAULT_PP_MAX,
    utilization: float = 0.9,
    price_flags: tuple[str, ...] = (),
    price_file: Path | None = None,
    measured_file: Path | None = None,
) -> PlanResult:
    """Everything ``gpuport plan`` does short of rendering; raises :class:`PlanInputError`."""
    if model and params is not None:
        raise PlanInputError("give a MODEL or --params, not both")
    if params is not None:
        spec = spec_from_params(params, precision_hint=precision or "bf16")
        precision = precision or "bf16"  # a bare count has no checkpoint format to default to
    elif model:
        spec = load_model(model)
    else:
        raise PlanInputError(
            "name a model (a preset, a config.json or a folder with one) or pass --params; "
            f"presets: {', '.join(sorted(presets()))}"
        )
    request = request_for(
        spec,
        precision=precision,
        kv_dtype=parse_kv_dtype(kv_dtype) if kv_dtype else None,
        context=context,
        batch=batch,
        tp_max=tp_max,
        pp_max=pp_max,
        utilization=utilization,
    )
    prices: dict[str, Price] = default_prices()
    if price_file is not None:
        prices.update(load_price_file(price_file))
    for flag in price_flags:
        gpu_id, price = parse_price_flag(flag)
        prices[gpu_id] = price
    measured = load_measured(measured_file) if measured_file is not None else {}
    return make_plan(spec, request, resolve_gpus(gpus), prices, measured)


def plan_for_assess(
    model: str,
    gpus: str | None,
    *,
    context: int = DEFAULT_CONTEXT,
    batch: int = DEFAULT_BATCH,
    precision: str | None = None,
) -> PlanResult:
    """The plan section of ``gpuport assess --model``: the given workload on all or given GPUs.

    Bad input raises :class:`PlanInputError`, a ``ConfigError``, which assess reports as
    an error with exit status 2.
    """
    return build_plan(model, gpus=gpus, context=context, batch=batch, precision=precision)


def _fail(message: str) -> None:
    from gpuport.ui import stderr_console

    stderr_console().print(f"[bold red]error:[/] {message}", highlight=False, markup=True)
    sys.exit(EXIT_ERROR)


def _parse_count(text: str) -> float:
    try:
        value = float(text.replace("_", ""))
    except ValueError:
        raise PlanInputError(f"--params {text!r}: write a number such as 70e9 or 7.2e9") from None
    return value


@click.command("plan")
@click.argument("model", required=False)
@click.option("--params", "params_text", help="A bare parameter count instead of MODEL (70e9).")
@click.option(
    "--context",
    type=int,
    default=DEFAULT_CONTEXT,
    show_default=True,
    help="Tokens per sequence (prompt + output).",
)
@click.option(
    "--batch",
    type=int,
    default=DEFAULT_BATCH,
    show_default=True,
    help="Sequences served at once.",
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
    "--utilization",
    type=float,
    default=0.9,
    show_default=True,
    help="Share of GPU memory the serving engine may use.",
)
@format_options()
def plan(
    model: str | None,
    params_text: str | None,
    context: int,
    batch: int,
    precision: str | None,
    kv_dtype: str | None,
    gpus: str | None,
    tp_max: int,
    pp_max: int,
    price_flags: tuple[str, ...],
    price_file: Path | None,
    measured_file: Path | None,
    utilization: float,
    fmt: str,
    output: Path | None,
) -> None:
    """Which GPUs MODEL fits on, how fast it runs and what a million tokens cost.

    MODEL is a preset name (gpuport plan llama-3.1-70b), a config.json, or a folder with
    one. NVIDIA and AMD GPUs are ranked in one table, cheapest per token first.
    """
    import os

    from gpuport import __version__
    from gpuport.report import Format, RenderOptions, render
    from gpuport.ui import emit

    try:
        result = build_plan(
            model,
            params=_parse_count(params_text) if params_text is not None else None,
            gpus=gpus,
            context=context,
            batch=batch,
            precision=precision,
            kv_dtype=kv_dtype,
            tp_max=tp_max,
            pp_max=pp_max,
            utilization=utilization,
            price_flags=price_flags,
            price_file=price_file,
            measured_file=measured_file,
        )
        chosen = Format(fmt)
        color = (
            chosen is Format.TERMINAL
            and output is None
            and sys.stdout.isatty()
            and not os.environ.get("NO_COLOR")
        )
        text = render(result, chosen, RenderOptions(color=color, tool_version=__version__))
        emit(text, output)
    except PlanInputError as exc:
        _fail(str(exc))
    except OSError as exc:
        name = f" {exc.filename}" if exc.filename else ""
        _fail(f"cannot use{name}: {exc.strerror or exc}")
