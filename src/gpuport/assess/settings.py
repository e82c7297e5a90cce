"""What the team declares for the decision: ``[tool.gpuport.decision]`` merged with flags.

The table lives in the same ``pyproject.toml`` as ``[tool.gpuport]`` (the nearest one that has a
``[tool.gpuport]`` table, read through the read policy as :mod:`gpuport.config` reads it); flags
win over the file. A bad value is a :class:`~gpuport.config.ConfigError` naming the key and the
file (or the flag), which every command turns into one ``error:`` line and exit 2.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any, TypeVar

from gpuport.assess.decision_model import DecisionSettings
from gpuport.config import ConfigError, _find_table
from gpuport.plan.catalog import catalog, find_gpu

TABLE = "[tool.gpuport.decision]"
COMMAND_LINE = "command line"
ROCM_EXPERIENCE = ("none", "some", "strong")
DEPLOYMENTS = ("cloud", "on-premises")
WORKLOADS = ("inference", "training", "both")
_T = TypeVar("_T")
HOURS_PER_MONTH = 730.0  # 24 x 365 / 12: a GPU busy the whole month

# The flag that sets each key (the key's name, kebab-cased, unless said here).
FLAG_NAMES = {"batch": "serving-batch"}


def flag_of(key: str) -> str:
    """``--current-gpu`` for ``current_gpu``: the flag that sets ``key``."""
    return "--" + FLAG_NAMES.get(key, key.replace("_", "-"))


def _positive_number(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ConfigError(f"{value!r} is not a number")
    try:
        number = float(value)
    except ValueError:
        raise ConfigError(f"{value!r} is not a number") from None
    if not math.isfinite(number):
        raise ConfigError(f"{value!r} is not a finite number")
    if number <= 0:
        raise ConfigError(f"{value!r} must be more than zero")
    return number


def _positive_int(value: object) -> int:
    if isinstance(value, bool):
        raise ConfigError(f"{value!r} is not a whole number")
    if isinstance(value, str):
        try:
            value = int(value.strip())
        except ValueError:
            raise ConfigError(f"{value!r} is not a whole number") from None
    if not isinstance(value, int):
        raise ConfigError(f"{value!r} is not a whole number")
    if value < 1:
        raise ConfigError(f"{value!r} must be 1 or more")
    return value


def _one_of(choices: tuple[str, ...]) -> Callable[[object], str]:
    def parse(value: object) -> str:
        text = value.strip().lower() if isinstance(value, str) else value
        if text not in choices:
            raise ConfigError(f"{value!r} is not one of {', '.join(choices)}")
        return str(text)

    return parse


def _model_name(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(
            f"{value!r} is not a model: a preset name (as gpuport plan takes) or a config.json"
        )
    return value.strip()


def _yes_no(value: object) -> bool:
    if isinstance(value, bool):
        return value
    raise ConfigError(f"{value!r} is not true or false")


def _gpu_id(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{value!r} is not a GPU name")
    gpu = find_gpu(value)
    if gpu is None:
        known = ", ".join(sorted(i for i, g in catalog().items() if g.vendor == "nvidia"))
        raise ConfigError(f"{value!r} is not a GPU gpuport knows (NVIDIA GPUs: {known})")
    if gpu.vendor != "nvidia":
        raise ConfigError(
            f"{value!r} is an {gpu.vendor.upper()} GPU: current_gpu is the NVIDIA GPU used today"
        )
    return gpu.id


def _amd_gpu_ids(value: object) -> tuple[str, ...]:
    names = value.split(",") if isinstance(value, str) else value
    if not isinstance(names, list | tuple) or not all(isinstance(n, str) for n in names):
        raise ConfigError(f"{value!r} is not a list of GPU names")
    ids: list[str] = []
    for name in (n.strip() for n in names):
        if not name:
            continue
        gpu = find_gpu(name)
        if gpu is None:
            amd = ", ".join(sorted(i for i, g in catalog().items() if g.vendor == "amd"))
            raise ConfigError(f"{name!r} is not a GPU gpuport knows (AMD GPUs: {amd})")
        if gpu.vendor != "amd":
            raise ConfigError(f"{name!r} is not an AMD GPU: candidates are what to move to")
        if gpu.id not in ids:
            ids.append(gpu.id)
    if not ids:
        raise ConfigError(f"{value!r} names no GPU")
    return tuple(ids)


PARSERS: Mapping[str, Callable[[object], object]] = {
    "current_gpu": _gpu_id,
    "current_gpu_count": _positive_int,
    "gpu_hours_per_month": _positive_number,
    "tokens_per_month": _positive_number,
    "engineer_usd_per_hour": _positive_number,
    "rocm_experience": _one_of(ROCM_EXPERIENCE),
    "regulated": _yes_no,
    "revalidation_hours": _positive_number,
    "latency_target_ms": _positive_number,
    "deployment": _one_of(DEPLOYMENTS),
    "workload": _one_of(WORKLOADS),
    "candidate_gpus": _amd_gpu_ids,
    "batch": _positive_int,
    "model": _model_name,
}
KEYS = tuple(f.name for f in fields(DecisionSettings) if f.name != "source")
assert set(PARSERS) == set(KEYS), "every DecisionSettings field has a parser"


def _shown(pyproject: Path, target: Path) -> str:
    """The settings file as reports show it: relative to the project, never this machine's
    absolute path (reports are shared; error messages keep the full path)."""
    root = target if target.is_dir() else target.parent
    try:
        return pyproject.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return pyproject.name


def load_decision_settings(
    target: Path, overrides: Mapping[str, object] | None = None
) -> DecisionSettings:
    """The decision settings for ``target``: its ``[tool.gpuport.decision]``, then ``overrides``
    (flag values by key; None means not given)."""
    values: dict[str, object] = {}
    where: dict[str, str] = {}  # key -> how errors name where it was set
    sources: list[str] = []
    found = _find_table(target)
    if found is not None:
        pyproject, tool = found
        table = tool.get("decision") if isinstance(tool, dict) else None
        if table is not None:
            if not isinstance(table, dict):
                raise ConfigError(f"{pyproject}: {TABLE} must be a table")
            for raw_key, value in table.items():
                key = str(raw_key).replace("-", "_")
                if key not in PARSERS:
                    raise ConfigError(
                        f"{pyproject}: unknown key {raw_key!r} in {TABLE} ({', '.join(KEYS)})"
                    )
                named = f"{pyproject}: {TABLE} {raw_key}"
                values[key] = _parse(key, value, named)
                where[key] = named
            if table:
                sources.append(f"{_shown(pyproject, target)} {TABLE}")
    given = {k: v for k, v in (overrides or {}).items() if v is not None and v != ()}
    for key, value in given.items():
        if key not in PARSERS:
            raise ConfigError(f"unknown decision setting {key!r}")
        values[key] = _parse(key, value, flag_of(key))
        where[key] = flag_of(key)
    if given:
        sources.append(COMMAND_LINE)
    settings = DecisionSettings(
        current_gpu=_typed(values, "current_gpu", str),
        current_gpu_count=_typed(values, "current_gpu_count", int),
        gpu_hours_per_month=_typed(values, "gpu_hours_per_month", float),
        tokens_per_month=_typed(values, "tokens_per_month", float),
        engineer_usd_per_hour=_typed(values, "engineer_usd_per_hour", float),
        rocm_experience=_typed(values, "rocm_experience", str),
        regulated=_typed(values, "regulated", bool),
        revalidation_hours=_typed(values, "revalidation_hours", float),
        latency_target_ms=_typed(values, "latency_target_ms", float),
        deployment=_typed(values, "deployment", str),
        workload=_typed(values, "workload", str),
        candidate_gpus=_typed(values, "candidate_gpus", tuple) or (),
        batch=_typed(values, "batch", int),
        model=_typed(values, "model", str),
        source="; ".join(sources),
    )
    _check_together(settings, where)
    return settings


def _typed(values: Mapping[str, object], key: str, kind: type[_T]) -> _T | None:
    """A parsed value, of the type its parser returns (None when not set)."""
    value = values.get(key)
    if value is None:
        return None
    if not isinstance(value, kind):
        raise TypeError(f"{key}: parsed to {type(value).__name__}, not {kind.__name__}")
    return value


def _parse(key: str, value: object, named: str) -> object:
    try:
        return PARSERS[key](value)
    except ConfigError as exc:
        raise ConfigError(f"{named}: {exc}") from None


def _check_together(settings: DecisionSettings, where: Mapping[str, str]) -> None:
    """Values that contradict each other: an error naming both keys."""
    if settings.revalidation_hours is not None and settings.regulated is False:
        raise ConfigError(
            f"{where['revalidation_hours']}: revalidation hours are given for a project that "
            f"is not regulated (regulated = false, {where['regulated']}): drop one of them"
        )
    count = settings.current_gpu_count
    if count is not None and settings.current_gpu is None:
        raise ConfigError(
            f"{where['current_gpu_count']}: a GPU count needs current_gpu (which GPU it counts)"
        )
    hours = settings.gpu_hours_per_month
    if hours is not None and count is not None and hours > count * HOURS_PER_MONTH:
        raise ConfigError(
            f"{where['gpu_hours_per_month']}: {hours:g} GPU-hours a month is more than "
            f"{count} GPU(s) can run ({count * HOURS_PER_MONTH:g} h, with current_gpu_count)"
        )


def decision_overrides(flags: Mapping[str, Any]) -> dict[str, object]:
    """The decision settings among a command's flag values, by key (None: not given)."""
    return {key: flags.get(key) for key in KEYS}
