"""Should this project move to ROCm: each decision factor decided from evidence, then the outcome.

Every factor of ``kb/decision_factors.toml`` is decided from what gpuport can show: the scan
(findings and the project model), the project's own files (:mod:`~gpuport.assess.project_evidence`:
dependencies, imports, GPU targets, training and serving code), the plan and the economics, or
what the team declares (:mod:`~gpuport.assess.settings`). A factor with no evidence is UNKNOWN
and says what to tell gpuport; nothing is assumed.

The outcome, in this order:

1. a decisive CUDA factor holds (a CUDA-only serving component): **stay on CUDA**, or **move
   part** when the project has another workload in a top-level folder the CUDA-only evidence
   does not reach (a ``train/`` beside a ``serve/`` on TensorRT-LLM): that part can move;
2. unknown factors carry more than half of the weight: **not enough evidence**, with the list
   of what to provide;
3. AMD is cheaper with a payback within two years, the readiness verdict is ready or ready
   with work (or the project already builds for ROCm), and the weight of factors pushing to
   ROCm is greater than that pushing to CUDA: **move**;
4. AMD costs more per month and nothing outweighs it: **stay on CUDA**;
5. otherwise: **pilot first**.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from gpuport.assess.decision_model import (
    DecisionSettings,
    Direction,
    Economics,
    FactorResult,
    FactorState,
    MissingInput,
    Outcome,
    Recommendation,
)
from gpuport.assess.economics import payback_span
from gpuport.assess.project_evidence import Place, ProjectEvidence, collect, gpus_for_sm
from gpuport.assess.verdict import Assessment, Verdict
from gpuport.findings import Category, Severity, Tier
from gpuport.kb import PackageStatus, find_gpu_arch, find_package
from gpuport.kb.decision_factors import DecisionFactor, decision_factors
from gpuport.plan.catalog import GIB, find_gpu
from gpuport.project.model import ComponentStatus

UNKNOWN_SHARE = 0.5  # past this share of the weight unknown, there is not enough evidence
PAYBACK_MONTHS = 24.0  # a move that pays back later than this is not "cheaper"
LATENCY_CRITICAL_BATCH = 4
THROUGHPUT_BATCH = 64
# A per-token target this tight is interactive serving at small batches (about 30 tokens/s
# per user and more), where the published comparisons find NVIDIA's latency lower:
# https://lzwjava.github.io/amd-mi300x-vs-nvidia-h200-comparison-en
LATENCY_CRITICAL_MS = 30.0
LARGE_MODEL_PARAMS = 30e9
LONG_CONTEXT = 32768
SMALL_GPU = "h100-sxm"  # the 80 GB GPU of the "needs two 80 GB GPUs" factor
LARGE_GPU = "mi300x"  # the 192 GB GPU
# The setting an ask starts from: its first `key` of [tool.gpuport.decision], else its first flag
_ASKED_KEY = re.compile(r"`([a-z_]+)`")
_ASKED_FLAG = re.compile(r"--[a-z][a-z-]*")
# What the economics' factors ask for when only some of their inputs are missing. The model's
# ask starts from the setting fits-one-large-gpu's `--model` names: one item asks for all of them
MODEL_ASK = (
    "give gpuport the model with --model or `model` in [tool.gpuport.decision] (a preset name "
    "or a config.json)"
)
VOLUME_ASK = "the volume (`tokens_per_month`, or `gpu_hours_per_month` with `current_gpu`)"
CURRENT_GPU_ASK = (
    "tell gpuport `current_gpu` (the GPU the `gpu_hours_per_month` run on) in "
    "[tool.gpuport.decision] or --current-gpu"
)
MAX_PLACES = 3  # places named per factor; the count says how many more
MAX_TARGETS = 8  # GPU targets named by current-gpus
READY = frozenset({Verdict.READY, Verdict.READY_WITH_WORK, Verdict.ALREADY_SUPPORTS_ROCM})


@dataclass(frozen=True, slots=True)
class _Decided:
    """A decider's answer: the state, what shows it and, where they differ, the weight and
    what to ask for (an unknown factor whose KB ask names inputs the team already gave)."""

    state: FactorState
    evidence: tuple[str, ...] = ()
    weight: float | None = None
    ask: str | None = None


@dataclass(frozen=True, slots=True)
class _Inputs:
    assessment: Assessment
    settings: DecisionSettings
    economics: Economics | None
    found: ProjectEvidence


def decide(
    assessment: Assessment,
    settings: DecisionSettings,
    economics: Economics | None,
    *,
    evidence: ProjectEvidence | None = None,
    exclude: tuple[str, ...] = (),
) -> Recommendation:
    """The recommendation for ``assessment``'s project: every factor decided, decisive first."""
    scan = assessment.scan
    if evidence is None:
        evidence = collect(Path(scan.root), scan.project, exclude)
    inputs = _Inputs(assessment, settings, economics, evidence)
    results = [_result(factor, inputs) for factor in decision_factors().values()]
    return _recommend(inputs, results)


def _result(factor: DecisionFactor, inputs: _Inputs) -> FactorResult:
    decided = DECIDERS[factor.id](factor, inputs)
    holds = decided.state is FactorState.YES
    return FactorResult(
        factor_id=factor.id,
        question=factor.question,
        state=decided.state,
        direction=Direction(factor.direction) if holds else Direction.NEUTRAL,
        decisive=factor.decisive,
        weight=factor.weight if decided.weight is None else round(decided.weight, 2),
        evidence=decided.evidence,
        ask=(decided.ask or factor.ask) if decided.state is FactorState.UNKNOWN else "",
        sources=factor.sources,
    )


# --- the factors ------------------------------------------------------------------------------


def _named(places: list[Place], limit: int = MAX_PLACES) -> tuple[str, ...]:
    """The first ``limit`` places as evidence lines, and how many more there are."""
    unique = list(dict.fromkeys(str(p) for p in places))
    shown = unique[:limit]
    if len(unique) > limit:
        shown.append(f"and {len(unique) - limit} more")
    return tuple(shown)


def _read(found: ProjectEvidence) -> str:
    capped = " (the first ones: the rest were not read)" if found.capped else ""
    return f"{found.files_read} product files read{capped}"


def _outside_rocm_build(places: list[Place], inputs: _Inputs) -> tuple[list[Place], list[Place]]:
    """Places in the project's own code, and those in a component its ROCm build leaves out."""
    project = inputs.assessment.scan.project
    kept, left_out = [], []
    for place in places:
        component = project.component_of(place.path) if project is not None else None
        if component is not None and component.status is not ComponentStatus.ROCM:
            left_out.append(place)
        else:
            kept.append(place)
    return kept, left_out


def _dependency_factor(factor: DecisionFactor, inputs: _Inputs) -> list[Place]:
    found = inputs.found
    return (
        found.packages(factor.packages)
        + found.imported(factor.imports)
        + found.markers.get(factor.id, [])
    )


def _serving_stack(factor: DecisionFactor, inputs: _Inputs) -> _Decided:
    places, left_out = _outside_rocm_build(_dependency_factor(factor, inputs), inputs)
    if places:
        return _Decided(FactorState.YES, _named(places))
    if left_out:
        lines = _named(left_out)
        return _Decided(FactorState.NO, (f"only in parts the ROCm build leaves out: {lines[0]}",))
    return _Decided(FactorState.NO, (f"none found ({_read(inputs.found)})",))


def _custom_kernels(factor: DecisionFactor, inputs: _Inputs) -> _Decided:
    files = inputs.found.cuda_files
    if not files:
        return _Decided(FactorState.NO, (f"no product .cu/.cuh files ({_read(inputs.found)})",))
    scan = inputs.assessment.scan
    kernel = [
        f
        for f in scan.findings
        if f.tier is Tier.PRODUCT and f.category is Category.KERNELS and f.severity >= Severity.LOW
    ]
    mechanical = sum(1 for f in kernel if f.fix is not None and f.fix.mechanical)
    share = mechanical / len(kernel) if kernel else 1.0
    shown = ", ".join(files[:MAX_PLACES]) + (
        f" and {len(files) - MAX_PLACES} more" if len(files) > MAX_PLACES else ""
    )
    noun = "CUDA file" if len(files) == 1 else "CUDA files"
    lines = [f"{len(files)} product {noun}: {shown}"]
    if kernel:
        lines.append(
            f"gpuport port fixes {mechanical} of {len(kernel)} kernel findings mechanically "
            f"({share:.0%}); the rest is manual work"
        )
    else:
        lines.append("the scan finds nothing in them that breaks on ROCm (hipify converts them)")
    project = scan.project
    if project is not None and project.torch_hipify:
        lines.append(f"built through torch's hipify: {project.torch_hipify[0]}")
    # What port converts costs little: the factor weighs by the share left to do by hand.
    return _Decided(FactorState.YES, tuple(lines), factor.weight * max(0.25, 1.0 - share))


def _plain_dependency(factor: DecisionFactor, inputs: _Inputs) -> _Decided:
    places = _dependency_factor(factor, inputs)
    if places:
        return _Decided(FactorState.YES, _named(places))
    return _Decided(FactorState.NO, (f"none found ({_read(inputs.found)})",))


def _tensorflow(factor: DecisionFactor, inputs: _Inputs) -> _Decided:
    tf = _dependency_factor(factor, inputs)
    if not tf:
        return _Decided(FactorState.NO, (f"no TensorFlow found ({_read(inputs.found)})",))
    others = inputs.found.packages(["torch", "jax"]) + inputs.found.imported(["torch", "jax"])
    if others:
        return _Decided(
            FactorState.NO,
            (f"TensorFlow beside another framework: {_named(others, 1)[0]}", *_named(tf, 1)),
        )
    return _Decided(FactorState.YES, _named(tf))


def _vllm_stack(factor: DecisionFactor, inputs: _Inputs) -> _Decided:
    places = _dependency_factor(factor, inputs)
    if not places:
        return _Decided(FactorState.NO, (f"no vLLM or SGLang found ({_read(inputs.found)})",))
    kernels = inputs.found.cuda_files
    if kernels:
        return _Decided(
            FactorState.NO,
            (*_named(places, 1), f"but with {len(kernels)} custom CUDA files ({kernels[0]})"),
        )
    return _Decided(FactorState.YES, (*_named(places), "no product CUDA kernels"))


def _training(factor: DecisionFactor, inputs: _Inputs) -> _Decided:
    workload = inputs.settings.workload
    if workload is not None:
        state = FactorState.NO if workload == "inference" else FactorState.YES
        return _Decided(state, (f"workload = {workload} ({inputs.settings.source})",))
    places = inputs.found.imported(factor.imports) + inputs.found.markers.get(factor.id, [])
    if places:
        return _Decided(FactorState.YES, _named(places))
    serving = inputs.found.packages(["vllm", "sglang", "tensorrt-llm"])
    if serving:
        return _Decided(FactorState.NO, (f"serving only: {_named(serving, 1)[0]}",))
    return _Decided(FactorState.UNKNOWN)


def _not_serving(settings: DecisionSettings) -> _Decided | None:
    """A training-only workload serves nothing: the serving factors do not hold."""
    if settings.workload == "training":
        return _Decided(FactorState.NO, ("workload = training: nothing is served",))
    return None


def _batch_line(batch: int) -> str:
    return f"batch = {batch} sequence{'' if batch == 1 else 's'} per GPU"


def _latency_critical(factor: DecisionFactor, inputs: _Inputs) -> _Decided:
    settings = inputs.settings
    if (training := _not_serving(settings)) is not None:
        return training
    target = settings.latency_target_ms
    if target is not None and target <= LATENCY_CRITICAL_MS:
        return _Decided(
            FactorState.YES,
            (f"latency_target_ms = {target:g} (at most {LATENCY_CRITICAL_MS:g} ms per token)",),
        )
    if settings.batch is not None:
        state = FactorState.YES if settings.batch <= LATENCY_CRITICAL_BATCH else FactorState.NO
        return _Decided(state, (_batch_line(settings.batch),))
    if target is not None:
        return _Decided(FactorState.NO, (f"latency_target_ms = {target:g}: not a tight target",))
    return _Decided(FactorState.UNKNOWN)


def _throughput(factor: DecisionFactor, inputs: _Inputs) -> _Decided:
    if (training := _not_serving(inputs.settings)) is not None:
        return training
    batch = inputs.settings.batch
    if batch is None:
        return _Decided(FactorState.UNKNOWN)
    state = FactorState.YES if batch >= THROUGHPUT_BATCH else FactorState.NO
    target = inputs.settings.latency_target_ms
    if state is FactorState.YES and target is not None and target <= LATENCY_CRITICAL_MS:
        return _Decided(FactorState.NO, (f"batch = {batch}, but latency_target_ms = {target:g}",))
    return _Decided(state, (_batch_line(batch),))


def _fits_one_large_gpu(factor: DecisionFactor, inputs: _Inputs) -> _Decided:
    plan = inputs.assessment.plan
    small, large = find_gpu(SMALL_GPU), find_gpu(LARGE_GPU)
    if plan is None or small is None or large is None:
        return _Decided(FactorState.UNKNOWN)
    request = plan.request
    need = plan.weights_bytes + plan.kv_bytes_per_sequence * request.batch
    need_gib = need / GIB
    line = (
        f"plan: {plan.model.name} needs {need_gib:,.0f} GiB at batch {request.batch}, "
        f"context {request.context:,} ({small.short}: {small.usable_gib:g} GiB usable, "
        f"{large.short}: {large.usable_gib:g} GiB)"
    )
    holds = small.memory_bytes < need <= large.memory_bytes
    return _Decided(FactorState.YES if holds else FactorState.NO, (line,))


def _bandwidth_bound(factor: DecisionFactor, inputs: _Inputs) -> _Decided:
    plan = inputs.assessment.plan
    if plan is None:
        return _Decided(FactorState.UNKNOWN)
    params = plan.model.params.total
    context = plan.request.context
    line = f"plan: {plan.model.name}, {params / 1e9:,.1f}B parameters, context {context:,}"
    holds = params >= LARGE_MODEL_PARAMS or context >= LONG_CONTEXT
    return _Decided(FactorState.YES if holds else FactorState.NO, (line,))


def _partial_libraries(factor: DecisionFactor, inputs: _Inputs) -> _Decided:
    places = _dependency_factor(factor, inputs)
    fa3 = decision_factors().get("flash-attention-3")
    counted_apart = set(fa3.packages) if fa3 is not None else set()
    for name, where in inputs.found.requirements.items():
        package = find_package(name)
        if package is None or name in counted_apart or name in factor.packages:
            continue
        if package.status is PackageStatus.PARTIAL:
            places.extend(where)
    if places:
        return _Decided(FactorState.YES, _named(places))
    return _Decided(FactorState.NO, (f"none found ({_read(inputs.found)})",))


def _consumer_amd(factor: DecisionFactor, inputs: _Inputs) -> _Decided:
    lines = []
    for gpu_id in inputs.settings.candidate_gpus:
        gpu = find_gpu(gpu_id)
        if gpu is None:
            continue
        arch = find_gpu_arch(gpu.arch_id)
        if arch is None or not arch.officially_supported:
            lines.append(f"candidate {gpu.short} ({gpu.arch_id}) is not on ROCm's supported list")
    lines.extend(_named(inputs.found.markers.get(factor.id, [])))
    if lines:
        return _Decided(FactorState.YES, tuple(lines))
    if inputs.settings.candidate_gpus:
        named = ", ".join(inputs.settings.candidate_gpus)
        return _Decided(FactorState.NO, (f"candidates {named} are on ROCm's supported list",))
    return _Decided(FactorState.NO, ("candidates: the catalog's AMD datacenter GPUs",))


def _setting_choice(
    key: str, yes: frozenset[object]
) -> Callable[[DecisionFactor, _Inputs], _Decided]:
    def decide_setting(factor: DecisionFactor, inputs: _Inputs) -> _Decided:
        value = getattr(inputs.settings, key)
        if value is None:
            return _Decided(FactorState.UNKNOWN)
        state = FactorState.YES if value in yes else FactorState.NO
        shown = str(value).lower() if isinstance(value, bool) else value
        return _Decided(state, (f"{key} = {shown} ({inputs.settings.source})",))

    return decide_setting


def _cloud(factor: DecisionFactor, inputs: _Inputs) -> _Decided:
    deployment = inputs.settings.deployment
    if deployment is not None:
        state = FactorState.YES if deployment == "cloud" else FactorState.NO
        return _Decided(state, (f"deployment = {deployment} ({inputs.settings.source})",))
    if inputs.found.cloud_instances:
        return _Decided(FactorState.YES, _named(inputs.found.cloud_instances))
    return _Decided(FactorState.UNKNOWN)


def _money(value: float) -> str:
    return f"-${-value:,.0f}" if value < 0 else f"${value:,.0f}"


def _economics_lines(economics: Economics) -> list[str]:
    lines = []
    today, best = economics.today, economics.best
    if today is not None and today.usd_per_month is not None:
        lines.append(
            f"today: {_money(today.usd_per_month)}/month on {today.gpus} x {today.gpu_name}"
        )
    if best is not None and best.usd_per_month is not None:
        lines.append(
            f"cheapest AMD: {_money(best.usd_per_month)}/month on {best.gpus} x {best.gpu_name}"
        )
    if economics.payback_months is not None:
        lines.append(f"payback: {payback_span(economics.payback_months)}")
    return lines


def _economics_ask(inputs: _Inputs, rate: bool) -> str | None:
    """What the economics still need, naming only what was not given (``rate``: the engineer
    rate too, asked with the volume); None where the KB's ask says it all (nothing given)."""
    settings = inputs.settings
    model = inputs.assessment.plan is None
    volume = settings.tokens_per_month is None and settings.gpu_hours_per_month is None
    if volume and model:
        return None
    if not volume and settings.tokens_per_month is None and settings.current_gpu is None:
        return CURRENT_GPU_ASK  # GPU-hours, but on which GPU
    if not volume:
        return MODEL_ASK if model else None
    rate = rate and settings.engineer_usd_per_hour is None
    keys = " and ".join([VOLUME_ASK] + (["`engineer_usd_per_hour`"] if rate else []))
    return f"tell gpuport {keys} in [tool.gpuport.decision]"


def _rocm_cheaper(factor: DecisionFactor, inputs: _Inputs) -> _Decided:
    economics = inputs.economics
    if economics is None or economics.monthly_saving_usd is None:
        return _Decided(FactorState.UNKNOWN, ask=_economics_ask(inputs, rate=True))
    saving = economics.monthly_saving_usd
    lines = _economics_lines(economics)
    if saving <= 0:
        more = f": it costs {_money(-saving)}/month more" if saving < 0 else ""
        return _Decided(FactorState.NO, (f"AMD saves nothing{more}", *lines))
    payback = economics.payback_months
    if payback is not None and payback[1] > PAYBACK_MONTHS:
        lines.insert(
            0, f"saves {_money(saving)}/month, but pays back after {PAYBACK_MONTHS:g} months"
        )
        return _Decided(FactorState.NO, tuple(lines))
    lines.insert(0, f"saves {_money(saving)}/month")
    if payback is None:
        lines.append("payback unknown: tell gpuport `engineer_usd_per_hour`")
    return _Decided(FactorState.YES, (*lines, *economics.sensitivity))


def _cuda_cheaper(factor: DecisionFactor, inputs: _Inputs) -> _Decided:
    economics = inputs.economics
    if economics is None or economics.monthly_saving_usd is None:
        return _Decided(FactorState.UNKNOWN, ask=_economics_ask(inputs, rate=False))
    saving = economics.monthly_saving_usd
    state = FactorState.YES if saving < 0 else FactorState.NO
    said = f"costs {_money(-saving)}/month more" if saving < 0 else f"saves {_money(saving)}/month"
    return _Decided(state, (f"AMD {said}", *_economics_lines(economics)))


def _current_gpus(factor: DecisionFactor, inputs: _Inputs) -> _Decided:
    settings = inputs.settings
    lines = []
    if settings.current_gpu is not None:
        count = f"{settings.current_gpu_count} x " if settings.current_gpu_count else ""
        lines.append(f"current_gpu = {count}{settings.current_gpu} ({settings.source})")
    for target, places in inputs.found.current_gpus.items():
        names = gpus_for_sm(target) if target.startswith("sm_") else []
        label = f"{target} ({', '.join(names)})" if names else target
        lines.append(f"{label}: {places[0]}")
    if not lines:
        return _Decided(FactorState.UNKNOWN)
    if len(lines) > MAX_TARGETS:
        lines[MAX_TARGETS:] = [f"and {len(lines) - MAX_TARGETS} more"]
    return _Decided(FactorState.YES, tuple(lines))


DECIDERS: dict[str, Callable[[DecisionFactor, _Inputs], _Decided]] = {
    "cuda-only-serving-stack": _serving_stack,
    "custom-cuda-kernels": _custom_kernels,
    "flash-attention-3": _plain_dependency,
    "tensorflow-main-framework": _tensorflow,
    "pytorch-vllm-stack": _vllm_stack,
    "training-workload": _training,
    "latency-critical-serving": _latency_critical,
    "throughput-serving": _throughput,
    "fits-one-large-gpu": _fits_one_large_gpu,
    "memory-bandwidth-bound": _bandwidth_bound,
    "partial-support-libraries": _partial_libraries,
    "unsupported-consumer-amd-gpu": _consumer_amd,
    "no-rocm-experience": _setting_choice("rocm_experience", frozenset({"none"})),
    "regulated-revalidation": _setting_choice("regulated", frozenset({True})),
    "broad-cloud-choice": _cloud,
    "rocm-cheaper": _rocm_cheaper,
    "cuda-cheaper": _cuda_cheaper,
    "current-gpus": _current_gpus,
}


# --- the outcome ------------------------------------------------------------------------------


def _order(results: list[FactorResult]) -> tuple[FactorResult, ...]:
    """Decisive factors that hold first, then those that hold by weight, then the rest."""
    rank = {FactorState.YES: 0, FactorState.NO: 1, FactorState.UNKNOWN: 2}

    def key(r: FactorResult) -> tuple[int, int, float]:
        return (0 if r.decisive and r.state is FactorState.YES else 1, rank[r.state], -r.weight)

    return tuple(sorted(results, key=key))


def _holding(results: list[FactorResult], direction: Direction) -> list[FactorResult]:
    held = [r for r in results if r.state is FactorState.YES and r.direction is direction]
    return sorted(held, key=lambda r: -r.weight)


def _movable_part(inputs: _Inputs, decisive: list[FactorResult]) -> tuple[str, ...]:
    """Top-level folders with another workload that the decisive evidence does not reach.

    The CUDA-only evidence must sit in named folders (a dependency of the whole project, at
    its root, keeps all of it on CUDA); the other workload is training code or a vLLM/SGLang
    service in a folder of its own.
    """
    factors = decision_factors()
    blocked: set[str] = set()
    for result in decisive:
        places = _dependency_factor(factors[result.factor_id], inputs)
        kept, _ = _outside_rocm_build(places, inputs)
        blocked.update(p.top for p in kept)
    if not blocked or "" in blocked:
        return ()
    found = inputs.found
    training = factors["training-workload"]
    vllm = factors["pytorch-vllm-stack"]
    other = (
        found.imported(training.imports)
        + found.markers.get(training.id, [])
        + _dependency_factor(vllm, inputs)
    )
    return tuple(sorted({p.top for p in other if p.top and p.top not in blocked}))


def _asked_input(ask: str) -> str:
    """The setting ``ask`` is about: its first backticked key, else its first flag as a key
    (``--model``: ``model``), else itself."""
    key = _ASKED_KEY.search(ask)
    if key is not None:
        return key.group(1)
    flag = _ASKED_FLAG.search(ask)
    return flag.group(0).removeprefix("--").replace("-", "_") if flag is not None else ask


def merge_asks(unknown: list[FactorResult]) -> tuple[MissingInput, ...]:
    """One item per setting the unknown factors ask for, heaviest first.

    Factors whose asks start from the same setting (rocm-cheaper and cuda-cheaper both ask for
    the volume; latency-critical-serving and throughput-serving for `batch`) share one item
    that names them all, worded as the heaviest one's ask, the fullest of them in the KB.
    """
    groups: dict[str, list[FactorResult]] = {}
    for result in sorted(unknown, key=lambda r: -r.weight):
        if result.ask:
            groups.setdefault(_asked_input(result.ask), []).append(result)
    return tuple(
        MissingInput(tuple(r.factor_id for r in group), group[0].ask) for group in groups.values()
    )


def _recommend(inputs: _Inputs, results: list[FactorResult]) -> Recommendation:
    ordered = _order(results)
    settings, economics = inputs.settings, inputs.economics
    weighted = [r for r in results if r.weight > 0]
    total = sum(r.weight for r in weighted)
    unknown = [r for r in weighted if r.state is FactorState.UNKNOWN]
    missing = tuple(dict.fromkeys(r.ask for r in sorted(unknown, key=lambda r: -r.weight) if r.ask))
    asks = merge_asks(unknown)
    for_cuda = _holding(results, Direction.CUDA)
    for_rocm = _holding(results, Direction.ROCM)
    cuda_weight = sum(r.weight for r in for_cuda)
    rocm_weight = sum(r.weight for r in for_rocm)
    verdict = inputs.assessment.verdict
    decisive = [r for r in for_cuda if r.decisive]

    def build(outcome: Outcome, headline: str, deciding: list[FactorResult]) -> Recommendation:
        return Recommendation(
            outcome=outcome,
            headline=headline,
            decisive=tuple(deciding),
            factors=ordered,
            economics=economics,
            missing=missing,
            settings=settings,
            asks=asks,
        )

    if verdict is Verdict.NOTHING_TO_ASSESS:
        return build(
            Outcome.UNKNOWN,
            "Not enough evidence: gpuport found no file it reads here",
            [],
        )
    if decisive:
        first = decisive[0]
        shown = first.evidence[0] if first.evidence else first.factor_id
        part = _movable_part(inputs, decisive)
        if part:
            folders = ", ".join(f"{p}/" for p in part)
            return build(
                Outcome.PARTIAL,
                f"Move part: {folders} can move to ROCm; {shown} ({first.factor_id}) keeps the "
                "rest on CUDA",
                decisive,
            )
        return build(
            Outcome.STAY,
            f"Stay on CUDA: {shown} ({first.factor_id}) has no ROCm counterpart",
            decisive + [r for r in for_cuda if not r.decisive][:2],
        )
    if total and sum(r.weight for r in unknown) / total > UNKNOWN_SHARE:
        ask = asks[0].ask if asks else "the settings of [tool.gpuport.decision]"
        return build(
            Outcome.UNKNOWN,
            f"Not enough evidence: {len(unknown)} of {len(weighted)} factors are unknown; {ask}",
            [],
        )
    cheaper = next((r for r in for_rocm if r.factor_id == "rocm-cheaper"), None)
    dearer = next((r for r in for_cuda if r.factor_id == "cuda-cheaper"), None)
    if cheaper is not None and verdict in READY and rocm_weight > cuda_weight:
        return build(
            Outcome.MOVE,
            f"Move: {cheaper.evidence[0]}, readiness {verdict.value}, and the factors for ROCm "
            f"({rocm_weight:.1f}) outweigh those for CUDA ({cuda_weight:.1f})",
            for_rocm,
        )
    if dearer is not None and cuda_weight >= rocm_weight:
        return build(
            Outcome.STAY,
            f"Stay on CUDA: {dearer.evidence[0]}, and nothing outweighs it",
            for_cuda,
        )
    why = []
    if cheaper is None:
        why.append("no proven saving on AMD")
    if verdict not in READY:
        why.append(f"readiness {verdict.value}")
    if cuda_weight >= rocm_weight:
        verb = "outweigh" if cuda_weight > rocm_weight else "match"
        why.append(
            f"factors for CUDA ({cuda_weight:.1f}) {verb} those for ROCm ({rocm_weight:.1f})"
        )
    reason = "; ".join(why) or "the evidence is mixed"
    return build(Outcome.PILOT, f"Pilot first: {reason}", (for_rocm + for_cuda)[:4])
