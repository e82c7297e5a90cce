"""kb/decision_factors.toml: every factor the issue names, sourced, dated and decidable."""

from __future__ import annotations

import re

import pytest

from gpuport.assess.decision import DECIDERS
from gpuport.kb.decision_factors import (
    DIRECTIONS,
    MAX_WEIGHT,
    DecisionFactor,
    InstanceType,
    decision_factors,
    instance_types,
)
from gpuport.plan.catalog import catalog
from kb_checks import check_no_stray_whitespace, check_sources_and_date, raw

# The factors issue 13 lists, by the id each has in the data file.
ISSUE_FACTORS = {
    "custom-cuda-kernels",
    "cuda-only-serving-stack",
    "flash-attention-3",
    "tensorflow-main-framework",
    "pytorch-vllm-stack",
    "training-workload",
    "latency-critical-serving",
    "throughput-serving",
    "fits-one-large-gpu",
    "memory-bandwidth-bound",
    "partial-support-libraries",
    "unsupported-consumer-amd-gpu",
    "no-rocm-experience",
    "regulated-revalidation",
    "broad-cloud-choice",
    "rocm-cheaper",
    "cuda-cheaper",
}
FACTORS = list(decision_factors().values())


def test_every_factor_of_the_issue_is_there_and_every_factor_has_a_decider() -> None:
    ids = set(decision_factors())
    assert ids >= ISSUE_FACTORS
    assert ids == set(DECIDERS)


def test_every_entry_of_the_file_is_loaded() -> None:
    assert len(raw("decision_factors.toml")["factor"]) == len(FACTORS)
    assert len(raw("decision_factors.toml")["instance_type"]) == len(instance_types())


@pytest.mark.parametrize("factor", FACTORS, ids=lambda f: f.id)
def test_factor_is_complete_sourced_and_dated(factor: DecisionFactor) -> None:
    check_sources_and_date(factor.sources, factor.checked)
    check_no_stray_whitespace(factor)
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", factor.id)
    assert factor.question.endswith("?")
    assert factor.evidence
    assert factor.direction in DIRECTIONS
    assert 0 <= factor.weight <= MAX_WEIGHT
    # A decisive factor pushes somewhere; a weighted one the scan cannot always decide says
    # what to tell gpuport.
    if factor.decisive:
        assert factor.direction != "neutral"
    if factor.ask:
        assert "gpuport" in factor.ask


def test_a_factor_the_scan_cannot_decide_says_what_to_provide() -> None:
    from_settings = {
        "training-workload",
        "latency-critical-serving",
        "throughput-serving",
        "fits-one-large-gpu",
        "memory-bandwidth-bound",
        "no-rocm-experience",
        "regulated-revalidation",
        "broad-cloud-choice",
        "rocm-cheaper",
        "cuda-cheaper",
        "current-gpus",
    }
    assert all(decision_factors()[i].ask for i in from_settings)


@pytest.mark.parametrize("instance", instance_types(), ids=lambda i: i.pattern.pattern)
def test_instance_types_name_nvidia_gpus_of_the_catalog(instance: InstanceType) -> None:
    check_sources_and_date(instance.sources, instance.checked)
    assert catalog()[instance.gpu].vendor == "nvidia"


def test_instance_patterns_match_whole_names_only() -> None:
    by_gpu = {
        "p5.48xlarge": "h100-sxm",
        "p5e.48xlarge": "h200-sxm",
        "p4de.24xlarge": "a100-80gb-sxm",
        "a3-ultragpu-8g": "h200-sxm",
        "g2-standard-8": "l4",
    }
    for name, gpu in by_gpu.items():
        hits = [i.gpu for i in instance_types() if i.pattern.search(f"instanceType: {name}")]
        assert hits == [gpu], name
    assert not any(i.pattern.search("top5.48xlarge") for i in instance_types())
