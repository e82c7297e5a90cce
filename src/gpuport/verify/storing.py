"""A ``verify compare`` as the results store keeps it: kind ``"verify"``, one record per case.

The run's machine is the one compared on; its settings name the reference file, the machine it
was recorded on and the tolerances. Each case becomes one result (workload ``"verify"``) with
its worst output's figures as metrics, ``passed`` as 1 or 0, and the status ``ok`` (pass),
``failed`` (out of tolerance, or unusable recorded data) or ``skipped``, so ``gpuport bench
list``/``show``/``export``/``import`` handle a verification like any other run.
"""

from __future__ import annotations

import math
from pathlib import Path

from gpuport.bench.store import ResultRecord, ResultsStore
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
