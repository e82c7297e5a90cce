"""A folder named for NVFP4 (NVIDIA's FP4 format) is one decision: its findings fold under one."""

from __future__ import annotations

from pathlib import Path

from gpuport.project.file_folds import _nvfp4_folder
from gpuport.scan.engine import ScanOptions, scan_path

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "project" / "nvfp4_folder"


def test_an_nvfp4_folder_keeps_one_line_that_counts_the_rest() -> None:
    result = scan_path(FIXTURE, ScanOptions(jobs=1), display_root=FIXTURE.name)
    listed = sorted((f.location.path, f.rule_id) for f in result.findings)
    assert listed == [
        ("mylib/fp8/gate.py", "GP203"),  # outside the folder: listed as it is
        ("mylib/nvfp4_recipe/convert.py", "GP211"),
    ]
    aside = sorted((f.location.path, f.rule_id) for f in result.set_aside)
    assert aside == [
        ("mylib/nvfp4_recipe/convert.py", "GP203"),
        ("mylib/nvfp4_recipe/kernels.py", "GP201"),
    ]
    (head,) = [f for f in result.findings if f.rule_id == "GP211"]
    assert (
        "2 other finding(s) in mylib/nvfp4_recipe/ set aside (GP201 x1, GP203 x1)" in head.message
    )


def test_only_folders_named_for_nvfp4_count() -> None:
    assert (
        _nvfp4_folder("torchao/prototype/nvfp4_training/x.py") == "torchao/prototype/nvfp4_training"
    )
    assert _nvfp4_folder("te/common/cast/nvfp4/specialized/k.cuh") == "te/common/cast/nvfp4"
    assert _nvfp4_folder("te/common/recipe/nvfp4.cu") is None  # a file, not a folder
    assert _nvfp4_folder("lib/mxfp8/quant.py") is None  # MXFP8 runs on gfx950
    assert _nvfp4_folder("lib/nvfp4x/quant.py") is None
