"""A bad reference file, a missing op, out of memory, no torch: one clear line, never a traceback."""

from __future__ import annotations

import dataclasses
import json
import pickle
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from verify_helpers import rewrite_metadata, run_cli  # noqa: E402

from gpuport.verify import cases  # noqa: E402
from gpuport.verify.fileformat import encode, read_reference  # noqa: E402


def _copy(reference: Path, tmp_path: Path, data: bytes | None = None) -> Path:
    path = tmp_path / "ref.gpv"
    path.write_bytes(reference.read_bytes() if data is None else data)
    return path


def _fails_cleanly(path: Path, *words: str) -> str:
    code, out, err = run_cli("verify", "compare", str(path))
    assert code == 2, err
    assert out == ""
    assert err.startswith("error:") and "Traceback" not in err
    for word in words:
        assert word in err
    return err


def test_a_truncated_file(tiny_reference: Path, tmp_path: Path) -> None:
    data = tiny_reference.read_bytes()
    _fails_cleanly(
        _copy(tiny_reference, tmp_path, data[: len(data) // 2]),
        "ref.gpv",
        "truncated",
        "bytes of tensors are missing",
    )
    _fails_cleanly(_copy(tiny_reference, tmp_path, data[:100]), "truncated")
    _fails_cleanly(_copy(tiny_reference, tmp_path, data[:5]), "truncated")


def test_a_flipped_byte_in_the_tensors_fails_the_digest(
    tiny_reference: Path, tmp_path: Path
) -> None:
    data = bytearray(tiny_reference.read_bytes())
    data[-3] ^= 0x40
    _fails_cleanly(_copy(tiny_reference, tmp_path, bytes(data)), "do not match the digest")


def test_a_flipped_byte_in_the_header_is_caught(tiny_reference: Path, tmp_path: Path) -> None:
    data = bytearray(tiny_reference.read_bytes())
    at = data.index(b'"data_offsets":[') + len(b'"data_offsets":[')
    data[at] = ord("9") if data[at] != ord("9") else ord("8")  # an offset no longer adds up
    _fails_cleanly(_copy(tiny_reference, tmp_path, bytes(data)), "ref.gpv")


def test_a_newer_schema_says_to_upgrade(tiny_reference: Path, tmp_path: Path) -> None:
    def newer(document: dict[str, Any]) -> None:
        document["schema"] = 99

    data = rewrite_metadata(tiny_reference.read_bytes(), newer)
    _fails_cleanly(_copy(tiny_reference, tmp_path, data), "newer gpuport (schema 99", "upgrade")


def test_a_safetensors_file_that_is_not_a_reference(tmp_path: Path) -> None:
    from safetensors.torch import save_file

    path = tmp_path / "weights.safetensors"
    save_file({"w": torch.zeros(2)}, str(path))
    _fails_cleanly(path, "not a gpuport verify reference")


def test_a_pickle_is_never_loaded(tmp_path: Path) -> None:
    path = tmp_path / "ref.gpv"
    path.write_bytes(pickle.dumps({"a": 1}))
    _fails_cleanly(path, "ref.gpv")


def _tampered(reference: Path, tmp_path: Path, name: str, tensor: torch.Tensor, spec: bool) -> Path:
    """The file with one tensor replaced and a valid digest (a writer that got it wrong)."""
    recording = read_reference(reference)
    tensors = dict(recording.tensors)
    key = f"matmul[fp32]/in/{name}"
    tensors[key] = tensor
    recorded_cases = recording.cases
    if spec:  # the metadata agrees with the tensor: only the case's own check can catch it
        recorded_cases = tuple(
            dataclasses.replace(
                c,
                inputs=tuple(
                    dataclasses.replace(
                        s, dtype=str(tensor.dtype).removeprefix("torch."), shape=tuple(tensor.shape)
                    )
                    if s.name == name
                    else s
                    for s in c.inputs
                ),
            )
            if c.name == "matmul[fp32]"
            else c
            for c in recorded_cases
        )
    changed = dataclasses.replace(recording, tensors=tensors, cases=recorded_cases)
    return _copy(reference, tmp_path, encode(changed))


@pytest.mark.parametrize("spec", [False, True], ids=["metadata-disagrees", "metadata-agrees"])
@pytest.mark.parametrize(
    "tensor",
    [torch.zeros(8, 16), torch.zeros(16, 16, dtype=torch.float64)],
    ids=["wrong-shape", "wrong-dtype"],
)
def test_a_tensor_of_the_wrong_shape_or_dtype_names_the_case(
    tiny_reference: Path, tmp_path: Path, tensor: torch.Tensor, spec: bool
) -> None:
    path = _tampered(tiny_reference, tmp_path, "a", tensor, spec)
    code, out, err = run_cli("verify", "compare", str(path), "--format", "json")
    assert code == 2 and "Traceback" not in err
    document = json.loads(out)
    bad = [c for c in document["cases"] if c["status"] == "error"]
    assert [c["name"] for c in bad] == ["matmul[fp32]"]
    assert "input a" in bad[0]["note"] or "matmul[fp32]/in/a" in bad[0]["note"]
    assert "error: matmul[fp32]:" in err
    # the rest were still compared
    assert sum(c["status"] == "pass" for c in document["cases"]) > 10


def test_an_op_missing_on_this_torch_is_skipped_with_the_reason(
    tiny_reference: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delattr(torch.nn.functional, "rms_norm")
    code, out, err = run_cli("verify", "compare", str(tiny_reference), "--format", "json")
    assert code == 0, err
    rms = next(c for c in json.loads(out)["cases"] if c["name"] == "rms_norm[fp32]")
    assert rms["status"] == "skipped" and "rms_norm needs torch 2.4+" in rms["note"]


def _out_of_memory(x: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 40.00 GiB")


def test_out_of_memory_skips_that_case_and_keeps_the_rest(
    tiny_reference: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    case = "conv2d[fp32]"
    monkeypatch.setitem(
        cases.SUITE, case, dataclasses.replace(cases.SUITE[case], run=_out_of_memory)
    )
    code, out, err = run_cli("verify", "compare", str(tiny_reference), "--format", "json")
    assert code == 0, err
    document = json.loads(out)
    conv = next(c for c in document["cases"] if c["name"] == case)
    assert conv["status"] == "skipped" and conv["note"] == "out of memory on cpu"
    assert document["counts"]["pass"] > 10

    ref = tmp_path / "oom.gpv"
    code, _, err = run_cli(
        "verify", "record", "-o", str(ref), "--size", "tiny", "--case", "conv2d", "--case", "gelu"
    )
    assert code == 0 and f"skipped {case}: out of memory on cpu" in err
    statuses = {c.name: c.status for c in read_reference(ref).cases}
    assert statuses == {case: "skipped", "gelu[fp32]": "recorded", "gelu_tanh[fp32]": "recorded"}


def test_bad_options_are_one_error_line(tiny_reference: Path) -> None:
    code, _, err = run_cli("verify", "compare", str(tiny_reference), "--tolerance", "int3=1,2")
    assert code == 2 and "--tolerance 'int3=1,2'" in err
    code, _, err = run_cli("verify", "compare", str(tiny_reference), "--tolerance", "bf16=x")
    assert code == 2 and "two numbers" in err
    if not torch.cuda.is_available():
        code, _, err = run_cli("verify", "compare", str(tiny_reference), "--device", "cuda")
        assert code == 2 and "sees no GPU here" in err
    code, _, err = run_cli("verify", "record", "-o", "x.gpv", "--case", "nosuchop")
    assert code == 2 and "matches no case" in err


def test_without_torch_verify_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)
    code, out, err = run_cli("verify", "compare", "ref.gpv")
    assert code == 2 and out == ""
    assert "pip install torch==2.13.0 && pip install 'gpuport[bench]'" in err


def test_the_core_and_the_verify_renderers_import_without_torch() -> None:
    script = (
        "import sys; sys.modules['torch'] = None\n"
        "import gpuport.cli, gpuport.report, gpuport.verify.result, gpuport.verify.tolerances\n"
        "gpuport.report.registered()\n"
        "assert 'torch' not in [m for m in sys.modules if sys.modules[m] is not None]\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr


def test_outputs_left_out_of_the_metadata_are_an_error_not_a_pass(
    tiny_reference: Path, tmp_path: Path
) -> None:
    recording = read_reference(tiny_reference)
    changed = tuple(
        dataclasses.replace(c, outputs=c.outputs[:1]) if c.name == "reductions[fp32]" else c
        for c in recording.cases
    )
    path = _copy(tiny_reference, tmp_path, encode(dataclasses.replace(recording, cases=changed)))
    code, out, _ = run_cli("verify", "compare", str(path), "--format", "json")
    assert code == 2
    bad = next(c for c in json.loads(out)["cases"] if c["name"] == "reductions[fp32]")
    assert bad["status"] == "error" and "computed here, not recorded: mean, var" in bad["note"]


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="needs FIFOs")
def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    import os

    fifo = tmp_path / "ref.gpv"
    os.mkfifo(fifo)
    _fails_cleanly(fifo, "not a regular file")


def test_an_op_missing_when_recording_is_skipped_and_compare_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ref = tmp_path / "norms.gpv"
    with monkeypatch.context() as patched:
        patched.delattr(torch.nn.functional, "rms_norm")
        code, _, err = run_cli(
            "verify", "record", "-o", str(ref), "--size", "tiny", "--case", "rms", "--case", "layer"
        )
    assert code == 0, err
    assert "skipped rms_norm[fp32]: torch.nn.functional.rms_norm needs torch 2.4+" in err
    code, out, err = run_cli("verify", "compare", str(ref), "--format", "json")
    assert code == 0, err  # what was recorded passes; the skipped case is said, not failed
    rms = next(c for c in json.loads(out)["cases"] if c["name"] == "rms_norm[fp32]")
    assert rms["status"] == "skipped" and "skipped when recorded" in rms["note"]


def _interrupted(x: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    raise KeyboardInterrupt


def test_ctrl_c_is_exit_130_without_a_traceback(
    tiny_reference: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    case = "gelu[fp32]"
    monkeypatch.setitem(cases.SUITE, case, dataclasses.replace(cases.SUITE[case], run=_interrupted))
    code, out, err = run_cli("verify", "compare", str(tiny_reference))
    assert code == 130 and out == "" and "Traceback" not in err and "interrupted" in err
