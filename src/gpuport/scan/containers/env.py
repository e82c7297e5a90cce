"""GP402: environment variables only the NVIDIA container runtime reads, wherever they are set."""

from __future__ import annotations

from typing import NamedTuple

from gpuport.edits import ChangeStatus, Hit, TextEdit
from gpuport.findings import Category, Confidence, Severity
from gpuport.kb import build_tools
from gpuport.rules import rule
from gpuport.scan.build import delete_span
from gpuport.scan.containers.common import (
    AMD_TOOLKIT_DOC,
    ROCM_DOCKER_DOC,
    ContainerContext,
    delete_lines,
)
from gpuport.syntax.dockerfile import EnvPair, Instruction
from gpuport.syntax.yaml import MappingNode, Node, ScalarNode, last_line, scalar_span

_AMD_VISIBLE_DEVICES = "AMD_VISIBLE_DEVICES"


class EnvOption(NamedTuple):
    """``docker run -e NAME=value`` at ``text[start:end]``, the name at ``name_span``."""

    name: str
    start: int
    end: int
    name_span: tuple[int, int]


class DockerfileEnv(NamedTuple):
    """One pair of an ENV instruction; ``alone``: every pair of it is one to remove."""

    instruction: Instruction
    pair: EnvPair
    alone: bool


class YamlEnvEntry(NamedTuple):
    """``NAME: value`` of an environment mapping (compose, CI)."""

    name: str
    key: ScalarNode
    value: Node


class YamlEnvListItem(NamedTuple):
    """``- NAME=value`` of a compose environment list."""

    name: str
    node: ScalarNode


class K8sEnvItem(NamedTuple):
    """``- name: NAME`` (``value: ...``) of a Kubernetes container's env list."""

    item: MappingNode
    name_node: ScalarNode


EnvSite = EnvOption | DockerfileEnv | YamlEnvEntry | YamlEnvListItem | K8sEnvItem

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
    references=(AMD_TOOLKIT_DOC, ROCM_DOCKER_DOC),
    needles=tuple(
        build_tools.literal_prefix(p.pattern) for p in build_tools.nvidia_container_env()
    ),
)


def nvidia_container_env(ctx: ContainerContext, site: EnvSite) -> None:
    """GP402 for one NVIDIA toolkit variable set at ``site``.

    ``NVIDIA_VISIBLE_DEVICES`` is renamed to the AMD Container Toolkit's ``AMD_VISIBLE_DEVICES``;
    the other variables are removed (their whole line or instruction where they stand alone).
    """
    text = ctx.text
    name_span: tuple[int, int] | None
    removal: TextEdit | None = None
    if isinstance(site, EnvOption):
        name, start, end, name_span = site.name, site.start, site.end, site.name_span
    elif isinstance(site, DockerfileEnv):
        name, (start, end), name_span = site.pair.name, site.pair.span, site.pair.name_span
        if site.alone:
            line_start = text.rfind("\n", 0, site.instruction.start) + 1
            line_end = text.find("\n", site.instruction.end)
            removal = TextEdit(line_start, len(text) if line_end < 0 else line_end + 1, "")
    elif isinstance(site, YamlEnvEntry):
        name = site.name
        start, end = name_span = scalar_span(site.key)
        removal = delete_lines(ctx, site.key.start_mark.line, last_line(site.value))
    elif isinstance(site, YamlEnvListItem):
        name = site.name
        start, end = scalar_span(site.node)
        name_span = (start, start + len(name))
        removal = delete_lines(ctx, site.node.start_mark.line, last_line(site.node))
    else:
        name = str(site.name_node.value)
        start, end = name_span = scalar_span(site.name_node)
        removal = delete_lines(ctx, site.item.start_mark.line, last_line(site.item))
    if name == "NVIDIA_VISIBLE_DEVICES":
        status, edit = ChangeStatus.NEEDS_REVIEW, TextEdit(*name_span, _AMD_VISIBLE_DEVICES)
        note = (
            "AMD_VISIBLE_DEVICES is read by the AMD Container Toolkit; with plain "
            "--device passthrough the devices given decide (pass only the wanted "
            "/dev/dri/renderD* nodes, or set HIP_VISIBLE_DEVICES inside)"
        )
        fix = f"Use {_AMD_VISIBLE_DEVICES}."
    else:
        status, edit = ChangeStatus.CONVERTED, removal or delete_span(text, start, end)
        note, fix = "", f"Remove {name}."
    ctx.add(
        Hit(
            NVIDIA_CONTAINER_ENV,
            start,
            end,
            f"{name} is read by the NVIDIA container runtime only",
            "container-env",
            status,
            (edit,),
            note=note,
            fix=fix,
        )
    )
