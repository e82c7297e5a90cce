"""``gpuport doctor``: diagnose this machine's GPU software stack and print the exact fix.

Exit 0 when no problem was found (warnings and checks that could not run allowed), 1 when one
was, 2 when the doctor could not run at all (a ``--root`` that is not a folder).
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from gpuport.cli.common import (
    CommandError,
    ExitCode,
    format_options,
    handle_errors,
    render_options,
)
from gpuport.cli.ui import emit, say
from gpuport.doctor import DoctorReport, SystemView, diagnose, subprocess_runner
from gpuport.doctor.system import DEFAULT_TIMEOUT_S
from gpuport.report import Format, render

# For tests and for diagnosing a machine image mounted elsewhere: the folder that stands for "/".
ROOT_ENV = "GPUPORT_DOCTOR_ROOT"


@click.command("doctor")
@click.option(
    "--import-torch",
    is_flag=True,
    help="Also import torch (in a child process) and ask it what it sees: its HIP/CUDA version, "
    "the GPU targets it was built for and the devices. Off by default: importing torch is slow "
    "and can hang on a broken driver.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(0.1, 600),
    default=DEFAULT_TIMEOUT_S,
    show_default=True,
    help="Seconds each vendor tool (rocminfo, amd-smi, rocm-smi, nvidia-smi) and the torch import may take.",
)
@click.option(
    "--root",
    type=click.Path(path_type=Path),
    envvar=ROOT_ENV,
    hidden=True,
    help=f"Read sysfs, procfs and /dev under this folder instead of / (also ${ROOT_ENV}).",
)
@format_options(DoctorReport)
@handle_errors
def doctor(
    import_torch: bool,
    timeout: float,
    root: Path | None,
    fmt: str,
    output: Path | None,
) -> None:
    """Diagnose this machine's GPU software stack: what is wrong and the command that fixes it.

    Reads the GPUs, drivers and device nodes from sysfs, procfs and /dev, runs rocminfo,
    amd-smi, rocm-smi and nvidia-smi where installed (each with a time-out), and reads the Python
    packages' metadata without importing them. Checks the PyTorch build against the GPU vendor,
    the GPU against ROCm's supported list and the wheel's targets, HSA_OVERRIDE_GFX_VERSION,
    the NVIDIA driver against torch's CUDA, permissions, visible-devices variables and
    containers without device nodes. Exit 0 healthy, 1 problems found, 2 could not run.
    """
    base = root if root is not None else Path("/")
    if not base.is_dir():
        raise CommandError(f"{base}: not a folder to read the machine from")
    view = SystemView(root=base, runner=subprocess_runner(dict(os.environ)), timeout_s=timeout)
    report = diagnose(view, import_torch=import_torch)
    chosen = Format(fmt)
    emit(render(report, chosen, render_options(chosen, output)), output)
    if chosen is not Format.TERMINAL or output is not None:
        say(f"doctor: {report.verdict}")
    if not report.healthy:
        raise SystemExit(ExitCode.FINDINGS)
