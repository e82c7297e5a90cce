"""Containers: Dockerfiles, compose files, Kubernetes manifests and docker commands (rules GP4xx).

``images`` (GP401) and ``env`` (GP402) hold the rules found in every kind of container file,
``commands`` those of shell commands (GP403-GP405), ``manifests`` those of YAML (GP406-GP410),
each rule's declaration followed by its function; ``dockerfile`` and ``manifests`` walk their
files; ``analyze`` runs them over whole files and registers the scanners. The readers are in
:mod:`gpuport.syntax`; shell code in these files also goes through the build rules.
"""

from __future__ import annotations

from gpuport.scan.containers.analyze import (
    analyze_commands,
    analyze_dockerfile,
    analyze_shell_containers,
    analyze_yaml,
)
from gpuport.scan.containers.common import rocm_compose_access, rocm_docker_flags

__all__ = [
    "analyze_commands",
    "analyze_dockerfile",
    "analyze_shell_containers",
    "analyze_yaml",
    "rocm_compose_access",
    "rocm_docker_flags",
]
