"""A ``verify compare`` (or ``verify serve``) as the results store keeps it: kind ``"verify"``.

The run's machine is the one compared on; its settings name the reference file, the machine it
was recorded on and the tolerances. Each case becomes one result (workload ``"verify"``) with
its worst output's figures as metrics, ``passed`` as 1 or 0, and the status ``ok`` (pass),
``failed`` (out of tolerance, or unusable recorded data) or ``skipped``, so ``gpuport bench
list``/``show``/``export``/``import`` handle a verification like any other run.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

from gpuport.bench.store import ResultRecord, ResultsStore
from gpuport.machine import describe_machine
from gpuport.serving.results import PairSummary, ServeVerifyResult
from gpuport.verify.result import CaseComparison, CaseStatus, VerifyComparison

WORKLOAD = "verify"
KIND = "verify"
_STATUS = {
    CaseStatus.PASS: "ok",
    CaseStatus.FAIL: "failed",
    CaseStatus.ERROR: "failed",
    CaseStatus.SKIPPED: "skipped",
}


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None  # the store keeps finite numbers only


def case_record(case: CaseComparison) -> ResultRecord:
    """One case: the figures of its first failing (else worst) output."""
    shown = case.first_failure or case.worst
    metrics: dict[str, float | None] = {}
    params: dict[str, object] = {"result": case.status.value, "outputs": len(case.outputs)}
    if shown is not None:
        metrics = {
            "passed": 1.0 if case.status is CaseStatus.PASS else 0.0,
            "max_abs_error": _finite(shown.max_abs),
            "max_rel_error": _finite(shown.max_rel),
            "out_of_tolerance_share": shown.out_of_tolerance,
            "atol_needed": _finite(shown.atol_needed),
            "rtol_needed": _finite(shown.rtol_needed),
            "fp64_error_recorded": _finite(shown.recorded_error),
            "fp64_error_here": _finite(shown.here_error),
        }
        params.update(dtype=shown.dtype, output=shown.name, closer_to_fp64=shown.closer.value)
    notes = [case.note] if case.note else []
    if case.first_failure is not None and len(case.outputs) > 1:
        notes.insert(0, f"first output out of tolerance: {case.first_failure.name}")
    return ResultRecord(
        workload=WORKLOAD,
        name=case.name,
        params=params,
        metrics=metrics,
        status=_STATUS[case.status],
        note="; ".join(notes),
    )


def store_comparison(result: VerifyComparison, db: Path | None) -> tuple[str, Path]:
    """Save ``result`` as one complete run of kind ``verify``; its id and the store's path.

    Raises :class:`gpuport.bench.store.StoreError` (one sentence) when the store cannot be used.
    """
    settings: dict[str, object] = {
        "file": result.file,
        "recording": result.kind,
        "model": result.model,
        "device": result.device,
        "recorded_on": result.recorded.to_dict(),
        "tolerances": {t.dtype: [t.rtol, t.atol] for t in result.tolerances},
        "overridden": sorted(t.dtype for t in result.tolerances if t.overridden),
        "counts": {status.value: result.count(status) for status in CaseStatus},
        "notes": list(result.notes),
    }
    with ResultsStore.open(db) as store:
        run_id = store.begin(
            KIND,
            result.here,
            label=f"verify {Path(result.file).name} (recorded on {result.recorded.label})",
            settings=settings,
        )
        for case in result.cases:
            store.add(run_id, case_record(case))
        store.finish(run_id, complete=True)
        return run_id, store.path


# --- verify serve -----------------------------------------------------------------------------

SERVE_WORKLOAD = "verify-serve"


def _pair_record(name: str, pair: PairSummary) -> ResultRecord:
    return ResultRecord(
        workload=SERVE_WORKLOAD,
        name=name,
        params={"prompts": pair.prompts},
        metrics={
            "identical_share": pair.identical_share,
            "identical": float(pair.identical),
            "topk_agreement": pair.topk_agreement,
            "mean_kl": pair.mean_kl,
            "max_kl": pair.max_kl,
        },
        status="ok" if pair.prompts else "skipped",
        note="" if pair.prompts else "no prompt answered twice",
    )


def store_serve_comparison(result: ServeVerifyResult, db: Path | None) -> tuple[str, Path]:
    """Save a ``verify serve`` as a run of kind ``verify``: one result per pair compared
    (A vs B, then each server against its rerun) and one per prompt that differs."""
    settings: dict[str, object] = {
        "mode": "serve",
        "url_a": result.url_a,
        "url_b": result.url_b,
        "model": result.model,
        "endpoint": result.endpoint,
        "top_k": result.top_k,
        "with_logprobs": result.with_logprobs,
        "kl_margin": result.kl_margin,
        "beyond_noise": result.beyond_noise,
        "notes": list(result.notes),
    }
    pairs = [("A vs B", result.cross)]
    pairs += [
        (f"{side} vs {side} (rerun)", pair)
        for side, pair in (("A", result.noise_a), ("B", result.noise_b))
        if pair is not None
    ]
    with ResultsStore.open(db) as store:
        run_id = store.begin(
            KIND,
            describe_machine(None),  # this machine is the client; the servers are in settings
            label=f"verify serve {result.model}",
            settings=settings,
        )
        for name, pair in pairs:
            record = _pair_record(name, pair)
            if name == "A vs B" and result.beyond_noise:
                record = dataclasses.replace(
                    record, status="failed", note="A and B differ beyond the noise floor"
                )
            store.add(run_id, record)
        for prompt in result.prompts:
            if prompt.first_difference is None:
                continue
            store.add(
                run_id,
                ResultRecord(
                    workload=SERVE_WORKLOAD,
                    name=f"prompt #{prompt.index}",
                    params={
                        "first_difference": prompt.first_difference,
                        "tokens_a": prompt.tokens_a,
                        "tokens_b": prompt.tokens_b,
                    },
                    metrics={
                        "identical_share": 0.0,  # this prompt differs
                        "topk_agreement": prompt.topk_agreement,
                        "mean_kl": prompt.mean_kl,
                    },
                    note=f"first differs at token {prompt.first_difference} (0-based)",
                ),
            )
        store.finish(run_id, complete=result.complete)
        return run_id, store.path
