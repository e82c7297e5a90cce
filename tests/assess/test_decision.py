"""decide(): each factor decided from a small project's own files, settings, plan and economics,
and the outcome rules (stay, move part, move, pilot, not enough evidence)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpuport.assess import Assessment, Verdict, assess
from gpuport.assess.decision import (
    _ASKED_FLAG,
    _ASKED_KEY,
    CURRENT_GPU_ASK,
    MODEL_ASK,
    decide,
    merge_asks,
)
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
from gpuport.cli import main
from gpuport.kb.decision_factors import decision_factors
from gpuport.plan.inputs import plan_for_assess
from gpuport.plan.planner import PlanResult
from gpuport.scan.engine import ScanOptions, scan_path

YES, NO, UNKNOWN = FactorState.YES, FactorState.NO, FactorState.UNKNOWN
NOTHING_DECLARED = DecisionSettings()
# Everything a team can declare, set so that no factor is unknown for want of a setting.
DECLARED = DecisionSettings(
    rocm_experience="some",
    regulated=False,
    deployment="on-premises",
    workload="inference",
    batch=64,
    source="test",
)


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def assessed(root: Path, plan: PlanResult | None = None) -> Assessment:
    return assess(scan_path(root, ScanOptions(jobs=1)), plan=plan)


def recommend(
    root: Path,
    files: dict[str, str],
    settings: DecisionSettings = NOTHING_DECLARED,
    economics: Economics | None = None,
    plan: PlanResult | None = None,
) -> Recommendation:
    return decide(assessed(write(root, files), plan), settings, economics)


def factor(recommendation: Recommendation, factor_id: str) -> FactorResult:
    return next(f for f in recommendation.factors if f.factor_id == factor_id)


def plan_of(model: str, context: int = 8192, batch: int = 1) -> PlanResult:
    return plan_for_assess(model, "h100-sxm,mi300x", context=context, batch=batch)


def economics(saving: float, payback: tuple[float, float] | None = (2.0, 6.0)) -> Economics:
    today = CostOption("h100-sxm", "H100 SXM", "nvidia", 16, 1500.0, 3.0, 35040.0)
    best = CostOption("mi300x", "MI300X", "amd", 8, 2600.0, 2.5, 35040.0 - saving)
    return Economics(
        today=today,
        options=(best,),
        move_hours=(20.0, 80.0),
        move_usd=(2000.0, 8000.0),
        best=best,
        monthly_saving_usd=saving,
        payback_months=payback if saving > 0 else None,
        sensitivity=("at 80% of the estimated ROCm speed, payback is 3-9 months",),
    )


VLLM_SERVICE = {
    "requirements.txt": "torch\nvllm\n",
    "serve.py": "from vllm import LLM\n\nllm = LLM('meta-llama/Llama-3.1-70B')\n",
}


# --- each factor, from a small project ---------------------------------------------------------


@pytest.mark.parametrize(
    ("files", "place"),
    [
        ({"requirements.txt": "tensorrt-llm==0.12\n"}, "requirements.txt:1: tensorrt-llm==0.12"),
        ({"app.py": "import tensorrt_llm\n"}, "app.py:1: import tensorrt_llm"),
        ({"Dockerfile": "FROM nvcr.io/nim/meta/llama3-8b:1.0\n"}, "Dockerfile:1:"),
        ({"pyproject.toml": '[project]\nname="x"\ndependencies=["nemo-toolkit"]\n'}, "nemo"),
    ],
)
def test_cuda_only_serving_stack_is_decisive(
    tmp_path: Path, files: dict[str, str], place: str
) -> None:
    result = recommend(tmp_path, files)
    stack = factor(result, "cuda-only-serving-stack")
    assert stack.state is YES and stack.direction is Direction.CUDA and stack.decisive
    assert any(place in line for line in stack.evidence)
    assert result.outcome is Outcome.STAY
    assert result.decisive[0].factor_id == "cuda-only-serving-stack"
    assert result.factors[0] is result.decisive[0]  # decisive factors first
    assert (
        "tensorrt" in result.headline.lower()
        or "nvcr.io" in result.headline
        or "nemo" in result.headline
    )


def test_no_cuda_only_component_is_a_no_with_what_was_read(tmp_path: Path) -> None:
    stack = factor(recommend(tmp_path, VLLM_SERVICE), "cuda-only-serving-stack")
    assert stack.state is NO and stack.direction is Direction.NEUTRAL
    assert "2 product files read" in stack.evidence[0]


def test_custom_kernels_weigh_by_what_port_leaves_to_do(tmp_path: Path) -> None:
    kernel = (
        "__global__ void add(float* x) {\n"
        "  unsigned mask = __ballot_sync(0xffffffff, x[threadIdx.x] > 0);\n"
        "  if (mask == 0xffffffff) x[0] = 1;\n}\n"
    )
    result = recommend(tmp_path, {"csrc/add.cu": kernel, "requirements.txt": "torch\n"})
    kernels = factor(result, "custom-cuda-kernels")
    assert kernels.state is YES and kernels.direction is Direction.CUDA
    assert kernels.evidence[0] == "1 product CUDA file: csrc/add.cu"
    assert 0 < kernels.weight <= 2.0


def test_no_kernels_and_kernels_in_tests_only_are_a_no(tmp_path: Path) -> None:
    result = recommend(
        tmp_path, {"tests/k.cu": "__global__ void k() {}\n", "a.py": "import torch\n"}
    )
    assert factor(result, "custom-cuda-kernels").state is NO


def test_flash_attention_3(tmp_path: Path) -> None:
    fa3 = factor(
        recommend(tmp_path, {"m.py": "import flash_attn_interface\n"}), "flash-attention-3"
    )
    assert fa3.state is YES and fa3.evidence == ("m.py:1: import flash_attn_interface",)


def test_tensorflow_is_the_main_framework_only_alone(tmp_path: Path) -> None:
    alone = recommend(tmp_path / "a", {"requirements.txt": "tensorflow==2.15\n"})
    assert factor(alone, "tensorflow-main-framework").state is YES
    both = recommend(tmp_path / "b", {"requirements.txt": "tensorflow\ntorch\n"})
    beside = factor(both, "tensorflow-main-framework")
    assert beside.state is NO and "beside another framework" in beside.evidence[0]


def test_vllm_stack_without_kernels_pushes_to_rocm(tmp_path: Path) -> None:
    plain = factor(recommend(tmp_path / "a", VLLM_SERVICE), "pytorch-vllm-stack")
    assert plain.state is YES and plain.direction is Direction.ROCM
    with_kernels = {**VLLM_SERVICE, "csrc/k.cu": "__global__ void k() {}\n"}
    kernels = factor(recommend(tmp_path / "b", with_kernels), "pytorch-vllm-stack")
    assert kernels.state is NO and "custom CUDA files" in kernels.evidence[-1]


def test_training_from_code_from_settings_or_unknown(tmp_path: Path) -> None:
    train = {"train.py": "loss = model(x)\nloss.backward()\noptimizer.step()\n"}
    found = factor(recommend(tmp_path / "a", train), "training-workload")
    assert found.state is YES and found.evidence[0].startswith("train.py:2:")
    declared = factor(
        recommend(tmp_path / "b", train, DecisionSettings(workload="inference", source="t")),
        "training-workload",
    )
    assert declared.state is NO and declared.evidence == ("workload = inference (t)",)
    unknown = factor(recommend(tmp_path / "c", {"a.py": "import torch\n"}), "training-workload")
    assert unknown.state is UNKNOWN and "--workload" in unknown.ask and not unknown.evidence


@pytest.mark.parametrize(
    ("settings", "latency", "throughput"),
    [
        (DecisionSettings(batch=2), YES, NO),
        (DecisionSettings(batch=128), NO, YES),
        (DecisionSettings(batch=16), NO, NO),
        (DecisionSettings(batch=128, latency_target_ms=20), YES, NO),
        (DecisionSettings(latency_target_ms=200), NO, UNKNOWN),
        (DecisionSettings(), UNKNOWN, UNKNOWN),
        (DecisionSettings(workload="training"), NO, NO),
    ],
)
def test_latency_critical_against_throughput_serving(
    tmp_path: Path, settings: DecisionSettings, latency: FactorState, throughput: FactorState
) -> None:
    result = recommend(tmp_path, {"a.py": "import torch\n"}, settings)
    assert factor(result, "latency-critical-serving").state is latency
    assert factor(result, "throughput-serving").state is throughput


def test_fit_and_bandwidth_from_the_plan(tmp_path: Path) -> None:
    big = recommend(tmp_path / "a", VLLM_SERVICE, plan=plan_of("llama-3.1-70b"))
    fits = factor(big, "fits-one-large-gpu")
    assert fits.state is YES and fits.direction is Direction.ROCM
    assert fits.evidence[0].startswith("plan: ") and "GiB at batch 1" in fits.evidence[0]
    assert factor(big, "memory-bandwidth-bound").state is YES
    small = recommend(tmp_path / "b", VLLM_SERVICE, plan=plan_of("llama-3.1-8b"))
    assert factor(small, "fits-one-large-gpu").state is NO
    assert factor(small, "memory-bandwidth-bound").state is NO
    long = recommend(tmp_path / "c", VLLM_SERVICE, plan=plan_of("llama-3.1-8b", context=65536))
    assert factor(long, "memory-bandwidth-bound").state is YES
    none = recommend(tmp_path / "d", VLLM_SERVICE)
    assert factor(none, "fits-one-large-gpu").state is UNKNOWN
    assert "--model" in factor(none, "fits-one-large-gpu").ask


def test_partial_support_libraries(tmp_path: Path) -> None:
    result = recommend(tmp_path, {"requirements.txt": "torch\nbitsandbytes>=0.43\n"})
    partial = factor(result, "partial-support-libraries")
    assert partial.state is YES and partial.evidence[0] == "requirements.txt:2: bitsandbytes>=0.43"


def test_amd_gpus_outside_the_supported_list(tmp_path: Path) -> None:
    files = {"run.sh": "export HSA_OVERRIDE_GFX_VERSION=10.3.0\npython serve.py\n"}
    marker = factor(recommend(tmp_path / "a", files), "unsupported-consumer-amd-gpu")
    assert marker.state is YES and marker.evidence[0].startswith("run.sh:1:")
    old = DecisionSettings(candidate_gpus=("mi50",))
    candidate = factor(
        recommend(tmp_path / "b", {"a.py": "import torch\n"}, old), "unsupported-consumer-amd-gpu"
    )
    assert candidate.state is YES and "gfx906" in candidate.evidence[0]
    listed = DecisionSettings(candidate_gpus=("rx-7900-xtx",))
    ok = factor(
        recommend(tmp_path / "c", {"a.py": "import torch\n"}, listed),
        "unsupported-consumer-amd-gpu",
    )
    assert ok.state is NO


@pytest.mark.parametrize(
    ("settings", "factor_id", "state"),
    [
        (DecisionSettings(rocm_experience="none"), "no-rocm-experience", YES),
        (DecisionSettings(rocm_experience="strong"), "no-rocm-experience", NO),
        (DecisionSettings(), "no-rocm-experience", UNKNOWN),
        (DecisionSettings(regulated=True), "regulated-revalidation", YES),
        (DecisionSettings(regulated=False), "regulated-revalidation", NO),
        (DecisionSettings(), "regulated-revalidation", UNKNOWN),
        (DecisionSettings(deployment="cloud"), "broad-cloud-choice", YES),
        (DecisionSettings(deployment="on-premises"), "broad-cloud-choice", NO),
        (DecisionSettings(), "broad-cloud-choice", UNKNOWN),
    ],
)
def test_declared_factors(
    tmp_path: Path, settings: DecisionSettings, factor_id: str, state: FactorState
) -> None:
    decided = factor(recommend(tmp_path, {"a.py": "import torch\n"}, settings), factor_id)
    assert decided.state is state
    assert bool(decided.ask) is (state is UNKNOWN)


def test_current_gpus_from_build_and_deployment_files(tmp_path: Path) -> None:
    files = {
        "Dockerfile": 'FROM python:3.11\nENV TORCH_CUDA_ARCH_LIST="8.0;9.0+PTX"\n',
        "CMakeLists.txt": "set(CMAKE_CUDA_ARCHITECTURES 89)\n",
        "Makefile": "all:\n\tnvcc -arch=sm_100 k.cu\n",
        "deploy/pod.yaml": "spec:\n  nodeSelector:\n    nvidia.com/gpu.product: NVIDIA-H200\n",
        "deploy/nodes.yaml": "instanceType: p4de.24xlarge\n",
    }
    result = recommend(tmp_path, files)
    gpus = factor(result, "current-gpus")
    assert gpus.state is YES and gpus.direction is Direction.NEUTRAL and gpus.weight == 0
    text = "\n".join(gpus.evidence)
    for shown in ("sm_80 (A100", "sm_90 (H100", "sm_89", "sm_100", "h200-sxm", "a100-80gb-sxm"):
        assert shown in text, shown
    # a cloud instance type says it runs in a cloud
    cloud = factor(result, "broad-cloud-choice")
    assert cloud.state is YES and cloud.evidence[0].startswith("deploy/nodes.yaml:1:")


def test_economics_decide_the_cost_factors(tmp_path: Path) -> None:
    cheaper = recommend(tmp_path / "a", VLLM_SERVICE, economics=economics(12000.0))
    rocm = factor(cheaper, "rocm-cheaper")
    assert rocm.state is YES and rocm.evidence[0] == "saves $12,000/month"
    assert "payback: 2.0\u20136.0 months" in rocm.evidence
    assert rocm.evidence[-1].startswith("at 80% of the estimated ROCm speed")
    assert factor(cheaper, "cuda-cheaper").state is NO
    slow = recommend(tmp_path / "b", VLLM_SERVICE, economics=economics(100.0, (30.0, 80.0)))
    assert factor(slow, "rocm-cheaper").state is NO
    dearer = recommend(tmp_path / "c", VLLM_SERVICE, economics=economics(-5000.0))
    assert factor(dearer, "rocm-cheaper").state is NO
    assert factor(dearer, "cuda-cheaper").state is YES
    assert factor(dearer, "cuda-cheaper").evidence[0] == "AMD costs $5,000/month more"
    assert (
        factor(dearer, "rocm-cheaper").evidence[0]
        == "AMD saves nothing: it costs $5,000/month more"
    )
    missing = recommend(tmp_path / "d", VLLM_SERVICE)
    assert factor(missing, "rocm-cheaper").state is UNKNOWN
    assert "tokens_per_month" in factor(missing, "rocm-cheaper").ask


# --- the outcome -------------------------------------------------------------------------------


def test_move_when_amd_is_cheaper_and_the_project_is_ready(tmp_path: Path) -> None:
    result = recommend(
        tmp_path, VLLM_SERVICE, DECLARED, economics(12000.0), plan_of("llama-3.1-70b")
    )
    assert result.outcome is Outcome.MOVE, result.headline
    assert result.headline.startswith("Move: saves $12,000/month")
    assert result.decisive[0].factor_id == "rocm-cheaper"
    assert {f.factor_id for f in result.decisive} >= {"pytorch-vllm-stack", "fits-one-large-gpu"}
    assert result.economics is not None and result.settings is DECLARED


def test_pilot_first_without_a_proven_saving(tmp_path: Path) -> None:
    result = recommend(tmp_path, VLLM_SERVICE, DECLARED, None, plan_of("llama-3.1-70b"))
    assert result.outcome is Outcome.PILOT
    assert "no proven saving on AMD" in result.headline
    assert "factors for CUDA" not in result.headline  # vLLM, throughput, a 70B model: for ROCm
    assert any("tokens_per_month" in m for m in result.missing)


def test_stay_when_amd_costs_more_and_nothing_outweighs_it(tmp_path: Path) -> None:
    settings = DecisionSettings(
        rocm_experience="some",
        regulated=False,
        deployment="on-premises",
        workload="inference",
        batch=16,
    )
    files = {"requirements.txt": "torch\n", "app.py": "import torch\n"}
    result = recommend(tmp_path, files, settings, economics(-5000.0), plan_of("llama-3.1-8b"))
    assert result.outcome is Outcome.STAY
    assert result.decisive[0].factor_id == "cuda-cheaper"


def test_not_enough_evidence_lists_what_to_provide(tmp_path: Path) -> None:
    result = recommend(tmp_path, {"app.py": "import torch\n"})
    assert result.outcome is Outcome.UNKNOWN and result.decisive == ()
    assert result.headline.startswith("Not enough evidence:")
    wanted = "\n".join(result.missing)
    for key in ("tokens_per_month", "rocm_experience", "regulated", "deployment", "--model"):
        assert key in wanted, key


def test_nothing_to_assess(tmp_path: Path) -> None:
    result = decide(assessed(tmp_path), DECLARED, economics(12000.0))
    assert assessed(tmp_path).verdict is Verdict.NOTHING_TO_ASSESS
    assert result.outcome is Outcome.UNKNOWN


def test_move_part_when_the_cuda_only_stack_is_in_its_own_folder(tmp_path: Path) -> None:
    files = {
        "serve/requirements.txt": "tensorrt-llm\n",
        "serve/app.py": "import tensorrt_llm\n",
        "train/train.py": "import torch\nloss.backward()\n",
    }
    result = recommend(tmp_path, files, DECLARED)
    assert result.outcome is Outcome.PARTIAL, result.headline
    assert "train/ can move" in result.headline
    assert result.decisive[0].factor_id == "cuda-only-serving-stack"


def test_stay_when_the_cuda_only_stack_is_a_dependency_of_the_whole_project(
    tmp_path: Path,
) -> None:
    files = {
        "requirements.txt": "tensorrt-llm\n",
        "train/train.py": "import torch\nloss.backward()\n",
    }
    assert recommend(tmp_path, files, DECLARED).outcome is Outcome.STAY


def test_assess_command_sets_the_recommendation_and_json_still_renders(tmp_path: Path) -> None:
    write(tmp_path, VLLM_SERVICE)
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "svc"\n[tool.gpuport.decision]\nrocm_experience = "none"\n',
        encoding="utf-8",
    )
    result = CliRunner().invoke(
        main, ["assess", str(tmp_path), "--no-html", "--format", "json", "--workload", "inference"]
    )
    assert result.exit_code in (0, 1), result.output
    assert json.loads(result.stdout)["kind"] == "assessment"


def test_pilot_first_for_kernel_heavy_training_and_a_new_team(tmp_path: Path) -> None:
    settings = DecisionSettings(
        rocm_experience="none", regulated=False, deployment="cloud", workload="training"
    )
    files = {
        "csrc/norm.cu": "__global__ void norm(float* x) { x[threadIdx.x] *= 2; }\n",
        "trainer/train.py": "import torch\nloss.backward()\noptimizer.step()\n",
    }
    result = recommend(tmp_path, files, settings)
    assert result.outcome is Outcome.PILOT, result.headline
    assert "factors for CUDA" in result.headline and "outweigh" in result.headline
    assert factor(result, "latency-critical-serving").state is NO  # training serves nothing
    held = {f.factor_id for f in result.decisive}
    assert {"training-workload", "no-rocm-experience", "custom-cuda-kernels"} <= held


def test_factors_asking_for_the_same_setting_share_one_ask_that_names_them_all() -> None:
    factors = decision_factors()

    def unknown(factor_id: str) -> FactorResult:
        f = factors[factor_id]
        return FactorResult(
            f.id, f.question, FactorState.UNKNOWN, Direction.NEUTRAL, False, f.weight, ask=f.ask
        )

    ids = ["cuda-cheaper", "rocm-cheaper", "throughput-serving", "latency-critical-serving"]
    ids += ["memory-bandwidth-bound", "fits-one-large-gpu", "regulated-revalidation"]
    asks = merge_asks([unknown(i) for i in ids])
    # the heaviest factor's ask names what the others need: rocm-cheaper's adds the engineer rate
    assert asks[0] == MissingInput(("rocm-cheaper", "cuda-cheaper"), factors["rocm-cheaper"].ask)
    assert [a.factors for a in asks[1:]] == [
        ("fits-one-large-gpu", "memory-bandwidth-bound"),
        ("latency-critical-serving", "throughput-serving"),
        ("regulated-revalidation",),
    ]
    assert "`batch`" in asks[2].ask and "`engineer_usd_per_hour`" in asks[0].ask


def test_every_ask_of_the_knowledge_base_names_a_setting_or_a_flag() -> None:
    for factor in decision_factors().values():
        if factor.ask:  # merge_asks groups asks by the first setting or flag they name
            assert _ASKED_KEY.search(factor.ask) or _ASKED_FLAG.search(factor.ask), factor.id


def test_the_economics_ask_only_for_what_the_team_has_not_given(tmp_path: Path) -> None:
    def asks(name: str, settings: DecisionSettings, plan: PlanResult | None = None) -> list[str]:
        result = recommend(tmp_path / name, VLLM_SERVICE, settings, plan=plan)
        return [factor(result, f).ask for f in ("rocm-cheaper", "cuda-cheaper")]

    volume = DecisionSettings(tokens_per_month=1e9, engineer_usd_per_hour=100.0)
    assert asks("model", volume) == [MODEL_ASK, MODEL_ASK]  # shared with fits-one-large-gpu
    rocm, cuda = asks("volume", DecisionSettings(), plan_of("llama-3.1-8b"))
    assert "tokens_per_month" in rocm and "engineer_usd_per_hour" in rocm and "--model" not in rocm
    assert "tokens_per_month" in cuda and "engineer_usd_per_hour" not in cuda
    hours = DecisionSettings(gpu_hours_per_month=700.0)
    assert asks("gpu", hours, plan_of("llama-3.1-8b")) == [CURRENT_GPU_ASK, CURRENT_GPU_ASK]
    nothing = asks("nothing", DecisionSettings())  # the KB's ask, which names everything
    assert nothing == [decision_factors()[f].ask for f in ("rocm-cheaper", "cuda-cheaper")]
    model = merge_asks(
        [factor(recommend(tmp_path / "m", VLLM_SERVICE, volume), f) for f in ("rocm-cheaper",)]
        + [factor(recommend(tmp_path / "n", VLLM_SERVICE, volume), "fits-one-large-gpu")]
    )
    assert [a.factors for a in model] == [("rocm-cheaper", "fits-one-large-gpu")]
