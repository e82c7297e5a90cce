"""Starts one worker process per GPU, each pinned to its device."""

import os
import subprocess
import sys


def start_workers(devices: list[int]) -> list[subprocess.Popen[bytes]]:
    workers = []
    for rank, device in enumerate(devices):
        env = dict(os.environ)
        env["CUDA_VISIBLE_DEVICES"] = str(device)
        env["RANK"] = str(rank)
        workers.append(subprocess.Popen([sys.executable, "-m", "engine.worker"], env=env))
    return workers
