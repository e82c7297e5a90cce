"""``gpuport verify record`` / ``compare``: the same numbers on the other vendor's GPU?

``verify serve`` (two served models) lives in :mod:`gpuport.cli.serve` and is added to this
group by :mod:`gpuport.cli`. Torch is imported only inside the commands, so ``gpuport`` itself
starts without it; without it the commands say how to install it and exit 2.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

import click

from gpuport.cli.common import (
    CommandError,
    ExitCode,
    format_options,
    handle_errors,
    render_options,
)
from gpuport.cli.ui import emit, say
from gpuport.report import Format, render
from gpuport.verify import TORCH_PIN
from gpuport.verify.result import CaseStatus, VerifyComparison

F = TypeVar("F", bound=Callable[..., Any])


def store_options(function: F) -> F:
    """``--store`` and ``--db``: save a comparison (verify compare, verify serve) in bench's
    results store as a run of kind verify."""
    function = click.option(
        "--db",
        type=click.Path(dir_okay=False, path_type=Path),
        help="Results store to save into (implies --store; default: "
        "$XDG_DATA_HOME/gpuport/results.sqlite).",
    )(function)
    return click.option(
        "--store",
        "store",
        is_flag=True,
        help="Also save the comparison in the results store as a run of kind verify "
        "(gpuport bench list shows it).",
    )(function)


INSTALL_HINT = f"pip install torch=={TORCH_PIN} && pip install 'gpuport[bench]'"
MODEL_HELP = (
    "Verify your own model instead of the op suite: package.module:factory, a callable that "
    "returns (nn.Module, example inputs). This imports and runs your module's code (looked up "
    "from the current folder first), the one place gpuport does so. Every layer's output is "
    "recorded, so a failure names the first layer that drifts."
)


def _torch() -> ModuleType:
    """Import torch (and safetensors), or stop with how to install them."""
    try:
        import safetensors  # noqa: F401
        import torch
    except ImportError as exc:
        raise CommandError(
            f"gpuport verify needs PyTorch and safetensors ({exc.name or 'torch'} is not "
            f"installed): {INSTALL_HINT}"
        ) from None
    return torch


def _device_option(function: click.decorators.FC) -> click.decorators.FC:
    return click.option(
        "--device",
        type=click.Choice(("auto", "cpu", "cuda")),
        default="auto",
        show_default=True,
        help="Where to compute: auto takes the GPU when torch sees one (cuda also means ROCm).",
    )(function)


@click.group("verify")
def verify() -> None:
    """Prove the numbers are the same on another machine before moving traffic.

    Record reference outputs on one machine (gpuport verify record -o ref.gpv), copy the one
    file, and compare on the other (gpuport verify compare ref.gpv).
    """


@verify.command("record")
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The reference file to write (safetensors with JSON metadata; .gpv by convention).",
)
@_device_option
@click.option(
    "--size",
    type=click.Choice(("tiny", "small", "default")),
    default="default",
    show_default=True,
    help="How big the suite's tensors are.",
)
@click.option("--seed", type=click.IntRange(0, 2**31 - 1), default=0, show_default=True)
@click.option(
    "--case",
    "cases",
    multiple=True,
    metavar="NAME",
    help="Only cases whose name starts with NAME (matmul, sdpa[flash); repeatable.",
)
@click.option("--model", "model", metavar="package.module:factory", help=MODEL_HELP)
@handle_errors
def record(
    output: Path, device: str, size: str, seed: int, cases: tuple[str, ...], model: str | None
) -> None:
    """Run the op suite (or --model) here and write inputs, outputs and fp64 references."""
    torch = _torch()
    from gpuport.verify.fileformat import write_reference
    from gpuport.verify.models import ModelError
    from gpuport.verify.run import VerifyError, record_model, record_suite, resolve_device

    try:
        chosen = resolve_device(device)
        if model is not None:
            if cases:
                raise CommandError("--case picks cases of the op suite: leave it out with --model")
            done = record_model(model, chosen)
        else:
            done = record_suite(chosen, size, seed, cases)
    except (VerifyError, ModelError) as exc:
        raise CommandError(str(exc)) from None
    write_reference(output, done.recording)
    recorded = sum(1 for c in done.recording.cases if c.status == "recorded")
    machine = done.recording.machine
    say(
        f"recorded {recorded} case{'s' if recorded != 1 else ''} on {chosen} "
        f"({machine.label}, torch {torch.__version__}) into {output}"
    )
    for name, why in done.skipped:
        say(f"skipped {name}: {why}")
    if recorded == 0:
        raise CommandError("no case could be recorded here")


def _exit_code(result: VerifyComparison) -> ExitCode:
    if result.count(CaseStatus.ERROR):
        return ExitCode.ERROR
    if result.count(CaseStatus.FAIL):
        return ExitCode.FINDINGS
    if not result.count(CaseStatus.PASS):
        return ExitCode.ERROR  # nothing was compared
    return ExitCode.CLEAN


@verify.command("compare")
@click.argument("reference", type=click.Path(dir_okay=False, path_type=Path))
@_device_option
@click.option(
    "--tolerance",
    "tolerances",
    multiple=True,
    metavar="DTYPE=RTOL,ATOL",
    help="Override assert_close's default for a dtype, relative tolerance first (the order "
    "assert_close and allclose take them): --tolerance bf16=2e-2,1e-3 is rtol 2e-2, atol 1e-3. "
    "Or name them: bf16=atol=1e-3 (the other keeps its default). Repeatable; fp16, bf16, fp32, "
    "fp64.",
)
@click.option("--model", "model", metavar="package.module:factory", help=MODEL_HELP)
@store_options
@format_options(VerifyComparison)
@handle_errors
def compare(
    reference: Path,
    device: str,
    tolerances: tuple[str, ...],
    model: str | None,
    store: bool,
    db: Path | None,
    fmt: str,
    output: Path | None,
) -> None:
    """Rerun the cases recorded in REFERENCE here and say how far apart the outputs are.

    Per case: max absolute and relative error, the share of elements out of tolerance, the
    smallest atol and rtol that would pass, pass/fail by torch.testing.assert_close's per-dtype
    defaults, and which machine is closer to the fp64 CPU reference. Exit 0 when every case
    passes, 1 when one fails, 2 on an error.
    """
    import sys

    _torch()
    from gpuport.verify.fileformat import ReferenceFileError, read_reference
    from gpuport.verify.models import ModelError
    from gpuport.verify.run import VerifyError, resolve_device
    from gpuport.verify.run import compare as compare_here
    from gpuport.verify.tolerances import ToleranceError, parse_tolerances

    try:
        overrides = parse_tolerances(tolerances)
        chosen = resolve_device(device)
        recording = read_reference(reference)
        result = compare_here(recording, str(reference), chosen, overrides, model)
    except (ReferenceFileError, VerifyError, ModelError, ToleranceError) as exc:
        raise CommandError(str(exc)) from None
    chosen_format = Format(fmt)
    emit(render(result, chosen_format, render_options(chosen_format, output)), output)
    passed, failed = result.count(CaseStatus.PASS), result.count(CaseStatus.FAIL)
    skipped, errors = result.count(CaseStatus.SKIPPED), result.count(CaseStatus.ERROR)
    say(
        f"{len(result.cases)} case{'s' if len(result.cases) != 1 else ''}: {passed} pass, {failed} fail, {skipped} skipped"
        + (f", {errors} error{'s' if errors != 1 else ''}" if errors else "")
        + f" (recorded on {result.recorded.label}, compared on {result.here.label})"
    )
    for case in result.cases:
        if case.status is CaseStatus.ERROR:
            say(f"error: {case.name}: {case.note}")
        elif case.status is CaseStatus.FAIL and case.first_failure and len(case.outputs) > 1:
            say(f"{case.name}: first output out of tolerance: {case.first_failure.name}")
    if store or db is not None:
        from gpuport.bench.store import StoreError
        from gpuport.verify.storing import store_comparison

        try:
            run_id, where = store_comparison(result, db)
        except StoreError as exc:
            raise CommandError(str(exc)) from None
        say(f"stored run {run_id} (kind verify) in {where}")
    code = _exit_code(result)
    if code is ExitCode.ERROR and not errors:
        say("error: no case could be compared here")
    sys.exit(code)
