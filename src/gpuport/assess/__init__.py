"""The ``assess`` stage: a verdict on a project from its scan (and, given a model, its plan)."""

from gpuport.assess.guidance import FoldedComponent, NextStep, RocmSupport
from gpuport.assess.verdict import Assessment, EffortLine, Verdict, assess

__all__ = [
    "Assessment",
    "EffortLine",
    "FoldedComponent",
    "NextStep",
    "RocmSupport",
    "Verdict",
    "assess",
]
