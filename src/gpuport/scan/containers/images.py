"""GP401: container images built for NVIDIA CUDA, wherever an image is named."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import NamedTuple

from gpuport import kb
from gpuport.edits import ChangeStatus, Hit, TextEdit
from gpuport.findings import Category, Confidence, Severity
from gpuport.rules import case_variants, rule
from gpuport.scan.containers.common import ROCM_DOCKER_DOC, ContainerContext
from gpuport.syntax.yaml import MappingNode, Node, ScalarNode, scalar_span


class ImageRef(NamedTuple):
    """An image reference ``ref`` written at ``text[start:end]``, edited at ``edit_span``."""

    start: int
    end: int
    ref: str
    edit_span: tuple[int, int] | None = None
    where: str = ""  # how the reference was found, told in the message


class YamlImage(NamedTuple):
    """The value of an ``image:`` key: a scalar, or Helm's ``repository``/``tag`` mapping."""

    value: Node


_CUDA_IMAGE_HINT_RE = re.compile(r"(?:^|[/:_.-])cuda(?:\d|[/:_.-]|$)|^nvcr\.io/nvidia/", re.I)


def _image_names() -> tuple[str, ...]:
    """The last part of each known image's repository (``nvidia/cuda:*`` -> ``cuda``).

    Image repositories are lower case (https://docs.docker.com/reference/cli/docker/image/tag/),
    so a text naming one of them holds that name as written.
    """
    names = set()
    for image in kb.docker_images():
        name = image.pattern.split(":", 1)[0].rsplit("/", 1)[-1]
        names.add(max(re.split(r"[*?\[\]]", name), key=len))  # its longest literal part
    return tuple(sorted(name for name in names if name))


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
    references=(ROCM_DOCKER_DOC, "https://hub.docker.com/u/rocm"),
    # Known images by name; any other with "cuda" in it (any case), or from nvcr.io/nvidia.
    needles=(*_image_names(), *case_variants("cuda", "nvcr")),
)


def cuda_container_image(ctx: ContainerContext, site: ImageRef | YamlImage) -> None:
    """GP401 for one image reference, replaced by the ROCm image the knowledge base names."""

    def _image_hit(ctx: ContainerContext, site: ImageRef) -> Hit | None:
        """The GP401 hit for one reference, or None when it is not a CUDA image."""
        stripped = site.ref.strip()
        if not stripped or stripped.lower().startswith(("rocm/", "docker.io/rocm/")):
            return None
        entry = kb.find_docker_image(stripped)
        if entry is None and not _CUDA_IMAGE_HINT_RE.search(stripped):
            return None
        ref = site.ref
        suffix = f" ({site.where})" if site.where else ""
        replacement = (
            None if entry is None else entry.image_for(ctx.rocm_version, original=stripped)
        )
        if replacement is None:
            return Hit(
                CUDA_CONTAINER_IMAGE,
                site.start,
                site.end,
                f"{ref} looks like a CUDA image{suffix}",
                "docker-base",
                ChangeStatus.UNCONVERTED,
                note="no ROCm counterpart known for this image; pick a rocm/* base image",
                fix="Rebuild it on a ROCm base image (rocm/dev-ubuntu-*, rocm/pytorch...).",
                before=ref,
                confidence=Confidence.LOW,
            )
        assert entry is not None
        span = site.edit_span or (site.start, site.end)
        status = ChangeStatus.NEEDS_REVIEW if entry.notes else ChangeStatus.CONVERTED
        return Hit(
            CUDA_CONTAINER_IMAGE,
            site.start,
            site.end,
            f"{ref} is a CUDA image; ROCm's counterpart is {replacement}{suffix}",
            "docker-base",
            status,
            (TextEdit(span[0], span[1], replacement),),
            note=entry.notes,
            fix=f"Use {replacement}.",
            before=ref,
            after=replacement,
        )

    if isinstance(site, YamlImage):
        value = site.value
        if isinstance(value, ScalarNode):
            ref = str(value.value)
            start, end = scalar_span(value)
            if "${" in ref or "{{" in ref:
                default = re.search(r"\$\{[A-Za-z_][A-Za-z0-9_]*:?-([^}]+)\}", ref)
                if default is None:
                    return
                offset = ctx.text.find(default.group(1), start, end)
                edit_span = (offset, offset + len(default.group(1))) if offset >= 0 else None
                site = ImageRef(start, end, default.group(1), edit_span)
            else:
                site = ImageRef(start, end, ref)
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
            hit = _image_hit(ctx, ImageRef(start, end, ref, where="repository and tag"))
            if hit is None:
                return
            if hit.edits and ":" in hit.after:
                new_repository, new_tag = hit.after.rsplit(":", 1)
                edits = [TextEdit(start, end, new_repository)]
                if isinstance(tag, ScalarNode):
                    tag_start, tag_end = scalar_span(tag)
                    edits.append(TextEdit(tag_start, tag_end, new_tag))
                hit = replace(hit, edits=tuple(edits))
            ctx.add(hit)
            return
        else:
            return
    hit = _image_hit(ctx, site)
    if hit is not None:
        ctx.add(hit)
