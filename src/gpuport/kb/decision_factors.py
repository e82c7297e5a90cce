"""The decision factors `assess` weighs to answer *should we move* (decision_factors.toml)."""

from __future__ import annotations

import datetime
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass

from gpuport.kb.loader import Entry, KbError, entries, keyed, load_toml

FILENAME = "decision_factors.toml"
MAX_WEIGHT = 3.0
# Direction values as gpuport.assess.decision_model.Direction spells them (kb does not import
# assess: the knowledge base sits below every stage).
DIRECTIONS = ("towards-rocm", "towards-cuda", "neutral")


@dataclass(frozen=True, slots=True)
class DecisionFactor:
    """One question the public ROCm-vs-CUDA comparisons ask, and what decides it."""

    id: str
    question: str
    evidence: str  # what decides it
    direction: str  # where it pushes when it holds: one of DIRECTIONS
    weight: float
    decisive: bool
    ask: str  # what to tell gpuport when there is no evidence; "" when the scan always decides
    packages: tuple[str, ...]
    imports: tuple[str, ...]
    markers: tuple[re.Pattern[str], ...]
    sources: tuple[str, ...]
    checked: datetime.date


@functools.cache
def decision_factors() -> Mapping[str, DecisionFactor]:
    """Every decision factor, keyed by id, in file order."""
    return keyed(load_toml(FILENAME), "factor", FILENAME, "id", "duplicate factor id", _factor)


def _factor(entry: Entry, factor_id: str) -> DecisionFactor:
    weight = entry.number("weight")
    if not 0.0 <= weight <= MAX_WEIGHT:
        raise KbError(f"{entry.where}: weight {weight} is outside 0-{MAX_WEIGHT:g}")
    markers = []
    for text in entry.texts("markers"):
        try:
            markers.append(re.compile(text))
        except re.error as exc:
            raise KbError(
                f"{entry.where}: marker {text!r} is not a regular expression ({exc})"
            ) from None
    return DecisionFactor(
        id=factor_id,
        question=entry.text("question"),
        evidence=entry.text("evidence"),
        direction=entry.choice("direction", DIRECTIONS),
        weight=weight,
        decisive=entry.flag("decisive"),
        ask=entry.text("ask", ""),
        packages=entry.texts("packages"),
        imports=entry.texts("imports"),
        markers=tuple(markers),
        sources=entry.sources(),
        checked=entry.date(),
    )


@dataclass(frozen=True, slots=True)
class InstanceType:
    """A family of cloud instances and the NVIDIA GPU (catalog id) each one carries."""

    pattern: re.Pattern[str]
    gpu: str
    sources: tuple[str, ...]
    checked: datetime.date


@functools.cache
def instance_types() -> tuple[InstanceType, ...]:
    """Every cloud instance family the decision knows, in file order."""
    found = []
    for entry in entries(load_toml(FILENAME), "instance_type", FILENAME, "pattern"):
        text = entry.text("pattern")
        try:
            pattern = re.compile(rf"(?<![\w.-]){text}(?![\w-])", re.IGNORECASE)
        except re.error as exc:
            raise KbError(f"{entry.where}: not a regular expression ({exc})") from None
        found.append(InstanceType(pattern, entry.text("gpu"), entry.sources(), entry.date()))
    return tuple(found)
