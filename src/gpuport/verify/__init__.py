"""The ``verify`` stage: record outputs on one machine, compare them on another.

Torch-free at import: :mod:`gpuport.verify.result` and :mod:`gpuport.verify.tolerances` are
plain Python (the report renders them without torch); :mod:`~gpuport.verify.cases`,
:mod:`~gpuport.verify.run`, :mod:`~gpuport.verify.models` and
:mod:`~gpuport.verify.metrics` import torch and are imported only by the command, after it has
checked torch is installed.
"""

from __future__ import annotations

# The torch release the install hint names: the one scripts/setup.sh installs (its CPU wheel);
# keep the two together.
TORCH_PIN = "2.13.0"
