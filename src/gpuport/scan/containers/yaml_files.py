"""The walk over YAML files: compose services, Kubernetes manifests, Helm values, CI steps.

:func:`yaml_hits` walks every node of every document and hands keys, compose services and
scalars to the rules of :mod:`gpuport.scan.containers.manifests`, to GP401/GP402, and shell
steps to the command and build rules. A compose service's NVIDIA runtime and GPU reservations
become one ROCm device list. YAML that does not parse gets a line-by-line look
(:func:`fallback_hits`) for the strongest signals.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from gpuport.edits import ChangeStatus, TextEdit
from gpuport.rules import Rule
from gpuport.scan.containers.commands import command_hits
from gpuport.scan.containers.common import (
    ContainerContext,
    delete_lines,
    is_nvidia_toolkit_variable,
    rocm_compose_access,
)
from gpuport.scan.containers.env import (
    NVIDIA_CONTAINER_ENV,
    K8sEnvItem,
    YamlEnvEntry,
    YamlEnvListItem,
    nvidia_container_env,
)
from gpuport.scan.containers.images import (
    CUDA_CONTAINER_IMAGE,
    ImageRef,
    YamlImage,
    cuda_container_image,
)
from gpuport.scan.containers.manifests import (
    COMPOSE_GPU_RESERVATION,
    K8S_NVIDIA_GPU_RESOURCE,
    K8S_NVIDIA_NODE_SELECTOR,
    K8S_NVIDIA_TOLERATION,
    NVIDIA_CONTAINER_RUNTIME,
    ComposeService,
    FallbackLine,
    MappingSite,
    ServicePart,
    compose_gpu_reservation,
    in_service,
    k8s_nvidia_gpu_resource,
    k8s_nvidia_node_selector,
    k8s_nvidia_toleration,
    nvidia_container_runtime,
)
from gpuport.syntax.shell import shell_commands
from gpuport.syntax.yaml import (
    MappingNode,
    Node,
    ScalarNode,
    SequenceNode,
    last_line,
    mapping_get,
    scalar_span,
)

_SHELL_KEYS = frozenset(
    {"run", "script", "before_script", "after_script", "command", "args", "entrypoint"}
)
_ENV_KEYS = frozenset({"env", "environment", "variables"})
_MappingCheck = Callable[[ContainerContext, MappingSite], object]
_KEY_RULES: tuple[tuple[Rule, _MappingCheck], ...] = (
    (NVIDIA_CONTAINER_RUNTIME, nvidia_container_runtime),
    (COMPOSE_GPU_RESERVATION, compose_gpu_reservation),
    (K8S_NVIDIA_GPU_RESOURCE, k8s_nvidia_gpu_resource),
    (K8S_NVIDIA_NODE_SELECTOR, k8s_nvidia_node_selector),
    (K8S_NVIDIA_TOLERATION, k8s_nvidia_toleration),
)


def yaml_hits(ctx: ContainerContext, documents: Sequence[Node | None]) -> None:
    """Every container and build rule's hits in the YAML documents of ``ctx.text``."""
    checks = [check for rule_, check in _KEY_RULES if ctx.run.runs(rule_)]
    for document in documents:
        if document is not None:
            _walk(ctx, checks, document, ())


def _walk(
    ctx: ContainerContext, checks: list[_MappingCheck], node: Node, path: tuple[str, ...]
) -> None:
    if id(node) in ctx.seen:
        return
    ctx.seen.add(id(node))
    run = ctx.run
    if isinstance(node, MappingNode):
        if in_service(path):
            _compose_service(ctx, node)
        keys = [p for p in path if p != "[]"]
        entries = [
            (key, value, name)
            for key, value in node.value
            if isinstance(key, ScalarNode) and (name := str(key.value)) != "<<"
        ]
        site = MappingSite(node, path, keys, entries)
        for check in checks:
            check(ctx, site)
        for key, value in node.value:
            if not isinstance(key, ScalarNode):
                continue
            name = str(key.value)
            if name == "<<":  # a merged mapping: its keys are this mapping's
                _walk(ctx, checks, value, path)
                continue
            if name == "image" and run.runs(CUDA_CONTAINER_IMAGE):
                cuda_container_image(ctx, YamlImage(value))
            if name in _ENV_KEYS and isinstance(value, MappingNode):
                for env_key, env_value in value.value:
                    if isinstance(env_key, ScalarNode):
                        _env_entry(ctx, str(env_key.value), env_key, env_value)
            if (
                name == "name"
                and "env" in keys
                and path
                and path[-1] == "[]"
                and isinstance(value, ScalarNode)
            ):
                _k8s_env_item(ctx, node, value)
            _walk(ctx, checks, value, (*path, name))
    elif isinstance(node, SequenceNode):
        skipped = _cuda_steps_beside_rocm(node)
        for item in node.value:
            if id(item) not in skipped:
                _walk(ctx, checks, item, (*path, "[]"))
    elif isinstance(node, ScalarNode):
        keys = [p for p in path if p != "[]"]
        if keys and keys[-1] in _SHELL_KEYS:
            _shell_scalar(ctx, node)
        if keys and keys[-1] in _ENV_KEYS and path[-1] == "[]":
            _env_list_item(ctx, node)


# A CI step's `if:` condition that selects ROCm, or CUDA (and not ROCm).
_ROCM_CONDITION_RE = re.compile(r"(?i)rocm|\bhip\b|\bamd\b|gfx\d")
_CUDA_CONDITION_RE = re.compile(r"(?i)cuda|nvidia|\bcu\d{2,3}\b")


def _step_condition(item: Node) -> str:
    if isinstance(item, MappingNode):
        for key, value in item.value:
            if isinstance(key, ScalarNode) and key.value == "if" and isinstance(value, ScalarNode):
                return str(value.value)
    return ""


def _cuda_steps_beside_rocm(node: SequenceNode) -> set[int]:
    """CI steps whose `if:` selects CUDA in a list that also has a step selecting ROCm: the
    CUDA step is the other half of a pair, not porting work (ids of the step nodes)."""
    conditions = [(item, _step_condition(item)) for item in node.value]
    if not any(_ROCM_CONDITION_RE.search(c) and "!" not in c for _, c in conditions):
        return set()
    return {
        id(item)
        for item, condition in conditions
        if _CUDA_CONDITION_RE.search(condition) and not _ROCM_CONDITION_RE.search(condition)
    }


def _env_entry(ctx: ContainerContext, name: str, key: ScalarNode, value: Node) -> None:
    """One ``NAME: value`` of an environment mapping (compose, CI)."""
    if is_nvidia_toolkit_variable(name):
        if ctx.run.runs(NVIDIA_CONTAINER_ENV):
            nvidia_container_env(ctx, YamlEnvEntry(name, key, value))
        return
    if isinstance(value, ScalarNode):
        quote = "" if value.style in ("'", '"') else '"'
        ctx.build.env_setting(name, scalar_span(key), scalar_span(value), quote=quote)


def _env_list_item(ctx: ContainerContext, node: ScalarNode) -> None:
    """``- NAME=value`` in a compose environment list."""
    text = str(node.value)
    name, sep, _ = text.partition("=")
    if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        return
    if is_nvidia_toolkit_variable(name):
        if ctx.run.runs(NVIDIA_CONTAINER_ENV):
            nvidia_container_env(ctx, YamlEnvListItem(name, node))
        return
    start, end = scalar_span(node)
    name_span = (start, start + len(name))
    ctx.build.env_setting(name, name_span, (name_span[1] + 1, end), quote="")


def _k8s_env_item(ctx: ContainerContext, item: MappingNode, value: ScalarNode) -> None:
    """``- name: X`` / ``value: Y`` in a Kubernetes container's env list."""
    name = str(value.value)
    if is_nvidia_toolkit_variable(name):
        if ctx.run.runs(NVIDIA_CONTAINER_ENV):
            nvidia_container_env(ctx, K8sEnvItem(item, value))
        return
    entries = {str(k.value): v for k, v in item.value if isinstance(k, ScalarNode)}
    env_value = entries.get("value")
    if isinstance(env_value, ScalarNode):
        quote = "" if env_value.style in ("'", '"') else '"'
        ctx.build.env_setting(name, scalar_span(value), scalar_span(env_value), quote=quote)


def _shell_scalar(ctx: ContainerContext, node: ScalarNode) -> None:
    """Shell code in a CI step or a container command: docker, pip, apt, nvcc."""
    start, end = node.start_mark.index, node.end_mark.index
    if node.style in ("'", '"'):
        if node.start_mark.line != node.end_mark.line:
            return  # multi-line quoted scalars fold lines: offsets would not map back
        start, end = start + 1, end - 1
    elif node.style == ">":
        return
    commands = shell_commands(ctx.text, start, end)
    command_hits(ctx, commands)
    ctx.build.commands(commands)


def _compose_service(ctx: ContainerContext, service: MappingNode) -> None:
    """One service's NVIDIA runtime and GPU reservations become the ROCm devices, group and
    security option: every hit found carries the same edits, the first one the new keys."""
    if not service.value:
        return
    parts: list[ServicePart] = []
    if ctx.run.runs(NVIDIA_CONTAINER_RUNTIME):
        parts.extend(nvidia_container_runtime(ctx, ComposeService(service)))
    if ctx.run.runs(COMPOSE_GPU_RESERVATION):
        parts.extend(compose_gpu_reservation(ctx, ComposeService(service)))
    gpu_hits = [hit for part in parts for hit in part.hits]
    if not gpu_hits:
        return
    indent = " " * service.value[0][0].start_mark.column
    # Items appended to existing lists come first: they may land where the new keys go.
    edits = [delete_lines(ctx, first, last) for part in parts for first, last in part.removals]
    edits.extend(_device_appends(ctx, service))
    anchor_line = min(part.anchor for part in parts)
    additions, notes = _device_access(ctx, service, indent)
    if additions:
        assert ctx.index is not None
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
    for hit in gpu_hits:
        ctx.add(hit)


def _device_access(
    ctx: ContainerContext, service: MappingNode, indent: str
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


def _device_appends(ctx: ContainerContext, service: MappingNode) -> tuple[TextEdit, ...]:
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
        starts = ctx.index.starts if ctx.index is not None else [0]
        at = starts[at_line] if at_line < len(starts) else len(ctx.text)
        edits.append(TextEdit(at, at, "".join(f"{dash_indent}- {item}\n" for item in missing)))
    return tuple(edits)


# Unparsable YAML (Helm templates): a line-by-line look at the strongest signals ----------------

_FALLBACK_IMAGE_RE = re.compile(r"^\s*(?:-\s*)?image:\s*([\"']?)([^\s\"'#{}]+)\1\s*(?:#.*)?$")


def fallback_hits(ctx: ContainerContext) -> None:
    """GP408, GP401 and GP406 line by line, in a file that does not parse as YAML."""
    assert ctx.index is not None
    run = ctx.run
    resources, images, runtime = (
        run.runs(K8S_NVIDIA_GPU_RESOURCE),
        run.runs(CUDA_CONTAINER_IMAGE),
        run.runs(NVIDIA_CONTAINER_RUNTIME),
    )
    for start in ctx.index.starts:
        end = ctx.index.line_end(start)
        if resources:
            k8s_nvidia_gpu_resource(ctx, FallbackLine(start, end))
        image = _FALLBACK_IMAGE_RE.match(ctx.text[start:end]) if images else None
        if image:
            site = ImageRef(start + image.start(2), start + image.end(2), image.group(2))
            cuda_container_image(ctx, site)
        if runtime:
            nvidia_container_runtime(ctx, FallbackLine(start, end))
