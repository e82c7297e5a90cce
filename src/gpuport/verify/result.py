"""What ``gpuport verify compare`` found: plain frozen dataclasses, no torch.

A comparison holds one :class:`CaseComparison` per recorded case; each case holds one
:class:`OutputComparison` per output tensor (an op's result, or a user model's layer in the order
the forward pass reached it), so a failing model case names the first layer that drifts.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from gpuport.machine import MachineDescription


class CaseStatus(enum.StrEnum):
    PASS = "pass"  # every output within tolerance
    FAIL = "fail"  # an output out of tolerance
    SKIPPED = "skipped"  # not run here (op missing on this torch, out of memory, backend absent)
    ERROR = "error"  # the recorded data of this case cannot be used (wrong shape, dtype, ...)


class Closer(enum.StrEnum):
    """Which machine's output is closer to the fp64 CPU reference (by max absolute error)."""

    RECORDED = "recorded"
    HERE = "here"
    TIE = "tie"


@dataclass(frozen=True, slots=True)
class Tolerance:
    """``torch.testing.assert_close``'s test: ``|here - recorded| <= atol + rtol * |recorded|``."""

    dtype: str  # "float32", "bfloat16", ...
    rtol: float
    atol: float
    overridden: bool = False  # set with --tolerance


@dataclass(frozen=True, slots=True)
class OutputComparison:
    """One output tensor, recorded there and computed here."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    max_abs: float  # max |here - recorded|; inf where one side is NaN/inf and the other not
    max_rel: float  # max |here - recorded| / |recorded| over non-zero recorded elements
    out_of_tolerance: float  # share of elements (0..1) outside atol + rtol * |recorded|
    atol_needed: float  # the smallest atol that passes at the dtype's rtol
    rtol_needed: float  # the smallest rtol that passes at the dtype's atol
    passed: bool
    recorded_error: float  # max |recorded - fp64 reference|
    here_error: float  # max |here - fp64 reference|
    closer: Closer


@dataclass(frozen=True, slots=True)
class CaseComparison:
    """One case of the suite (``matmul[bf16]``) or a user model (``model``)."""

    name: str
    status: CaseStatus
    outputs: tuple[OutputComparison, ...] = ()
    note: str = ""  # why it was skipped or is an error, or a caveat (non-deterministic op)
    nondeterministic: bool = False

    @property
    def first_failure(self) -> OutputComparison | None:
        """The first output out of tolerance (for a model, the first layer that drifts)."""
        return next((output for output in self.outputs if not output.passed), None)

    @property
    def worst(self) -> OutputComparison | None:
        """The output with the largest share out of tolerance, then the largest error."""
        if not self.outputs:
            return None
        return max(self.outputs, key=lambda o: (o.out_of_tolerance, o.max_abs))


@dataclass(frozen=True, slots=True)
class VerifyComparison:
    """``gpuport verify compare FILE``: every case recorded in FILE, rerun here."""

    file: str  # the reference file's name as the user gave it
    kind: str  # "suite" or "model"
    model: str | None  # the factory (package.module:factory) of a model recording
    recorded: MachineDescription
    here: MachineDescription
    device: str  # where this run computed: "cpu", "cuda"
    tolerances: tuple[Tolerance, ...]
    cases: tuple[CaseComparison, ...]
    notes: tuple[str, ...] = ()  # settings that explain differences (TF32 on one side)

    def count(self, status: CaseStatus) -> int:
        return sum(1 for case in self.cases if case.status is status)

    @property
    def passed(self) -> bool:
        return all(case.status in (CaseStatus.PASS, CaseStatus.SKIPPED) for case in self.cases)
