"""A hand-made ``verify compare`` result for the report goldens: every status, a model-like case
whose fourth output drifts, an overridden tolerance and hostile text from the reference file."""

from __future__ import annotations

from report_samples import IMG, MD_LINK, SCRIPT

from gpuport.machine import MachineDescription
from gpuport.verify.result import (
    CaseComparison,
    CaseStatus,
    Closer,
    OutputComparison,
    Tolerance,
    VerifyComparison,
)


def _machine(accelerator: str, name: str, arch: str, host: str) -> MachineDescription:
    return MachineDescription(
        hostname=host,
        os="Linux-6.8.0-x86_64",
        python="3.12.3",
        cpu="AMD EPYC 9654",
        cpu_count=192,
        memory_bytes=1_584_000_000_000,
        accelerator=accelerator,
        device_name=name,
        device_arch=arch,
        device_memory_bytes=80_000_000_000,
        device_count=8,
        driver="nvidia 550.54.15" if accelerator == "cuda" else "amdgpu 6.10.5",
        torch="2.13.0+cu128" if accelerator == "cuda" else "2.13.0+rocm7.2",
        cuda="12.8" if accelerator == "cuda" else None,
        hip=None if accelerator == "cuda" else "7.2.26015",
        gpuport="0.9.0",
        gpuport_revision=None,
    )


def _output(
    name: str, passed: bool = True, scale: float = 1.0, **changes: object
) -> OutputComparison:
    values: dict[str, object] = {
        "name": name,
        "dtype": "float32",
        "shape": (64, 64),
        "max_abs": 0.0 if passed and scale == 0 else 2.4e-6 * scale,
        "max_rel": 3.1e-6 * scale,
        "out_of_tolerance": 0.0 if passed else 0.125,
        "atol_needed": 1.2e-6 * scale,
        "rtol_needed": 0.0 if passed else 4.4e-3,
        "passed": passed,
        "recorded_error": 1.9e-6,
        "here_error": 1.9e-6 if passed else 3.3e-3,
        "closer": Closer.TIE if passed else Closer.RECORDED,
    }
    values.update(changes)
    return OutputComparison(**values)  # type: ignore[arg-type]


def sample_verify() -> VerifyComparison:
    layers = (
        _output("embed", scale=0),
        _output("blocks.0.attn"),
        _output("blocks.0.mlp", passed=False, scale=900),
        _output("blocks.1.attn", passed=False, scale=2000),
        _output(f"head {SCRIPT}", passed=False, scale=5000),
        _output("(output)", passed=False, scale=float("inf"), max_rel=float("inf")),
    )
    return VerifyComparison(
        file="ref.gpv",
        kind="suite",
        model=None,
        recorded=_machine("cuda", "NVIDIA H100 80GB HBM3", "sm_90", "cuda-box"),
        here=_machine("rocm", "AMD Instinct MI300X", "gfx942", f"rocm-box {IMG}"),
        device="cuda",
        tolerances=(
            Tolerance("bfloat16", 2e-2, 1e-3, overridden=True),
            Tolerance("float32", 1.3e-6, 1e-5),
        ),
        notes=(
            "recorded: TF32 allowed for fp32 convolutions (torch.backends.cudnn.allow_tf32, on "
            "by default): expect conv2d[fp32] to differ beyond fp32's tolerance",
        ),
        cases=(
            CaseComparison("matmul[fp32]", CaseStatus.PASS, (_output("out"),)),
            CaseComparison(
                "matmul[bf16]",
                CaseStatus.PASS,
                (
                    _output(
                        "out",
                        dtype="bfloat16",
                        max_abs=0.0625,
                        max_rel=7.8e-3,
                        recorded_error=0.031,
                        here_error=0.027,
                        closer=Closer.HERE,
                    ),
                ),
            ),
            CaseComparison("conv2d[fp32]", CaseStatus.FAIL, (_output("out", False, 40),)),
            CaseComparison(
                "scatter_add[fp32]",
                CaseStatus.PASS,
                (_output("out"),),
                note="non-deterministic on GPUs (atomic adds in any order)",
                nondeterministic=True,
            ),
            CaseComparison("transformer_block[fp32]", CaseStatus.FAIL, layers),
            CaseComparison(
                "sdpa[cudnn,bf16]",
                CaseStatus.SKIPPED,
                note="not available here: the CUDNN_ATTENTION SDPA backend does not take these "
                "inputs on cuda",
            ),
            CaseComparison("rms_norm[fp32]", CaseStatus.SKIPPED, note="out of memory on cuda"),
            CaseComparison(
                f"evil {MD_LINK}",
                CaseStatus.ERROR,
                note=f"tensor a is (8, 16) float32 in the file but this case makes it {SCRIPT}",
            ),
        ),
    )
