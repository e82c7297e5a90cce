"""Rewriters for Dockerfiles, compose, Kubernetes, shell scripts, CMake and Makefiles."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from gpuport import kb
from gpuport.files import FileKind, classify
from gpuport.port.model import ChangeStatus, FileResult
from gpuport.port.rewrite_infra import (
    REWRITERS,
    rewrite_cmake,
    rewrite_compose,
    rewrite_dockerfile,
    rewrite_k8s,
    rewrite_makefile,
    rewrite_shell,
)
from gpuport.syntax.cmake import cmake_commands

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
INFRA_FIXTURES = sorted(
    p
    for folder in ("containers", "build")
    for p in (FIXTURES / folder).rglob("*")
    if p.is_file() and classify(p.name) in REWRITERS
)


def _image(ref: str, rocm: str = "6.4") -> str:
    entry = kb.find_docker_image(ref)
    assert entry is not None, ref
    return entry.image_for(rocm, original=ref)


def _index(url: str, rocm: str = "6.4") -> str:
    entry = kb.find_pip_index(url)
    assert entry is not None, url
    replacement = entry.index_for(rocm)
    assert replacement is not None
    return replacement


def _gpu_flags() -> list[str]:
    flag = kb.find_docker_flag("--gpus")
    assert flag is not None and flag.rocm_flags
    return list(flag.rocm_flags)


def _groups() -> list[str]:
    flags = _gpu_flags()
    return [flags[i + 1] for i, f in enumerate(flags[:-1]) if f == "--group-add"]


def _statuses(result: FileResult) -> dict[str, list[ChangeStatus]]:
    out: dict[str, list[ChangeStatus]] = {}
    for change in result.changes:
        out.setdefault(change.rule_id, []).append(change.status)
    return out


def test_dockerfile_before_after() -> None:
    before = (
        "ARG CUDA=12.1.0\n"
        "FROM nvidia/cuda:${CUDA}-devel-ubuntu22.04\n"
        "# keep this comment\n"
        "ENV NVIDIA_VISIBLE_DEVICES=all NVIDIA_DRIVER_CAPABILITIES=compute,utility\n"
        'ENV NVIDIA_REQUIRE_CUDA="cuda>=12.1"\n'
        "ENV CUDA_HOME=/usr/local/cuda\n"
        "RUN pip install --no-cache-dir torch==2.3.0+cu121 \\\n"
        "        --index-url https://download.pytorch.org/whl/cu121\n"
        "RUN apt-get install -y cuda-toolkit-12-1\n"
    )
    after = (
        "ARG CUDA=12.1.0\n"
        f"FROM {_image('nvidia/cuda:12.1.0-devel-ubuntu22.04')}\n"
        "# keep this comment\n"
        "ENV AMD_VISIBLE_DEVICES=all\n"
        "ENV ROCM_PATH=/opt/rocm\n"
        "RUN pip install --no-cache-dir torch==2.3.0 \\\n"
        f"        --index-url {_index('https://download.pytorch.org/whl/cu121')}\n"
        "RUN apt-get install -y cuda-toolkit-12-1\n"
    )
    result = rewrite_dockerfile("Dockerfile", before, "6.4")
    assert result.translated == after
    assert result.kind == "dockerfile" and result.path == result.new_path == "Dockerfile"
    [apt] = [c for c in result.changes if c.rule_id == "GP404"]
    assert apt.status is ChangeStatus.UNCONVERTED and apt.note and apt.line == 9
    assert apt.before == apt.after == "cuda-toolkit-12-1"


def test_dockerfile_tag_follows_the_rocm_version() -> None:
    text = "FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\n"
    old = rewrite_dockerfile("Dockerfile", text, "6.2").translated
    assert old == f"FROM {_image('nvidia/cuda:12.4.1-runtime-ubuntu22.04', '6.2')}\n"
    assert old != rewrite_dockerfile("Dockerfile", text, "6.4").translated


def test_compose_before_after() -> None:
    before = (
        "services:\n"
        "  train:\n"
        "    image: nvidia/cuda:12.4.1-runtime-ubuntu22.04\n"
        "    runtime: nvidia\n"
        "    environment:\n"
        "      - NVIDIA_VISIBLE_DEVICES=all\n"
        "      - NVIDIA_DRIVER_CAPABILITIES=compute,utility\n"
        "    deploy:\n"
        "      resources:\n"
        "        reservations:\n"
        "          devices:\n"
        "            - driver: nvidia\n"
        "              count: all\n"
        "              capabilities: [gpu]\n"
        "    volumes:\n"
        "      - ./data:/data  # training data\n"
    )
    group_lines = "".join(f"      - {g}\n" for g in _groups())
    after = (
        "services:\n"
        "  train:\n"
        f"    image: {_image('nvidia/cuda:12.4.1-runtime-ubuntu22.04')}\n"
        "    devices:\n"
        "      - /dev/kfd\n"
        "      - /dev/dri\n"
        "    group_add:\n"
        f"{group_lines}"
        "    security_opt:\n"
        "      - seccomp=unconfined\n"
        "    environment:\n"
        "      - AMD_VISIBLE_DEVICES=all\n"
        "    volumes:\n"
        "      - ./data:/data  # training data\n"
    )
    result = rewrite_compose("docker-compose.yml", before, "6.4")
    assert result.translated == after
    assert yaml.safe_load(after)["services"]["train"]["devices"] == ["/dev/kfd", "/dev/dri"]
    assert set(_statuses(result)) == {"GP401", "GP402", "GP406", "GP407"}


def test_compose_keeps_other_reservations_and_extends_existing_devices() -> None:
    before = (
        "services:\n"
        "  infer:\n"
        "    devices:\n"
        "      - /dev/infiniband\n"
        "    deploy:\n"
        "      resources:\n"
        "        limits:\n"
        "          memory: 64g\n"
        "        reservations:\n"
        "          devices:\n"
        "            - capabilities: [gpu]\n"
        "              count: 2\n"
        "            - driver: cdi\n"
        "              device_ids: [vendor.com/fpga=0]\n"
    )
    result = rewrite_compose("compose.yaml", before, "6.4")
    assert result.translated is not None
    service = yaml.safe_load(result.translated)["services"]["infer"]
    assert service["devices"] == ["/dev/infiniband", "/dev/kfd", "/dev/dri"]
    assert service["group_add"] == _groups()
    assert service["deploy"] == {
        "resources": {
            "limits": {"memory": "64g"},
            "reservations": {"devices": [{"driver": "cdi", "device_ids": ["vendor.com/fpga=0"]}]},
        }
    }


def test_k8s_before_after() -> None:
    before = (
        "apiVersion: v1\n"
        "kind: Pod\n"
        "metadata:\n"
        "  name: trainer\n"
        "spec:\n"
        "  runtimeClassName: nvidia\n"
        "  nodeSelector:\n"
        '    nvidia.com/gpu.present: "true"\n'
        "    nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB\n"
        "  tolerations:\n"
        "    - key: nvidia.com/gpu\n"
        "      operator: Exists\n"
        "  containers:\n"
        "    - name: trainer\n"
        "      image: nvcr.io/nvidia/pytorch:24.01-py3\n"
        "      env:\n"
        "        - name: NVIDIA_VISIBLE_DEVICES\n"
        "          value: all\n"
        "      resources:\n"
        "        limits:\n"
        "          nvidia.com/gpu: 2   # two GPUs\n"
    )
    after = (
        "apiVersion: v1\n"
        "kind: Pod\n"
        "metadata:\n"
        "  name: trainer\n"
        "spec:\n"
        "  nodeSelector:\n"
        '    feature.node.kubernetes.io/amd-gpu: "true"\n'
        "    nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB\n"
        "  tolerations:\n"
        "    - key: amd.com/gpu\n"
        "      operator: Exists\n"
        "  containers:\n"
        "    - name: trainer\n"
        f"      image: {_image('nvcr.io/nvidia/pytorch:24.01-py3')}\n"
        "      env:\n"
        "        - name: AMD_VISIBLE_DEVICES\n"
        "          value: all\n"
        "      resources:\n"
        "        limits:\n"
        "          amd.com/gpu: 2   # two GPUs\n"
    )
    result = rewrite_k8s("deployment.yaml", before, "6.4")
    assert result.translated == after
    [product] = [c for c in result.changes if c.before == "nvidia.com/gpu.product"]
    assert product.status is ChangeStatus.UNCONVERTED and "amd.com/gpu.product-name" in product.note
    [resource] = [c for c in result.changes if c.rule_id == "GP408"]
    assert (resource.line, resource.status, resource.after) == (
        21,
        ChangeStatus.CONVERTED,
        "amd.com/gpu",
    )


def test_k8s_multi_document_and_quoted_keys() -> None:
    before = (
        "kind: Job\n"
        "spec:\n"
        "  resources:\n"
        '    limits: {"nvidia.com/gpu": 1}\n'
        "---\n"
        "kind: Job\n"
        "spec:\n"
        "  resources:\n"
        "    requests:\n"
        "      'nvidia.com/gpu': 8\n"
    )
    result = rewrite_k8s("jobs.yaml", before, "6.4")
    assert result.translated == before.replace("nvidia.com/gpu", "amd.com/gpu")


def test_shell_before_after() -> None:
    before = (
        "#!/bin/bash\n"
        "# run it\n"
        'docker run --rm --gpus all -e NVIDIA_DRIVER_CAPABILITIES=all -v "$PWD:/w" my/image python t.py\n'
        "apptainer exec --nv img.sif python t.py\n"
        "export CUDA_HOME=/usr/local/cuda\n"
        "nvcc -arch=sm_90 -o k k.cu -lcudart\n"
    )
    after = (
        "#!/bin/bash\n"
        "# run it\n"
        f'docker run --rm {" ".join(_gpu_flags())} -v "$PWD:/w" my/image python t.py\n'
        "apptainer exec --rocm img.sif python t.py\n"
        "export ROCM_PATH=/opt/rocm\n"
        "hipcc --offload-arch=gfx942 -o k k.cu -lamdhip64\n"
    )
    result = rewrite_shell("run.sh", before, "6.4", offload_archs=("gfx942",))
    assert result.translated == after


def test_cmake_before_after() -> None:
    before = (
        "cmake_minimum_required(VERSION 3.18)\n"
        "project(demo LANGUAGES CXX CUDA)\n"
        "find_package(CUDAToolkit REQUIRED)\n"
        "set(CMAKE_CUDA_ARCHITECTURES 80)\n"
        "add_library(k STATIC k.cu)  # kernels\n"
        "target_link_libraries(k PRIVATE CUDA::cublas)\n"
    )
    after = (
        "cmake_minimum_required(VERSION 3.21)\n"
        "project(demo LANGUAGES CXX HIP)\n"
        "find_package(hip REQUIRED)\n"
        "find_package(hipblas REQUIRED)\n"
        'set(CMAKE_HIP_ARCHITECTURES "gfx90a;gfx942")\n'
        "add_library(k STATIC k.cu)  # kernels\n"
        "set_source_files_properties(k.cu PROPERTIES LANGUAGE HIP)\n"
        "target_link_libraries(k PRIVATE roc::hipblas)\n"
    )
    result = rewrite_cmake("CMakeLists.txt", before, "6.4", offload_archs=("gfx90a", "gfx942"))
    assert result.translated == after
    arch = [c for c in result.changes if c.rule_id == "GP504"]
    assert [c.status for c in arch] == [ChangeStatus.NEEDS_REVIEW]


def test_cmake_findcuda_is_left_for_a_person() -> None:
    text = "find_package(CUDA REQUIRED)\ncuda_add_executable(app main.cu)\n"
    result = rewrite_cmake("CMakeLists.txt", text, "6.4")
    findcuda = [c for c in result.changes if c.rule_id == "GP502"]
    assert len(findcuda) == 2
    assert all(c.status is ChangeStatus.UNCONVERTED and c.note for c in findcuda)


def test_cmake_syntax_error_becomes_an_unconverted_change() -> None:
    result = rewrite_cmake("CMakeLists.txt", "enable_language(CUDA)\nset(X\n", "6.4")
    assert result.translated == "enable_language(HIP)\nset(X\n"
    [problem] = [c for c in result.changes if c.family == "input"]
    assert problem.status is ChangeStatus.UNCONVERTED and problem.line == 2


# (offload archs, Makefile before, Makefile after), by what each case is about
MAKEFILE_PORTS = {
    "compiler-arch-flags-and-libraries": (
        ("gfx90a",),
        "NVCC ?= nvcc\n"
        "NVCCFLAGS = -O2 -arch=sm_80 -Xcompiler -fPIC\n"
        "LDLIBS = -L/usr/local/cuda/lib64 -lcudart\n"
        "app: app.cu\n"
        "\t$(NVCC) $(NVCCFLAGS) -o $@ $< $(LDLIBS)\n",
        "NVCC ?= hipcc\n"
        "NVCCFLAGS = -O2 --offload-arch=gfx90a -fPIC\n"
        "LDLIBS = -L/opt/rocm/lib -lamdhip64\n"
        "app: app.cu\n"
        "\t$(NVCC) $(NVCCFLAGS) -o $@ $< $(LDLIBS)\n",
    ),
    "continued-gencode-lines": (
        ("gfx90a", "gfx942"),
        "ARCH := -gencode arch=compute_80,code=sm_80 \\\n"
        "        -gencode arch=compute_90,code=sm_90 \\\n"
        "        -lineinfo\n"
        "TORCH_CUDA_ARCH_LIST := 8.0 9.0\n",
        "ARCH := --offload-arch=gfx90a --offload-arch=gfx942 \\\n"
        "        -gline-tables-only\n"
        "PYTORCH_ROCM_ARCH := gfx90a gfx942\n",
    ),
}


@pytest.mark.parametrize("case", sorted(MAKEFILE_PORTS))
def test_makefile_before_after(case: str) -> None:
    archs, before, after = MAKEFILE_PORTS[case]
    result = rewrite_makefile("Makefile", before, "6.4", offload_archs=archs)
    assert result.translated == after


def test_crlf_files_keep_their_line_endings() -> None:
    before = "add_library(k STATIC k.cu)\r\ntarget_link_libraries(k CUDA::cublas)\r\n"
    result = rewrite_cmake("CMakeLists.txt", before, "6.4")
    assert result.translated is not None
    assert result.translated.count("\r\n") == result.translated.count("\n") == 4
    assert "set_source_files_properties(k.cu PROPERTIES LANGUAGE HIP)\r\n" in result.translated
    compose = "services:\r\n  t:\r\n    runtime: nvidia\r\n    image: x\r\n"
    ported = rewrite_compose("compose.yaml", compose, "6.4").translated
    assert ported is not None and "\r\n" in ported and "\n" not in ported.replace("\r\n", "")
    assert yaml.safe_load(ported)["services"]["t"]["devices"] == ["/dev/kfd", "/dev/dri"]


def test_unchanged_file_has_no_translation() -> None:
    result = rewrite_dockerfile("Dockerfile", "FROM python:3.11\nRUN pip install numpy\n", "6.4")
    assert result.translated is None and not result.changed and result.changes == []


@pytest.mark.parametrize("path", INFRA_FIXTURES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_rewriting_a_rewritten_fixture_changes_nothing(path: Path) -> None:
    kind = classify(path.name)
    assert kind is not None
    rewrite = REWRITERS[kind]
    text = path.read_text(encoding="utf-8")
    first = rewrite(path.name, text, "6.4")
    ported = first.translated if first.translated is not None else text
    second = rewrite(path.name, ported, "6.4")
    assert second.translated is None, f"second pass changed {path.name}"
    assert all(c.status is ChangeStatus.UNCONVERTED for c in second.changes)
    for change in first.changes:
        if change.status is ChangeStatus.UNCONVERTED:
            assert change.note, f"{path.name}:{change.line}: unconverted without a reason"
            assert change.after == change.before
    if kind in (FileKind.YAML, FileKind.COMPOSE) and path.name != "broken.yaml":
        assert list(yaml.safe_load_all(ported)) is not None  # still valid YAML
    if kind is FileKind.CMAKE:
        assert cmake_commands(ported)[1] is None  # still valid CMake


def test_every_rewritable_kind_has_a_rewriter() -> None:
    assert set(REWRITERS) == {
        FileKind.DOCKERFILE,
        FileKind.COMPOSE,
        FileKind.YAML,
        FileKind.SHELL,
        FileKind.CMAKE,
        FileKind.MAKEFILE,
    }


def test_dockerfile_arg_default_built_from_an_earlier_arg() -> None:
    text = "ARG CUDA=12.1.0\nARG BASE=nvidia/cuda:${CUDA}-devel-ubuntu22.04\nFROM ${BASE}\n"
    result = rewrite_dockerfile("Dockerfile", text, "6.4")
    [change] = result.changes
    assert change.before == "nvidia/cuda:12.1.0-devel-ubuntu22.04"
    expected = _image("nvidia/cuda:12.1.0-devel-ubuntu22.04")
    assert result.translated == f"ARG CUDA=12.1.0\nARG BASE={expected}\nFROM ${{BASE}}\n"


def test_compose_reservation_in_a_merged_extension_is_reported() -> None:
    text = (
        "x-gpu: &gpu\n"
        "  deploy:\n"
        "    resources:\n"
        "      reservations:\n"
        "        devices:\n"
        "          - driver: nvidia\n"
        "            count: all\n"
        "            capabilities: [gpu]\n"
        "services:\n"
        "  train:\n"
        "    <<: *gpu\n"
        "    image: busybox\n"
    )
    result = rewrite_compose("compose.yaml", text, "6.4")
    assert [(c.line, c.rule_id, c.status) for c in result.changes] == [
        (6, "GP407", ChangeStatus.UNCONVERTED)
    ]
    assert result.translated is None or result.translated == text


def test_cmake_generator_expressions_keep_their_brackets() -> None:
    text = (
        "target_compile_options(k PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-arch=sm_80>)\n"
        "target_link_libraries(k PRIVATE $<$<BOOL:${USE}>:CUDA::cublas>)\n"
    )
    result = rewrite_cmake("CMakeLists.txt", text, "6.4", offload_archs=("gfx942",))
    assert result.translated is not None
    lines = result.translated.splitlines()
    assert lines[0] == (
        "target_compile_options(k PRIVATE $<$<COMPILE_LANGUAGE:HIP>:--offload-arch=gfx942>)"
    )
    assert "$<$<BOOL:${USE}>:roc::hipblas>)" in result.translated
    assert [c.before for c in result.changes if c.rule_id == "GP505"] == ["CUDA::cublas"]
    assert cmake_commands(result.translated)[1] is None
