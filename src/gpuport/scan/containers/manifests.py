"""Container rules in YAML: compose files, Kubernetes manifests, Helm values and CI files.

The NVIDIA runtime (GP406), compose GPU reservations (GP407), ``nvidia.com/gpu`` resources
(GP408), node selectors (GP409) and tolerations (GP410); :func:`yaml_hits` walks every node of
every document and hands keys, services and scalars to these rules, to GP401/GP402 and to the
build and command rules for shell steps. YAML that does not parse gets a line-by-line look
for the strongest signals.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from gpuport.edits import ChangeStatus, Hit, TextEdit
from gpuport.findings import Category, Confidence, Severity
from gpuport.rules import case_variants, rule
from gpuport.scan.containers.common import (
    AMD_DEVICE_PLUGIN_DOC,
    K8S_GPU_DOC,
    ROCM_DOCKER_DOC,
    ContainerContext,
    delete_lines,
)
from gpuport.syntax.yaml import (
    MappingNode,
    Node,
    ScalarNode,
    SequenceNode,
    last_line,
    mapping_get,
    scalar_is,
    scalar_span,
)

_NODE_LABELLER_DOC = (
    "https://github.com/ROCm/k8s-device-plugin/blob/master/cmd/k8s-node-labeller/README.md"
)


class MappingSite(NamedTuple):
    """A mapping node at ``path`` (keys, ``[]`` for list items), with its ``key: value`` entries.

    ``entries`` are (key node, value node, key text), merge keys (``<<``) left out; ``keys`` are
    the mapping keys above, list levels left out.
    """

    node: MappingNode
    path: tuple[str, ...]
    keys: list[str]
    entries: list[tuple[ScalarNode, Node, str]]


class ComposeService(NamedTuple):
    """A service of a compose file (``services.<name>``)."""

    service: MappingNode


class FallbackLine(NamedTuple):
    """One line ``text[start:end]`` of a YAML file that does not parse."""

    start: int
    end: int


class ServicePart(NamedTuple):
    """What one rule found in a compose service: its hits, the lines that go, where to add."""

    hits: tuple[Hit, ...]
    removals: tuple[tuple[int, int], ...]  # 0-based line ranges, both ends included
    anchor: int  # the line the new device keys go above


def in_service(path: tuple[str, ...]) -> bool:
    return len(path) == 2 and path[0] == "services"


# ---------------------------------------------------------------------------------------------
# GP406

_FALLBACK_RUNTIME_RE = re.compile(r"^\s*runtimeClassName:\s*([\"']?)nvidia\1\s*$")

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
    references=(ROCM_DOCKER_DOC, AMD_DEVICE_PLUGIN_DOC),
    needles=("nvidia",),
)


def nvidia_container_runtime(
    ctx: ContainerContext, site: MappingSite | ComposeService | FallbackLine
) -> list[ServicePart]:
    """GP406: ``runtimeClassName: nvidia``, ``runtime: nvidia`` (its service part, in compose)."""
    if isinstance(site, FallbackLine):
        line = ctx.text[site.start : site.end]
        if _FALLBACK_RUNTIME_RE.match(line):
            ctx.add(
                Hit(
                    NVIDIA_CONTAINER_RUNTIME,
                    site.start + len(line) - len(line.lstrip()),
                    site.end,
                    "runtimeClassName: nvidia selects the NVIDIA runtime; AMD nodes have none",
                    "k8s-runtime",
                    ChangeStatus.UNCONVERTED,
                    note="remove it by hand (the file does not parse as YAML)",
                )
            )
        return []
    if isinstance(site, ComposeService):
        runtime = mapping_get(site.service, "runtime")
        if runtime is None or not scalar_is(runtime[1], "nvidia"):
            return []
        key, value = runtime
        hit = Hit(
            NVIDIA_CONTAINER_RUNTIME,
            key.start_mark.index,
            value.end_mark.index,
            "runtime: nvidia selects the NVIDIA container runtime",
            "compose-runtime",
            ChangeStatus.CONVERTED,
            fix="Give the service /dev/kfd and /dev/dri instead.",
        )
        return [
            ServicePart((hit,), ((key.start_mark.line, last_line(value)),), key.start_mark.line)
        ]
    outside_service = not in_service(site.path)
    for key, value, name in site.entries:
        if name == "runtimeClassName" and scalar_is(value, "nvidia"):
            first, last = key.start_mark.line, last_line(value)
            ctx.add(
                Hit(
                    NVIDIA_CONTAINER_RUNTIME,
                    key.start_mark.index,
                    value.end_mark.index,
                    "runtimeClassName: nvidia selects the NVIDIA runtime; AMD nodes have none",
                    "k8s-runtime",
                    ChangeStatus.NEEDS_REVIEW,
                    (delete_lines(ctx, first, last),),
                    note="removed: the AMD device plugin needs no runtime class",
                    fix="Remove runtimeClassName.",
                )
            )
        elif name == "runtime" and scalar_is(value, "nvidia") and outside_service:
            ctx.add(
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
    return []


# ---------------------------------------------------------------------------------------------
# GP407

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
    references=(ROCM_DOCKER_DOC, "https://docs.docker.com/compose/gpu-support"),
    # driver: nvidia, capabilities: [gpu], gpus:
    needles=("nvidia", "gpu"),
)


def compose_gpu_reservation(
    ctx: ContainerContext, site: MappingSite | ComposeService
) -> list[ServicePart]:
    """GP407: a service's ``gpus:`` and NVIDIA device reservations (its parts), and
    reservations outside a service, such as an extension merged into services."""

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

    if isinstance(site, MappingSite):
        path = site.path
        if site.keys[-3:] != ["deploy", "resources", "reservations"] or (
            len(path) == 5 and path[0] == "services"
        ):
            return []
        for _, value, name in site.entries:
            if name != "devices" or not isinstance(value, SequenceNode):
                continue
            for item in value.value:
                if isinstance(item, MappingNode) and _is_nvidia_device(item):
                    ctx.add(
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
        return []
    parts: list[ServicePart] = []
    gpus = mapping_get(site.service, "gpus")
    if gpus is not None:
        key, value = gpus
        hit = Hit(
            COMPOSE_GPU_RESERVATION,
            key.start_mark.index,
            key.end_mark.index,
            "gpus: requests NVIDIA GPUs for the service",
            "compose-gpus",
            ChangeStatus.CONVERTED,
            fix="Give the service /dev/kfd and /dev/dri instead.",
        )
        parts.append(
            ServicePart((hit,), ((key.start_mark.line, last_line(value)),), key.start_mark.line)
        )
    reservation = _reservation_removal(site.service)
    if reservation is not None:
        items, lines, deploy_line = reservation
        hits = []
        for item in items:
            first_key = item.value[0][0] if isinstance(item, MappingNode) and item.value else item
            hits.append(
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
        parts.append(ServicePart(tuple(hits), tuple(lines), deploy_line))
    return parts


# ---------------------------------------------------------------------------------------------
# GP408

_RESOURCE_PARENTS = frozenset({"limits", "requests", "resources", "capacity", "allocatable"})
_FALLBACK_RESOURCE_RE = re.compile(r"^\s*([\"']?)(nvidia\.com/gpu)\1\s*:")

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
    references=(AMD_DEVICE_PLUGIN_DOC, K8S_GPU_DOC),
    needles=("nvidia.com",),
)


def in_selector(path: tuple[str, ...], keys: list[str]) -> bool:
    """A mapping's keys are labels a pod selects nodes by (nodeSelector, matchLabels)."""
    return "nodeSelector" in keys or path[-1:] == ("matchLabels",)


def k8s_nvidia_gpu_resource(ctx: ContainerContext, site: MappingSite | FallbackLine) -> None:
    """GP408: ``nvidia.com/gpu`` and MIG resources, NVIDIA's DRA device class."""
    if isinstance(site, FallbackLine):
        resource = _FALLBACK_RESOURCE_RE.match(ctx.text[site.start : site.end])
        if resource:
            a, b = site.start + resource.start(2), site.start + resource.end(2)
            ctx.add(
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
        return
    for key, value, name in site.entries:
        if name == "deviceClassName" and scalar_is(value, "gpu.nvidia.com"):
            ctx.add(
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
            continue
        if not name.startswith("nvidia.com/") or in_selector(site.path, site.keys):
            continue
        parent_key = site.path[-1] if site.path else ""
        if not (
            parent_key in _RESOURCE_PARENTS
            or name == "nvidia.com/gpu"
            or name.startswith("nvidia.com/mig-")
        ):
            continue
        start, end = scalar_span(key)
        if name in ("nvidia.com/gpu", "nvidia.com/gpu.shared"):
            whole = name == "nvidia.com/gpu"
            ctx.add(
                Hit(
                    K8S_NVIDIA_GPU_RESOURCE,
                    start,
                    end,
                    f"{name} is advertised by NVIDIA's device plugin only",
                    "k8s-resource",
                    ChangeStatus.CONVERTED if whole else ChangeStatus.NEEDS_REVIEW,
                    (TextEdit(start, end, "amd.com/gpu"),),
                    note="" if whole else "time-sliced NVIDIA GPUs became whole AMD GPUs",
                    fix="Request amd.com/gpu.",
                )
            )
            continue
        ctx.add(
            Hit(
                K8S_NVIDIA_GPU_RESOURCE,
                start,
                end,
                f"{name} is an NVIDIA GPU resource",
                "k8s-resource",
                ChangeStatus.UNCONVERTED,
                note="MIG and other NVIDIA slices have no direct AMD resource; request "
                "amd.com/gpu or a GPU partition your cluster exposes",
            )
        )


# ---------------------------------------------------------------------------------------------
# GP409

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
        K8S_GPU_DOC,
    ),
    # nvidia.com/ labels; accelerator labels whose value starts with nvidia, in any case.
    needles=case_variants("nvidia"),
)


def k8s_nvidia_node_selector(ctx: ContainerContext, site: MappingSite) -> None:
    """GP409: node selectors and node-affinity terms on NVIDIA GPU labels."""

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
        return ("accelerator" in lowered or "gpu" in lowered) and value.lower().lstrip(
            "[ "
        ).startswith("nvidia")

    keys = site.keys
    labels = in_selector(site.path, keys)
    selector = "nodeSelector" in keys
    affinity = "matchExpressions" in keys or "nodeSelectorTerms" in keys
    if not (labels or affinity):  # nodeSelector in keys makes `labels` true
        return
    for key, value, name in site.entries:
        label_node: ScalarNode
        shown_value: Node | None
        if name.startswith("nvidia.com/"):
            if not labels:
                continue
            label_node, shown_value, label = key, value, name
        elif (
            selector
            and isinstance(value, ScalarNode)
            and _accelerator_label(name, str(value.value))
        ):
            label_node, shown_value, label = key, value, name
        elif name == "key" and isinstance(value, ScalarNode):
            label = str(value.value)
            if "tolerations" in keys and label.startswith("nvidia.com/"):
                continue  # a toleration (GP410), not a selector
            if not (
                affinity
                and (
                    label.startswith("nvidia.com/")
                    or _accelerator_label(label, _values_text(site.node))
                )
            ):
                continue
            label_node, shown_value = value, None
        else:
            continue
        start, end = scalar_span(label_node)
        if label == "nvidia.com/gpu.present":
            ctx.add(
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
            continue
        shown = f"{label}: {shown_value.value}" if isinstance(shown_value, ScalarNode) else label
        ctx.add(
            Hit(
                K8S_NVIDIA_NODE_SELECTOR,
                start,
                end,
                f"{shown} selects NVIDIA GPU nodes",
                "k8s-node-selector",
                ChangeStatus.UNCONVERTED,
                note="AMD nodes carry other labels (amd.com/gpu.product-name, amd.com/gpu.family, "
                "amd.com/gpu.vram...) with other values; pick them from kubectl get nodes "
                "--show-labels",
            )
        )


# ---------------------------------------------------------------------------------------------
# GP410

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
    references=(AMD_DEVICE_PLUGIN_DOC, K8S_GPU_DOC),
    needles=("nvidia.com/",),
)


def k8s_nvidia_toleration(ctx: ContainerContext, site: MappingSite) -> None:
    """GP410: a toleration of an NVIDIA GPU taint."""
    if "tolerations" not in site.keys:
        return
    for _, value, name in site.entries:
        if name != "key" or not isinstance(value, ScalarNode):
            continue
        label = str(value.value)
        if not label.startswith("nvidia.com/"):
            continue
        start, end = scalar_span(value)
        convertible = label == "nvidia.com/gpu"
        ctx.add(
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


MANIFEST_RULES = (
    NVIDIA_CONTAINER_RUNTIME,
    COMPOSE_GPU_RESERVATION,
    K8S_NVIDIA_GPU_RESOURCE,
    K8S_NVIDIA_NODE_SELECTOR,
    K8S_NVIDIA_TOLERATION,
)
# A compose service's runtime and GPU reservations are replaced by one device list, carried by
# the first of their hits: both run whenever they can fire.
MANIFEST_STEERING = frozenset({NVIDIA_CONTAINER_RUNTIME.id, COMPOSE_GPU_RESERVATION.id})
