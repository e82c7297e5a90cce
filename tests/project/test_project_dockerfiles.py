"""A CUDA Dockerfile beside the project's own ROCm Dockerfile is an NVIDIA-only component: its
findings fold into one GP601 line naming the ROCm image (AutoGPTQ's Dockerfile/Dockerfile_amd,
DeepSpeed's docker/Dockerfile and docker/rocm/Dockerfile)."""

from __future__ import annotations

from pathlib import Path

from gpuport.findings import Tier
from gpuport.project.build import build_model
from gpuport.project.model import ComponentStatus
from gpuport.scan.engine import ScanOptions, scan_path
from project_tree import write

SETUP = """\
import torch
from setuptools import setup
if torch.version.hip:
    print('ROCm build')
setup(name='quant', packages=['quant'])
"""
CUDA_IMAGE = """\
FROM nvcr.io/nvidia/cuda:12.1.0-runtime-ubuntu22.04
RUN pip install torch
"""
ROCM_IMAGE = "FROM rocm/dev-ubuntu-22.04:6.4\nRUN pip install .\n"

PROJECT = {
    "setup.py": SETUP,
    "quant/__init__.py": "",
    "Dockerfile": CUDA_IMAGE,
    "Dockerfile_amd": ROCM_IMAGE,
    "docker/Dockerfile": CUDA_IMAGE,
    "docker/rocm/Dockerfile": "FROM rocm/pytorch:latest\n",
    # another folder's CUDA image (a CI wheel builder) has no ROCm twin near it
    "docker/builder/Dockerfile": CUDA_IMAGE,
    # amd64 is a CPU architecture: this is not a ROCm image
    "deploy/Dockerfile": CUDA_IMAGE,
    "deploy/Dockerfile.amd64": CUDA_IMAGE,
    # a base image read from an argument is neither
    "tools/Dockerfile": "ARG BASE\nFROM ${BASE}\n",
    "tools/Dockerfile.rocm": ROCM_IMAGE,
    # a ROCm image in a folder not named for ROCm is another image
    "serve/Dockerfile": CUDA_IMAGE,
    "serve/bench/Dockerfile": ROCM_IMAGE,
}


def test_cuda_dockerfiles_with_a_rocm_one_near_are_nvidia_only(tmp_path: Path) -> None:
    model = build_model(write(tmp_path, PROJECT))
    found = {c.path: c for c in model.components if c.status is ComponentStatus.NVIDIA_ONLY}
    assert set(found) == {"Dockerfile", "docker/Dockerfile"}
    assert found["Dockerfile"].rocm_alternative == "Dockerfile_amd"
    assert found["docker/Dockerfile"].rocm_alternative == "docker/rocm/Dockerfile"
    (evidence,) = found["Dockerfile"].evidence
    assert (evidence.path, evidence.line) == ("Dockerfile", 1)
    assert "nvcr.io/nvidia/cuda:12.1.0-runtime-ubuntu22.04" in evidence.what


def test_their_findings_fold_into_one_line_each(tmp_path: Path) -> None:
    root = write(tmp_path, PROJECT)
    result = scan_path(root, ScanOptions(jobs=1), display_root="p")
    listed = {(f.rule_id, f.location.path) for f in result.findings}
    assert ("GP601", "Dockerfile") in listed and ("GP601", "docker/Dockerfile") in listed
    assert ("GP401", "Dockerfile") not in listed
    assert ("GP401", "docker/builder/Dockerfile") in listed
    assert ("GP401", "deploy/Dockerfile.amd64") in listed
    assert ("GP401", "serve/Dockerfile") in listed
    aside = {(f.rule_id, f.location.path) for f in result.set_aside}
    assert ("GP401", "Dockerfile") in aside and ("GP401", "docker/Dockerfile") in aside
    # a file component is named as the file, not as a folder ("Dockerfile/")
    lines = sorted(f.message for f in result.findings if f.rule_id == "GP601")
    assert lines[0].startswith("Dockerfile is NVIDIA-only"), lines
    assert lines[1].startswith("docker/Dockerfile is NVIDIA-only"), lines


def test_without_a_rocm_image_near_nothing_is_folded(tmp_path: Path) -> None:
    files = {
        k: v for k, v in PROJECT.items() if k not in ("Dockerfile_amd", "docker/rocm/Dockerfile")
    }
    model = build_model(write(tmp_path, files))
    assert model.supports_rocm  # setup.py's ROCm branch
    assert not [c for c in model.components if "Dockerfile" in c.path]


CI_WORKFLOW = """\
name: unit
on: [push]
jobs:
  cpu:
    runs-on: ubuntu-24.04
    container:
      image: quant/gh-builder:py${{ matrix.py }}
    steps:
      - run: pytest
  wheels:
    runs-on: ubuntu-24.04
    container: docker.io/quant/wheel-image:cu121
    steps:
      - run: python -m build
  gpu:
    runs-on: [self-hosted]
    container:
      image: nvcr.io/nvidia/pytorch:24.09-py3
    steps:
      - run: pytest
"""


def test_a_dockerfile_of_an_image_the_ci_runs_in_is_ci_tier(tmp_path: Path) -> None:
    # The CI jobs run in quant/gh-builder and docker.io/quant/wheel-image, images published under
    # the project's own name: the Dockerfiles of folders named after them build CI tooling.
    # nvcr.io/nvidia/pytorch is another publisher's image: docker/pytorch/ stays the product's,
    # and so does a folder no workflow names.
    files = {
        "setup.py": SETUP,
        "quant/__init__.py": "",
        ".github/workflows/unit.yml": CI_WORKFLOW,
        "docker/gh-builder/Dockerfile.py312": CUDA_IMAGE,
        "docker/wheel-image/Dockerfile": CUDA_IMAGE,
        "docker/pytorch/Dockerfile": CUDA_IMAGE,
        "docker/serve/Dockerfile": CUDA_IMAGE,
    }
    root = write(tmp_path, files)
    model = build_model(root)
    tiers = {rel: model.tier_of(rel) for rel in files if "Dockerfile" in rel}
    assert {rel for rel, tier in tiers.items() if tier is Tier.CI} == {
        "docker/gh-builder/Dockerfile.py312",
        "docker/wheel-image/Dockerfile",
    }
    assert tiers["docker/pytorch/Dockerfile"] is Tier.PRODUCT
    assert tiers["docker/serve/Dockerfile"] is Tier.PRODUCT
    result = scan_path(root, ScanOptions(jobs=1), display_root="p")
    base = {f.location.path: f.tier for f in result.findings if f.rule_id == "GP401"}
    assert base["docker/gh-builder/Dockerfile.py312"] is Tier.CI
    assert base["docker/serve/Dockerfile"] is Tier.PRODUCT


def test_no_ci_tier_from_a_workflow_that_does_not_parse(tmp_path: Path) -> None:
    files = {
        "setup.py": SETUP,
        ".github/workflows/unit.yml": "jobs:\n  cpu:\n    container: quant/gh-builder\n  - [",
        "docker/gh-builder/Dockerfile": CUDA_IMAGE,
    }
    model = build_model(write(tmp_path, files))
    assert model.tier_of("docker/gh-builder/Dockerfile") is Tier.PRODUCT
