"""The one error type of the plan stage: bad input, told in a sentence that names its source."""

from __future__ import annotations

from pathlib import Path

from gpuport.config import ConfigError
from gpuport.read_policy import ReadRefused, read_regular

# A plan input (config.json, a price file, measured rates) is a few KB; 4 MiB is generous.
MAX_INPUT_BYTES = 4 * 1024 * 1024


class PlanInputError(ConfigError):
    """A model, GPU, price or measurement input that cannot be used.

    It is a :class:`~gpuport.config.ConfigError`, so every command that already turns
    configuration errors into "error: ..." and exit status 2 does the same for plan inputs.
    """


def read_input(path: Path, what: str = "") -> bytes:
    """The bytes of a file the user named (``--model``, ``--prices``, ``--measured``).

    Only a regular file of at most :data:`MAX_INPUT_BYTES` is read (``read_policy``): a FIFO
    or a device given there is refused at once rather than read without end.
    """
    label = f" {what}" if what else ""
    try:
        return read_regular(path, MAX_INPUT_BYTES)
    except ReadRefused as exc:
        raise PlanInputError(f"{path}: cannot read{label} ({exc.reason})") from None
    except OSError as exc:
        raise PlanInputError(f"{path}: cannot read{label} ({exc.strerror or exc})") from None
