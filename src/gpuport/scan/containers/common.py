"""What the container rules share and no rule owns: one file's context and the ROCm device access."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from gpuport import kb
from gpuport.edits import Hit, TextEdit
from gpuport.kb import build_tools
from gpuport.scan.build import BuildWords, RuleRun
from gpuport.syntax.text import LineIndex

ROCM_DOCKER_DOC = "https://rocm.docs.amd.com/projects/install-on-linux/en/latest/how-to/docker.html"
AMD_TOOLKIT_DOC = (
    "https://instinct.docs.amd.com/projects/container-toolkit/en/latest/container-runtime/"
    "running-workloads.html"
)
AMD_DEVICE_PLUGIN_DOC = "https://instinct.docs.amd.com/projects/k8s-device-plugin/en/latest/"
K8S_GPU_DOC = "https://kubernetes.io/docs/tasks/manage-gpus/scheduling-gpus/"


@dataclass(slots=True)
class ContainerContext:
    """One file's analysis: the container rules' run, the build rules for its shell code."""

    run: RuleRun
    rocm_version: str
    build: BuildWords  # GP5xx in RUN lines, CI steps and container environments
    index: LineIndex | None = None  # YAML files only
    seen: set[int] = field(default_factory=set)  # YAML nodes walked (aliases repeat them)
    # The project root (Dockerfiles read in a scan), for what the project's own build needs.
    root: Path | None = None
    rocm_base: bool = False  # the Dockerfile stage being read starts FROM a ROCm image

    @property
    def text(self) -> str:
        return self.run.text

    def add(self, hit: Hit) -> None:
        self.run.hits.append(hit)

    def hits(self) -> list[Hit]:
        """The enabled rules' hits: the container rules' first, then the build rules'."""
        return [*self.run.result(), *self.build.hits()]


# Variables of the NVIDIA Container Toolkit (kb/build_tools.toml [[nvidia_container_env]]).
_NVIDIA_ENV_RE = re.compile(
    "^" + build_tools.alternatives(build_tools.nvidia_container_env()) + "$"
)


def is_nvidia_toolkit_variable(name: str) -> bool:
    """Whether only the NVIDIA container runtime reads the environment variable ``name``."""
    return bool(_NVIDIA_ENV_RE.match(name))


def _rocm_flag_words() -> tuple[str, ...]:
    entry = kb.find_docker_flag("--gpus")
    if entry is None or not entry.rocm_flags:
        raise kb.KbError("kb/platform.toml: the --gpus docker flag has no rocm_flags")
    return entry.rocm_flags


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


def delete_lines(ctx: ContainerContext, first: int, last: int) -> TextEdit:
    """An edit removing the 0-based lines ``first`` to ``last``, both included."""
    assert ctx.index is not None
    starts = ctx.index.starts
    start = starts[first]
    end = starts[last + 1] if last + 1 < len(starts) else len(ctx.text)
    return TextEdit(start, end, "")
