"""What `assess` concludes about *should we move*: factors, economics and the recommendation."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from gpuport.config import ConfigError


class Direction(enum.StrEnum):
    """Which way a decided factor pushes."""

    ROCM = "towards-rocm"
    CUDA = "towards-cuda"
    NEUTRAL = "neutral"


class FactorState(enum.StrEnum):
    """Whether the factor's condition holds for this project."""

    YES = "yes"
    NO = "no"
    UNKNOWN = "unknown"


class Outcome(enum.StrEnum):
    """The recommendation."""

    MOVE = "move"
    PILOT = "pilot-first"
    PARTIAL = "move-part"  # move the workload that fits, keep the one that does not
    STAY = "stay-on-cuda"
    UNKNOWN = "not-enough-evidence"


@dataclass(frozen=True, slots=True)
class FactorResult:
    """One decision factor (kb/decision_factors.toml) decided for this project."""

    factor_id: str
    question: str
    state: FactorState
    direction: Direction  # NEUTRAL when the state is NO or UNKNOWN
    decisive: bool  # the factor decides on its own when it holds
    weight: float
    evidence: tuple[str, ...] = ()  # "setup.py:12: CUDAExtension(...)", "plan: MI300X 3,630 tok/s"
    ask: str = ""  # for UNKNOWN: "tell gpuport `latency_target_ms` ([tool.gpuport.decision])"
    sources: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class DecisionSettings:
    """What the team declares: `[tool.gpuport.decision]` in pyproject.toml, or flags."""

    current_gpu: str | None = None  # a catalog id
    current_gpu_count: int | None = None
    gpu_hours_per_month: float | None = None
    tokens_per_month: float | None = None  # output tokens served per month
    engineer_usd_per_hour: float | None = None
    rocm_experience: str | None = None  # "none" | "some" | "strong"
    regulated: bool | None = None  # must revalidate on a vendor change
    revalidation_hours: float | None = None
    latency_target_ms: float | None = None  # per output token, at the p50
    deployment: str | None = None  # "cloud" | "on-premises"
    workload: str | None = None  # "inference" | "training" | "both"
    candidate_gpus: tuple[str, ...] = ()  # catalog ids of AMD GPUs to compare
    batch: int | None = None  # concurrent sequences per GPU in production (serving)
    # the model served, for the economics when --model is not given: a preset name or a
    # config.json (a path relative to the project)
    model: str | None = None
    source: str = ""  # "pyproject.toml [tool.gpuport.decision]" / "command line"


@dataclass(frozen=True, slots=True)
class CostOption:
    """One way to serve the declared volume: GPUs, speed and monthly cost."""

    gpu_id: str
    gpu_name: str
    vendor: str
    gpus: int  # GPUs needed for the volume
    tokens_per_s_per_gpu: float
    usd_per_gpu_hour: float | None
    usd_per_month: float | None
    note: str = ""  # "from gpuport plan: vllm, batch 64, fitted efficiencies"


@dataclass(frozen=True, slots=True)
class Economics:
    """Monthly cost today against each AMD option, the one-off cost of moving, the payback."""

    today: CostOption | None
    options: tuple[CostOption, ...]
    move_hours: tuple[float, float]  # low, high: the effort estimate plus revalidation
    move_usd: tuple[float, float] | None  # move_hours x engineer rate
    best: CostOption | None  # the cheapest AMD option
    monthly_saving_usd: float | None  # today - best (negative: AMD costs more)
    payback_months: tuple[float, float] | None  # move_usd / saving; None when it never pays
    sensitivity: tuple[str, ...] = ()  # "at 80% of the estimated ROCm speed, payback is N months"
    assumptions: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class MissingInput:
    """One thing to tell gpuport, and the unknown factors it decides (heaviest first).

    Factors whose asks start from the same setting (both "cheaper" factors ask for the volume)
    share one: the ask of the heaviest of them, which names what the others need too.
    """

    factors: tuple[str, ...]  # factor ids
    ask: str


@dataclass(frozen=True, slots=True)
class Recommendation:
    """The answer to *should we move*, with the factors that decide it first."""

    outcome: Outcome
    headline: str  # one sentence: "Pilot first: ..."
    decisive: tuple[FactorResult, ...]  # the factors that decided it, strongest first
    factors: tuple[FactorResult, ...]  # every factor, decided or unknown
    economics: Economics | None = None
    missing: tuple[str, ...] = ()  # what to provide to decide the unknown factors
    settings: DecisionSettings = field(default_factory=DecisionSettings)
    # ``missing`` merged: one item per setting asked for, naming the factors it decides
    asks: tuple[MissingInput, ...] = ()


class DecisionInputError(ConfigError):
    """Decision settings that contradict each other or the plan (a volume the declared fleet
    cannot serve): ``key`` names the setting, ``message`` says why, and the file or flag it
    came from. A :class:`~gpuport.config.ConfigError`, so the CLI reports it and exits 2."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key
        self.message = message
