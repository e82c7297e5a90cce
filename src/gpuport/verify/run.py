"""Record the suite (or a model) here, and compare a recording with a rerun here.

Imports torch: the ``verify`` command imports this module only after checking torch is there.
A case that cannot run here (an op this torch lacks, an SDPA backend this device lacks, out of
memory) is skipped with the reason and the rest go on; a case whose recorded tensors do not fit
what the case computes is an error naming the case and the tensor.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from gpuport.machine import describe_machine
from gpuport.verify.cases import SIZES, SUITE, Case, make_case_inputs
from gpuport.verify.fileformat import (
    RecordedCase,
    Recording,
    TensorSpec,
    dtype_name,
)
from gpuport.verify.metrics import compare_output
from gpuport.verify.models import (
    MODEL_CASE,
    ModelError,
    build_model,
    load_weights,
    reference_model,
    run_model,
)
from gpuport.verify.result import CaseComparison, CaseStatus, VerifyComparison
from gpuport.verify.tolerances import DEFAULT_TOLERANCES, tolerance_for

DEVICES = ("auto", "cpu", "cuda")
# Words in the errors torch raises for an operation or backend that this build or device lacks.
_UNSUPPORTED = (
    "not implemented for",
    "no viable backend",
    "not supported",
    "no kernel image",
    "invalid device function",
    "hipErrorNoBinaryForGpu",
)


class VerifyError(ValueError):
    """A usage problem (a device that is not there): one sentence."""


class CaseSkipped(Exception):
    """The case cannot run here; the message says why."""


class CaseBroken(Exception):
    """The case failed in a way that is not "unsupported here"; the message says how."""


def resolve_device(choice: str) -> str:
    if choice == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if choice == "cuda" and not torch.cuda.is_available():
        build = "ROCm" if getattr(torch.version, "hip", None) else "CUDA"
        if not (torch.version.cuda or getattr(torch.version, "hip", None)):
            build = "the CPU only"
        raise VerifyError(
            f"--device cuda: torch {torch.__version__} (built for {build}) sees no GPU here"
        )
    return choice


def settings() -> dict[str, Any]:
    """The numerics switches that change results between machines (TF32 above all)."""
    return {
        "allow_tf32_matmul": bool(torch.backends.cuda.matmul.allow_tf32),
        "allow_tf32_cudnn": bool(torch.backends.cudnn.allow_tf32),
        "float32_matmul_precision": torch.get_float32_matmul_precision(),
        "deterministic_algorithms": bool(torch.are_deterministic_algorithms_enabled()),
    }


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def execute(
    run: Callable[[Mapping[str, Tensor]], dict[str, Tensor]],
    inputs: Mapping[str, Tensor],
    device: str,
) -> dict[str, Tensor]:
    """Run a case on ``device`` and bring its outputs back to the CPU."""
    try:
        with torch.no_grad():
            outputs = run({name: t.to(device) for name, t in inputs.items()})
            if device != "cpu":
                torch.cuda.synchronize()
            return {name: t.detach().to("cpu") for name, t in outputs.items()}
    except (torch.OutOfMemoryError, MemoryError):
        if device != "cpu":
            with contextlib.suppress(Exception):
                torch.cuda.empty_cache()
        raise CaseSkipped(f"out of memory on {device}") from None
    except NotImplementedError as exc:
        raise CaseSkipped(f"not available here: {_first_line(exc)}") from None
    except (RuntimeError, ValueError, TypeError, AttributeError) as exc:
        message = _first_line(exc)
        if any(word.lower() in message.lower() for word in _UNSUPPORTED):
            raise CaseSkipped(f"not available here: {message}") from None
        raise CaseBroken(message) from None


def as_float64(inputs: Mapping[str, Tensor]) -> dict[str, Tensor]:
    return {n: t.double() if t.is_floating_point() else t for n, t in inputs.items()}


def _specs(prefix: str, tensors: Mapping[str, Tensor]) -> tuple[TensorSpec, ...]:
    return tuple(
        TensorSpec(f"{prefix}{n}", dtype_name(t), tuple(t.shape)) for n, t in tensors.items()
    )


def _selected(only: Iterable[str]) -> list[Case]:
    wanted = [w for w in only if w]
    cases = [c for c in SUITE.values() if not wanted or any(c.name.startswith(w) for w in wanted)]
    if not cases:
        raise VerifyError("--case matches no case of the suite: " + ", ".join(wanted))
    return cases


@dataclass(frozen=True, slots=True)
class Recorded:
    """A recording and what happened while making it."""

    recording: Recording
    skipped: tuple[tuple[str, str], ...]  # (case, why)


def _skipped(name: str, dtype: str, why: str, nondet: str = "") -> RecordedCase:
    return RecordedCase(name, dtype, "skipped", why, bool(nondet), (), ())


def record_suite(device: str, size: str, seed: int, only: Iterable[str] = ()) -> Recorded:
    if size not in SIZES:
        raise VerifyError(f"--size {size!r}: one of " + ", ".join(SIZES))
    tensors: dict[str, Tensor] = {}
    cases: list[RecordedCase] = []
    for case in _selected(only):
        why = case.unavailable(device) if case.unavailable else None
        if why:
            cases.append(_skipped(case.name, case.dtype_name, why))
            continue
        inputs = make_case_inputs(case, seed, size)
        try:
            outputs = execute(case.run, inputs, device)
            reference = execute(case.reference or case.run, as_float64(inputs), "cpu")
        except (CaseSkipped, CaseBroken) as exc:
            cases.append(_skipped(case.name, case.dtype_name, str(exc)))
            continue
        for kind, group in (("in", inputs), ("out", outputs), ("ref", reference)):
            for name, tensor in group.items():
                tensors[f"{case.name}/{kind}/{name}"] = tensor
        cases.append(
            RecordedCase(
                case.name,
                case.dtype_name,
                "recorded",
                case.nondeterministic,
                bool(case.nondeterministic),
                _specs("", inputs),
                _specs("", outputs),
            )
        )
    return _finish("suite", None, size, seed, device, cases, tensors)


def _finish(
    kind: str,
    model: str | None,
    size: str,
    seed: int,
    device: str,
    cases: list[RecordedCase],
    tensors: dict[str, Tensor],
) -> Recorded:
    recording = Recording(
        kind=kind,
        model=model,
        size=size,
        seed=seed,
        device=device,
        machine=describe_machine(torch),
        tolerances=DEFAULT_TOLERANCES,
        cases=tuple(cases),
        tensors=tensors,
        settings=settings(),
    )
    skipped = tuple((c.name, c.note) for c in cases if c.status == "skipped")
    return Recorded(recording, skipped)


def _model_outputs(
    spec: str, module: torch.nn.Module, inputs: tuple[Tensor, ...], device: str
) -> dict[str, Tensor]:
    try:
        return run_model(module, inputs, device)
    except (torch.OutOfMemoryError, MemoryError):
        raise ModelError(f"--model {spec}: out of memory on {device}") from None
    except Exception as exc:  # the user's forward() may raise anything
        raise ModelError(f"--model {spec}: the forward pass raised {_first_line(exc)}") from None


def record_model(spec: str, device: str) -> Recorded:
    module, inputs = build_model(spec)
    weights = {k: v.detach().cpu().clone() for k, v in module.state_dict().items()}
    reference = _model_outputs(
        spec,
        reference_model(module),
        tuple(as_float64(dict(enumerate_inputs(inputs))).values()),
        "cpu",
    )
    outputs = _model_outputs(spec, module, inputs, device)
    tensors: dict[str, Tensor] = {}
    for name, tensor in enumerate_inputs(inputs):
        tensors[f"{MODEL_CASE}/in/{name}"] = tensor
    for name, tensor in weights.items():
        tensors[f"{MODEL_CASE}/param/{name}"] = tensor
    kept = {name: t for name, t in outputs.items() if name in reference}
    for name, tensor in kept.items():
        tensors[f"{MODEL_CASE}/out/{name}"] = tensor
        tensors[f"{MODEL_CASE}/ref/{name}"] = reference[name]
    first = next(iter(kept.values()), None)
    case = RecordedCase(
        MODEL_CASE,
        dtype_name(first) if first is not None else "float32",
        "recorded",
        "",
        False,
        _specs("", dict(enumerate_inputs(inputs))),
        _specs("", kept),
        _specs("", weights),
    )
    return _finish("model", spec, "model", 0, device, [case], tensors)


def enumerate_inputs(inputs: tuple[Tensor, ...]) -> list[tuple[str, Tensor]]:
    return [(str(i), t) for i, t in enumerate(inputs)]


# --- compare ---------------------------------------------------------------------------------


class _BadCase(Exception):
    pass


def _recorded(recording: Recording, case: RecordedCase, kind: str, spec: TensorSpec) -> Tensor:
    key = f"{case.name}/{kind}/{spec.name}"
    tensor = recording.tensors.get(key)
    if tensor is None:
        raise _BadCase(f"tensor {key} is listed but not in the file")
    # The fp64 reference of a floating-point output is float64; other outputs keep their type.
    dtype = spec.dtype
    if kind == "ref" and spec.dtype in ("float16", "bfloat16", "float32", "float64"):
        dtype = "float64"
    if tuple(tensor.shape) != spec.shape or dtype_name(tensor) != dtype:
        raise _BadCase(
            f"tensor {key} is {tuple(tensor.shape)} {dtype_name(tensor)} but the metadata says "
            f"{spec.shape} {dtype}"
        )
    return tensor


def _check_like(key: str, got: Tensor, want: Tensor, what: str) -> None:
    if tuple(got.shape) != tuple(want.shape) or got.dtype != want.dtype:
        raise _BadCase(
            f"{key} is {tuple(got.shape)} {dtype_name(got)} in the file but {what} "
            f"{tuple(want.shape)} {dtype_name(want)}"
        )


def _outputs_comparison(
    recording: Recording,
    case: RecordedCase,
    here: Mapping[str, Tensor],
    overrides: Mapping[str, tuple[float, float]],
    note: str,
    nondet: bool,
) -> CaseComparison:
    if not case.outputs:
        raise _BadCase("no outputs are recorded")
    listed = [spec.name for spec in case.outputs]
    if set(listed) != set(here):
        missing = sorted(set(listed) - set(here))
        extra = sorted(set(here) - set(listed))
        parts = ([f"recorded, not computed here: {', '.join(missing[:5])}"] if missing else []) + (
            [f"computed here, not recorded: {', '.join(extra[:5])}"] if extra else []
        )
        raise _BadCase("its outputs differ (" + "; ".join(parts) + ")")
    results = []
    for spec in case.outputs:
        recorded = _recorded(recording, case, "out", spec)
        reference = _recorded(recording, case, "ref", spec)
        mine = here[spec.name]
        _check_like(f"output {spec.name}", recorded, mine, "here it is")
        if tuple(reference.shape) != tuple(recorded.shape):
            raise _BadCase(f"the reference of {spec.name} does not have its output's shape")
        tolerance = tolerance_for(spec.dtype, overrides)
        results.append(compare_output(spec.name, mine, recorded, reference, tolerance))
    status = CaseStatus.PASS if all(r.passed for r in results) else CaseStatus.FAIL
    return CaseComparison(case.name, status, tuple(results), note, nondet)


def _compare_suite_case(
    recording: Recording,
    case: RecordedCase,
    device: str,
    overrides: Mapping[str, tuple[float, float]],
) -> CaseComparison:
    known = SUITE.get(case.name)
    if known is None:
        return CaseComparison(
            case.name, CaseStatus.SKIPPED, note="not a case of this gpuport's suite"
        )
    nondet = bool(known.nondeterministic)
    why = known.unavailable(device) if known.unavailable else None
    if why:
        return CaseComparison(case.name, CaseStatus.SKIPPED, note=why, nondeterministic=nondet)
    if recording.size not in SIZES:
        raise _BadCase(f"unknown size {recording.size!r}")
    expected = make_case_inputs(known, recording.seed, recording.size)
    if [s.name for s in case.inputs] != list(expected):
        raise _BadCase(
            "its inputs are "
            + ", ".join(s.name for s in case.inputs)
            + " but this case takes "
            + ", ".join(expected)
        )
    inputs = {}
    for spec in case.inputs:
        tensor = _recorded(recording, case, "in", spec)
        _check_like(f"input {spec.name}", tensor, expected[spec.name], "this case makes it")
        inputs[spec.name] = tensor
    try:
        here = execute(known.run, inputs, device)
    except CaseSkipped as exc:
        return CaseComparison(case.name, CaseStatus.SKIPPED, note=str(exc), nondeterministic=nondet)
    except CaseBroken as exc:
        raise _BadCase(f"it failed here: {exc}") from None
    return _outputs_comparison(recording, case, here, overrides, known.nondeterministic, nondet)


def _compare_model_case(
    recording: Recording,
    case: RecordedCase,
    device: str,
    overrides: Mapping[str, tuple[float, float]],
    spec: str,
) -> CaseComparison:
    module, example = build_model(spec)
    weights = {p.name: _recorded(recording, case, "param", p) for p in case.params}
    load_weights(module, weights, spec)
    inputs = tuple(_recorded(recording, case, "in", s) for s in case.inputs)
    if len(inputs) != len(example):
        raise _BadCase(f"{len(inputs)} inputs recorded but the factory gives {len(example)}")
    for index, (got, want) in enumerate(zip(inputs, example, strict=True)):
        _check_like(f"input {index}", got, want, "the factory makes it")
    try:
        here = _model_outputs(spec, module, inputs, device)
    except ModelError as exc:
        if "out of memory" in str(exc):
            return CaseComparison(case.name, CaseStatus.SKIPPED, note=f"out of memory on {device}")
        raise
    return _outputs_comparison(recording, case, here, overrides, "", False)


def setting_notes(
    recorded: Mapping[str, Any], recorded_accelerator: str, here_accelerator: str
) -> tuple[str, ...]:
    """TF32 switched on for a side that ran on an NVIDIA GPU: it explains fp32 differences.

    TF32 keeps 10 of fp32's 23 mantissa bits in matrix products and convolutions
    (https://pytorch.org/docs/stable/notes/cuda.html#tensorfloat-32-tf32-on-ampere-and-later-devices,
    read 2026-11-25); PyTorch allows it for cuDNN convolutions by default. The switches do
    nothing on ROCm (kb/packages.toml, torch notes) or the CPU.
    """
    notes = []
    sides = (("recorded", recorded, recorded_accelerator), ("here", settings(), here_accelerator))
    for side, values, accelerator in sides:
        if accelerator != "cuda":
            continue
        if values.get("allow_tf32_cudnn") is True:
            notes.append(
                f"{side}: TF32 allowed for fp32 convolutions (torch.backends.cudnn.allow_tf32, on "
                "by default): expect conv2d[fp32] to differ beyond fp32's tolerance"
            )
        precision = values.get("float32_matmul_precision")
        if values.get("allow_tf32_matmul") is True or precision in ("high", "medium"):
            notes.append(
                f"{side}: TF32 allowed for fp32 matmuls (float32_matmul_precision "
                f"{precision!s}): expect fp32 matmuls to differ beyond fp32's tolerance"
            )
    return tuple(notes)


def compare(
    recording: Recording,
    shown: str,
    device: str,
    overrides: Mapping[str, tuple[float, float]],
    model: str | None = None,
) -> VerifyComparison:
    """Rerun every recorded case here and compare; ``model`` is required for a model file."""
    if recording.kind == "model":
        if model is None:
            raise VerifyError(
                f"{shown} records the model {recording.model}: pass --model {recording.model} "
                "(gpuport never imports code named by a file)"
            )
        if model != recording.model:
            raise VerifyError(f"{shown} records the model {recording.model}, not {model}")
    elif model is not None:
        raise VerifyError(f"{shown} records the op suite, not a model: leave out --model")
    results: list[CaseComparison] = []
    for case in recording.cases:
        if case.status == "skipped":
            results.append(
                CaseComparison(
                    case.name,
                    CaseStatus.SKIPPED,
                    note=f"skipped when recorded: {case.note}",
                    nondeterministic=case.nondeterministic,
                )
            )
            continue
        try:
            if recording.kind == "model":
                assert model is not None
                result = _compare_model_case(recording, case, device, overrides, model)
            else:
                result = _compare_suite_case(recording, case, device, overrides)
        except _BadCase as exc:
            result = CaseComparison(case.name, CaseStatus.ERROR, note=str(exc))
        results.append(result)
    dtypes = sorted({o.dtype for r in results for o in r.outputs})
    here = describe_machine(torch)
    return VerifyComparison(
        file=shown,
        kind=recording.kind,
        model=recording.model,
        recorded=recording.machine,
        here=here,
        device=device,
        tolerances=tuple(tolerance_for(d, overrides) for d in dtypes),
        cases=tuple(results),
        notes=setting_notes(
            recording.settings,
            recording.machine.accelerator if recording.device != "cpu" else "cpu",
            here.accelerator if device != "cpu" else "cpu",
        ),
    )
