"""GP2xx: each rule's declaration followed by its check, one module per family of rules.

Importing this package declares every GP2xx rule and registers its check with the walk.
"""

from __future__ import annotations

from gpuport.scan.python.rules import (  # noqa: F401  (each module registers on import)
    backends,
    device_checks,
    imports,
    kernel_code,
    pip_commands,
    tools_and_env,
    triton_launch,
)
