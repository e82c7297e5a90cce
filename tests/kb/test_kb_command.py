"""`gpuport kb show` and `gpuport kb list`, driven through click's test runner."""

from __future__ import annotations

import json

from click.testing import CliRunner

from gpuport import kb
from gpuport.cli.kb import kb as kb_command
from gpuport.kb.query import lookup, suggestions


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(kb_command, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_show_package_in_terminal_format() -> None:
    code, out, _ = run("show", "torch")
    assert code == 0
    assert "package torch" in out and "needs-rocm-build-or-index" in out
    assert "https://download.pytorch.org/whl/rocm7.2" in out  # the default target
    assert "checked" in out and "2026-11-21" in out
    assert "https://pytorch.org/get-started/previous-versions/" in out


def test_show_fills_the_index_for_the_requested_rocm_version() -> None:
    code, out, _ = run("show", "torch", "--rocm", "7.9", "--format", "json")
    assert code == 0
    [match] = json.loads(out)
    assert match["entry"]["index_for_rocm"] == "https://download.pytorch.org/whl/rocm7.2"


def test_show_json_has_every_field_sources_and_date() -> None:
    code, out, _ = run("show", "nvidia-cublas-cu12", "--format", "json")
    assert code == 0
    [match] = json.loads(out)
    assert match["kind"] == "package" and match["matched_by"] == "pattern"
    entry = match["entry"]
    assert entry["name"] == "nvidia-cublas-cu12"
    assert entry["status"] == "not-applicable"
    assert entry["checked"] == "2026-11-21"
    assert all(s.startswith("https://") for s in entry["sources"])


def test_show_finds_a_name_in_several_tables() -> None:
    # "NCCL" is a CUDA library; "nccl.h" its header; both lead to the same library entry.
    code, out, _ = run("show", "nccl.h", "--format", "json")
    assert code == 0
    kinds = [m["kind"] for m in json.loads(out)]
    assert kinds == ["library"]
    code, out, _ = run("show", "cupy", "--format", "json")
    matches = json.loads(out)
    assert [m["entry"]["name"] for m in matches] == ["cupy"], "import and name match once"


def test_show_env_var_command_image_flag_index_and_gpu() -> None:
    cases = {
        "CUDA_VISIBLE_DEVICES": "env",
        "nvidia-smi": "command",
        "nvidia/cuda:12.4.1-devel-ubuntu22.04": "docker-image",
        "--gpus": "docker-flag",
        "https://download.pytorch.org/whl/cu121": "pip-index",
        "gfx942": "gpu",
        "CUDA::cublas": "library",
        "libcudnn.so": "library",
        "numba.cuda": "package",
    }
    for name, kind in cases.items():
        # "--" lets a name that looks like an option (--gpus) through.
        code, out, err = run("show", "--format", "json", "--", name)
        assert code == 0, (name, err)
        assert kind in [m["kind"] for m in json.loads(out)], name


def test_show_gpu_in_terminal_format_mentions_both_wavefront_sizes() -> None:
    code, out, _ = run("show", "gfx1100")
    assert code == 0
    assert "RDNA3" in out and "Radeon RX 7900 XTX" in out
    assert "32 (supports 32, 64)" in out


def test_show_unknown_name_exits_2_with_suggestions() -> None:
    code, out, err = run("show", "torhc")
    assert code == 2
    assert out == ""
    assert "nothing in the knowledge base for 'torhc'" in err
    assert "did you mean" in err and "torch" in err


def test_show_unknown_name_without_close_matches() -> None:
    code, _, err = run("show", "zzzzqqqq")
    assert code == 2 and "did you mean" not in err


def test_list_summary_counts_every_table() -> None:
    code, out, _ = run("list", "--format", "json")
    assert code == 0
    counts = json.loads(out)
    assert counts["packages"] == len(kb.packages())
    assert counts["gpus"] == len(kb.gpu_architectures())
    assert counts["docker"] == len(kb.docker_images()) + len(kb.docker_flags())


def test_list_one_table() -> None:
    code, out, _ = run("list", "packages")
    assert code == 0
    assert "torch" in out and "onnxruntime-migraphx" in out
    code, out, _ = run("list", "gpus", "--format", "json")
    assert code == 0
    rows = json.loads(out)
    assert {row["gfx"] for row in rows} == set(kb.gpu_architectures())
    assert all(row["wavefront"] in (32, 64) for row in rows)


def test_list_rejects_unknown_tables() -> None:
    code, _, err = run("list", "models")
    assert code == 2 and "Invalid value" in err


def test_kb_is_wired_into_the_main_cli() -> None:
    from gpuport.cli import main

    result = CliRunner().invoke(main, ["kb", "show", "pynvml", "--format", "json"])
    assert result.exit_code == 0
    [match] = json.loads(result.stdout)
    assert match["entry"]["rocm_package"] == "amdsmi"


def test_lookup_and_suggestions_directly() -> None:
    assert lookup("   ") == []
    assert [m.kind for m in lookup("triton")] == ["package"]
    assert "nvidia-smi" in suggestions("nvidia-smy")
