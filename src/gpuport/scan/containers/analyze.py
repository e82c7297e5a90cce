"""The container rules over whole files: Dockerfiles, YAML and shell scripts; the scanners.

Each public function runs the rules that can fire in the text (container rules and, for the
shell code and environments of these files, the build rules) and returns their hits; ``enabled``
None means every rule, as ``gpuport port`` wants.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path

from gpuport import kb
from gpuport.edits import Hit, hits_to_findings
from gpuport.files import FileKind, SourceText
from gpuport.findings import SkipKind, Skipped
from gpuport.scan.base import ScanOutput, scanner
from gpuport.scan.build import (
    DEFAULT_OFFLOAD_ARCHS,
    WORD_RULES,
    BuildWords,
    RuleRun,
    may_fire,
    once_per_file,
    prefiltered_findings,
)
from gpuport.scan.containers.commands import COMMAND_RULES, command_hits
from gpuport.scan.containers.common import ContainerContext
from gpuport.scan.containers.dockerfile import dockerfile_hits
from gpuport.scan.containers.env import NVIDIA_CONTAINER_ENV
from gpuport.scan.containers.images import CUDA_CONTAINER_IMAGE
from gpuport.scan.containers.manifests import MANIFEST_RULES, MANIFEST_STEERING
from gpuport.scan.containers.yaml_files import fallback_hits, yaml_hits
from gpuport.syntax.shell import Word, shell_commands
from gpuport.syntax.text import LineIndex
from gpuport.syntax.yaml import YamlProblem, compose_documents

CONTAINER_RULES = (CUDA_CONTAINER_IMAGE, NVIDIA_CONTAINER_ENV, *COMMAND_RULES, *MANIFEST_RULES)
_DOCKERFILE_RULES = (*CONTAINER_RULES, *WORD_RULES)  # RUN lines and ENV go to the build rules


def _context(
    text: str,
    build_kind: str,
    rocm_version: str,
    offload_archs: tuple[str, ...],
    enabled: frozenset[str] | None,
    index: LineIndex | None = None,
    *,
    build_rules: bool = True,
) -> ContainerContext:
    run = RuleRun(text, CONTAINER_RULES, enabled, MANIFEST_STEERING)
    build = BuildWords(text, build_kind, offload_archs, enabled if build_rules else frozenset())
    return ContainerContext(run, rocm_version, build, index)


def analyze_dockerfile(
    text: str,
    rocm_version: str = kb.DEFAULT_ROCM_VERSION,
    offload_archs: tuple[str, ...] = DEFAULT_OFFLOAD_ARCHS,
    enabled: frozenset[str] | None = None,
    root: Path | None = None,
) -> list[Hit]:
    """GP4xx (and GP5xx for build steps) hits in a Dockerfile; ``root``: the project it builds,
    whose own build files say whether ``pip install .`` compiles against torch."""
    ctx = _context(text, "docker", rocm_version, offload_archs, enabled)
    ctx.root = root
    if ctx.run.anything() or ctx.build.runs:
        dockerfile_hits(ctx)
    return ctx.hits()


def analyze_yaml(
    text: str,
    rocm_version: str = kb.DEFAULT_ROCM_VERSION,
    offload_archs: tuple[str, ...] = DEFAULT_OFFLOAD_ARCHS,
    enabled: frozenset[str] | None = None,
) -> tuple[list[Hit], YamlProblem | None]:
    """GP4xx hits in a YAML file (all documents), and why it could not be parsed, if so.

    The file is read even where no rule can fire: a malformed file is reported whatever the
    rules.
    """
    documents, problem = compose_documents(text)
    ctx = _context(text, "shell", rocm_version, offload_archs, enabled, LineIndex(text))
    if not (ctx.run.anything() or ctx.build.runs):
        return [], problem
    if problem is not None:
        fallback_hits(ctx)
        return ctx.hits(), problem
    try:
        yaml_hits(ctx, documents)
    except RecursionError:
        return ctx.hits(), YamlProblem(0, "nested too deeply to analyse completely")
    return ctx.hits(), None


def analyze_commands(
    text: str,
    commands: Sequence[Sequence[Word]],
    rocm_version: str = kb.DEFAULT_ROCM_VERSION,
    enabled: frozenset[str] | None = None,
) -> list[Hit]:
    """GP401-GP405 hits in shell commands read from ``text`` (the build rules left out)."""
    ctx = _context(text, "shell", rocm_version, DEFAULT_OFFLOAD_ARCHS, enabled, build_rules=False)
    if ctx.run.anything():
        command_hits(ctx, commands)
    return ctx.hits()


def analyze_shell_containers(
    text: str,
    rocm_version: str = kb.DEFAULT_ROCM_VERSION,
    enabled: frozenset[str] | None = None,
) -> list[Hit]:
    """GP401-GP405 hits in a shell script."""
    if enabled is not None and not may_fire(text, CONTAINER_RULES, enabled):
        return []
    return analyze_commands(text, shell_commands(text), rocm_version, enabled)


@scanner(FileKind.DOCKERFILE, name="dockerfile")
def scan_dockerfile(source: SourceText, enabled: frozenset[str]) -> ScanOutput:
    root = source.file.root if source.file.confined else None
    return prefiltered_findings(
        source, enabled, _DOCKERFILE_RULES, functools.partial(analyze_dockerfile, root=root)
    )


@scanner(FileKind.COMPOSE, FileKind.YAML, name="container-yaml")
def scan_yaml(source: SourceText, enabled: frozenset[str]) -> ScanOutput:
    hits, problem = analyze_yaml(source.text, enabled=enabled)
    yield from once_per_file(hits_to_findings(source.file.rel, source.text, hits))
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
    hits = analyze_shell_containers(source.text, enabled=enabled)
    yield from once_per_file(hits_to_findings(source.file.rel, source.text, hits))
