"""A ``bench serve`` run as the results store keeps it: kind ``"serve"``, one record per step.

Each load step becomes one result (workload ``"serve"``, named by its step) whose metrics are
the step's figures, so ``gpuport bench list``/``show``/``export``/``compare`` treat serving runs
like the workload suite's. Latencies are stored as ``<metric>_<stat>_ms`` (``ttft_p99_ms``).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from gpuport.serving.results import LATENCY_METRICS, LoadStep

if TYPE_CHECKING:
    from gpuport.serving.load import BenchSettings

WORKLOAD = "serve"
KIND = "serve"


def run_settings(settings: BenchSettings) -> dict[str, Any]:
    """What the run was asked to do (plain JSON for the store's ``settings``); no API key."""
    return {
        "url": settings.target.base_url,
        "model": settings.target.model,
        "endpoint": settings.target.endpoint.value,
        "prompts": len(settings.prompts),
        "prompt_source": settings.prompt_source,
        "seed": settings.seed,
        "steps": [plan.label for plan in settings.plans],
        "slo_ms": dict(settings.slo_ms),
        "max_failure_rate": settings.max_failure_rate,
        "timeout_s": settings.target.timeout_s,
        "warmup": settings.warmup,
        "ignore_eos": settings.ignore_eos,
    }


def step_record(step: LoadStep, model: str) -> dict[str, object]:
    """One step as a store record: ``{"workload","name","params","metrics","status","note"}``."""
    rate: str | float | None = step.rate
    if step.rate is not None and math.isinf(step.rate):
        rate = "inf"
    metrics: dict[str, float | None] = {
        "request_throughput": step.request_throughput,
        "output_tokens_per_s": step.output_tokens_per_s,
        "goodput": step.goodput,
        "failure_rate": step.failure_rate,
        "completed": float(step.completed),
        "failed": float(step.failed),
        "output_tokens": float(step.output_tokens),
        "duration_s": step.duration_s,
    }
    for metric in LATENCY_METRICS:
        spread = step.latency(metric)
        for stat in ("mean", "p50", "p90", "p99"):
            metrics[f"{metric}_{stat}_ms"] = None if spread is None else getattr(spread, stat)
    failures = "; ".join(f"{f.reason}: {f.count}" for f in step.failures)
    note = f"tokens from {step.token_source}"
    if failures:
        note += f"; failures: {failures}"
    if not step.complete:
        note += "; interrupted"
    return {
        "workload": WORKLOAD,
        "name": step.label,
        "params": {
            "model": model,
            "rate": rate,
            "concurrency": step.concurrency,
            "requests": step.requests,
        },
        "metrics": metrics,
        "status": "failed" if step.failed and not step.completed else "ok",
        "note": note,
    }
