"""Dependency rules (GP101-GP114): CUDA builds, indexes and packages declared in dependency files.

The readers live in ``gpuport.syntax`` (requirements, pyproject, Pipfile, conda, setup.py and
setup.cfg); the rules here decide what each record means on ROCm, using the knowledge base for
package status and index replacements. Each rule's declaration is followed by its check, one
function named after its slug: ``pins`` (GP101, GP112), ``indexes`` (GP102, GP103, GP111),
``packages`` (GP104-GP108), ``conda`` (GP109, GP110). ``analyze`` walks a file's records and
dispatches them to the enabled rules; its :class:`DependencyHit` objects become the scan's
findings and the edits ``gpuport port`` applies (``port/rewrite_deps.py``), so both agree.
"""

from __future__ import annotations

from gpuport.scan.deps.analyze import (
    DEPENDENCY_KINDS,
    DEPENDENCY_RULES,
    analyze,
    parse_source,
    scan_dependencies,
    unlisted_includes,
)
from gpuport.scan.deps.hits import NOTE_PREFIX, DependencyHit

__all__ = [
    "DEPENDENCY_KINDS",
    "DEPENDENCY_RULES",
    "NOTE_PREFIX",
    "DependencyHit",
    "analyze",
    "parse_source",
    "scan_dependencies",
    "unlisted_includes",
]
