"""Scanners and rules load when first needed, and nothing is missed because of it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from gpuport.rules import RULE_MODULES, find_rule
from gpuport.scan.base import _SCANNERS, SCANNER_MODULES
from gpuport.scan.catalog import RuleTable, all_rules, rule_ids
from gpuport.scan.rule_ids import RULE_IDS


def _fresh(code: str) -> str:
    """What ``code`` prints in a new interpreter (nothing of gpuport loaded yet)."""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    return done.stdout


def test_every_scanner_is_listed_under_each_kind_it_reads() -> None:
    all_rules()  # imports every rule's module, so every scanner is registered
    for found in _SCANNERS:
        for kind in found.kinds:
            listed = SCANNER_MODULES[kind]
            module = found.function.__module__
            assert any(module == m or module.startswith(m + ".") for m in listed), (
                found.name,
                kind,
            )


def test_the_generated_ids_are_every_declared_rule() -> None:
    assert list(RULE_IDS) == [r.id for r in all_rules()]
    assert rule_ids() == list(RULE_IDS)


def test_each_rule_is_found_from_its_digit_alone_in_a_fresh_process() -> None:
    """find_rule loads only the modules RULE_MODULES names for the id's digit: each digit is
    tried in its own interpreter, so no other family's import can hide a missing module."""
    for digit in RULE_MODULES:
        ids = [i for i in RULE_IDS if i[2] == digit]
        code = (
            "from gpuport.rules import find_rule\n"
            f"print([i for i in {ids!r} if find_rule(i) is None])"
        )
        assert _fresh(code).strip() == "[]", digit


def test_a_python_only_scan_never_loads_the_cuda_rules(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("import torch\nimport pynvml\n", encoding="utf-8")
    code = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from gpuport.report.json_format import scan_document\n"
        "from gpuport.report import RenderOptions\n"
        "from gpuport.scan.engine import ScanOptions, scan_path\n"
        f"result = scan_path(Path({str(tmp_path)!r}), ScanOptions(jobs=1))\n"
        "document = scan_document(result, RenderOptions())\n"
        "print(json.dumps({'kernels': 'gpuport.scan.kernels' in sys.modules,\n"
        "    'rules': document['rules'], 'found': [f.rule_id for f in result.findings]}))\n"
    )
    seen = json.loads(_fresh(code))
    assert seen["kernels"] is False
    assert seen["rules"] == list(RULE_IDS)  # every rule is still listed, by id
    assert "GP201" in seen["found"]


def test_a_rule_table_answers_for_its_ids_only() -> None:
    table = RuleTable(ids=["GP301", "GP201"])
    assert list(table) == ["GP201", "GP301"]
    assert table["GP301"] is find_rule("GP301")
    assert "GP302" not in table and table.get("GP302") is None
    assert len(table) == 2


def test_each_kind_runs_its_scanners_in_the_order_of_its_modules() -> None:
    """The order is the table's, whichever kind's files came first (findings of two scanners
    on one spot keep the first one's)."""
    all_rules()
    from gpuport.scan.base import scanners_for

    for kind, modules in SCANNER_MODULES.items():
        ranks = [
            next(i for i, m in enumerate(modules) if s.function.__module__.startswith(m))
            for s in scanners_for(kind)
        ]
        assert ranks == sorted(ranks) and set(ranks) == set(range(len(modules))), kind


def test_the_build_package_gives_each_name_it_lists_from_its_module() -> None:
    import importlib

    import gpuport.scan.build as build

    for name in build.__all__:
        module = importlib.import_module(f"gpuport.scan.build.{build._EXPORTS[name]}")
        assert getattr(build, name) is getattr(module, name), name
