"""Polls GPU utilisation and memory while a training run is active."""

import subprocess


def gpu_utilization() -> list[dict[str, float]]:
    out = subprocess.run(
        [
            "nvidia-smi",
            "--query-gpu=utilization.gpu,memory.used,memory.total",
            "--format=csv,noheader,nounits",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rows = []
    for line in out.strip().splitlines():
        util, used, total = (float(v) for v in line.split(","))
        rows.append({"util": util, "used_mb": used, "total_mb": total})
    return rows
