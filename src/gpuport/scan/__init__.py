"""The ``scan`` stage: one module per kind of file, each declaring its rules and a scanner.

Importing this package registers every scanner and rule.
"""

from __future__ import annotations

import importlib

# Each module below registers its rules and scanners on import.
_SCANNER_MODULES = (
    "gpuport.scan.deps",
    "gpuport.scan.python",
    "gpuport.scan.kernels",
    "gpuport.scan.containers",
    "gpuport.scan.build",
)

for _name in _SCANNER_MODULES:
    importlib.import_module(_name)
