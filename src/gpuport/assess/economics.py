"""The economics of a move: monthly cost today against each AMD GPU at the same throughput (from
`gpuport plan`), the one-off cost of moving, its payback, and how both shift with ROCm's speed."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from gpuport.assess.decision_model import (
    CostOption,
    DecisionInputError,
    DecisionSettings,
    Economics,
)
from gpuport.plan.catalog import Gpu, catalog, find_gpu
from gpuport.plan.memory import DEFAULT_UTILIZATION
from gpuport.plan.model_spec import ModelSpec
from gpuport.plan.planner import DEFAULT_BATCH, DEFAULT_CONTEXT, PlanEntry, request_for
from gpuport.plan.planner import plan as make_plan
from gpuport.plan.prices import Price, default_prices

# 8,760 hours in a year over 12 months: a GPU rented around the clock.
HOURS_PER_MONTH = 730.0
# Published inference gaps between ROCm and CUDA on the same class of GPU range from 5% to 30%
# (issue 13); 80% of the estimated speed is the pessimistic case the sensitivity line shows.
SENSITIVITY_SPEED = 0.8
DASH = "\N{EN DASH}"
_SETTINGS_TABLE = "[tool.gpuport.decision]"


@dataclass(frozen=True, slots=True)
class _Volume:
    """The work to serve each month: output tokens, and whether it was declared as GPU-hours on
    today's fleet (then every option is paid by the hour it is busy, not per GPU kept)."""

    tokens: float
    hours: float | None = None  # the declared GPU-hours on today's fleet


def economics_missing(settings: DecisionSettings, model: ModelSpec | None) -> tuple[str, ...]:
    """What to provide before :func:`estimate_economics` can compare costs; () when the
    inputs are there."""
    missing: list[str] = []
    if settings.tokens_per_month is None and settings.gpu_hours_per_month is None:
        missing.append(
            f"the volume: `tokens_per_month` (output tokens served a month) or "
            f"`gpu_hours_per_month` with `current_gpu` ({_SETTINGS_TABLE} or flags)"
        )
    elif settings.tokens_per_month is None and settings.current_gpu is None:
        missing.append(
            f"`current_gpu` ({_SETTINGS_TABLE}): the GPU the `gpu_hours_per_month` run on, to "
            "turn them into tokens"
        )
    if model is None:
        missing.append(
            "the model served (`gpuport assess --model NAME`): the AMD GPUs are compared at the "
            "same throughput, and throughput depends on the model (a comparison without one, "
            "by the GPUs' datasheets alone, would not be sound)"
        )
    return tuple(missing)


def _where(settings: DecisionSettings) -> str:
    return settings.source or "the decision settings"


def _check_numbers(settings: DecisionSettings) -> None:
    """Settings parsing refuses these already; the check keeps a caller's mistake from turning
    into a negative cost (every number here must be finite and above zero)."""
    for key in (
        "tokens_per_month",
        "gpu_hours_per_month",
        "engineer_usd_per_hour",
        "revalidation_hours",
        "current_gpu_count",
    ):
        value = getattr(settings, key)
        if value is not None and not (math.isfinite(value) and value > 0):
            raise DecisionInputError(
                key, f"{_where(settings)}: {key} must be a number above zero, not {value!r}"
            )


def _gpu(name: str, key: str, settings: DecisionSettings) -> Gpu:
    gpu = find_gpu(name)
    if gpu is None:
        raise DecisionInputError(
            key, f"{_where(settings)}: {key}: {name!r} is not a GPU gpuport knows (kb/gpus.toml)"
        )
    return gpu


def _candidates(settings: DecisionSettings, prices: Mapping[str, Price]) -> list[Gpu]:
    if settings.candidate_gpus:
        return [_gpu(name, "candidate_gpus", settings) for name in settings.candidate_gpus]
    return [
        gpu
        for gpu in catalog().values()
        if gpu.vendor == "amd" and gpu.segment == "datacenter" and gpu.id in prices
    ]


def _speed(entry: PlanEntry) -> float:
    """The replica's decode rate, all sequences together (tokens/s on tp x pp devices)."""
    assert entry.decode is not None
    return entry.decode.tokens_per_s


def _per_gpu(entry: PlanEntry) -> float:
    return _speed(entry) / entry.devices


def _replicas_for(tokens: float, entry: PlanEntry, factor: float) -> int:
    month = _speed(entry) * factor * 3600 * HOURS_PER_MONTH
    return max(1, math.ceil(tokens / month))


def _usd_per_hour(entry: PlanEntry) -> float | None:
    return entry.price.usd_per_hour if entry.price is not None else None


def _cost(entry: PlanEntry, volume: _Volume, factor: float) -> tuple[int, float | None]:
    """GPUs needed and dollars a month on ``entry``'s GPU at ``factor`` x its estimated speed."""
    price = _usd_per_hour(entry)
    if volume.hours is not None:
        # Busy GPU-hours: the same tokens at this GPU's rate per device, paid by the hour.
        hours = volume.tokens / (_per_gpu(entry) * factor * 3600)
        replicas = max(1, math.ceil(hours / HOURS_PER_MONTH / entry.devices))
        return replicas * entry.devices, (hours * price if price is not None else None)
    gpus = _replicas_for(volume.tokens, entry, factor) * entry.devices
    return gpus, (gpus * price * HOURS_PER_MONTH if price is not None else None)


def _layout(entry: PlanEntry) -> str:
    return f"TP={entry.tp}" + (f", PP={entry.pp}" if entry.pp > 1 else "")


def _option(entry: PlanEntry, volume: _Volume, factor: float = 1.0) -> CostOption:
    gpus, usd = _cost(entry, volume, factor)
    fitted = "measured rates" if entry.rates.measured else "fitted efficiencies"
    return CostOption(
        gpu_id=entry.gpu.id,
        gpu_name=entry.gpu.name,
        vendor=entry.gpu.vendor,
        gpus=gpus,
        tokens_per_s_per_gpu=_per_gpu(entry) * factor,
        usd_per_gpu_hour=_usd_per_hour(entry),
        usd_per_month=usd,
        note=(
            f"from gpuport plan: {entry.engine}, batch {entry.batch}, {entry.context:,} tokens, "
            f"{_layout(entry)} per copy of the model, {fitted}"
        ),
    )


def _cheapest(options: list[CostOption]) -> CostOption | None:
    priced = [o for o in options if o.usd_per_month is not None]
    return min(priced, key=lambda o: o.usd_per_month or 0.0) if priced else None


DAYS_PER_MONTH = 365 / 12


def payback_span(payback: tuple[float, float]) -> str:
    """A payback range in words: ``1.2-4.0 months``, or days when all of it is under a month
    (``0.0-0.1 months`` says nothing)."""
    low, high = payback
    if high < 1:
        low, high, unit = low * DAYS_PER_MONTH, high * DAYS_PER_MONTH, "days"
    else:
        unit = "months"
    shown = [f"{v:,.0f}" if v >= 100 else f"{v:,.1f}" for v in (low, high)]
    text = shown[0] if shown[0] == shown[1] else f"{shown[0]}{DASH}{shown[1]}"
    return f"{text} {unit}"


def _payback(
    move_usd: tuple[float, float] | None, saving: float | None
) -> tuple[float, float] | None:
    if move_usd is None or saving is None or saving <= 0:
        return None
    return move_usd[0] / saving, move_usd[1] / saving


def _payback_words(move_usd: tuple[float, float] | None, saving: float | None) -> str:
    if saving is None:
        return "the saving is unknown (no cost for today's fleet)"
    if saving <= 0:
        return (
            f"the AMD fleet costs ${-saving:,.0f} a month more: it never pays back at these prices"
        )
    payback = _payback(move_usd, saving)
    if payback is None:
        return f"the monthly saving is ${saving:,.0f} (no engineer rate for a payback)"
    return f"payback becomes {payback_span(payback)}"


def _check_fleet(
    settings: DecisionSettings, today: PlanEntry, volume: _Volume, declared_hours: float | None
) -> None:
    """A declared fleet that cannot serve the volume even at the top of the plan's typical
    range is a contradiction in the settings, not a cost to compute."""
    count = settings.current_gpu_count
    if count is not None and volume.hours is not None and volume.hours > count * HOURS_PER_MONTH:
        raise DecisionInputError(
            "gpu_hours_per_month",
            f"{_where(settings)}: gpu_hours_per_month = {volume.hours:,.0f} is more than "
            f"current_gpu_count = {count} GPUs run in a month ({count * HOURS_PER_MONTH:,.0f} h)",
        )
    if volume.hours is not None:
        return
    uncertainty = today.decode.uncertainty if today.decode else None
    rate = _speed(today) * (uncertainty.high_factor if uncertainty is not None else 1.0)
    top = "the top of gpuport plan's typical range" if uncertainty else "gpuport plan's estimate"
    at = (
        f"at {rate:,.0f} tok/s per copy of the model ({_layout(today)} on {today.gpu.short}: "
        f"{top}, {today.engine}, batch {today.batch}, {today.context:,} tokens)"
    )
    wanted = f"tokens_per_month = {volume.tokens:,.0f}"
    if count is not None and count // today.devices * rate * 3600 * HOURS_PER_MONTH < volume.tokens:
        needed = _replicas_for(volume.tokens, today, rate / _speed(today)) * today.devices
        raise DecisionInputError(
            "current_gpu_count",
            f"{_where(settings)}: current_gpu_count = {count} cannot serve {wanted}: {at} that "
            f"takes {needed} GPUs busy {HOURS_PER_MONTH:,.0f} h a month",
        )
    if declared_hours is not None and declared_hours / today.devices * rate * 3600 < volume.tokens:
        needed_hours = volume.tokens / (rate * 3600) * today.devices
        raise DecisionInputError(
            "gpu_hours_per_month",
            f"{_where(settings)}: gpu_hours_per_month = {declared_hours:,.0f} cannot serve "
            f"{wanted}: {at} that takes {needed_hours:,.0f} GPU-hours",
        )


def _volume(settings: DecisionSettings, today: PlanEntry | None) -> tuple[_Volume | None, str]:
    """The month's tokens, and the sentence that says where they come from."""
    if settings.tokens_per_month is not None:
        return _Volume(settings.tokens_per_month), (
            f"volume: {settings.tokens_per_month:,.0f} output tokens a month (tokens_per_month)"
        )
    hours = settings.gpu_hours_per_month
    if hours is None or today is None or not today.fits:
        return None, ""
    tokens = hours * _per_gpu(today) * 3600
    return _Volume(tokens, hours), (
        f"volume: {hours:,.0f} GPU-hours a month on {today.gpu.short} (gpu_hours_per_month), "
        f"{tokens:,.0f} output tokens at gpuport plan's {_per_gpu(today):,.0f} tok/s per GPU; each "
        "AMD option is paid for the hours the same tokens keep it busy"
    )


def _move(
    settings: DecisionSettings, effort_hours: tuple[float, float]
) -> tuple[tuple[float, float], tuple[float, float] | None, list[str]]:
    notes: list[str] = []
    low, high = effort_hours
    revalidation = settings.revalidation_hours
    if settings.regulated is not False and revalidation is not None:
        low, high = low + revalidation, high + revalidation
        notes.append(
            f"moving: {effort_hours[0]:,.0f}{DASH}{effort_hours[1]:,.0f} h of porting (the "
            f"effort estimate) + {revalidation:,.0f} h of revalidation (revalidation_hours)"
        )
    else:
        notes.append(
            f"moving: {low:,.0f}{DASH}{high:,.0f} h of porting (the effort estimate, half to "
            "double its sum)"
        )
        if settings.regulated:
            notes.append(
                "regulated, but no `revalidation_hours`: the move's hours leave revalidation out"
            )
    rate = settings.engineer_usd_per_hour
    if rate is None:
        notes.append(
            "no `engineer_usd_per_hour`: the move is shown in hours, without its cost or payback"
        )
        return (low, high), None, notes
    notes.append(f"engineer time at ${rate:,.0f} an hour (engineer_usd_per_hour)")
    return (low, high), (low * rate, high * rate), notes


def _price_note(entry: PlanEntry) -> str:
    price = entry.price
    if price is None:
        return f"{entry.gpu.short}: no price on file, so no monthly cost"
    return (
        f"{entry.gpu.short}: ${price.usd_per_hour:,.2f} per GPU-hour ({price.label}; "
        f"{price.source})"
    )


def _sensitivity(
    amd: list[PlanEntry],
    volume: _Volume,
    today_usd: float | None,
    best: CostOption | None,
    move_usd: tuple[float, float] | None,
) -> list[str]:
    lines: list[str] = []
    slow = _cheapest([_option(e, volume, SENSITIVITY_SPEED) for e in amd])
    if slow is not None:
        short = next(e.gpu.short for e in amd if e.gpu.id == slow.gpu_id)
        saving = today_usd - (slow.usd_per_month or 0.0) if today_usd is not None else None
        lines.append(
            f"if ROCm reaches only {SENSITIVITY_SPEED:.0%} of the estimated speed, the cheapest "
            f"AMD option is {slow.gpus} {short} at ${slow.usd_per_month or 0.0:,.0f} a "
            f"month and {_payback_words(move_usd, saving)}"
        )
    entry = next((e for e in amd if best is not None and e.gpu.id == best.gpu_id), None)
    uncertainty = entry.decode.uncertainty if entry is not None and entry.decode else None
    if entry is None or uncertainty is None or today_usd is None:
        return lines
    ends = []
    for factor in (uncertainty.low_factor, uncertainty.high_factor):
        _, usd = _cost(entry, volume, factor)
        ends.append(today_usd - usd if usd is not None else None)
    low_end, high_end = ends
    low_words, high_words = _payback_words(move_usd, low_end), _payback_words(move_usd, high_end)
    ends_text = (
        f"at both ends {low_words}"
        if low_words == high_words
        else f"at the low end {low_words}; at the high end {high_words}"
    )
    lines.append(
        f"within the fitted range of the {entry.gpu.short} estimate "
        f"({uncertainty.low_factor:.2f}{DASH}{uncertainty.high_factor:.2f}x of it: "
        f"{uncertainty.basis}; the typical case, not a bound): {ends_text}"
    )
    return lines


def estimate_economics(
    settings: DecisionSettings,
    effort_hours: tuple[float, float],
    model: ModelSpec | None,
    *,
    context: int = DEFAULT_CONTEXT,
    batch: int = DEFAULT_BATCH,
    engine: str | None = None,
    prices: Mapping[str, Price] | None = None,
) -> Economics | None:
    """Today's monthly cost against each candidate AMD GPU serving the same tokens, the move's
    one-off cost and its payback; None when :func:`economics_missing` names what is missing.

    Speeds come from :func:`gpuport.plan.planner.plan` at ``batch`` and ``context`` (each GPU's
    default engine unless ``engine``), prices from ``prices`` or kb/prices.toml. Raises
    :class:`DecisionInputError` when the declared fleet cannot serve the declared volume.
    """
    _check_numbers(settings)
    if economics_missing(settings, model) or model is None:
        return None
    table = dict(default_prices() if prices is None else prices)
    current = _gpu(settings.current_gpu, "current_gpu", settings) if settings.current_gpu else None
    candidates = [g for g in _candidates(settings, table) if current is None or g.id != current.id]
    gpus = ([current] if current is not None else []) + candidates
    result = make_plan(
        model, request_for(model, context=context, batch=batch, engine=engine), gpus, table
    )
    by_id = {e.gpu.id: e for e in result.entries}
    today_entry = by_id[current.id] if current is not None else None
    volume, volume_note = _volume(settings, today_entry)
    assumptions: list[str] = []
    if today_entry is not None and not today_entry.fits:
        assumptions.append(
            f"{today_entry.gpu.short} (current_gpu) does not hold {model.name} at batch {batch} "
            f"and {context:,} tokens in up to {today_entry.devices} GPUs: today's cost is not "
            "computed"
        )
        today_entry = None
    if volume is None:
        # gpu_hours_per_month on a GPU that cannot hold the model: no tokens to compare by.
        assumptions.append("the GPU-hours cannot be turned into tokens: no AMD option is costed")
        move_hours, move_usd, move_notes = _move(settings, effort_hours)
        assumptions.extend(move_notes)
        return Economics(None, (), move_hours, move_usd, None, None, None, (), tuple(assumptions))
    if today_entry is not None:
        declared = settings.gpu_hours_per_month if volume.hours is None else None
        _check_fleet(settings, today_entry, volume, declared)
    amd = [by_id[g.id] for g in candidates if by_id[g.id].fits]
    options = sorted(
        (_option(e, volume) for e in amd),
        key=lambda o: (o.usd_per_month is None, o.usd_per_month or 0.0),
    )
    today: CostOption | None = None
    if today_entry is not None:
        today = _option(today_entry, volume)
        if volume.hours is not None and today.usd_per_gpu_hour is not None:
            fleet = settings.current_gpu_count or today.gpus
            today = CostOption(
                today.gpu_id,
                today.gpu_name,
                today.vendor,
                fleet,
                today.tokens_per_s_per_gpu,
                today.usd_per_gpu_hour,
                volume.hours * today.usd_per_gpu_hour,
                today.note,
            )
    best = _cheapest(options)
    today_usd = today.usd_per_month if today is not None else None
    saving = (
        today_usd - (best.usd_per_month or 0.0)
        if today_usd is not None and best is not None
        else None
    )
    move_hours, move_usd, move_notes = _move(settings, effort_hours)
    assumptions.append(volume_note)
    engines = sorted({e.engine for e in result.entries if e.fits})
    assumptions.append(
        f"speed from gpuport plan: {model.name} in {result.request.precision.name}, batch "
        f"{batch} sequences at up to {context:,} tokens, on {', '.join(engines)} "
        f"(engine-aware estimates with fitted efficiencies, kb/plan_efficiency.toml); "
        f"{DEFAULT_UTILIZATION:.0%} of each GPU's memory usable"
    )
    if volume.hours is None:
        assumptions.append(
            f"each option runs whole copies of the model at that batch around the clock, "
            f"{HOURS_PER_MONTH:,.0f} h a month (8,760 h a year / 12), busy all the time; a fleet "
            "busy part of the time needs more GPUs on every vendor alike"
        )
        if today is not None and settings.current_gpu_count is not None:
            assumptions.append(
                f"today's fleet is costed at the {today.gpus} GPU{'' if today.gpus == 1 else 's'} the volume needs, "
                "not the "
                f"{settings.current_gpu_count} declared (current_gpu_count), so both vendors are "
                "sized alike"
            )
    priced = ([today_entry] if today_entry is not None else []) + amd
    assumptions.extend(f"price: {_price_note(e)}" for e in priced)
    misfits = [by_id[g.id].gpu.short for g in candidates if not by_id[g.id].fits]
    if misfits:
        assumptions.append(
            f"does not hold {model.name} at batch {batch} and {context:,} tokens: "
            f"{', '.join(misfits)} (not costed)"
        )
    split = sorted({e.gpu.short for e in priced if e.gpu.devices_per_package > 1})
    if split:
        assumptions.append(
            f"{', '.join(split)}: counted and priced per GCD (two devices in one package)"
        )
    if settings.current_gpu is None:
        assumptions.append("no `current_gpu`: today's cost and the saving are unknown")
    assumptions.extend(move_notes)
    sensitivity = _sensitivity(amd, volume, today_usd, best, move_usd)
    return Economics(
        today=today,
        options=tuple(options),
        move_hours=move_hours,
        move_usd=move_usd,
        best=best,
        monthly_saving_usd=saving,
        payback_months=_payback(move_usd, saving),
        sensitivity=tuple(sensitivity),
        assumptions=tuple(assumptions),
    )


__all__ = [
    "HOURS_PER_MONTH",
    "SENSITIVITY_SPEED",
    "economics_missing",
    "estimate_economics",
    "payback_span",
]
