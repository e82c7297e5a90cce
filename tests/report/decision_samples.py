"""Hand-made recommendations for the report tests: every part of one filled in, numbers by hand."""

from __future__ import annotations

from gpuport.assess.decision_model import (
    CostOption,
    DecisionSettings,
    Direction,
    Economics,
    FactorResult,
    FactorState,
    MissingInput,
    Outcome,
    Recommendation,
)

SETTINGS = DecisionSettings(
    current_gpu="h100-sxm",
    current_gpu_count=8,
    tokens_per_month=2.0e10,
    engineer_usd_per_hour=120.0,
    rocm_experience="none",
    workload="inference",
    candidate_gpus=("mi300x", "mi325x"),
    batch=64,
    source="pyproject.toml [tool.gpuport.decision]",
)

CUSTOM_KERNELS = FactorResult(
    factor_id="custom-cuda-kernels",
    question="Does the project carry its own CUDA kernels?",
    state=FactorState.YES,
    direction=Direction.CUDA,
    decisive=True,
    weight=3.0,
    evidence=("kernels/attn.cu:12: __global__ void attn(...)", "setup.py:9: CUDAExtension"),
    sources=("https://rocm.docs.amd.com/projects/HIPIFY/en/latest/",),
)
TEAM = FactorResult(
    factor_id="team-rocm-experience",
    question="Is the team new to ROCm, with little capacity to debug it?",
    state=FactorState.YES,
    direction=Direction.CUDA,
    decisive=True,
    weight=2.0,
    evidence=("pyproject.toml [tool.gpuport.decision] rocm_experience = none",),
)
STACK = FactorResult(
    factor_id="vllm-stack",
    question="Is it served with vLLM or SGLang on PyTorch?",
    state=FactorState.YES,
    direction=Direction.ROCM,
    decisive=False,
    weight=2.0,
    evidence=("requirements.txt:2: vllm==0.6.3",),
    sources=("https://docs.vllm.ai/en/latest/getting_started/installation/gpu.html",),
)
LATENCY = FactorResult(
    factor_id="latency-critical",
    question="Is serving latency-critical at batch 1-4?",
    state=FactorState.UNKNOWN,
    direction=Direction.NEUTRAL,
    decisive=False,
    weight=1.0,
    ask="tell gpuport `latency_target_ms` ([tool.gpuport.decision])",
)
REGULATED = FactorResult(
    factor_id="regulated",
    question="Must the service revalidate on a vendor change?",
    state=FactorState.NO,
    direction=Direction.NEUTRAL,
    decisive=False,
    weight=1.0,
    evidence=("not declared regulated",),
)

TODAY = CostOption(
    gpu_id="h100-sxm",
    gpu_name="NVIDIA H100 SXM",
    vendor="nvidia",
    gpus=8,
    tokens_per_s_per_gpu=1210.0,
    usd_per_gpu_hour=3.0,
    usd_per_month=17520.0,
    note="the declared fleet",
)
MI300X = CostOption(
    gpu_id="mi300x",
    gpu_name="AMD Instinct MI300X",
    vendor="amd",
    gpus=4,
    tokens_per_s_per_gpu=2050.0,
    usd_per_gpu_hour=3.5,
    usd_per_month=10220.0,
    note="from gpuport plan: vllm, batch 64",
)
MI325X = CostOption(
    gpu_id="mi325x",
    gpu_name="AMD Instinct MI325X",
    vendor="amd",
    gpus=4,
    tokens_per_s_per_gpu=2300.0,
    usd_per_gpu_hour=4.5,
    usd_per_month=13140.0,
)
ECONOMICS = Economics(
    today=TODAY,
    options=(MI300X, MI325X),
    move_hours=(150.0, 300.0),
    move_usd=(18000.0, 36000.0),
    best=MI300X,
    monthly_saving_usd=7300.0,  # 17,520 - 10,220
    payback_months=(18000.0 / 7300.0, 36000.0 / 7300.0),
    sensitivity=("at 80% of the estimated ROCm speed (5 MI300X), payback is 3.4-6.8 months",),
    assumptions=(
        "730 hours a month",
        "the same tokens per month on every option, at the plan's batch 64",
    ),
)


def sample_recommendation() -> Recommendation:
    """Pilot first: kernels and an inexperienced team hold it back, the economics pay back."""
    return Recommendation(
        outcome=Outcome.PILOT,
        headline="Pilot first: the move pays back in 2.5-4.9 months, but 2 custom kernels and a "
        "team new to ROCm make a one-service pilot the safe first step.",
        decisive=(CUSTOM_KERNELS, TEAM),
        factors=(STACK, CUSTOM_KERNELS, LATENCY, TEAM, REGULATED),
        economics=ECONOMICS,
        missing=(LATENCY.ask,),
        settings=SETTINGS,
        asks=(MissingInput((LATENCY.factor_id,), LATENCY.ask),),
    )


def hostile_recommendation(text: str) -> Recommendation:
    """Every text field of a recommendation carrying ``text`` (markup that must stay inert)."""
    factor = FactorResult(
        factor_id=f"id-{text}",
        question=f"question {text}",
        state=FactorState.YES,
        direction=Direction.ROCM,
        decisive=True,
        weight=1.0,
        evidence=(f"evidence {text}",),
        sources=(f"source {text}",),
    )
    unknown = FactorResult(
        factor_id="unknown",
        question=f"asked {text}",
        state=FactorState.UNKNOWN,
        direction=Direction.NEUTRAL,
        decisive=False,
        weight=1.0,
        ask=f"ask {text}",
    )
    option = CostOption(f"gpu-{text}", f"name {text}", "amd", 1, 100.0, 2.0, 1460.0, f"n {text}")
    economics = Economics(
        today=CostOption("now", f"today {text}", "nvidia", 2, 100.0, 2.0, 2920.0),
        options=(option,),
        move_hours=(10.0, 20.0),
        move_usd=(1000.0, 2000.0),
        best=option,
        monthly_saving_usd=1460.0,
        payback_months=(0.7, 1.4),
        sensitivity=(f"sensitivity {text}",),
        assumptions=(f"assumption {text}",),
    )
    return Recommendation(
        outcome=Outcome.MOVE,
        headline=f"headline {text}",
        decisive=(factor,),
        factors=(factor, unknown),
        economics=economics,
        missing=(f"missing {text}",),
        settings=DecisionSettings(current_gpu=f"gpu {text}", source=f"file {text}"),
        asks=(MissingInput((f"factor {text}", "unknown"), f"missing {text}"),),
    )
