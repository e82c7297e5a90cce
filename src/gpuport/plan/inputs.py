"""From what the user typed (a model or a parameter count, GPUs, workload, prices) to a plan.

:func:`build_plan` is everything ``gpuport plan`` does short of rendering;
:func:`plan_for_assess` is the plan section that ``gpuport assess --model`` adds to the project
report. Bad input raises :class:`~gpuport.plan.errors.PlanInputError`, told in a sentence.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from gpuport.plan.catalog import MeasuredRates, load_measured, resolve_gpus
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


def build_plan(
    model: str | None,
    *,
    params: float | None = None,
    gpus: str | None = None,
    context: int | tuple[int, ...] = DEFAULT_CONTEXT,
    batch: int | tuple[int, ...] = DEFAULT_BATCH,
    precision: str | None = None,
    kv_dtype: str | None = None,
    engine: str | None = None,
    tp_max: int = DEFAULT_TP_MAX,
    pp_max: int = DEFAULT_PP_MAX,
    utilization: float = 0.9,
    price_flags: tuple[str, ...] = (),
    price_file: Path | None = None,
    measured_file: Path | None = None,
    calibrated: Mapping[str, MeasuredRates] | None = None,
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
        engine=engine,
    )
    prices: dict[str, Price] = default_prices()
    if price_file is not None:
        prices.update(load_price_file(price_file))
    for flag in price_flags:
        gpu_id, price = parse_price_flag(flag)
        prices[gpu_id] = price
    measured = load_measured(measured_file) if measured_file is not None else {}
    measured.update(calibrated or {})  # `plan --calibrate RUN`: rates a bench run measured
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


def parse_count(text: str) -> float:
    """A parameter count as typed after ``--params`` (``70e9``, ``7_000_000_000``)."""
    try:
        value = float(text.replace("_", ""))
    except ValueError:
        raise PlanInputError(f"--params {text!r}: write a number such as 70e9 or 7.2e9") from None
    return value
