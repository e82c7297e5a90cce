"""Build files that compile CUDA: CMake, Makefiles and shell scripts calling nvcc (rules GP5xx).

``cmake`` holds the CMake rules and walks a CMake file's commands, ``words`` the rules found in
shell-like words (nvcc, its options, libraries, architectures, toolkit paths), each rule's
declaration followed by its function; ``commands`` walks shell-like commands; ``common`` holds
what no rule owns (which rule functions run, edit helpers); ``analyze`` runs them over whole
files and registers the scanners; ``gpu_targets`` says which AMD GPUs a ROCm build compiles
for (GP512, GP513). :class:`BuildWords` and :data:`WORD_RULES` serve the container
scanner, whose shell code and environments the build rules read too. The readers are in
:mod:`gpuport.syntax`. Detection produces :class:`~gpuport.edits.Hit` objects carrying both the
finding's message and the text edits that ``gpuport port`` applies, so the scan and the port
never disagree about what is wrong or where.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpuport.scan.build.analyze import (
        DEFAULT_OFFLOAD_ARCHS,
        BuildWords,
        analyze_cmake,
        analyze_cmake_commands,
        analyze_makefile,
        analyze_shell_build,
    )
    from gpuport.scan.build.commands import WORD_RULES
    from gpuport.scan.build.common import (
        RuleRun,
        delete_span,
        may_fire,
        once_per_file,
        prefiltered_findings,
    )
    from gpuport.scan.build.gpu_targets import GPU_TARGET_RULES

# Each name above -> its module, imported when the name is first asked for (PEP 562): a Python
# file's scan needs only ``gpu_targets`` (GP512), and importing it runs this package first;
# the CMake, Makefile and shell-word rules would cost about 30 ms more of every start-up.
_EXPORTS = {
    "DEFAULT_OFFLOAD_ARCHS": "analyze",
    "BuildWords": "analyze",
    "analyze_cmake": "analyze",
    "analyze_cmake_commands": "analyze",
    "analyze_makefile": "analyze",
    "analyze_shell_build": "analyze",
    "WORD_RULES": "commands",
    "RuleRun": "common",
    "delete_span": "common",
    "may_fire": "common",
    "once_per_file": "common",
    "prefiltered_findings": "common",
    "GPU_TARGET_RULES": "gpu_targets",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "DEFAULT_OFFLOAD_ARCHS",
    "GPU_TARGET_RULES",
    "WORD_RULES",
    "BuildWords",
    "RuleRun",
    "analyze_cmake",
    "analyze_cmake_commands",
    "analyze_makefile",
    "analyze_shell_build",
    "delete_span",
    "may_fire",
    "once_per_file",
    "prefiltered_findings",
]
