"""The one error type of the plan stage: bad input, told in a sentence that names its source."""

from __future__ import annotations

from gpuport.config import ConfigError


class PlanInputError(ConfigError):
    """A model, GPU, price or measurement input that cannot be used.

    It is a :class:`~gpuport.config.ConfigError`, so every command that already turns
    configuration errors into "error: ..." and exit status 2 does the same for plan inputs.
    """
