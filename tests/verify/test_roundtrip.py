"""Record then compare on the same machine passes; a perturbed op is flagged by name."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from verify_helpers import run_cli  # noqa: E402

from gpuport.verify import cases  # noqa: E402
from gpuport.verify.fileformat import read_reference  # noqa: E402


def test_record_writes_one_safetensors_file_with_inputs_outputs_references_and_machine(
    tiny_reference: Path,
) -> None:
    recording = read_reference(tiny_reference)
    assert recording.kind == "suite"
    assert recording.machine.accelerator == "cpu"
    assert recording.tolerances["bfloat16"] == (1.6e-2, 1e-5)
    names = {c.name for c in recording.cases}
    assert {"matmul[bf16]", "conv2d[fp32]", "sdpa[math,bf16]", "transformer_block[fp32]"} <= names
    assert recording.tensors["matmul[fp32]/in/a"].shape == (16, 16)
    assert recording.tensors["matmul[bf16]/out/out"].dtype == torch.bfloat16
    assert recording.tensors["matmul[bf16]/ref/out"].dtype == torch.float64
    # The inputs are the seeded CPU draws, the same on any machine.
    again = cases.make_case_inputs(cases.SUITE["matmul[fp32]"], 0, "tiny")
    assert torch.equal(again["a"], recording.tensors["matmul[fp32]/in/a"])


def test_compare_on_the_same_machine_passes(tiny_reference: Path) -> None:
    code, out, err = run_cli("verify", "compare", str(tiny_reference), "--format", "json")
    assert code == 0, err
    document = json.loads(out)
    statuses = {case["name"]: case["status"] for case in document["cases"]}
    assert statuses["matmul[fp32]"] == "pass"
    assert "fail" not in statuses.values() and "error" not in statuses.values()
    scatter = next(c for c in document["cases"] if c["name"] == "scatter_add[fp32]")
    assert scatter["nondeterministic"] and "non-deterministic on GPUs" in scatter["note"]
    assert "0 fail" in err


def _through_bf16(x: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    return {"out": (x["a"].bfloat16() @ x["b"].bfloat16()).float()}


def _fp16_accumulation(x: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    a, b = x["a"], x["b"]
    total = torch.zeros(a.shape[0], b.shape[1], dtype=torch.float16)
    for k in reversed(range(a.shape[1])):  # another order, and every partial sum in fp16
        total = total + a[:, k : k + 1] * b[k : k + 1, :]
    return {"out": total}


@pytest.mark.parametrize(
    ("case", "perturbed"), [("matmul[fp32]", _through_bf16), ("matmul[fp16]", _fp16_accumulation)]
)
def test_a_perturbed_op_on_the_second_machine_is_flagged_by_name(
    tiny_reference: Path, monkeypatch: pytest.MonkeyPatch, case: str, perturbed: object
) -> None:
    monkeypatch.setitem(cases.SUITE, case, dataclasses.replace(cases.SUITE[case], run=perturbed))
    code, out, err = run_cli("verify", "compare", str(tiny_reference), "--format", "json")
    assert code == 1, err
    document = json.loads(out)
    failed = [c for c in document["cases"] if c["status"] == "fail"]
    assert [c["name"] for c in failed] == [case]
    output = failed[0]["outputs"][0]
    assert output["max_abs_error"] > 0 and output["out_of_tolerance_share"] > 0
    # the recorded (unperturbed) side is the one closer to the exact answer
    assert output["closer_to_fp64"] == "recorded"
    assert output["fp64_error_here"] > output["fp64_error_recorded"]


def test_a_looser_tolerance_for_the_dtype_lets_the_perturbed_op_pass(
    tiny_reference: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(
        cases.SUITE,
        "matmul[fp32]",
        dataclasses.replace(cases.SUITE["matmul[fp32]"], run=_through_bf16),
    )
    code, out, err = run_cli("verify", "compare", str(tiny_reference), "--format", "json")
    needed = next(c for c in json.loads(out)["cases"] if c["name"] == "matmul[fp32]")["outputs"][0]
    code, out, err = run_cli(
        "verify",
        "compare",
        str(tiny_reference),
        "--format",
        "json",
        "--tolerance",
        f"fp32=1.3e-6,{needed['atol_needed'] * 1.0001}",
    )
    assert code == 0, err
    document = json.loads(out)
    fp32 = next(t for t in document["tolerances"] if t["dtype"] == "float32")
    assert fp32["overridden"]


def test_terminal_report_names_the_failing_case(
    tiny_reference: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(
        cases.SUITE,
        "conv2d[fp32]",
        dataclasses.replace(cases.SUITE["conv2d[fp32]"], run=_conv_bf16),
    )
    code, out, _ = run_cli("verify", "compare", str(tiny_reference))
    assert code == 1
    row = next(line for line in out.splitlines() if line.startswith("conv2d[fp32]"))
    assert "fail" in row
    assert "1 fail" in out


def _conv_bf16(x: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    out = torch.nn.functional.conv2d(
        x["x"].bfloat16(), x["weight"].bfloat16(), x["bias"].bfloat16(), padding=1
    )
    return {"out": out.float()}


def test_tf32_on_the_nvidia_side_is_pointed_out_and_not_on_rocm() -> None:
    from gpuport.verify.run import setting_notes

    on = {
        "allow_tf32_cudnn": True,
        "allow_tf32_matmul": False,
        "float32_matmul_precision": "highest",
    }
    (note,) = setting_notes(on, "cuda", "cpu")
    assert note.startswith("recorded: TF32 allowed for fp32 convolutions") and "conv2d" in note
    assert setting_notes(on, "rocm", "cpu") == ()  # the switches do nothing on ROCm
    matmul = {"allow_tf32_matmul": True}
    assert "fp32 matmuls" in setting_notes(matmul, "cuda", "cpu")[0]


def test_verify_serve_stays_a_sub_command_of_the_group() -> None:
    from gpuport.cli.verify import verify

    assert {"record", "compare", "serve"} <= set(verify.commands)
