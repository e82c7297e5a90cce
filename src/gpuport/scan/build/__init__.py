"""Build files that compile CUDA: CMake, Makefiles and shell scripts calling nvcc (rules GP5xx).

``cmake`` holds the CMake rules, ``words`` the rules found in shell-like words (nvcc, its
options, libraries, architectures, toolkit paths), each rule's declaration followed by its
function; ``analyze`` runs them over whole files and registers the scanners. The readers are in
:mod:`gpuport.syntax`. Detection produces :class:`~gpuport.edits.Hit` objects carrying both the
finding's message and the text edits that ``gpuport port`` applies, so the scan and the port
never disagree about what is wrong or where.
"""

from __future__ import annotations

from gpuport.scan.build.analyze import (
    DEFAULT_OFFLOAD_ARCHS,
    BuildWords,
    analyze_cmake,
    analyze_cmake_commands,
    analyze_makefile,
    analyze_shell_build,
)
from gpuport.scan.build.common import case_variants, delete_span, may_fire

__all__ = [
    "DEFAULT_OFFLOAD_ARCHS",
    "BuildWords",
    "analyze_cmake",
    "analyze_cmake_commands",
    "analyze_makefile",
    "analyze_shell_build",
    "case_variants",
    "delete_span",
    "may_fire",
]
