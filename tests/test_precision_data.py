"""The precision benchmark's data (labels, corpus manifest, verdicts) and score.py's matching.

No network and no corpus: the data files are checked for shape, and the matching logic runs on
small synthetic scan outputs.
"""

from __future__ import annotations

import csv
import dataclasses
import importlib.util
import json
import re
import sys
import tomllib
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

PRECISION = Path(__file__).resolve().parents[1] / "benchmarks" / "precision"
HEX40 = re.compile(r"[0-9a-f]{40}")
RULE_ID = re.compile(r"GP\d{3}")


def _load_score() -> ModuleType:
    spec = importlib.util.spec_from_file_location("precision_score", PRECISION / "score.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # dataclasses look their module up in sys.modules while the class body runs
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


score = _load_score()


def _label_rows() -> list[dict[str, str]]:
    with (PRECISION / "labels.csv").open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _corpus() -> dict[str, dict[str, Any]]:
    with (PRECISION / "corpus.toml").open("rb") as handle:
        return {entry["name"]: entry for entry in tomllib.load(handle)["project"]}


# --- the data files -------------------------------------------------------------------------


def test_labels_have_the_documented_columns() -> None:
    with (PRECISION / "labels.csv").open(newline="", encoding="utf-8") as handle:
        header = next(csv.reader(handle))
    assert tuple(header) == score.LABEL_COLUMNS


def test_every_label_row_is_complete_and_allowed() -> None:
    corpus = _corpus()
    rows = _label_rows()
    assert len(rows) >= 220, "the issue asks for a sample of at least 200 (the brief 220)"
    for number, row in enumerate(rows, start=2):
        where = f"labels.csv line {number}"
        assert row["label"] in score.LABEL_VALUES, where
        assert row["reason"].strip(), where
        assert row["project"] in corpus, where
        assert row["commit"] == corpus[row["project"]]["commit"], where
        assert HEX40.fullmatch(row["commit"]), where
        assert RULE_ID.fullmatch(row["rule_id"]), where
        assert int(row["line"]) >= 1, where
        assert row["text"] == score.strip_text(row["text"]), f"{where}: text is not stripped"
        assert not row["path"].startswith("/") and ".." not in Path(row["path"]).parts, where


def test_label_keys_are_unique() -> None:
    keys = Counter(
        (r["project"], r["rule_id"], r["path"], r["line"], r["text"]) for r in _label_rows()
    )
    assert [key for key, count in keys.items() if count > 1] == []


def test_the_sample_covers_many_rules_and_every_project() -> None:
    rows = _label_rows()
    assert len({r["rule_id"] for r in rows}) >= 50
    assert {r["project"] for r in rows} == set(_corpus())
    # no rule swamps the sample: the biggest stratum of a rule stays a small share. GP300 (CUDA
    # renames) is about 40% of the product findings, and the fresh samples of session 24 are
    # drawn from what is still unlabelled, mostly GP300: a fifth of the labels is the bound.
    assert max(Counter(r["rule_id"] for r in rows).values()) <= 0.2 * len(rows)


def test_corpus_manifest_names_each_checkout_precisely() -> None:
    corpus = _corpus()
    assert len(corpus) >= 8
    for name, entry in corpus.items():
        assert entry["url"].startswith("https://github.com/"), name
        assert HEX40.fullmatch(entry["commit"]), name
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", entry["date"]), name
        assert entry["url"] in entry["fetch"] and entry["commit"] in entry["fetch"], name
        assert len(entry["rocm_path"].split()) >= 10, f"{name}: describe the ROCm path"


def test_every_corpus_project_has_one_allowed_verdict_with_evidence() -> None:
    with (PRECISION / "verdicts.toml").open("rb") as handle:
        entries = tomllib.load(handle)["verdict"]
    names = [entry["project"] for entry in entries]
    assert sorted(names) == sorted(_corpus()), "one verdict per corpus project"
    for entry in entries:
        assert entry["verdict"] in score.VERDICT_VALUES, entry["project"]
        assert entry["evidence"] and all(item.strip() for item in entry["evidence"])


def test_checklist_file_parses_when_present() -> None:
    checklist = PRECISION / "checklist.toml"
    if not checklist.exists():
        pytest.skip("the checklist task has not added benchmarks/precision/checklist.toml")
    with checklist.open("rb") as handle:
        data = tomllib.load(handle)
    assert data, "checklist.toml is empty"


# --- matching ---------------------------------------------------------------------------------


def _finding(rule: str, path: str, line: int, lines: list[str], start: int) -> dict[str, Any]:
    return {
        "rule_id": rule,
        "location": {"path": path, "line": line, "column": 1},
        "message": "m",
        "excerpt": {"start_line": start, "lines": lines},
    }


def _label(**fields: Any) -> Any:
    base = {
        "project": "p",
        "commit": "0" * 40,
        "rule_id": "GP300",
        "path": "a.cu",
        "line": 1,
        "text": "x",
        "label": "TRUE",
        "reason": "r",
    }
    base.update(fields)
    return score.Label(**base)


def test_findings_take_their_stripped_line_from_the_excerpt() -> None:
    report = {"findings": [_finding("GP300", "a.cu", 11, ["int a;", "  cudaStream_t   s;"], 10)]}
    (found,) = score.findings_from_json("p", report)
    assert (found.rule_id, found.path, found.line, found.text) == (
        "GP300",
        "a.cu",
        11,
        "cudaStream_t s;",
    )


def test_a_label_survives_a_line_move_and_dies_with_a_text_change() -> None:
    findings = score.findings_from_json(
        "p",
        {
            "findings": [
                _finding("GP300", "a.cu", 40, ["cudaStream_t s;"], 40),
                _finding("GP300", "a.cu", 41, ["cudaEvent_t e;"], 41),
            ]
        },
    )
    moved = _label(line=12, text="cudaStream_t s;")
    edited = _label(line=13, text="cudaEvent_t ev;", label="NOISE")
    result = score.match([moved, edited], findings)
    assert [(lab.line, cur.line) for lab, cur in result.pairs] == [(12, 40)]
    assert result.gone == [edited]
    assert [cur.text for cur in result.unlabelled] == ["cudaEvent_t e;"]


def test_equal_lines_pair_with_the_nearest_label() -> None:
    lines = ["__syncwarp();"]
    findings = score.findings_from_json(
        "p",
        {"findings": [_finding("GP320", "k.cu", n, lines, n) for n in (10, 50, 90)]},
    )
    near_fifty = _label(rule_id="GP320", path="k.cu", line=52, text="__syncwarp();", label="FALSE")
    near_ten = _label(rule_id="GP320", path="k.cu", line=9, text="__syncwarp();", label="TRUE")
    result = score.match([near_fifty, near_ten], findings)
    assert sorted((lab.line, cur.line) for lab, cur in result.pairs) == [(9, 10), (52, 50)]
    assert [cur.line for cur in result.unlabelled] == [90]


def test_a_label_never_pairs_with_the_same_text_far_away() -> None:
    # The corpus is pinned: the same PTX line 500 lines on is another site, and a label whose
    # own finding is gone must not lend its verdict to it.
    lines = ["asm volatile("]
    findings = score.findings_from_json(
        "p", {"findings": [_finding("GP301", "p.cuh", n, lines, n) for n in (960, 1450)]}
    )
    near = _label(rule_id="GP301", path="p.cuh", line=925, text="asm volatile(", label="NOISE")
    far = _label(rule_id="GP301", path="p.cuh", line=899, text="asm volatile(", label="NOISE")
    result = score.match([near, far], findings)
    assert [(lab.line, cur.line) for lab, cur in result.pairs] == [(925, 960)]
    assert result.gone == [far]
    assert [cur.line for cur in result.unlabelled] == [1450]
    assert score.MAX_PAIR_DISTANCE == 60


def test_rule_and_project_are_part_of_the_key() -> None:
    findings = score.findings_from_json("p", {"findings": [_finding("GP301", "a.cu", 1, ["x"], 1)]})
    result = score.match([_label(rule_id="GP300"), _label(project="q", rule_id="GP301")], findings)
    assert result.pairs == [] and len(result.gone) == 2 and len(result.unlabelled) == 1


def test_precision_counts_only_labelled_findings_still_present() -> None:
    findings = score.findings_from_json(
        "p",
        {
            "findings": [
                _finding("GP300", "a.cu", 1, ["one"], 1),
                _finding("GP300", "a.cu", 2, ["two"], 2),
                _finding("GP301", "b.cu", 3, ["three"], 3),
            ]
        },
    )
    labels = [
        _label(line=1, text="one", label="TRUE"),
        _label(line=2, text="two", label="NOISE"),
        _label(rule_id="GP301", path="b.cu", line=3, text="three", label="FALSE"),
        _label(line=9, text="gone", label="TRUE"),
    ]
    result = score.match(labels, findings)
    overall, per_rule, per_project = score.tallies(result.pairs)
    assert (overall.true, overall.false, overall.noise) == (1, 1, 1)
    assert overall.precision == pytest.approx(1 / 3)
    assert per_rule["GP300"].precision == pytest.approx(0.5)
    assert per_rule["GP301"].precision == 0
    assert per_project["p"].total == 3
    assert [lab.text for lab in result.gone] == ["gone"]


def test_weighted_precision_weights_each_stratum_by_its_size() -> None:
    # GP300 fires 3 times (1 labelled TRUE), GP301 once (labelled NOISE): 3/4 weighted, 1/2 raw
    findings = score.findings_from_json(
        "p",
        {
            "findings": [_finding("GP300", "a.cu", n, [f"l{n}"], n) for n in (1, 2, 3)]
            + [_finding("GP301", "b.cu", 1, ["k"], 1)]
        },
    )
    labels = [
        _label(line=1, text="l1", label="TRUE"),
        _label(rule_id="GP301", path="b.cu", text="k", label="NOISE"),
    ]
    result = score.match(labels, findings)
    assert score.tallies(result.pairs)[0].precision == pytest.approx(0.5)
    assert score.weighted_precision(result, findings) == pytest.approx(0.75)


def _many(rule: str, project: str, count: int) -> list[Any]:
    return [score.Current(project, rule, f"{rule}.py", n, f"t{n}") for n in range(1, count + 1)]


def test_the_stratified_sample_is_seeded_and_reaches_every_rule_and_project() -> None:
    findings = _many("GP201", "a", 400) + _many("GP201", "b", 5) + _many("GP105", "c", 1)
    first = score.stratified_sample(findings, seed=3)
    assert first == score.stratified_sample(findings, seed=3)
    drawn = Counter((f.rule_id, f.project) for f in first)
    assert drawn[("GP105", "c")] == 1
    assert drawn[("GP201", "b")] >= 1 and drawn[("GP201", "a")] >= 1
    assert sum(drawn.values()) == 1 + score.rule_quota(405)
    assert score.rule_quota(1) == 1 and score.rule_quota(3) == 2 and score.rule_quota(400) == 11


def test_sample_rows_leave_labelled_findings_out_and_have_an_empty_label() -> None:
    findings = _many("GP300", "p", 3)
    labelled = [_label(path="GP300.py", line=1, text="t1")]
    rows = score.sample_rows(findings, labelled, 10, {"p": "a" * 40})
    assert sorted(row["line"] for row in rows) == [2, 3]
    assert all(row["label"] == "" and row["commit"] == "a" * 40 for row in rows)


def test_the_verdict_is_found_in_assess_json_and_normalised() -> None:
    assert score.find_verdict({"kind": "assessment", "verdict": "READY WITH WORK"}) == (
        "READY WITH WORK"
    )
    assert score.find_verdict({"summary": {"verdict": {"label": "blocked"}}}) == "blocked"
    assert score.find_verdict({"findings": []}) is None
    assert score.normalise_verdict("READY WITH WORK") == "ready with work"
    assert score.normalise_verdict("already_supports_rocm") == "already supports ROCm"
    assert score.normalise_verdict("Ready") == "ready"


def test_the_report_lists_lost_true_findings_and_fixed_noise() -> None:
    run = score.ScanRun(
        project="p",
        findings=score.findings_from_json(
            "p", {"findings": [_finding("GP300", "a.cu", 1, ["kept"], 1)]}
        ),
        seconds=0.5,
        wall_seconds=None,
        lines=100,
        bytes_scanned=10,
    )
    labels = [
        _label(text="kept", label="NOISE"),
        _label(line=5, text="lost", label="TRUE", reason="a real problem"),
        _label(line=6, text="fixed", label="FALSE"),
    ]
    expected = {"p": {"verdict": "ready"}}
    text = score.report_markdown([run], labels, {"p": "ready"}, expected, None)
    assert "recall loss): 1" in text and "a.cu:5 — a real problem" in text
    assert "FALSE/NOISE findings gone (fixed): 1" in text
    assert "| p | ready | ready | yes |" in text
    assert "precision **0.0%**" in text


# --- end to end -----------------------------------------------------------------------------


def test_a_real_scan_of_a_tiny_project_gives_matchable_findings(tmp_path: Path) -> None:
    project = tmp_path / "tiny"
    project.mkdir()
    (project / "k.cu").write_text(
        "#include <cuda_runtime.h>\n"
        "__global__ void k(float* x) {\n"
        "  float v = x[threadIdx.x];\n"
        "  v += __shfl_xor_sync(0xffffffff, v, 16);\n"
        "  x[threadIdx.x] = v;\n"
        "}\n",
        encoding="utf-8",
    )
    run = score.scan_project(score.gpuport_command(None), "tiny", project, None)
    assert run.findings, "gpuport found nothing in a kernel with a 32-bit shuffle mask"
    assert run.lines == 6 and run.seconds is not None and run.wall_seconds is not None
    shuffle = [f for f in run.findings if "__shfl_xor_sync" in f.text]
    assert shuffle and shuffle[0].text == "v += __shfl_xor_sync(0xffffffff, v, 16);"
    label = _label(project="tiny", rule_id=shuffle[0].rule_id, path="k.cu", line=40)
    label = dataclasses.replace(label, text=shuffle[0].text)
    assert len(score.match([label], run.findings).pairs) == 1


def test_main_scores_saved_scans_and_writes_the_report(tmp_path: Path) -> None:
    scans = tmp_path / "scans"
    scans.mkdir()
    name = next(iter(_corpus()))
    commit = _corpus()[name]["commit"]
    saved = {"findings": [_finding("GP300", "a.cu", 3, ["cudaStream_t s;"], 3)], "timing": {}}
    (scans / f"{name}.json").write_text(json.dumps(saved), encoding="utf-8")
    labels = tmp_path / "labels.csv"
    with labels.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(score.LABEL_COLUMNS)
        writer.writerow([name, commit, "GP300", "a.cu", 5, "cudaStream_t s;", "NOISE", "hipify"])
    report = tmp_path / "out.md"
    sample = tmp_path / "sample.csv"
    argv = ["--corpus", str(tmp_path / "absent"), "--scans", str(scans), "--project", name]
    argv += ["--labels", str(labels), "--no-assess", "--report", str(report)]
    assert score.main([*argv, "--sample", "5", "--out", str(sample)]) == 0
    text = report.read_text(encoding="utf-8")
    assert "Labelled findings present: 1 (TRUE 0, FALSE 0, NOISE 1)" in text
    assert "Current findings without a label: 0." in text
    assert sample.read_text(encoding="utf-8").splitlines() == [",".join(score.LABEL_COLUMNS)]


# --- tiers, GP601 lines and set-aside findings (wave 2) ---------------------------------------


def _tiered(rule: str, path: str, line: int, text: str, tier: str, **extra: Any) -> dict[str, Any]:
    found = _finding(rule, path, line, [text], line)
    found["tier"] = tier
    found.update(extra)
    return found


def _component_line(component: str, where: str, line: int) -> dict[str, Any]:
    return {
        "rule_id": "GP601",
        "location": {"path": where, "line": line, "column": 1},
        "message": f"{component}/ is NVIDIA-only: the ROCm build leaves it out (...). 3 finding(s)",
        "excerpt": None,
        "tier": "product",
        "severity": "info",
    }


def _report_with_project(findings: list[dict[str, Any]], components: list[str]) -> dict[str, Any]:
    return {
        "summary": {"set_aside": 7},
        "project": {
            "components": [{"path": c, "status": "NVIDIA-only"} for c in components]
            + [{"path": "csrc/ck", "status": "built for ROCm"}]
        },
        "findings": findings,
        "timing": {"seconds": 0.1},
    }


def test_findings_keep_their_tier_and_severity() -> None:
    report = {
        "findings": [
            _tiered("GP511", ".github/workflows/a.yml", 3, "run: nvcc", "ci", severity="low"),
            _finding("GP300", "a.cu", 1, ["x"], 1),  # an old scan without tiers
        ]
    }
    ci, old = score.findings_from_json("p", report)
    assert (ci.tier, ci.severity) == ("ci", "low")
    assert old.tier == score.PRODUCT_TIER and old.severity == ""


def test_a_gp601_line_is_matched_on_the_component_it_folds() -> None:
    (line,) = score.findings_from_json("p", {"findings": [_component_line("hopper", "s.py", 9)]})
    assert line.text == "hopper"
    label = _label(rule_id="GP601", path="s.py", line=12, text="hopper", label="TRUE")
    other = _label(rule_id="GP601", path="s.py", line=9, text="csrc/cutlass", label="TRUE")
    result = score.match([label, other], [line])
    assert [lab.text for lab, _ in result.pairs] == ["hopper"] and result.gone == [other]
    assert score.component_text("no such marker here") == ""


def test_a_gp602_line_is_matched_on_the_pyproject_it_folds() -> None:
    item = {
        "rule_id": "GP602",
        "location": {"path": "sub/pyproject.toml", "line": 241, "column": 0},
        "message": "sub/pyproject.toml has 151 extras that install CUDA or XPU builds (cu118)",
        "excerpt": None,
    }
    (line,) = score.findings_from_json("p", {"findings": [item]})
    assert line.text == "sub/pyproject.toml"


def test_nvidia_only_components_come_from_the_project_model() -> None:
    report = _report_with_project([], ["hopper/", "csrc/gemm_sm80.cu"])
    assert score.nvidia_only_components(report) == ["hopper", "csrc/gemm_sm80.cu"]
    assert score.nvidia_only_components({"project": None}) == []


def test_gone_labels_inside_an_nvidia_only_component_are_set_aside_not_lost() -> None:
    components = {"p": ["hopper", "csrc/gemm_sm80.cu"]}
    in_folder = _label(path="hopper/kernel.cu", label="TRUE")
    the_file = _label(path="csrc/gemm_sm80.cu", label="NOISE")
    sibling = _label(path="csrc/gemm_sm80.cuh", label="TRUE")  # a prefix, not inside
    look_alike = _label(path="hopper2/k.cu", label="NOISE")
    other_project = _label(project="q", path="hopper/kernel.cu", label="TRUE")
    folded, gone = score.split_set_aside(
        [in_folder, the_file, sibling, look_alike, other_project], components
    )
    assert folded == [in_folder, the_file]
    assert gone == [sibling, look_alike, other_project]


def test_a_rule_fold_line_is_matched_on_its_folder_and_sets_its_rule_aside() -> None:
    item = {
        "rule_id": "GP309",
        "location": {"path": "csrc/tma/a.cuh", "line": 7, "column": 1},
        "message": "csrc/ uses Hopper-or-newer NVIDIA features that ROCm does not have (x)",
        "excerpt": None,
    }
    whole = {**item, "message": "the project uses Hopper-or-newer NVIDIA features (x)"}
    (line,) = score.findings_from_json("p", {"findings": [item]})
    assert line.text == "csrc"
    (other,) = score.findings_from_json("q", {"findings": [whole]})
    folds = {"p": score.rule_folds([line]), "q": score.rule_folds([other])}
    assert folds == {"p": [("GP309", "csrc")], "q": [("GP309", "")]}
    in_folder = _label(rule_id="GP309", path="csrc/tma/b.cuh", label="TRUE")
    other_rule = _label(rule_id="GP300", path="csrc/tma/b.cuh", label="TRUE")
    outside = _label(rule_id="GP309", path="tools/c.cu", label="NOISE")
    anywhere = _label(project="q", rule_id="GP309", path="tools/c.cu", label="NOISE")
    folded, gone = score.split_set_aside([in_folder, other_rule, outside, anywhere], {}, folds)
    assert folded == [in_folder, anywhere]
    assert gone == [other_rule, outside]


def test_gone_labels_the_scan_lists_as_set_aside_are_set_aside_not_lost() -> None:
    """An import folded under its dependency line is listed in the scan's "set_aside" places."""
    report = {"set_aside": [{"rule_id": "GP201", "path": "pkg/b.py", "line": 4}]}
    places = score.set_aside_places(report)
    folded_import = _label(rule_id="GP201", path="pkg/b.py", line=4, label="TRUE")
    other_line = _label(rule_id="GP201", path="pkg/b.py", line=5, label="TRUE")
    other_rule = _label(rule_id="GP202", path="pkg/b.py", line=4, label="TRUE")
    folded, gone = score.split_set_aside(
        [folded_import, other_line, other_rule], {}, aside={"p": places}
    )
    assert folded == [folded_import]
    assert gone == [other_line, other_rule]
    assert score.set_aside_places({}) == set()


def test_sites_a_fold_line_names_by_line_are_set_aside_not_lost() -> None:
    """GP301's one line for the PTX in the branches of one if/else names each site's line."""
    fold = {
        "rule_id": "GP301",
        "location": {"path": "k/store.cuh", "line": 10},
        "message": "inline PTX in 2 statements across the branches of this if/else "
        "(lines 11, 14), alternatives of one helper that one rewrite covers",
    }
    places = score.set_aside_places({"findings": [fold]})
    assert places == {("GP301", "k/store.cuh", 11), ("GP301", "k/store.cuh", 14)}
    plain = dict(fold, message="inline PTX must be rewritten for AMD: prmt → __byte_perm")
    assert score.set_aside_places({"findings": [plain]}) == set()


def _run_of(report: dict[str, Any], project: str = "p") -> Any:
    return score.ScanRun(
        project=project,
        findings=score.findings_from_json(project, report),
        seconds=0.1,
        wall_seconds=None,
        lines=10,
        bytes_scanned=1,
        set_aside=int(report["summary"]["set_aside"]),
        nvidia_only=score.nvidia_only_components(report),
    )


def test_the_report_gives_product_precision_tiers_and_set_aside_per_project() -> None:
    report = _report_with_project(
        [
            _tiered("GP300", "src/a.cu", 1, "one", "product", severity="low"),
            _tiered("GP300", "src/a.cu", 2, "two", "product", severity="info"),
            _tiered("GP511", "ci/b.yml", 3, "three", "ci", severity="low"),
            _component_line("hopper", "setup.py", 40),
        ],
        ["hopper"],
    )
    labels = [
        _label(path="src/a.cu", line=1, text="one", label="TRUE"),
        _label(path="src/a.cu", line=2, text="two", label="NOISE"),
        _label(rule_id="GP511", path="ci/b.yml", line=3, text="three", label="NOISE"),
        _label(rule_id="GP601", path="setup.py", line=40, text="hopper", label="TRUE"),
        _label(path="hopper/k.cu", line=5, text="k", label="TRUE", reason="hidden work"),
        _label(path="hopper/k.cu", line=6, text="j", label="NOISE"),
        _label(path="src/gone.cu", line=7, text="g", label="TRUE", reason="really lost"),
    ]
    text = score.report_markdown([_run_of(report)], labels, {}, {}, None)
    # all listed tiers: 2 TRUE of 4; product tier: 2 TRUE of 3; product at low or above (the
    # info GP300 and the info GP601 line left out): 1 TRUE of 1
    assert "Labelled findings present: 4 (TRUE 2, FALSE 0, NOISE 2); precision **50.0%**" in text
    assert "labelled present 3 (TRUE 2, FALSE 0, NOISE 1); precision **66.7%**" in text
    assert "labelled present 1 (TRUE 1, FALSE 0, NOISE 0); precision **100.0%**" in text
    assert "| product | 3 | 3 | 2 | 0 | 1 | 67% |" in text
    assert "| ci | 1 | 1 | 0 | 0 | 1 | 0% |" in text
    assert "| GP601 | 1 | 1 | 1 | 0 | 0 | 100% | 1 | 100% |" in text
    # project row: 4 now, 4 labelled, 50%, 3 product, 3 labelled, 67%, 7 set aside, 2 labels
    assert "| p | 4 | 4 | 2 | 0 | 2 | 50% | 3 | 3 | 67% | 7 | 2 |" in text
    assert "recall loss): 1" in text and "src/gone.cu:7 — really lost" in text
    assert "hopper/k.cu:5" not in text.split("set aside (folded")[0]
    assert "(folded into a GP601 or rule fold line): 2 (TRUE 1, FALSE 0, NOISE 1)" in text
    assert "- TRUE set aside: p GP300 hopper/k.cu:5 — hidden work" in text


def test_weighted_precision_of_one_tier_uses_only_that_tiers_strata() -> None:
    findings = score.findings_from_json(
        "p",
        {
            "findings": [_tiered("GP300", "a.cu", n, f"l{n}", "product") for n in (1, 2, 3)]
            + [_tiered("GP511", "c.yml", 1, "k", "ci")]
        },
    )
    labels = [
        _label(line=1, text="l1", label="TRUE"),
        _label(rule_id="GP511", path="c.yml", text="k", label="NOISE"),
    ]
    result = score.match(labels, findings)
    assert score.weighted_precision(result, findings, "product") == pytest.approx(1.0)
    assert score.weighted_precision(result, findings) == pytest.approx(0.75)
    assert score.weighted_precision(result, findings, "docs") is None


def test_the_proportional_sample_is_seeded_uniform_and_leaves_labelled_findings_out() -> None:
    findings = _many("GP300", "p", 90) + _many("GP105", "p", 10)
    first = score.proportional_sample(findings, 20, seed=4)
    assert first == score.proportional_sample(list(reversed(findings)), 20, seed=4)
    assert len(first) == 20 and len(set(first)) == 20
    assert len(score.proportional_sample(findings, 500)) == 100
    labelled = [_label(path="GP300.py", line=n, text=f"t{n}") for n in range(1, 91)]
    rows = score.sample_rows(findings, labelled, 50, {}, proportional=True)
    assert len(rows) == 10 and {row["rule_id"] for row in rows} == {"GP105"}


def test_main_draws_from_one_tier_when_asked(tmp_path: Path) -> None:
    scans = tmp_path / "scans"
    scans.mkdir()
    name = next(iter(_corpus()))
    saved = {
        "findings": [
            _tiered("GP300", "a.cu", 3, "cudaStream_t s;", "product"),
            _tiered("GP511", "ci.yml", 4, "nvcc", "ci"),
        ],
        "timing": {},
    }
    (scans / f"{name}.json").write_text(json.dumps(saved), encoding="utf-8")
    sample = tmp_path / "sample.csv"
    argv = ["--corpus", str(tmp_path / "absent"), "--scans", str(scans), "--project", name]
    argv += ["--labels", str(tmp_path / "none.csv"), "--no-assess", "--no-checklist"]
    argv += ["--sample", "5", "--out", str(sample), "--sample-tier", "product"]
    assert score.main(argv) == 0
    with sample.open(newline="", encoding="utf-8") as handle:
        assert [row["path"] for row in csv.DictReader(handle)] == ["a.cu"]


def test_the_checklist_runs_without_touching_its_owners_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "checklist.py"
    fake.write_text(
        "import sys\n"
        "out = sys.argv[sys.argv.index('--output') + 1]\n"
        "open(out, 'w').write('x')\n"
        "print('ARGS', ' '.join(sys.argv[1:]))\n",
        encoding="utf-8",
    )
    toml = tmp_path / "checklist.toml"
    toml.write_text("", encoding="utf-8")
    monkeypatch.setattr(score, "CHECKLIST_PY", fake)
    monkeypatch.setattr(score, "CHECKLIST_TOML", toml)
    output = score.run_checklist()
    assert output is not None and output.startswith("ARGS --output ")
    assert str(PRECISION / "results") not in output and "--corpus" not in output


def test_gp601_labels_name_a_component_path() -> None:
    for row in _label_rows():
        if row["rule_id"] == "GP601":
            assert row["text"] and " " not in row["text"], row
