"""scan/python/callers.py: the project files it reads to follow a public helper's callers."""

from __future__ import annotations

from pathlib import Path

from gpuport.scan.python import callers


def test_project_files_skip_links_that_lead_outside_the_root(tmp_path: Path) -> None:
    outside = tmp_path / "outside.py"
    outside.write_text("from pkg.helpers import probe\nprobe()\n", encoding="utf-8")
    root = tmp_path / "project"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "helpers.py").write_text("def probe():\n    pass\n", encoding="utf-8")
    (root / "pkg" / "linked.py").symlink_to(outside)  # read, it would keep the finding
    (root / "build").mkdir()
    (root / "build" / "copy.py").write_text("probe()\n", encoding="utf-8")

    callers._project_files.cache_clear()
    read = {Path(path).name for path, _ in callers._project_files(root)}

    assert read == {"helpers.py"}


def test_a_text_names_rocm_only_if_it_holds_one_of_the_words() -> None:
    from gpuport.scan.python.guards import may_name_rocm, rocm_identifier

    assert not may_name_rocm("import torch\nmajor, _ = torch.cuda.get_device_capability()\n")
    for text in (
        "torch.version.hip",
        "if is_ROCm():",
        "AMD_GPU = 1",
        "x = gcn_arch",
        "\uff48\uff49\uff50 = 1",
    ):
        assert may_name_rocm(text), text
    # every identifier rocm_identifier accepts is found by the text test
    for ident in ("is_rocm_pytorch", "torchHip", "AMD", "use_hipcc", "GCN_ARCH"):
        assert rocm_identifier(ident) and may_name_rocm(ident), ident
