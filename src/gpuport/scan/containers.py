"""Containers: Dockerfiles, compose files, Kubernetes manifests and docker commands (rules GP4xx).

Dockerfiles are read instruction by instruction (line continuations, comment lines inside
them, here-documents, ``ARG`` defaults in ``FROM``); YAML is composed with PyYAML, whose nodes
keep their character offsets, so that findings land on the right line and ``gpuport port``
edits the YAML as text instead of re-dumping it. Shell code (``RUN`` lines, scripts, CI
steps) goes through the shell reader of :mod:`gpuport.scan.build`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from gpuport import kb
from gpuport.edits import ChangeStatus, Hit, TextEdit, hits_to_findings
from gpuport.files import FileKind, SourceText
from gpuport.findings import Category, Confidence, Severity, SkipKind, Skipped
from gpuport.rules import rule
from gpuport.scan.base import ScanOutput, scanner
from gpuport.scan.build import (
    DEFAULT_OFFLOAD_ARCHS,
    BuildWords,
    delete_span,
)
from gpuport.syntax.dockerfile import (
    ArgDefault,
    Instruction,
    dockerfile_instructions,
    env_pairs,
    expand_arguments,
    from_line,
    global_arguments,
    instruction_words,
)
from gpuport.syntax.shell import Word, program_index, shell_commands
from gpuport.syntax.text import LineIndex
from gpuport.syntax.yaml import (
    MappingNode,
    Node,
    ScalarNode,
    SequenceNode,
    YamlProblem,
    compose_documents,
    last_line,
    mapping_get,
    scalar_is,
    scalar_span,
)

_ROCM_DOCKER_DOC = (
    "https://rocm.docs.amd.com/projects/install-on-linux/en/latest/how-to/docker.html"
)
_AMD_TOOLKIT_DOC = (
    "https://instinct.docs.amd.com/projects/container-toolkit/en/latest/container-runtime/"
    "running-workloads.html"
)
_AMD_DEVICE_PLUGIN_DOC = "https://instinct.docs.amd.com/projects/k8s-device-plugin/en/latest/"
_K8S_GPU_DOC = "https://kubernetes.io/docs/tasks/manage-gpus/scheduling-gpus/"
_NODE_LABELLER_DOC = (
    "https://github.com/ROCm/k8s-device-plugin/blob/master/cmd/k8s-node-labeller/README.md"
)


def build_word_hits(
    text: str, commands: Sequence[Sequence[Word]], kind: str, offload_archs: tuple[str, ...]
) -> list[Hit]:
    words = BuildWords(text, kind, offload_archs)
    words.commands(commands)
    return words.hits()


def env_assignment_hits(
    text: str,
    name: str,
    name_span: tuple[int, int],
    value_span: tuple[int, int],
    offload_archs: tuple[str, ...],
    *,
    quote: str = '"',
) -> list[Hit]:
    words = BuildWords(text, "shell", offload_archs)
    words.env_setting(name, name_span, value_span, quote=quote)
    return words.hits()


# ---------------------------------------------------------------------------------------------
# Rules

CUDA_CONTAINER_IMAGE = rule(
    id="GP401",
    slug="cuda-container-image",
    category=Category.CONTAINERS,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="A container image built for NVIDIA CUDA",
    what=(
        "Finds CUDA images (`nvidia/cuda`, `nvcr.io/nvidia/...`, `pytorch/pytorch:*-cuda*`...) "
        "in Dockerfile `FROM` lines (also through `ARG` defaults), compose and Kubernetes "
        "`image:` fields, CI files and `docker run`/`docker pull` commands."
    ),
    why=(
        "These images carry the CUDA runtime and CUDA builds of the frameworks; on an AMD GPU "
        "nothing in them can use the GPU. ROCm publishes matching images (rocm/dev-ubuntu-*, "
        "rocm/pytorch, rocm/vllm...)."
    ),
    example="FROM nvidia/cuda:12.1.0-devel-ubuntu22.04",
    instead="FROM rocm/dev-ubuntu-22.04:6.4-complete",
    fix="Start from the ROCm image the knowledge base names for this CUDA image.",
    mechanical=True,
    references=(_ROCM_DOCKER_DOC, "https://hub.docker.com/u/rocm"),
)

NVIDIA_CONTAINER_ENV = rule(
    id="GP402",
    slug="nvidia-container-env",
    category=Category.CONTAINERS,
    severity=Severity.LOW,
    confidence=Confidence.HIGH,
    summary="NVIDIA Container Toolkit environment variable",
    what=(
        "Finds `NVIDIA_VISIBLE_DEVICES`, `NVIDIA_DRIVER_CAPABILITIES`, `NVIDIA_REQUIRE_*` and "
        "similar variables in Dockerfiles, compose files, Kubernetes manifests and `docker run "
        "-e`."
    ),
    why=(
        "Only the NVIDIA container runtime reads these; on AMD hosts they do nothing, so GPU "
        "selection silently stops working. The AMD Container Toolkit reads "
        "`AMD_VISIBLE_DEVICES`; with plain device passthrough the devices given to the "
        "container decide."
    ),
    example="ENV NVIDIA_VISIBLE_DEVICES=all NVIDIA_DRIVER_CAPABILITIES=compute,utility",
    instead="ENV AMD_VISIBLE_DEVICES=all",
    fix=(
        "Use `AMD_VISIBLE_DEVICES` for the AMD Container Toolkit and drop the other NVIDIA "
        "variables."
    ),
    mechanical=True,
    references=(_AMD_TOOLKIT_DOC, _ROCM_DOCKER_DOC),
)

PIP_CUDA_WHEELS = rule(
    id="GP403",
    slug="pip-cuda-wheels",
    category=Category.CONTAINERS,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="pip installs CUDA builds of GPU packages",
    what=(
        "Finds `pip install` commands (Dockerfile `RUN`, scripts, CI steps) that use a CUDA "
        "wheel index (`--index-url https://download.pytorch.org/whl/cu121`), pin CUDA local "
        "versions (`torch==2.3.0+cu121`), or install packages such as torch from PyPI, whose "
        "Linux wheels are CUDA builds."
    ),
    why=(
        "A CUDA build of PyTorch installs fine on an AMD machine but sees no GPU "
        "(`torch.cuda.is_available()` is False). ROCm builds come from their own index "
        "(`https://download.pytorch.org/whl/rocm6.4`)."
    ),
    example="RUN pip install torch==2.3.0+cu121 --index-url https://download.pytorch.org/whl/cu121",
    instead="RUN pip install torch==2.3.0 --index-url https://download.pytorch.org/whl/rocm6.4",
    fix="Install from the ROCm index of the knowledge base; drop `+cuXXX` version suffixes.",
    mechanical=True,
    references=(
        "https://pytorch.org/get-started/locally/",
        "https://rocm.docs.amd.com/projects/install-on-linux/en/docs-6.2.0/how-to/3rd-party/pytorch-install.html",
    ),
)

CUDA_SYSTEM_PACKAGES = rule(
    id="GP404",
    slug="cuda-system-packages",
    category=Category.CONTAINERS,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="The system package manager installs CUDA or NVIDIA packages",
    what=(
        "Finds `apt-get`/`yum`/`dnf` installs of `cuda-*`, `nvidia-*`, `libcudnn*`, "
        "`libnccl*`, TensorRT packages, conda installs of `cudatoolkit`/`pytorch-cuda`, and "
        "NVIDIA's CUDA package repository."
    ),
    why=(
        "These packages are NVIDIA's toolkit and libraries; on ROCm they are dead weight at "
        "best, and the ROCm packages (`rocm-dev`, `hipblas-dev`, `miopen-hip-dev`...) come "
        "from AMD's repository or a ROCm base image."
    ),
    example="RUN apt-get install -y cuda-toolkit-12-1 libcudnn8",
    instead="FROM rocm/dev-ubuntu-22.04:6.4-complete  # ROCm libraries included",
    fix=(
        "Remove the CUDA packages; take ROCm from a rocm/* base image or install the ROCm "
        "packages that match what the project links."
    ),
    mechanical=False,
    references=(
        "https://rocm.docs.amd.com/projects/install-on-linux/en/docs-6.2.0/install/install-overview.html",
    ),
)

DOCKER_GPU_FLAGS = rule(
    id="GP405",
    slug="docker-gpu-flags",
    category=Category.CONTAINERS,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="A container is started with NVIDIA GPU flags",
    what=(
        "Finds `docker run --gpus`, `--runtime=nvidia`, `nvidia-docker run`, and Apptainer/"
        "Singularity `--nv` in shell scripts."
    ),
    why=(
        "`--gpus` needs the NVIDIA Container Toolkit (or, from Docker 29.3, AMD's CDI setup); "
        "without it Docker fails with `could not select device driver`. ROCm containers get "
        "the GPUs through `/dev/kfd` and `/dev/dri` and the video group."
    ),
    example="docker run --gpus all -it my-train-image",
    instead=(
        "docker run --device=/dev/kfd --device=/dev/dri --group-add video "
        "--security-opt seccomp=unconfined -it my-train-image"
    ),
    fix="Pass the ROCm devices and group instead (`apptainer --rocm` instead of `--nv`).",
    mechanical=True,
    references=(
        _ROCM_DOCKER_DOC,
        _AMD_TOOLKIT_DOC,
        "https://apptainer.org/docs/user/main/gpu.html",
    ),
)

NVIDIA_CONTAINER_RUNTIME = rule(
    id="GP406",
    slug="nvidia-container-runtime",
    category=Category.CONTAINERS,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="The NVIDIA container runtime is selected",
    what="Finds compose `runtime: nvidia` and Kubernetes `runtimeClassName: nvidia`.",
    why=(
        "There is no `nvidia` runtime on AMD hosts: compose refuses to start the service and "
        'Kubernetes rejects the pod (`RuntimeClass "nvidia" not found`). AMD GPUs need no '
        "special runtime in Kubernetes (the device plugin hands out `amd.com/gpu`) and plain "
        "device passthrough in compose."
    ),
    example="services:\n  train:\n    runtime: nvidia",
    instead=(
        "services:\n  train:\n    devices:\n      - /dev/kfd\n      - /dev/dri\n"
        "    group_add:\n      - video"
    ),
    fix="Remove the runtime selection; give compose services the ROCm devices instead.",
    mechanical=True,
    references=(_ROCM_DOCKER_DOC, _AMD_DEVICE_PLUGIN_DOC),
)

COMPOSE_GPU_RESERVATION = rule(
    id="GP407",
    slug="compose-gpu-reservation",
    category=Category.CONTAINERS,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="A compose service reserves NVIDIA GPUs",
    what=(
        "Finds `deploy.resources.reservations.devices` entries with `driver: nvidia` or "
        "`capabilities: [gpu]`, and the service-level `gpus:` field."
    ),
    why=(
        "Compose turns these into NVIDIA device requests, which fail on AMD hosts. ROCm "
        "containers get the GPUs as devices (`/dev/kfd`, `/dev/dri`) with the video group."
    ),
    example=(
        "deploy:\n  resources:\n    reservations:\n      devices:\n        - driver: nvidia\n"
        "          count: all\n          capabilities: [gpu]"
    ),
    instead="devices:\n  - /dev/kfd\n  - /dev/dri\ngroup_add:\n  - video",
    fix="Replace the reservation with the ROCm devices, group and security option.",
    mechanical=True,
    references=(_ROCM_DOCKER_DOC, "https://docs.docker.com/compose/gpu-support"),
)

K8S_NVIDIA_GPU_RESOURCE = rule(
    id="GP408",
    slug="k8s-nvidia-gpu-resource",
    category=Category.CONTAINERS,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="A Kubernetes workload requests nvidia.com/gpu",
    what=(
        "Finds `nvidia.com/gpu` (and MIG slices such as `nvidia.com/mig-1g.10gb`) in resource "
        "limits and requests, Helm values included, and `gpu.nvidia.com` device classes."
    ),
    why=(
        "Only the NVIDIA device plugin advertises `nvidia.com/gpu`; on AMD nodes the pod "
        "stays Pending forever. The AMD GPU device plugin advertises `amd.com/gpu`."
    ),
    example="resources:\n  limits:\n    nvidia.com/gpu: 1",
    instead="resources:\n  limits:\n    amd.com/gpu: 1",
    fix="Request `amd.com/gpu`; MIG slices have no direct counterpart.",
    mechanical=True,
    references=(_AMD_DEVICE_PLUGIN_DOC, _K8S_GPU_DOC),
)

K8S_NVIDIA_NODE_SELECTOR = rule(
    id="GP409",
    slug="k8s-nvidia-node-selector",
    category=Category.CONTAINERS,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="Pods are steered to nodes by NVIDIA GPU labels",
    what=(
        "Finds `nodeSelector` entries and node-affinity expressions on NVIDIA labels "
        "(`nvidia.com/gpu.present`, `nvidia.com/gpu.product`...) and on cloud accelerator "
        "labels with NVIDIA values (`cloud.google.com/gke-accelerator: nvidia-tesla-t4`)."
    ),
    why=(
        "AMD nodes carry other labels: the AMD GPU Operator marks them "
        '`feature.node.kubernetes.io/amd-gpu: "true"` and the node labeller adds '
        "`amd.com/gpu.family`, `amd.com/gpu.product-name`, `amd.com/gpu.vram`... A selector "
        "on NVIDIA labels matches no AMD node."
    ),
    example='nodeSelector:\n  nvidia.com/gpu.present: "true"',
    instead='nodeSelector:\n  feature.node.kubernetes.io/amd-gpu: "true"',
    fix=(
        "Select AMD nodes by the labels your cluster sets (see `kubectl get nodes "
        "--show-labels`); product and memory labels need new values."
    ),
    mechanical=False,
    references=(
        _NODE_LABELLER_DOC,
        "https://instinct.docs.amd.com/projects/gpu-operator/en/latest/",
        _K8S_GPU_DOC,
    ),
)

K8S_NVIDIA_TOLERATION = rule(
    id="GP410",
    slug="k8s-nvidia-toleration",
    category=Category.CONTAINERS,
    severity=Severity.LOW,
    confidence=Confidence.HIGH,
    summary="Pods tolerate the nvidia.com/gpu taint",
    what="Finds tolerations whose key is an NVIDIA GPU taint such as `nvidia.com/gpu`.",
    why=(
        "GPU nodes are often tainted so that only GPU pods land there. AMD node pools carry "
        "their own taint (commonly `amd.com/gpu`), so the pod cannot be scheduled on them."
    ),
    example="tolerations:\n  - key: nvidia.com/gpu\n    operator: Exists\n    effect: NoSchedule",
    instead="tolerations:\n  - key: amd.com/gpu\n    operator: Exists\n    effect: NoSchedule",
    fix="Tolerate the taint your AMD nodes carry (check `kubectl describe node`).",
    mechanical=False,
    references=(_AMD_DEVICE_PLUGIN_DOC, _K8S_GPU_DOC),
)

# ---------------------------------------------------------------------------------------------
# Shared facts


# Variables of the NVIDIA Container Toolkit.
# https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html
_NVIDIA_ENV_RE = re.compile(
    r"^NVIDIA_(?:VISIBLE_DEVICES|DRIVER_CAPABILITIES|REQUIRE_[A-Z0-9_]+|DISABLE_REQUIRE"
    r"|MIG_CONFIG_DEVICES|MIG_MONITOR_DEVICES|GDRCOPY|GDS|FABRIC_MANAGER|IMEX_CHANNELS)$"
)
_AMD_VISIBLE_DEVICES = "AMD_VISIBLE_DEVICES"
_CUDA_IMAGE_HINT_RE = re.compile(r"(?:^|[/:_.-])cuda(?:\d|[/:_.-]|$)|^nvcr\.io/nvidia/", re.I)
_CUDA_APT_PACKAGE_RE = re.compile(
    r"^(?:cuda(?:-[\w.+-]+)?|nvidia-[\w.+-]+|libcudnn\d*(?:[-_][\w.+-]+)?|libnccl[\w.+-]*"
    r"|libnvinfer[\w.+-]*|libnvonnxparsers[\w.+-]*|libnvparsers[\w.+-]*|tensorrt[\w.+-]*"
    r"|libcublas[\w.+-]*|libcufft[\w.+-]*|libcurand[\w.+-]*|libcusparse[\w.+-]*"
    r"|libcusolver[\w.+-]*|libnpp[\w.+-]*|libnvjpeg[\w.+-]*|libcutensor[\w.+-]*"
    r"|datacenter-gpu-manager)(?:[=:][\w.:~+*-]+)?$"
)
_CUDA_CONDA_PACKAGE_RE = re.compile(
    r"^(?:cudatoolkit|cuda-toolkit|pytorch-cuda|cuda-nvcc|cuda-runtime|cuda-libraries(?:-dev)?"
    r"|cudnn|nccl|cuda|cuda-version|libcublas|cupy-cuda\w*)(?:[=<>!~ ][^\s]*)?$"
)
_NVIDIA_REPO_RE = re.compile(r"developer\.download\.nvidia\.com/compute/cuda/repos|cuda-keyring")
_LOCAL_CUDA_VERSION_RE = re.compile(r"\+cu\d{2,3}\b")
_REQUIREMENT_RE = re.compile(
    r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)(?:\[(?P<extras>[^\]]*)\])?(?P<rest>.*)$"
)
_PIP_VALUE_OPTIONS = frozenset(
    {
        "-r",
        "--requirement",
        "-c",
        "--constraint",
        "-e",
        "--editable",
        "-t",
        "--target",
        "--prefix",
        "--root",
        "--platform",
        "--python-version",
        "--implementation",
        "--abi",
        "--src",
        "--upgrade-strategy",
        "--progress-bar",
        "--cache-dir",
        "--log",
        "--proxy",
        "--retries",
        "--timeout",
        "--trusted-host",
        "--cert",
        "--client-cert",
        "--no-binary",
        "--only-binary",
        "--config-settings",
        "-C",
        "--global-option",
    }
)
_PIP_INDEX_OPTIONS = frozenset(
    {"-i", "--index-url", "--extra-index-url", "-f", "--find-links", "--index"}
)
_DOCKER_VALUE_OPTIONS = frozenset(
    {
        "-a", "--attach", "--add-host", "--blkio-weight", "--cap-add", "--cap-drop",
        "--cgroup-parent", "--cgroupns", "--cidfile", "--cpu-period", "--cpu-quota", "--cpu-shares",
        "-c", "--cpus", "--cpuset-cpus", "--cpuset-mems", "--device", "--device-cgroup-rule",
        "--dns", "--dns-option", "--dns-search", "--entrypoint", "-e", "--env", "--env-file",
        "--expose", "--gpus", "--group-add", "--health-cmd", "--health-interval",
        "--health-retries", "--health-timeout", "-h", "--hostname", "--ip", "--ip6", "--ipc",
        "--isolation", "-l", "--label", "--label-file", "--link", "--log-driver", "--log-opt",
        "--mac-address", "-m", "--memory", "--memory-reservation", "--memory-swap", "--mount",
        "--name", "--network", "--net", "--network-alias", "--pid", "--pids-limit", "--platform",
        "-p", "--publish", "--pull", "--restart", "--runtime", "--security-opt", "--shm-size",
        "--stop-signal", "--stop-timeout", "--storage-opt", "--sysctl", "--tmpfs", "-u", "--user",
        "--ulimit", "--userns", "--uts", "-v", "--volume", "--volume-driver", "--volumes-from",
        "-w", "--workdir",
    }
)  # fmt: skip
_ROCM_DEVICE_FLAGS = (
    "--device=/dev/kfd",
    "--device=/dev/dri",
    "--group-add",
    "video",
    "--security-opt",
    "seccomp=unconfined",
)


def _rocm_flag_words() -> tuple[str, ...]:
    entry = kb.find_docker_flag("--gpus")
    return entry.rocm_flags if entry is not None and entry.rocm_flags else _ROCM_DEVICE_FLAGS


def rocm_docker_flags() -> str:
    """The ``docker run`` flags that hand AMD GPUs to a container (from the knowledge base)."""
    return " ".join(_rocm_flag_words())


def rocm_compose_access() -> dict[str, list[str]]:
    """The same access as compose service keys: devices, group_add and security_opt."""
    access: dict[str, list[str]] = {"devices": [], "group_add": [], "security_opt": []}
    words = list(_rocm_flag_words())
    keys = {"--device": "devices", "--group-add": "group_add", "--security-opt": "security_opt"}
    i = 0
    while i < len(words):
        option, sep, value = words[i].partition("=")
        if option in keys:
            if not sep and i + 1 < len(words):
                value = words[i + 1]
                i += 1
            access[keys[option]].append(value)
        i += 1
    return access


@dataclass(frozen=True, slots=True)
class _ImageVerdict:
    replacement: str | None
    notes: str
    known: bool  # the knowledge base has the image (else: it only looks like a CUDA image)


def _judge_image(ref: str, rocm_version: str) -> _ImageVerdict | None:
    """What to do with an image reference, or None when it is not a CUDA image."""
    ref = ref.strip()
    if not ref or ref.lower().startswith(("rocm/", "docker.io/rocm/")):
        return None
    entry = kb.find_docker_image(ref)
    if entry is not None:
        replacement = entry.image_for(rocm_version, original=ref)
        return _ImageVerdict(replacement, entry.notes, True)
    if _CUDA_IMAGE_HINT_RE.search(ref):
        return _ImageVerdict(None, "", False)
    return None


def image_hit(
    text: str,
    start: int,
    end: int,
    ref: str,
    rocm_version: str,
    *,
    edit_span: tuple[int, int] | None = None,
    where: str = "",
) -> Hit | None:
    """A GP401 hit for image ``ref`` written at ``text[start:end]`` (edited at ``edit_span``)."""
    verdict = _judge_image(ref, rocm_version)
    if verdict is None:
        return None
    span = edit_span or (start, end)
    suffix = f" ({where})" if where else ""
    if verdict.replacement is None:
        return Hit(
            CUDA_CONTAINER_IMAGE,
            start,
            end,
            f"{ref} looks like a CUDA image{suffix}",
            "docker-base",
            ChangeStatus.UNCONVERTED,
            note="no ROCm counterpart known for this image; pick a rocm/* base image",
            fix="Rebuild it on a ROCm base image (rocm/dev-ubuntu-*, rocm/pytorch...).",
            before=ref,
            confidence=Confidence.LOW,
        )
    status = ChangeStatus.NEEDS_REVIEW if verdict.notes else ChangeStatus.CONVERTED
    return Hit(
        CUDA_CONTAINER_IMAGE,
        start,
        end,
        f"{ref} is a CUDA image; ROCm's counterpart is {verdict.replacement}{suffix}",
        "docker-base",
        status,
        (TextEdit(span[0], span[1], verdict.replacement),),
        note=verdict.notes,
        fix=f"Use {verdict.replacement}.",
        before=ref,
        after=verdict.replacement,
    )


# ---------------------------------------------------------------------------------------------
# Shell code: docker, pip, apt and conda commands


def container_shell_hits(
    text: str, commands: Sequence[Sequence[Word]], rocm_version: str, *, docker: bool = True
) -> list[Hit]:
    """GP401-GP405 hits in shell commands (``docker``: also look at docker/apptainer commands)."""
    hits: list[Hit] = []
    for words in commands:
        index = program_index(words)
        if index is None:
            continue
        program = words[index].text.rsplit("/", 1)[-1]
        args = list(words[index + 1 :])
        for word in words:
            if _NVIDIA_REPO_RE.search(word.text):
                hits.append(
                    Hit(
                        CUDA_SYSTEM_PACKAGES,
                        word.start,
                        word.end,
                        "sets up NVIDIA's CUDA package repository",
                        "system-packages",
                        ChangeStatus.UNCONVERTED,
                        note="use AMD's ROCm repository or a rocm/* base image",
                    )
                )
                break
        if program in ("echo", "printf"):
            continue
        if re.fullmatch(r"pip\d*(?:\.\d+)?", program) or program == "uv":
            if program == "uv" and args and args[0].text == "pip":
                args = args[1:]
            hits.extend(_pip_hits(text, words, args, rocm_version))
        elif re.fullmatch(r"python\d*(?:\.\d+)?", program):
            if len(args) >= 2 and args[0].text == "-m" and args[1].text == "pip":
                hits.extend(_pip_hits(text, words, args[2:], rocm_version))
        elif program in ("apt-get", "apt", "yum", "dnf", "microdnf", "zypper"):
            hits.extend(_system_package_hits(args, program, _CUDA_APT_PACKAGE_RE))
        elif program in ("conda", "mamba", "micromamba"):
            hits.extend(_system_package_hits(args, program, _CUDA_CONDA_PACKAGE_RE))
        elif docker and program in ("docker", "podman", "nvidia-docker"):
            hits.extend(_docker_hits(text, words[index], args, program, rocm_version))
        elif docker and program in ("apptainer", "singularity"):
            hits.extend(_apptainer_hits(args))
    return hits


def _pip_hits(
    text: str, words: Sequence[Word], args: Sequence[Word], rocm_version: str
) -> list[Hit]:
    if not args or args[0].text not in ("install", "download", "wheel"):
        return []
    hits: list[Hit] = []
    has_rocm_index = False
    requirements: list[Word] = []
    i = 1
    while i < len(args):
        word = args[i]
        option, sep, inline = word.text.partition("=")
        if option in _PIP_INDEX_OPTIONS:
            if sep:
                url_word = Word(inline, word.end - len(inline), word.end)
                i += 1
            elif i + 1 < len(args):
                url_word = args[i + 1]
                i += 2
            else:
                break
            hit = _index_hit(url_word, rocm_version)
            if hit is not None:
                hits.append(hit)
                has_rocm_index |= hit.status is not ChangeStatus.UNCONVERTED
            elif "rocm" in url_word.text:
                has_rocm_index = True
            continue
        if word.text.startswith("-"):
            i += 2 if (word.text in _PIP_VALUE_OPTIONS and not sep) else 1
            continue
        requirements.append(word)
        i += 1
    needs_index: Word | None = None
    index_url = ""
    for word in requirements:
        match = _REQUIREMENT_RE.match(word.text)
        if not match:
            continue
        local = _LOCAL_CUDA_VERSION_RE.search(word.text)
        if local:
            raw = text[word.start : word.end]
            raw_local = _LOCAL_CUDA_VERSION_RE.search(raw)
            if raw_local is not None:
                start = word.start + raw_local.start()
                hits.append(
                    Hit(
                        PIP_CUDA_WHEELS,
                        word.start,
                        word.end,
                        f"{word.text} pins a CUDA build ({local.group(0)})",
                        "pip-index",
                        ChangeStatus.NEEDS_REVIEW,
                        (TextEdit(start, word.start + raw_local.end(), ""),),
                        note="the ROCm index must carry this version (its builds are +rocmX.Y)",
                        fix="Drop the +cuXXX suffix and install from the ROCm index.",
                    )
                )
        package = kb.find_package(match.group("name"))
        if package is None:
            continue
        extras = {e.strip().lower() for e in (match.group("extras") or "").split(",") if e}
        cuda_extras = extras & {e.lower() for e in package.cuda_extras}
        if cuda_extras:
            hits.append(
                Hit(
                    PIP_CUDA_WHEELS,
                    word.start,
                    word.end,
                    f"{word.text} asks for the CUDA extra {', '.join(sorted(cuda_extras))}",
                    "pip-package",
                    ChangeStatus.UNCONVERTED,
                    note=package.instead,
                    fix=package.instead,
                )
            )
        elif package.status is kb.PackageStatus.NEEDS_ROCM_BUILD and package.rocm_index:
            if needs_index is None and not has_rocm_index:
                needs_index = word
                index_url = package.index_for(rocm_version) or ""
        elif package.rocm_package and package.status in (
            kb.PackageStatus.NOT_SUPPORTED,
            kb.PackageStatus.NEEDS_ROCM_BUILD,
            kb.PackageStatus.NOT_APPLICABLE,
        ):
            name_start = word.start + text[word.start : word.end].find(match.group("name"))
            hits.append(
                Hit(
                    PIP_CUDA_WHEELS,
                    word.start,
                    word.end,
                    f"{match.group('name')} is a CUDA build; ROCm's is {package.rocm_package}",
                    "pip-package",
                    ChangeStatus.NEEDS_REVIEW,
                    (
                        TextEdit(
                            name_start, name_start + len(match.group("name")), package.rocm_package
                        ),
                    ),
                    note=package.notes or package.instead,
                    fix=f"Install {package.rocm_package}.",
                )
            )
        elif package.status in (kb.PackageStatus.NOT_SUPPORTED, kb.PackageStatus.NOT_APPLICABLE):
            hits.append(
                Hit(
                    PIP_CUDA_WHEELS,
                    word.start,
                    word.end,
                    f"{match.group('name')} is CUDA-only ({package.status.value})",
                    "pip-package",
                    ChangeStatus.UNCONVERTED,
                    note=package.instead,
                    fix=package.instead,
                )
            )
    if needs_index is not None and index_url:
        install = args[0]
        hits.append(
            Hit(
                PIP_CUDA_WHEELS,
                needs_index.start,
                needs_index.end,
                f"{needs_index.text} from PyPI is a CUDA build on Linux; use the ROCm index",
                "pip-index",
                ChangeStatus.NEEDS_REVIEW,
                (TextEdit(install.end, install.end, f" --index-url {index_url}"),),
                note="all packages of this command now come from the ROCm index; "
                "split the command if some are not there",
                fix=f"Add --index-url {index_url}.",
                after=f"--index-url {index_url} {needs_index.text}",
            )
        )
    return hits


def _index_hit(url_word: Word, rocm_version: str) -> Hit | None:
    entry = kb.find_pip_index(url_word.text)
    if entry is None:
        return None
    replacement = entry.index_for(rocm_version)
    message = f"{url_word.text} serves CUDA wheels"
    if replacement is None:
        return Hit(
            PIP_CUDA_WHEELS,
            url_word.start,
            url_word.end,
            message,
            "pip-index",
            ChangeStatus.UNCONVERTED,
            note=entry.notes or "no ROCm index replaces this one",
        )
    return Hit(
        PIP_CUDA_WHEELS,
        url_word.start,
        url_word.end,
        f"{message}; ROCm's index is {replacement}",
        "pip-index",
        ChangeStatus.CONVERTED,
        (TextEdit(url_word.start, url_word.end, replacement),),
        note=entry.notes,
        fix=f"Use {replacement}.",
    )


def _system_package_hits(args: Sequence[Word], program: str, pattern: re.Pattern[str]) -> list[Hit]:
    if not args or args[0].text not in ("install", "create", "add"):
        return []
    found = [w for w in args[1:] if not w.text.startswith("-") and pattern.match(w.text)]
    channel = [
        args[i + 1]
        for i in range(len(args) - 1)
        if args[i].text in ("-c", "--channel") and args[i + 1].text == "nvidia"
    ]
    if not found and not channel:
        return []
    first = found[0] if found else channel[0]
    names = ", ".join(w.text for w in found) or "packages from the nvidia channel"
    return [
        Hit(
            CUDA_SYSTEM_PACKAGES,
            first.start,
            first.end,
            f"{program} installs CUDA/NVIDIA packages: {names}",
            "system-packages",
            ChangeStatus.UNCONVERTED,
            note="ROCm packages differ; take them from a rocm/* base image or AMD's repository",
        )
    ]


def _docker_hits(
    text: str, program_word: Word, args: Sequence[Word], program: str, rocm_version: str
) -> list[Hit]:
    hits: list[Hit] = []
    args = list(args)
    if args and args[0].text == "container":
        args = args[1:]
    if not args:
        return hits
    sub = args[0].text
    if sub == "pull" and len(args) > 1:
        pulled = next((w for w in args[1:] if not w.text.startswith("-")), None)
        if pulled is not None:
            hit = image_hit(text, pulled.start, pulled.end, pulled.text, rocm_version)
            hits.extend([hit] if hit else [])
        return hits
    if sub == "build":
        for i, word in enumerate(args[:-1]):
            if word.text == "--build-arg" and "=" in args[i + 1].text:
                argument = args[i + 1]
                value = argument.text.split("=", 1)[1]
                offset = argument.end - len(value)
                hit = image_hit(text, offset, argument.end, value, rocm_version, where="build arg")
                hits.extend([hit] if hit else [])
        return hits
    if sub not in ("run", "create"):
        return hits
    gpu_words: list[tuple[int, int, str]] = []  # (start, end, as written)
    image: Word | None = None
    i = 1
    while i < len(args):
        word = args[i]
        option, sep, inline = word.text.partition("=")
        if not word.text.startswith("-"):
            image = word
            break
        value_word: Word | None = None
        if option in _DOCKER_VALUE_OPTIONS and not sep and i + 1 < len(args):
            value_word = args[i + 1]
        value = inline if sep else (value_word.text if value_word else "")
        end = value_word.end if value_word else word.end
        if option == "--gpus" or (option == "--runtime" and value == "nvidia"):
            gpu_words.append((word.start, end, text[word.start : end]))
        elif option in ("-e", "--env") and _NVIDIA_ENV_RE.match(value.split("=", 1)[0]):
            name = value.split("=", 1)[0]
            raw_value = text[word.start : end]
            at = word.start + raw_value.rfind(name)
            hits.append(_nvidia_env_hit(text, name, word.start, end, (at, at + len(name))))
        i += 2 if value_word else 1
    flags = rocm_docker_flags()
    if program == "nvidia-docker":
        edits = [TextEdit(program_word.start, program_word.end, "docker")]
        if not gpu_words:
            edits.append(TextEdit(args[0].end, args[0].end, f" {flags}"))
        hits.append(
            Hit(
                DOCKER_GPU_FLAGS,
                program_word.start,
                program_word.end,
                "nvidia-docker starts containers with the NVIDIA runtime",
                "docker-run",
                ChangeStatus.CONVERTED,
                tuple(edits),
                fix=f"Use docker run {flags}.",
            )
        )
    for position, (start, end, written) in enumerate(gpu_words):
        edit = TextEdit(start, end, flags) if position == 0 else delete_span(text, start, end)
        hits.append(
            Hit(
                DOCKER_GPU_FLAGS,
                start,
                end,
                f"`{written}` asks Docker for NVIDIA GPUs",
                "docker-run",
                ChangeStatus.CONVERTED,
                (edit,),
                fix=f"Use {flags}.",
                after=flags if position == 0 else "",
            )
        )
    if image is not None:
        hit = image_hit(text, image.start, image.end, image.text, rocm_version)
        hits.extend([hit] if hit else [])
    return hits


def _apptainer_hits(args: Sequence[Word]) -> list[Hit]:
    return [
        Hit(
            DOCKER_GPU_FLAGS,
            word.start,
            word.end,
            "`--nv` gives an Apptainer container NVIDIA GPUs",
            "docker-run",
            ChangeStatus.CONVERTED,
            (TextEdit(word.start, word.end, "--rocm"),),
            fix="Use --rocm.",
        )
        for word in args
        if word.text == "--nv"
    ]


def _nvidia_env_hit(
    text: str, name: str, start: int, end: int, name_span: tuple[int, int] | None
) -> Hit:
    """GP402 for one NVIDIA toolkit variable set at ``text[start:end]``.

    ``NVIDIA_VISIBLE_DEVICES`` is renamed (at ``name_span``) to the AMD Container Toolkit's
    ``AMD_VISIBLE_DEVICES``; the other variables are removed.
    """
    if name == "NVIDIA_VISIBLE_DEVICES" and name_span is not None:
        return Hit(
            NVIDIA_CONTAINER_ENV,
            start,
            end,
            f"{name} is read by the NVIDIA container runtime only",
            "container-env",
            ChangeStatus.NEEDS_REVIEW,
            (TextEdit(name_span[0], name_span[1], _AMD_VISIBLE_DEVICES),),
            note="AMD_VISIBLE_DEVICES is read by the AMD Container Toolkit; with plain "
            "--device passthrough the devices given decide (pass only the wanted "
            "/dev/dri/renderD* nodes, or set HIP_VISIBLE_DEVICES inside)",
            fix=f"Use {_AMD_VISIBLE_DEVICES}.",
        )
    return Hit(
        NVIDIA_CONTAINER_ENV,
        start,
        end,
        f"{name} is read by the NVIDIA container runtime only",
        "container-env",
        ChangeStatus.CONVERTED,
        (delete_span(text, start, end),),
        fix=f"Remove {name}.",
    )


# ---------------------------------------------------------------------------------------------
# Dockerfiles


def analyze_dockerfile(
    text: str,
    rocm_version: str = kb.DEFAULT_ROCM_VERSION,
    offload_archs: tuple[str, ...] = DEFAULT_OFFLOAD_ARCHS,
) -> list[Hit]:
    """GP4xx (and GP5xx for build steps) hits in a Dockerfile."""
    hits: list[Hit] = []
    instructions = dockerfile_instructions(text)
    global_args = global_arguments(text, instructions)
    stages: set[str] = set()
    for instruction in instructions:
        keyword = instruction.keyword
        if keyword == "FROM":
            hit = _from_hit(text, instruction, global_args, stages, rocm_version)
            if hit is not None:
                hits.append(hit)
        elif keyword == "ENV":
            hits.extend(_env_instruction_hits(text, instruction, offload_archs))
        elif keyword == "RUN":
            commands = instruction_words(text, instruction)
            hits.extend(container_shell_hits(text, commands, rocm_version, docker=False))
            hits.extend(build_word_hits(text, commands, "docker", offload_archs))
    return hits


def _from_hit(
    text: str,
    instruction: Instruction,
    global_args: dict[str, ArgDefault],
    stages: set[str],
    rocm_version: str,
) -> Hit | None:
    line = from_line(text, instruction)
    if line is None:
        return None
    image = line.image
    if line.stage is not None:
        stages.add(line.stage)
    values = {name: arg.value for name, arg in global_args.items()}
    resolved = expand_arguments(image.text, values)
    if resolved.lower() in stages:
        return None
    edit_span = (image.start, image.end)
    where = ""
    whole = re.fullmatch(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", image.text)
    if whole and whole.group(1) in global_args:
        edit_span = global_args[whole.group(1)].span
        where = f"from ARG {whole.group(1)}"
    elif resolved != image.text:
        where = "with ARG values filled in"
    return image_hit(
        text, image.start, image.end, resolved, rocm_version, edit_span=edit_span, where=where
    )


def _env_instruction_hits(
    text: str, instruction: Instruction, offload_archs: tuple[str, ...]
) -> list[Hit]:
    pairs = env_pairs(text, instruction)
    hits: list[Hit] = []
    removable = [
        p for p in pairs if _NVIDIA_ENV_RE.match(p.name) and p.name != "NVIDIA_VISIBLE_DEVICES"
    ]
    remove_all = len(removable) == len(pairs)
    whole = _instruction_deletion(text, instruction)
    for pair in pairs:
        if _NVIDIA_ENV_RE.match(pair.name):
            hit = _nvidia_env_hit(text, pair.name, pair.span[0], pair.span[1], pair.name_span)
            if remove_all:
                hit = replace(hit, edits=(whole,))
            hits.append(hit)
            continue
        hits.extend(
            env_assignment_hits(text, pair.name, pair.name_span, pair.value_span, offload_archs)
        )
    return hits


def _instruction_deletion(text: str, instruction: Instruction) -> TextEdit:
    start = text.rfind("\n", 0, instruction.start) + 1
    end = text.find("\n", instruction.end)
    return TextEdit(start, len(text) if end < 0 else end + 1, "")


# ---------------------------------------------------------------------------------------------
# YAML: compose files, Kubernetes manifests, Helm values, CI files


@dataclass(slots=True)
class _YamlContext:
    text: str
    index: LineIndex
    rocm_version: str
    offload_archs: tuple[str, ...]
    hits: list[Hit] = field(default_factory=list)
    seen: set[int] = field(default_factory=set)


_SHELL_KEYS = frozenset(
    {"run", "script", "before_script", "after_script", "command", "args", "entrypoint"}
)
_ENV_KEYS = frozenset({"env", "environment", "variables"})
_RESOURCE_PARENTS = frozenset({"limits", "requests", "resources", "capacity", "allocatable"})


def _delete_lines(ctx: _YamlContext, first: int, last: int) -> TextEdit:
    starts = ctx.index.starts
    start = starts[first]
    end = starts[last + 1] if last + 1 < len(starts) else len(ctx.text)
    return TextEdit(start, end, "")


def analyze_yaml(
    text: str,
    rocm_version: str = kb.DEFAULT_ROCM_VERSION,
    offload_archs: tuple[str, ...] = DEFAULT_OFFLOAD_ARCHS,
) -> tuple[list[Hit], YamlProblem | None]:
    """GP4xx hits in a YAML file (all documents), and why it could not be parsed, if so."""
    ctx = _YamlContext(text, LineIndex(text), rocm_version, offload_archs)
    documents, problem = compose_documents(text)
    if problem is not None:
        _fallback_lines(ctx)
        return ctx.hits, problem
    try:
        for document in documents:
            if document is not None:
                _walk(ctx, document, ())
    except RecursionError:
        return ctx.hits, YamlProblem(0, "nested too deeply to analyse completely")
    return ctx.hits, None


def _walk(ctx: _YamlContext, node: Node, path: tuple[str, ...]) -> None:
    if id(node) in ctx.seen:
        return
    ctx.seen.add(id(node))
    if isinstance(node, MappingNode):
        if len(path) == 2 and path[0] == "services":
            _compose_service(ctx, node)
        for key, value in node.value:
            if not isinstance(key, ScalarNode):
                continue
            name = str(key.value)
            if name == "<<":
                _walk(ctx, value, path)
                continue
            _key_hits(ctx, node, key, value, path)
            _walk(ctx, value, (*path, name))
    elif isinstance(node, SequenceNode):
        for item in node.value:
            _walk(ctx, item, (*path, "[]"))
    elif isinstance(node, ScalarNode):
        keys = [p for p in path if p != "[]"]
        if keys and keys[-1] in _SHELL_KEYS:
            _shell_scalar(ctx, node)
        if keys and keys[-1] in _ENV_KEYS and path[-1] == "[]":
            _env_list_item(ctx, node)


def _key_hits(
    ctx: _YamlContext, parent: MappingNode, key: ScalarNode, value: Node, path: tuple[str, ...]
) -> None:
    name = str(key.value)
    parent_key = path[-1] if path else ""
    keys = [p for p in path if p != "[]"]
    in_service = len(path) == 2 and path[0] == "services"
    if name == "image":
        _image_value(ctx, value)
    elif name == "runtimeClassName" and scalar_is(value, "nvidia"):
        first, last = key.start_mark.line, last_line(value)
        ctx.hits.append(
            Hit(
                NVIDIA_CONTAINER_RUNTIME,
                key.start_mark.index,
                value.end_mark.index,
                "runtimeClassName: nvidia selects the NVIDIA runtime; AMD nodes have none",
                "k8s-runtime",
                ChangeStatus.NEEDS_REVIEW,
                (_delete_lines(ctx, first, last),),
                note="removed: the AMD device plugin needs no runtime class",
                fix="Remove runtimeClassName.",
            )
        )
    elif name == "runtime" and scalar_is(value, "nvidia") and not in_service:
        ctx.hits.append(
            Hit(
                NVIDIA_CONTAINER_RUNTIME,
                key.start_mark.index,
                value.end_mark.index,
                "runtime: nvidia selects the NVIDIA container runtime",
                "compose-runtime",
                ChangeStatus.UNCONVERTED,
                note="outside a compose service: give the container /dev/kfd and /dev/dri instead",
            )
        )
    elif (
        name == "devices"
        and keys[-3:] == ["deploy", "resources", "reservations"]
        and not (len(path) == 5 and path[0] == "services")
        and isinstance(value, SequenceNode)
    ):
        # e.g. an `x-gpu: &gpu` extension merged into services with `<<: *gpu`
        for item in value.value:
            if isinstance(item, MappingNode) and _is_nvidia_device(item):
                ctx.hits.append(
                    Hit(
                        COMPOSE_GPU_RESERVATION,
                        item.start_mark.index,
                        item.value[0][0].end_mark.index,
                        "NVIDIA device reservation (deploy.resources.reservations.devices)",
                        "compose-gpus",
                        ChangeStatus.UNCONVERTED,
                        note="outside a compose service: give the services /dev/kfd and "
                        "/dev/dri instead",
                    )
                )
    elif name.startswith("nvidia.com/"):
        if "nodeSelector" in keys or parent_key in ("matchLabels",):
            _node_label_hit(ctx, key, value, name)
        elif (
            parent_key in _RESOURCE_PARENTS
            or name == "nvidia.com/gpu"
            or name.startswith("nvidia.com/mig-")
        ):
            _resource_hit(ctx, key, name)
    elif name == "deviceClassName" and scalar_is(value, "gpu.nvidia.com"):
        ctx.hits.append(
            Hit(
                K8S_NVIDIA_GPU_RESOURCE,
                value.start_mark.index,
                value.end_mark.index,
                "the resource claim asks for NVIDIA's DRA device class gpu.nvidia.com",
                "k8s-resource",
                ChangeStatus.UNCONVERTED,
                note="use the device class of AMD's DRA driver in your cluster",
            )
        )
    elif (
        "nodeSelector" in keys
        and isinstance(value, ScalarNode)
        and _accelerator_label(name, str(value.value))
    ):
        _node_label_hit(ctx, key, value, name)
    elif name == "key" and isinstance(value, ScalarNode):
        label = str(value.value)
        if "tolerations" in keys and label.startswith("nvidia.com/"):
            _toleration_hit(ctx, value, label)
        elif ("matchExpressions" in keys or "nodeSelectorTerms" in keys) and (
            label.startswith("nvidia.com/") or _accelerator_label(label, _values_text(parent))
        ):
            _node_label_hit(ctx, value, None, label)
    if name in _ENV_KEYS and isinstance(value, MappingNode):
        for env_key, env_value in value.value:
            if isinstance(env_key, ScalarNode):
                _env_setting(ctx, str(env_key.value), env_key, env_value, value)
    if (
        name == "name"
        and "env" in keys
        and path
        and path[-1] == "[]"
        and isinstance(value, ScalarNode)
    ):
        _k8s_env_item(ctx, parent, key, value)


def _values_text(mapping: MappingNode) -> str:
    for key, value in mapping.value:
        if (
            isinstance(key, ScalarNode)
            and key.value == "values"
            and isinstance(value, SequenceNode)
        ):
            return " ".join(str(v.value) for v in value.value if isinstance(v, ScalarNode))
    return ""


def _accelerator_label(name: str, value: str) -> bool:
    """Cloud labels that name NVIDIA accelerators, e.g. cloud.google.com/gke-accelerator."""
    lowered = name.lower()
    return ("accelerator" in lowered or "gpu" in lowered) and value.lower().lstrip("[ ").startswith(
        "nvidia"
    )


def _image_value(ctx: _YamlContext, value: Node) -> None:
    if isinstance(value, ScalarNode):
        ref = str(value.value)
        start, end = scalar_span(value)
        if "${" in ref or "{{" in ref:
            default = re.search(r"\$\{[A-Za-z_][A-Za-z0-9_]*:?-([^}]+)\}", ref)
            if default is None:
                return
            offset = ctx.text.find(default.group(1), start, end)
            hit = image_hit(
                ctx.text,
                start,
                end,
                default.group(1),
                ctx.rocm_version,
                edit_span=(offset, offset + len(default.group(1))) if offset >= 0 else None,
            )
        else:
            hit = image_hit(ctx.text, start, end, ref, ctx.rocm_version)
        if hit is not None:
            ctx.hits.append(hit)
    elif isinstance(value, MappingNode):  # Helm values: image: {repository: ..., tag: ...}
        parts = {str(k.value): v for k, v in value.value if isinstance(k, ScalarNode)}
        repository = parts.get("repository")
        if not isinstance(repository, ScalarNode):
            return
        tag = parts.get("tag")
        ref = str(repository.value)
        if isinstance(tag, ScalarNode) and tag.value:
            ref += f":{tag.value}"
        start, end = scalar_span(repository)
        hit = image_hit(ctx.text, start, end, ref, ctx.rocm_version, where="repository and tag")
        if hit is None:
            return
        if hit.edits and ":" in hit.after:
            new_repository, new_tag = hit.after.rsplit(":", 1)
            edits = [TextEdit(start, end, new_repository)]
            if isinstance(tag, ScalarNode):
                tag_start, tag_end = scalar_span(tag)
                edits.append(TextEdit(tag_start, tag_end, new_tag))
            hit = replace(hit, edits=tuple(edits))
        ctx.hits.append(hit)


def _resource_hit(ctx: _YamlContext, key: ScalarNode, name: str) -> None:
    start, end = scalar_span(key)
    if name in ("nvidia.com/gpu", "nvidia.com/gpu.shared"):
        ctx.hits.append(
            Hit(
                K8S_NVIDIA_GPU_RESOURCE,
                start,
                end,
                f"{name} is advertised by NVIDIA's device plugin only",
                "k8s-resource",
                ChangeStatus.CONVERTED if name == "nvidia.com/gpu" else ChangeStatus.NEEDS_REVIEW,
                (TextEdit(start, end, "amd.com/gpu"),),
                note=""
                if name == "nvidia.com/gpu"
                else "time-sliced NVIDIA GPUs became whole AMD GPUs",
                fix="Request amd.com/gpu.",
            )
        )
        return
    ctx.hits.append(
        Hit(
            K8S_NVIDIA_GPU_RESOURCE,
            start,
            end,
            f"{name} is an NVIDIA GPU resource",
            "k8s-resource",
            ChangeStatus.UNCONVERTED,
            note="MIG and other NVIDIA slices have no direct AMD resource; request amd.com/gpu "
            "or a GPU partition your cluster exposes",
        )
    )


def _node_label_hit(ctx: _YamlContext, key: ScalarNode, value: Node | None, label: str) -> None:
    start, end = scalar_span(key)
    if label == "nvidia.com/gpu.present":
        ctx.hits.append(
            Hit(
                K8S_NVIDIA_NODE_SELECTOR,
                start,
                end,
                f"{label} is set on NVIDIA GPU nodes only",
                "k8s-node-selector",
                ChangeStatus.NEEDS_REVIEW,
                (TextEdit(start, end, "feature.node.kubernetes.io/amd-gpu"),),
                note="feature.node.kubernetes.io/amd-gpu is set by the AMD GPU Operator's "
                "node feature rule; check that your nodes carry it",
                fix="Select feature.node.kubernetes.io/amd-gpu.",
            )
        )
        return
    shown = f"{label}: {value.value}" if isinstance(value, ScalarNode) else label
    ctx.hits.append(
        Hit(
            K8S_NVIDIA_NODE_SELECTOR,
            start,
            end,
            f"{shown} selects NVIDIA GPU nodes",
            "k8s-node-selector",
            ChangeStatus.UNCONVERTED,
            note="AMD nodes carry other labels (amd.com/gpu.product-name, amd.com/gpu.family, "
            "amd.com/gpu.vram...) with other values; pick them from kubectl get nodes --show-labels",
        )
    )


def _toleration_hit(ctx: _YamlContext, value: ScalarNode, label: str) -> None:
    start, end = scalar_span(value)
    convertible = label == "nvidia.com/gpu"
    ctx.hits.append(
        Hit(
            K8S_NVIDIA_TOLERATION,
            start,
            end,
            f"tolerates the {label} taint of NVIDIA GPU nodes",
            "k8s-toleration",
            ChangeStatus.NEEDS_REVIEW if convertible else ChangeStatus.UNCONVERTED,
            (TextEdit(start, end, "amd.com/gpu"),) if convertible else (),
            note="check the taint your AMD nodes carry (kubectl describe node)",
            fix="Tolerate the AMD nodes' taint (often amd.com/gpu).",
        )
    )


def _env_setting(
    ctx: _YamlContext, name: str, key: ScalarNode, value: Node, mapping: MappingNode
) -> None:
    """One ``NAME: value`` of an environment mapping (compose, CI)."""
    if _NVIDIA_ENV_RE.match(name):
        start, end = scalar_span(key)
        if name == "NVIDIA_VISIBLE_DEVICES":
            ctx.hits.append(_nvidia_env_hit(ctx.text, name, start, end, (start, end)))
        else:
            hit = _nvidia_env_hit(ctx.text, name, start, end, None)
            deletion = _delete_lines(ctx, key.start_mark.line, last_line(value))
            ctx.hits.append(replace(hit, edits=(deletion,)))
        return
    if isinstance(value, ScalarNode):
        quote = "" if value.style in ("'", '"') else '"'
        ctx.hits.extend(
            env_assignment_hits(
                ctx.text, name, scalar_span(key), scalar_span(value), ctx.offload_archs, quote=quote
            )
        )


def _env_list_item(ctx: _YamlContext, node: ScalarNode) -> None:
    """``- NAME=value`` in a compose environment list."""
    text = str(node.value)
    name, sep, _ = text.partition("=")
    if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        return
    start, end = scalar_span(node)
    name_span = (start, start + len(name))
    if _NVIDIA_ENV_RE.match(name):
        if name == "NVIDIA_VISIBLE_DEVICES":
            ctx.hits.append(_nvidia_env_hit(ctx.text, name, start, end, name_span))
        else:
            hit = _nvidia_env_hit(ctx.text, name, start, end, None)
            deletion = _delete_lines(ctx, node.start_mark.line, last_line(node))
            ctx.hits.append(replace(hit, edits=(deletion,)))
        return
    ctx.hits.extend(
        env_assignment_hits(
            ctx.text, name, name_span, (name_span[1] + 1, end), ctx.offload_archs, quote=""
        )
    )


def _k8s_env_item(ctx: _YamlContext, item: MappingNode, key: ScalarNode, value: ScalarNode) -> None:
    """``- name: X`` / ``value: Y`` in a Kubernetes container's env list."""
    name = str(value.value)
    entries = {str(k.value): v for k, v in item.value if isinstance(k, ScalarNode)}
    env_value = entries.get("value")
    if _NVIDIA_ENV_RE.match(name):
        start, end = scalar_span(value)
        if name == "NVIDIA_VISIBLE_DEVICES":
            ctx.hits.append(_nvidia_env_hit(ctx.text, name, start, end, (start, end)))
        else:
            hit = _nvidia_env_hit(ctx.text, name, start, end, None)
            first = item.start_mark.line
            deletion = _delete_lines(ctx, first, last_line(item))
            ctx.hits.append(replace(hit, edits=(deletion,)))
        return
    if isinstance(env_value, ScalarNode):
        quote = "" if env_value.style in ("'", '"') else '"'
        ctx.hits.extend(
            env_assignment_hits(
                ctx.text,
                name,
                scalar_span(value),
                scalar_span(env_value),
                ctx.offload_archs,
                quote=quote,
            )
        )


def _shell_scalar(ctx: _YamlContext, node: ScalarNode) -> None:
    """Shell code in a CI step or a container command: docker, pip, apt, nvcc."""
    start, end = node.start_mark.index, node.end_mark.index
    if node.style in ("'", '"'):
        if node.start_mark.line != node.end_mark.line:
            return  # multi-line quoted scalars fold lines: offsets would not map back
        start, end = start + 1, end - 1
    elif node.style == ">":
        return
    commands = shell_commands(ctx.text, start, end)
    ctx.hits.extend(container_shell_hits(ctx.text, commands, ctx.rocm_version))
    ctx.hits.extend(build_word_hits(ctx.text, commands, "shell", ctx.offload_archs))


# Compose services -----------------------------------------------------------------------------


def _is_nvidia_device(item: Node) -> bool:
    if not isinstance(item, MappingNode):
        return False
    driver = mapping_get(item, "driver")
    if driver is not None:
        return scalar_is(driver[1], "nvidia")
    capabilities = mapping_get(item, "capabilities")
    if capabilities is not None and isinstance(capabilities[1], SequenceNode):
        return any(scalar_is(c, "gpu") for c in capabilities[1].value)
    return False


def _compose_service(ctx: _YamlContext, service: MappingNode) -> None:
    """runtime: nvidia, gpus: and NVIDIA device reservations of one compose service."""
    if not service.value:
        return
    indent = " " * service.value[0][0].start_mark.column
    gpu_hits: list[Hit] = []
    removals: list[tuple[int, int]] = []  # line ranges to delete
    anchors: list[int] = []  # lines of the service keys involved: the new keys go above them
    runtime = mapping_get(service, "runtime")
    if runtime is not None and scalar_is(runtime[1], "nvidia"):
        key, value = runtime
        removals.append((key.start_mark.line, last_line(value)))
        anchors.append(key.start_mark.line)
        gpu_hits.append(
            Hit(
                NVIDIA_CONTAINER_RUNTIME,
                key.start_mark.index,
                value.end_mark.index,
                "runtime: nvidia selects the NVIDIA container runtime",
                "compose-runtime",
                ChangeStatus.CONVERTED,
                fix="Give the service /dev/kfd and /dev/dri instead.",
            )
        )
    gpus = mapping_get(service, "gpus")
    if gpus is not None:
        key, value = gpus
        removals.append((key.start_mark.line, last_line(value)))
        anchors.append(key.start_mark.line)
        gpu_hits.append(
            Hit(
                COMPOSE_GPU_RESERVATION,
                key.start_mark.index,
                key.end_mark.index,
                "gpus: requests NVIDIA GPUs for the service",
                "compose-gpus",
                ChangeStatus.CONVERTED,
                fix="Give the service /dev/kfd and /dev/dri instead.",
            )
        )
    reservation = _reservation_removal(service)
    if reservation is not None:
        items, lines, deploy_line = reservation
        removals.extend(lines)
        anchors.append(deploy_line)
        for item in items:
            first_key = item.value[0][0] if isinstance(item, MappingNode) and item.value else item
            gpu_hits.append(
                Hit(
                    COMPOSE_GPU_RESERVATION,
                    item.start_mark.index,
                    first_key.end_mark.index,
                    "the service reserves NVIDIA GPUs (deploy.resources.reservations.devices)",
                    "compose-gpus",
                    ChangeStatus.CONVERTED,
                    fix="Give the service /dev/kfd and /dev/dri instead.",
                )
            )
    if not gpu_hits:
        return
    # Items appended to existing lists come first: they may land where the new keys go.
    edits = [_delete_lines(ctx, first, last) for first, last in removals]
    edits.extend(_device_appends(ctx, service))
    anchor_line = min(anchors)
    additions, notes = _device_access(ctx, service, indent)
    if additions:
        at = ctx.index.starts[anchor_line]
        edits.append(TextEdit(at, at, "".join(additions)))
    first_hit = gpu_hits[0]
    gpu_hits[0] = replace(
        first_hit,
        status=ChangeStatus.NEEDS_REVIEW if notes else first_hit.status,
        edits=tuple(edits),
        note="; ".join(notes),
        after="; ".join(f"{k}: [{', '.join(v)}]" for k, v in rocm_compose_access().items() if v),
    )
    for position, hit in enumerate(gpu_hits[1:], start=1):
        gpu_hits[position] = replace(
            hit, edits=tuple(edits), after="(replaced by the device list above)"
        )
    ctx.hits.extend(gpu_hits)


def _reservation_removal(
    service: MappingNode,
) -> tuple[list[Node], list[tuple[int, int]], int] | None:
    """NVIDIA device reservations, the line ranges that remove them (emptied parents too) and
    the line of the service's ``deploy`` key."""
    chain: list[tuple[ScalarNode, Node]] = []
    node: Node = service
    for name in ("deploy", "resources", "reservations", "devices"):
        found = mapping_get(node, name)
        if found is None:
            return None
        chain.append(found)
        node = found[1]
    devices = chain[-1][1]
    if not isinstance(devices, SequenceNode):
        return None
    nvidia = [item for item in devices.value if _is_nvidia_device(item)]
    if not nvidia:
        return None
    deploy_line: int = chain[0][0].start_mark.line
    if len(nvidia) < len(devices.value):
        return nvidia, [(item.start_mark.line, last_line(item)) for item in nvidia], deploy_line
    # Everything under `devices` goes; so does each parent left with nothing else in it.
    level = len(chain) - 1
    while level > 0:
        parent = chain[level - 1][1]
        if isinstance(parent, MappingNode) and len(parent.value) == 1:
            level -= 1
        else:
            break
    key, value = chain[level]
    return nvidia, [(key.start_mark.line, last_line(value))], deploy_line


def _device_access(
    ctx: _YamlContext, service: MappingNode, indent: str
) -> tuple[list[str], list[str]]:
    """New service keys that hand the ROCm devices over, for keys the service lacks."""
    wanted = rocm_compose_access()
    lines: list[str] = []
    notes: list[str] = []
    for name, items in wanted.items():
        existing = mapping_get(service, name)
        if existing is None:
            lines.append(f"{indent}{name}:\n")
            lines.extend(f"{indent}  - {item}\n" for item in items)
        elif not isinstance(existing[1], SequenceNode) or existing[1].flow_style:
            missing = _missing_items(existing[1], items)
            if missing:
                notes.append(f"add {', '.join(missing)} to {name} by hand")
    return lines, notes


def _missing_items(node: Node, wanted: Sequence[str]) -> list[str]:
    """The ``wanted`` items a compose list lacks (``/dev/kfd:/dev/kfd`` counts as /dev/kfd)."""
    present: set[str] = set()
    if isinstance(node, SequenceNode):
        present = {
            str(item.value).split(":")[0] if "/dev/" in str(item.value) else str(item.value)
            for item in node.value
            if isinstance(item, ScalarNode)
        }
    return [item for item in wanted if item not in present]


def _device_appends(ctx: _YamlContext, service: MappingNode) -> tuple[TextEdit, ...]:
    """Items appended to block-style devices/group_add/security_opt lists the service has."""
    wanted = rocm_compose_access()
    edits: list[TextEdit] = []
    for name, items in wanted.items():
        existing = mapping_get(service, name)
        if existing is None or not isinstance(existing[1], SequenceNode) or existing[1].flow_style:
            continue
        sequence = existing[1]
        missing = _missing_items(sequence, items)
        if not missing or not sequence.value:
            continue
        last = sequence.value[-1]
        dash_indent = " " * max(last.start_mark.column - 2, 0)
        at_line = last_line(sequence) + 1
        at = ctx.index.starts[at_line] if at_line < len(ctx.index.starts) else len(ctx.text)
        edits.append(TextEdit(at, at, "".join(f"{dash_indent}- {item}\n" for item in missing)))
    return tuple(edits)


# Unparsable YAML (Helm templates): a line-by-line look at the strongest signals ----------------

_FALLBACK_RESOURCE_RE = re.compile(r"^\s*([\"']?)(nvidia\.com/gpu)\1\s*:")
_FALLBACK_IMAGE_RE = re.compile(r"^\s*(?:-\s*)?image:\s*([\"']?)([^\s\"'#{}]+)\1\s*(?:#.*)?$")
_FALLBACK_RUNTIME_RE = re.compile(r"^\s*runtimeClassName:\s*([\"']?)nvidia\1\s*$")


def _fallback_lines(ctx: _YamlContext) -> None:
    for start in ctx.index.starts:
        end = ctx.index.line_end(start)
        line = ctx.text[start:end]
        resource = _FALLBACK_RESOURCE_RE.match(line)
        if resource:
            a, b = start + resource.start(2), start + resource.end(2)
            ctx.hits.append(
                Hit(
                    K8S_NVIDIA_GPU_RESOURCE,
                    a,
                    b,
                    "nvidia.com/gpu is advertised by NVIDIA's device plugin only",
                    "k8s-resource",
                    ChangeStatus.NEEDS_REVIEW,
                    (TextEdit(a, b, "amd.com/gpu"),),
                    note="changed in a file that does not parse as YAML; check the template",
                    fix="Request amd.com/gpu.",
                )
            )
        image = _FALLBACK_IMAGE_RE.match(line)
        if image:
            hit = image_hit(
                ctx.text,
                start + image.start(2),
                start + image.end(2),
                image.group(2),
                ctx.rocm_version,
            )
            if hit is not None:
                ctx.hits.append(hit)
        if _FALLBACK_RUNTIME_RE.match(line):
            ctx.hits.append(
                Hit(
                    NVIDIA_CONTAINER_RUNTIME,
                    start + len(line) - len(line.lstrip()),
                    end,
                    "runtimeClassName: nvidia selects the NVIDIA runtime; AMD nodes have none",
                    "k8s-runtime",
                    ChangeStatus.UNCONVERTED,
                    note="remove it by hand (the file does not parse as YAML)",
                )
            )


# ---------------------------------------------------------------------------------------------
# Scanners


@scanner(FileKind.DOCKERFILE, name="dockerfile")
def scan_dockerfile(source: SourceText, enabled: frozenset[str]) -> ScanOutput:
    yield from hits_to_findings(source.file.rel, source.text, analyze_dockerfile(source.text))


@scanner(FileKind.COMPOSE, FileKind.YAML, name="container-yaml")
def scan_yaml(source: SourceText, enabled: frozenset[str]) -> ScanOutput:
    hits, problem = analyze_yaml(source.text)
    yield from hits_to_findings(source.file.rel, source.text, hits)
    if problem is not None:
        yield Skipped(
            source.file.rel,
            SkipKind.MALFORMED,
            f"YAML does not parse: {problem.reason}; only a line-by-line check for GPU "
            "resources and images was done",
            problem.line,
            partial=True,
        )


@scanner(FileKind.SHELL, name="shell-containers")
def scan_shell_containers(source: SourceText, enabled: frozenset[str]) -> ScanOutput:
    commands = shell_commands(source.text)
    hits = container_shell_hits(source.text, commands, kb.DEFAULT_ROCM_VERSION)
    yield from hits_to_findings(source.file.rel, source.text, hits)
