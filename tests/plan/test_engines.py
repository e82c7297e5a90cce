"""The engine `plan` assumes per GPU when none is named, and the fitted efficiency tables."""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable
from typing import Any

import pytest

from gpuport.kb.loader import KbError, load_toml
from gpuport.plan.catalog import find_gpu
from gpuport.plan.engines import (
    ANY,
    EFFICIENCY_TOML,
    ENGINES,
    QUANT_KINDS,
    arch_family,
    default_engine,
    efficiency_tables,
    find_spread,
    profile_keys,
    quant_kind,
    tables_from_document,
    uncertainty_keys,
)
from gpuport.plan.precision import parse_precision
from kb_checks import check_known_keys

PROFILE_KEYS = {
    "engine",
    "vendor",
    "segment",
    "family",
    "token_overhead_ms",
    "sequence_overhead_us",
    "bandwidth",
    "matrix",
    "rows",
    "gpus",
    "source",
    "checked",
}
QUANT_KEYS = {"engine", "kind", "bandwidth", "matrix", "rows", "source", "checked"}
DAY = datetime.date(2026, 11, 25)
SPREAD_KEYS = {
    "engine",
    "segment",
    "vendor",
    "phase",
    "low_factor",
    "high_factor",
    "typical_error",
    "rows",
    "gpus",
    "source",
    "checked",
}


@pytest.mark.parametrize(
    ("gpu_id", "engine"),
    [
        ("mi300x", "vllm"),
        ("h100-sxm", "vllm"),
        ("rx-7900-xtx", "llama.cpp"),
        ("rtx-4090", "llama.cpp"),
        ("radeon-pro-w7900", "llama.cpp"),
    ],
)
def test_datacenter_cards_default_to_vllm_and_desktop_cards_to_llama_cpp(
    gpu_id: str, engine: str
) -> None:
    gpu = find_gpu(gpu_id)
    assert gpu is not None
    assert default_engine(gpu) == engine
    assert engine in ENGINES


# --- the fitted efficiency tables (kb/plan_efficiency.toml) ---------------------------------


def test_weight_formats_group_by_the_kernels_that_read_them() -> None:
    kinds = {
        name: quant_kind(parse_precision(name))
        for name in ("bf16", "fp8", "int8", "awq", "gptq-g64", "mxfp4", "Q4_0", "Q4_K_M", "IQ3_S")
    }
    assert kinds == {
        "bf16": "16bit",
        "fp8": "fp8",
        "int8": "int8",
        "awq": "int4",
        "gptq-g64": "int4",
        "mxfp4": "mxfp4",
        "Q4_0": "gguf-legacy",
        "Q4_K_M": "gguf-k",
        "IQ3_S": "gguf-iq",
    }
    assert set(kinds.values()) <= set(QUANT_KINDS)


def test_profiles_are_looked_up_from_the_family_to_the_global_group() -> None:
    gpu = find_gpu("rtx-4090")
    assert gpu is not None
    assert arch_family(gpu) == "ada"
    assert list(profile_keys("llama.cpp", gpu)) == [
        ("llama.cpp", "nvidia", "desktop", "ada"),
        ("llama.cpp", "nvidia", "desktop", "*"),
        # the class before the vendor: a desktop card is predicted from desktop cards
        ("llama.cpp", "*", "desktop", "*"),
        ("llama.cpp", "*", "*", "*"),
        ("gguf", "*", "*", "*"),
        ("*", "*", "*", "*"),
    ]


def test_ranges_are_looked_up_by_vendor_then_class_then_engine() -> None:
    gpu = find_gpu("radeon-ai-pro-r9700")
    assert gpu is not None
    assert list(uncertainty_keys("llama.cpp", gpu)) == [
        ("llama.cpp", "desktop", "amd"),
        ("llama.cpp", "desktop", "*"),
        ("llama.cpp", "*", "*"),
        ("*", "*", "*"),
    ]


def test_the_committed_ranges_of_llama_cpp_on_geforce_cards_are_narrow() -> None:
    # Vulkan rows out of the fit, desktop cards predicted from desktop cards: the range
    # printed next to `plan llama-3.1-8b --gpus rtx-4090` rests on the GeForce rows alone
    # and is no wider than 0.9-1.15x (it was 0.97-5.24x with the R9700's Vulkan rows in).
    gpu = find_gpu("rtx-4090")
    assert gpu is not None
    spread = find_spread(efficiency_tables(), "llama.cpp", gpu, "decode")
    assert spread is not None
    assert (spread.engine, spread.segment, spread.vendor) == ("llama.cpp", "desktop", "nvidia")
    assert spread.gpus >= 5
    assert 0.85 <= spread.low_factor <= 1.0 <= spread.high_factor <= 1.15


def test_committed_efficiency_tables_are_complete_sourced_and_plausible() -> None:
    document = load_toml(EFFICIENCY_TOML)
    check_known_keys(
        "kb/plan_efficiency.toml", [document], {"fit", "profile", "quant", "uncertainty"}
    )
    check_known_keys("[fit]", [document["fit"]], {"source", "measurements", "checked"})
    check_known_keys("[[profile]]", document["profile"], PROFILE_KEYS)
    check_known_keys("[[quant]]", document.get("quant", []), QUANT_KEYS)
    check_known_keys("[[uncertainty]]", document.get("uncertainty", []), SPREAD_KEYS)
    tables = efficiency_tables()
    assert tables.measurements >= 1
    assert (ANY, ANY, ANY, ANY) in tables.profiles
    for profile in tables.profiles.values():
        assert profile.rows >= 1 and profile.gpus, profile.key
        assert 0.0 <= profile.token_overhead_s < 0.1, profile.key
        assert 0.0 < profile.bandwidth <= 1.0 and 0.0 < profile.matrix <= 1.0, profile.key
    for phase in ("decode", "prefill"):
        spread = tables.spreads.get((ANY, ANY, ANY, phase))
        assert spread is not None, f"no all-engine {phase} range"
        assert spread.low_factor < spread.high_factor and spread.rows >= 5
        assert 0 <= spread.typical_error < 1


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["profile"][0].update(bandwidth=3.0), "bandwidth 3.0 is not a share"),
        (lambda d: d["profile"][0].update(engine="ollama"), "engine 'ollama' is not one of"),
        (lambda d: d.update(profile=d["profile"][1:]), "no global profile"),
        (lambda d: d["uncertainty"][0].update(low_factor=2.0), "low_factor must be"),
        (lambda d: d["uncertainty"][0].update(phase="train"), "phase 'train' is not one of"),
    ],
)
def test_malformed_efficiency_tables_name_the_entry(
    change: Callable[[dict[str, Any]], None], message: str
) -> None:
    document = {
        "fit": {"source": "m.csv", "measurements": 3, "checked": DAY},
        "profile": [
            {
                "engine": "*",
                "vendor": "*",
                "segment": "*",
                "family": "*",
                "token_overhead_ms": 1.0,
                "sequence_overhead_us": 20.0,
                "bandwidth": 0.7,
                "matrix": 0.5,
                "rows": 3,
                "source": "m.csv: 3 rows",
                "checked": DAY,
                "gpus": ["h100-sxm"],
            }
        ],
        "uncertainty": [
            {
                "engine": "*",
                "segment": "*",
                "phase": "decode",
                "low_factor": 0.8,
                "high_factor": 1.2,
                "typical_error": 0.1,
                "rows": 9,
                "source": "m.csv: 9 rows",
                "checked": DAY,
                "gpus": 3,
            }
        ],
    }
    tables_from_document(document)  # the unchanged document is valid
    change(document)
    with pytest.raises(KbError, match=re.escape(message)):
        tables_from_document(document)
