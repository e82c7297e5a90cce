"""The decision types every part of `assess`'s recommendation shares."""

from __future__ import annotations

from gpuport.assess.decision_model import (
    DecisionSettings,
    Direction,
    FactorResult,
    FactorState,
    Outcome,
    Recommendation,
)


def test_a_recommendation_keeps_its_decisive_factors_and_the_settings_it_was_made_from() -> None:
    trt = FactorResult(
        "tensorrt-llm",
        "Does the project serve through TensorRT-LLM?",
        FactorState.YES,
        Direction.CUDA,
        True,
        1.0,
        ("requirements.txt:3: tensorrt-llm==0.12.0",),
    )
    settings = DecisionSettings(current_gpu="h100-sxm", source="command line")
    rec = Recommendation(
        Outcome.STAY,
        "Stay on CUDA: TensorRT-LLM has no ROCm build.",
        (trt,),
        (trt,),
        settings=settings,
    )
    assert rec.outcome == "stay-on-cuda" and rec.decisive[0].direction == "towards-cuda"
    assert rec.settings.current_gpu == "h100-sxm" and rec.economics is None
    assert Recommendation(Outcome.UNKNOWN, "", (), ()).settings == DecisionSettings()
