"""Another vendor's extras (CUDA, XPU) in a project with a ROCm path fold into one GP602 line."""

from __future__ import annotations

from pathlib import Path

from expect import check_findings
from gpuport.project.build import build_model
from gpuport.project.triage import VENDOR_EXTRAS
from gpuport.scan.engine import ScanOptions, scan_path
from project_tree import write

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "project"


def lines_with(text: str, *needles: str) -> set[int]:
    return {n for n, line in enumerate(text.splitlines(), 1) if any(s in line for s in needles)}


def test_the_fixture_folds_its_cuda_and_xpu_extras_into_one_line() -> None:
    root = FIXTURES / "vendor_extras"
    text = (root / "pyproject.toml").read_text(encoding="utf-8")
    result = scan_path(root, ScanOptions(jobs=1), display_root=root.name)
    assert result.project is not None and result.project.supports_rocm
    assert not result.skipped
    # GP602's line is marked; the other rules' findings outside the extras stay listed
    folds = [f for f in result.findings if f.rule_id == VENDOR_EXTRAS.id]
    check_findings(text, folds, "pyproject.toml")
    listed = {(f.rule_id, f.location.line) for f in result.findings if f not in folds}
    assert listed == {("GP106", n) for n in lines_with(text, "stays listed (GP106)")}
    (line,) = folds
    assert "6 extras" in line.message and "rocm64-torch260" in line.message
    assert "cu121onlytorch240" in line.message
    # each finding in the CUDA/XPU extras is kept, set aside, at its own line (the XPU pin and
    # the project's own extrapkg[...] have none)
    pinned = lines_with(text, "xformers @", "bitsandbytes", "+cu124", "+cu12torch", "set aside:")
    pinned |= {n + 1 for n in lines_with(text, '"extrapkg[cu121onlytorch240]"')}  # flash-attn
    assert {f.location.line for f in result.set_aside} == pinned
    # nothing outside them is set aside: the main dependencies and the ROCm extra stay listed
    outside = lines_with(text, "stays listed", "transformers")
    assert not outside & {f.location.line for f in result.set_aside}


def test_the_extras_are_told_per_name_pin_and_self_reference(tmp_path: Path) -> None:
    pyproject = (
        '[project]\nname = "Pkg-X"\nversion = "1"\n'
        "[project.optional-dependencies]\n"
        'cuda12 = ["cupy-cuda12x"]\n'  # named for CUDA
        'fast = ["xformers @ https://download.pytorch.org/whl/cu118/xformers.whl"]\n'  # pins CUDA
        'colab = ["pkg_x[fast]"]\n'  # asks for a CUDA extra of the project itself
        'other = ["otherpkg[fast]"]\n'  # another package's extra of the same name
        'rocm-cuda-compat = ["torch"]\n'  # named for ROCm: never another vendor's
        'plain = ["numpy"]\n'
        "[tool.x]\nrocm = true\n"
    )
    files = {"pyproject.toml": pyproject, "setup.py": "import torch\nIS_ROCM = torch.version.hip\n"}
    model = build_model(write(tmp_path, files))
    (group,) = model.vendor_extras
    assert group.extras == ("cuda12", "fast", "colab")
    assert group.rocm_extras == ("rocm-cuda-compat",)
    assert group.line == 5 and group.lines == frozenset({5, 6, 7})


def test_no_fold_without_a_rocm_path(tmp_path: Path) -> None:
    # Without a ROCm path the CUDA extras are the porting work itself: they stay listed.
    pyproject = (
        '[project]\nname = "pkg"\nversion = "1"\n'
        "[project.optional-dependencies]\n"
        'cu118 = ["torch==2.1.0+cu118"]\n'
    )
    root = write(tmp_path, {"pyproject.toml": pyproject})
    assert build_model(root).vendor_extras == ()
    result = scan_path(root, ScanOptions(jobs=1), display_root="pkg")
    assert [(f.rule_id, f.location.line) for f in result.findings] == [("GP101", 5)]
    assert not result.set_aside


def test_the_fold_is_off_when_gp602_is_ignored() -> None:
    root = FIXTURES / "vendor_extras"
    options = ScanOptions(jobs=1, ignore=frozenset({VENDOR_EXTRAS.id}))
    result = scan_path(root, options, display_root=root.name)
    assert VENDOR_EXTRAS.id not in {f.rule_id for f in result.findings}
    assert not result.set_aside
    assert any(f.rule_id == "GP101" for f in result.findings)


def test_no_line_for_extras_inside_an_nvidia_only_package(tmp_path: Path) -> None:
    # flash-attention's flash_attn/cute: the package is NVIDIA-only (GP601) and so its cu13 extra
    files = {
        "setup.py": "import torch\nIS_ROCM = torch.version.hip\n",
        "cute/pyproject.toml": (
            '[project]\nname = "cute-kernels"\nversion = "1"\n'
            'dependencies = ["nvidia-cutlass-dsl>=4.6"]\n'
            "[project.optional-dependencies]\n"
            'cu13 = ["nvidia-cutlass-dsl[cu13]>=4.6"]\n'
        ),
    }
    result = scan_path(write(tmp_path, files), ScanOptions(jobs=1), display_root="p")
    assert result.project is not None and result.project.vendor_extras
    rules = {f.rule_id for f in result.findings}
    assert "GP601" in rules and VENDOR_EXTRAS.id not in rules


def test_an_extra_only_vendor_extras_ask_for_is_one_of_them(tmp_path: Path) -> None:
    # "attn" is asked for by CUDA extras alone: a ROCm install never selects it. "kernels" is
    # asked for by a CUDA extra and by the ROCm one, "docs" by a plain extra, "lonely" by none:
    # those stay the project's own, listed.
    pyproject = (
        '[project]\nname = "pkg"\nversion = "1"\n'
        "[project.optional-dependencies]\n"
        'attn = ["flash-attn>=2.6"]\n'
        'kernels = ["triton"]\n'
        'docs = ["sphinx"]\n'
        'lonely = ["flash-attn>=2.6"]\n'
        'cu121-ampere = ["pkg[cu121]", "pkg[attn]", "pkg[kernels]"]\n'
        'cu121 = ["torch==2.4.0+cu121"]\n'
        'rocm62 = ["pkg[kernels]"]\n'
        'all = ["pkg[docs]"]\n'
        "[tool.x]\nrocm = true\n"
    )
    files = {"pyproject.toml": pyproject, "setup.py": "import torch\nIS_ROCM = torch.version.hip\n"}
    (group,) = build_model(write(tmp_path, files)).vendor_extras
    assert group.extras == ("attn", "cu121-ampere", "cu121")
    assert group.lines == frozenset({5, 9, 10})


def test_extras_named_for_an_nvidia_only_notebook_service_are_cuda_extras(tmp_path: Path) -> None:
    # Colab and Kaggle offer NVIDIA GPUs (and TPUs) only (kb platform.toml [[hosted_notebook]]):
    # beside the project's ROCm extras, an extra named for them is never a ROCm install. A
    # service the knowledge base does not know, and the same names in a pyproject with no ROCm
    # extras, are left alone.
    body = (
        '[project]\nname = "pkg"\nversion = "1"\n'
        "[project.optional-dependencies]\n"
        'colab-no-deps = ["xformers", "peft"]\n'
        'kaggle-new = ["bitsandbytes"]\n'
        'paperspace = ["xformers"]\n'
        'cu121 = ["torch==2.4.0+cu121"]\n'
        "{rocm}"
        "[tool.x]\nrocm = true\n"
    )
    setup = "import torch\nIS_ROCM = torch.version.hip\n"
    with_rocm = body.format(rocm='rocm62 = ["torch"]\n')
    root = write(tmp_path / "a", {"pyproject.toml": with_rocm, "setup.py": setup})
    (group,) = build_model(root).vendor_extras
    assert group.extras == ("colab-no-deps", "kaggle-new", "cu121")
    result = scan_path(root, ScanOptions(jobs=1))
    listed = {(f.rule_id, f.location.line) for f in result.findings}
    assert ("GP106", 7) in listed  # paperspace's xformers stays
    assert ("GP106", 5) not in listed  # colab-no-deps' xformers is folded
    root = write(tmp_path / "b", {"pyproject.toml": body.format(rocm=""), "setup.py": setup})
    (group,) = build_model(root).vendor_extras
    assert group.extras == ("cu121",)
