"""NVIDIA-only Dockerfiles: a CUDA image's Dockerfile beside the project's own ROCm one.

A project that ships a ROCm image next to its CUDA image (AutoGPTQ's ``Dockerfile`` and
``Dockerfile_amd``, DeepSpeed's ``docker/Dockerfile`` and ``docker/rocm/Dockerfile``) has
already made the porting decision for containers: on ROCm its users build the ROCm image. The
CUDA Dockerfile is then an NVIDIA-only component whose alternative is the ROCm one, and its
findings (the CUDA base image, pip installing CUDA torch) fold into one GP601 line.
Conservative: a Dockerfile whose base image cannot be read (``FROM ${BASE}``) is neither, and a
ROCm Dockerfile counts only in the same folder or a ROCm-named folder right inside it: one in
another folder is another image (a CI wheel builder's CUDA image has no ROCm twin in ``docker/rocm/``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from gpuport.project.model import Component, ComponentStatus, Evidence
from gpuport.project.texts import ProjectTexts

if TYPE_CHECKING:
    from gpuport.syntax.yaml import Node

_FROM_RE = re.compile(r"^[ \t]*FROM[ \t]+(?:--platform=\S+[ \t]+)?(\S+)", re.I | re.M)
# The same hint GP401 uses for an image built for CUDA (scan/containers/images.py).
_CUDA_IMAGE_RE = re.compile(r"(?:^|[/:_.-])cuda(?:\d|[/:_.-]|$)|^nvcr\.io/nvidia/", re.I)
_ROCM_IMAGE_RE = re.compile(r"(?:^|[/:_.-])rocm(?:\d|[/:_.-]|$)", re.I)
# A file or folder named for ROCm: Dockerfile_amd, Dockerfile.rocm, rocm/Dockerfile.
# "amd64" is a CPU architecture, not AMD's GPUs.
_ROCM_NAME_RE = re.compile(r"(?:^|[._-])(?:(?:rocm|hip)(?:\d|[._-]|$)|amd(?:[._-]|$))", re.I)


def _base_images(text: str) -> list[tuple[int, str]]:
    return [(text.count("\n", 0, m.start()) + 1, m.group(1)) for m in _FROM_RE.finditer(text)]


def _rocm_named(rel: str) -> bool:
    parts = PurePosixPath(rel).parts
    return any(_ROCM_NAME_RE.search(part) for part in parts[-2:])


def _folder(rel: str) -> str:
    parent = str(PurePosixPath(rel).parent)
    return "" if parent == "." else parent


def _near(cuda_dir: str, rocm_dir: str) -> bool:
    """The ROCm Dockerfile's folder is the CUDA one's, or a folder right inside it named for
    ROCm (``docker/rocm/`` beside ``docker/Dockerfile``)."""
    if rocm_dir == cuda_dir:
        return True
    return (
        bool(rocm_dir)
        and _folder(rocm_dir) == cuda_dir
        and _ROCM_NAME_RE.search(PurePosixPath(rocm_dir).name) is not None
    )


def dockerfile_components(texts: ProjectTexts, dockerfiles: Iterable[str]) -> list[Component]:
    """The CUDA Dockerfiles that have a ROCm Dockerfile near them, as NVIDIA-only components."""
    cuda: list[tuple[str, int, str]] = []
    rocm: list[str] = []
    for rel in dockerfiles:
        text = texts.text(rel)
        if text is None:
            continue
        images = _base_images(text)
        if _rocm_named(rel) or any(_ROCM_IMAGE_RE.search(image) for _, image in images):
            rocm.append(rel)
            continue
        first = next(
            ((line, image) for line, image in images if _CUDA_IMAGE_RE.search(image)), None
        )
        if first is not None:
            cuda.append((rel, *first))
    components: list[Component] = []
    for rel, line, image in cuda:
        near = [r for r in rocm if _near(_folder(rel), _folder(r))]
        if not near:
            continue
        why = f"{PurePosixPath(rel).name} builds a CUDA image ({image}); {near[0]} builds the ROCm one"
        components.append(
            Component(
                rel, ComponentStatus.NVIDIA_ONLY, (Evidence(rel, line, why),), ", ".join(near)
            )
        )
    return components


# A workflow's container image: "deepspeed/gh-builder:py${{ matrix.pyVersion }}" is the
# repository "deepspeed/gh-builder" (the tag and a digest are left off).
_IMAGE_TAG_RE = re.compile(r"[:@][^/]*$")
_NAME_SEPARATORS_RE = re.compile(r"[-_.]+")


def ci_image_dockerfiles(
    texts: ProjectTexts, workflows: Iterable[str], dockerfiles: Iterable[str], project: str
) -> list[str]:
    """The Dockerfiles that build an image the project's own CI jobs run in: a Dockerfile in a
    folder named after the image of a workflow job's ``container:``, when the image is published
    under the project's own name (DeepSpeed's ``.github/workflows/python.yml`` runs in
    ``deepspeed/gh-builder:py…``, built from ``docker/gh-builder/Dockerfile.py312``). Such an
    image is CI tooling, not what users run. The workflows are read as YAML, never run; an image
    of another publisher (``nvcr.io/nvidia/pytorch``) names no folder of the project."""
    own = _NAME_SEPARATORS_RE.sub("", project.lower())
    if not own:
        return []
    names: set[str] = set()
    for rel in workflows:
        text = texts.text(rel)
        if text is None or "container" not in text or own not in text.lower():
            continue
        # PyYAML (10-15 ms to import) only for a workflow that may name the project's image
        from gpuport.syntax.yaml import compose_documents

        documents, _problem = compose_documents(text)
        for document in documents:
            for image in _job_images(document):
                repository = _IMAGE_TAG_RE.sub("", image.strip().lower()).split("/")
                namespaces = {_NAME_SEPARATORS_RE.sub("", part) for part in repository[:-1]}
                if len(repository) >= 2 and own in namespaces and repository[-1]:
                    names.add(repository[-1])
    return [rel for rel in dockerfiles if PurePosixPath(rel).parent.name.lower() in names]


def _job_images(document: Node | None) -> list[str]:
    """The images the jobs of one workflow document run in (``container: IMAGE`` or
    ``container: {image: IMAGE}``)."""
    from gpuport.syntax.yaml import MappingNode, ScalarNode, mapping_get

    jobs = mapping_get(document, "jobs") if document is not None else None
    if jobs is None or not isinstance(jobs[1], MappingNode):
        return []
    images: list[str] = []
    for _name, job in jobs[1].value:
        container = mapping_get(job, "container")
        if container is None:
            continue
        image = mapping_get(container[1], "image")
        node = image[1] if image is not None else container[1]
        if isinstance(node, ScalarNode) and isinstance(node.value, str):
            images.append(node.value)
    return images
