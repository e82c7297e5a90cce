"""A user's model: per-layer outputs recorded, and a perturbed layer named as where it drifts."""

from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from verify_helpers import run_cli  # noqa: E402

from gpuport.verify.fileformat import read_reference  # noqa: E402

MODULE = "gpuport_verify_test_model"
SOURCE = textwrap.dedent(
    """
    import torch
    from torch import nn


    class Mid(nn.Linear):
        pass


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Linear(8, 16)
            self.act = nn.GELU()
            self.mid = Mid(16, 16)
            self.head = nn.Linear(16, 4)

        def forward(self, x):
            return self.head(self.mid(self.act(self.embed(x))))


    def make():
        return Net(), torch.randn(2, 8)


    def broken():
        raise RuntimeError("no weights here")


    def not_a_model():
        return 42
    """
)


@pytest.fixture
def user_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    (tmp_path / f"{MODULE}.py").write_text(SOURCE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    sys.modules.pop(MODULE, None)


def test_a_model_records_every_layer_in_forward_order(user_model: Path) -> None:
    ref = user_model / "model.gpv"
    code, _, err = run_cli("verify", "record", "-o", str(ref), "--model", f"{MODULE}:make")
    assert code == 0, err
    recording = read_reference(ref)
    assert recording.kind == "model" and recording.model == f"{MODULE}:make"
    (case,) = recording.cases
    assert [o.name for o in case.outputs] == ["embed", "act", "mid", "head", "(output)"]
    assert "model/param/mid.weight" in recording.tensors

    code, out, err = run_cli("verify", "compare", str(ref), "--model", f"{MODULE}:make")
    assert code == 0, err + out


def test_a_perturbed_layer_is_named_as_the_first_that_drifts(
    user_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ref = user_model / "model.gpv"
    assert run_cli("verify", "record", "-o", str(ref), "--model", f"{MODULE}:make")[0] == 0
    module = sys.modules[MODULE]

    def through_bf16(self: torch.nn.Linear, x: torch.Tensor) -> torch.Tensor:
        out = torch.nn.functional.linear(x.bfloat16(), self.weight.bfloat16(), self.bias.bfloat16())
        return out.float()

    monkeypatch.setattr(module.Mid, "forward", through_bf16)
    code, out, err = run_cli(
        "verify", "compare", str(ref), "--model", f"{MODULE}:make", "--format", "json"
    )
    assert code == 1
    (case,) = json.loads(out)["cases"]
    assert case["status"] == "fail"
    assert case["first_failure"] == "mid"
    passed = {o["name"]: o["passed"] for o in case["outputs"]}
    assert passed["embed"] and passed["act"] and not passed["mid"]
    assert "first output out of tolerance: mid" in err

    code, out, _ = run_cli("verify", "compare", str(ref), "--model", f"{MODULE}:make")
    assert "first output out of tolerance: mid" in out


def test_a_model_file_needs_the_model_named_on_the_command_line(user_model: Path) -> None:
    ref = user_model / "model.gpv"
    assert run_cli("verify", "record", "-o", str(ref), "--model", f"{MODULE}:make")[0] == 0
    code, out, err = run_cli("verify", "compare", str(ref))
    assert code == 2 and out == ""
    assert f"pass --model {MODULE}:make" in err and "never imports code named by a file" in err


@pytest.mark.parametrize(
    ("factory", "message"),
    [
        ("broken", "the factory raised RuntimeError: no weights here"),
        ("not_a_model", "must return (module, example_inputs)"),
        ("missing", "has no 'missing'"),
    ],
)
def test_a_factory_that_fails_is_one_error_line(
    user_model: Path, factory: str, message: str
) -> None:
    code, _, err = run_cli(
        "verify", "record", "-o", str(user_model / "x.gpv"), "--model", f"{MODULE}:{factory}"
    )
    assert code == 2
    assert err.startswith("error:") and message in err and "Traceback" not in err
    assert not (user_model / "x.gpv").exists()


def test_a_module_that_cannot_be_imported_is_named(user_model: Path) -> None:
    code, _, err = run_cli(
        "verify", "record", "-o", str(user_model / "x.gpv"), "--model", "no_such_mod:make"
    )
    assert code == 2 and "importing no_such_mod failed (ModuleNotFoundError" in err
