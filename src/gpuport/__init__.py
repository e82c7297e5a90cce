"""gpuport: assess, port and plan ML projects moving between NVIDIA CUDA and AMD ROCm."""

from __future__ import annotations

import os
import sys

__version__: str  # set on first use by __getattr__ below


def _installed_version() -> str:
    """The installed distribution's version, as ``importlib.metadata.version("gpuport")`` gives.

    The first ``gpuport-*.dist-info`` on ``sys.path`` is read directly: importing
    ``importlib.metadata`` (and the ``email`` parser it loads) costs more than a small scan.
    """
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            if name.lower().startswith("gpuport-") and name.endswith(".dist-info"):
                try:
                    with open(os.path.join(entry, name, "METADATA"), encoding="utf-8") as f:
                        for line in f:
                            if line.startswith("Version:"):
                                return line.partition(":")[2].strip()
                            if not line.strip():
                                break
                except OSError:
                    pass
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("gpuport")
    except PackageNotFoundError:  # running from a source tree without an install
        return "0.0.0+source"


def __getattr__(name: str) -> object:
    # __version__ is looked up when first asked for (gpuport scan of a file asks once).
    if name == "__version__":
        value = _installed_version()
        globals()["__version__"] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
