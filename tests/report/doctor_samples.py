"""A hand-made ``gpuport doctor`` report for the golden files: one check of every status,
a fix over two lines, and tool text with a control character that must be shown escaped."""

from __future__ import annotations

from gpuport.doctor.model import Diagnosis, DoctorReport, GpuSeen, ProbeNote, Status


def sample_doctor() -> DoctorReport:
    return DoctorReport(
        vendor="amd",
        gpus=(
            GpuSeen("amd", "AMD Radeon RX 6700 XT", "gfx1031", 12 * 2**30, "kfd"),
            GpuSeen("amd", "Radeon \x1b[31mRX\x1b[0m", "gfx1031", None, "rocminfo"),
        ),
        driver="amdgpu 6.10.5",
        rocm="6.3.3",
        torch="2.7.1+rocm6.3",
        in_container="",
        diagnoses=(
            Diagnosis("gpu-present", "GPU present", Status.OK, "Found 2 x AMD Radeon RX 6700 XT."),
            Diagnosis(
                "torch-arch",
                "AMD GPU vs PyTorch's targets",
                Status.PROBLEM,
                "torch 2.7.1+rocm6.3 carries code for gfx1030, gfx1100; not for gfx1031.",
                "Every GPU kernel fails with 'HIP error: invalid device function'.",
                "export HSA_OVERRIDE_GFX_VERSION=10.3.0",
            ),
            Diagnosis(
                "permissions",
                "Permissions",
                Status.WARNING,
                "This user is not in the render group [bold]x[/bold].",
                "A login without a seat may not get the access this one has.",
                "sudo usermod -aG render,video $USER\n# then log out and back in",
            ),
            Diagnosis(
                "vendor-tools",
                "Vendor tools",
                Status.UNKNOWN,
                "rocminfo: did not answer within 10 s.",
            ),
        ),
        probes=(
            ProbeNote("KFD topology (/sys/class/kfd)", "2 GPU node(s): gfx1031"),
            ProbeNote("rocminfo", "did not answer within 10 s", ok=False),
        ),
    )
