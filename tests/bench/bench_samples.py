"""Hand-made machines and results for the bench tests (no torch, no clock)."""

from __future__ import annotations

from gpuport.machine import MachineDescription


def machine(device: str = "NVIDIA H100 80GB HBM3", accelerator: str = "cuda") -> MachineDescription:
    gpu = accelerator != "cpu"
    return MachineDescription(
        hostname="box-a" if accelerator == "cuda" else "box-b",
        os="Linux-6.1-x86_64",
        python="3.11.7",
        cpu="AMD EPYC 9454",
        cpu_count=96,
        memory_bytes=1 << 40,
        accelerator=accelerator,
        device_name=device,
        device_arch=("sm_90" if accelerator == "cuda" else "gfx942") if gpu else None,
        device_memory_bytes=80 * (1 << 30) if gpu else None,
        device_count=1 if gpu else 0,
        driver="nvidia 550.54.15" if accelerator == "cuda" else None,
        torch="2.13.0",
        cuda="12.4" if accelerator == "cuda" else None,
        hip="6.2" if accelerator == "rocm" else None,
        gpuport="0.1.0",
        gpuport_revision=None,
    )


def matmul_result(dtype: str = "bf16", tflops: float = 700.0) -> dict[str, object]:
    return {
        "workload": "matmul",
        "name": f"matmul {dtype} 8192x8192x8192",
        "params": {"dtype": dtype, "m": 8192, "n": 8192, "k": 8192},
        "metrics": {"tflops": tflops, "tflops_best": tflops * 1.02, "spread": 0.01},
        "status": "ok",
        "note": "",
    }
