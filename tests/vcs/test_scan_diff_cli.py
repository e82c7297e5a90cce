"""`gpuport scan --diff BASE_REF` as a user meets it: only what a commit added, clear errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from git_repo import Repo
from gpuport.cli import main
from gpuport.report.markdown import FINGERPRINTS_OPEN, PR_COMMENT_MARKER


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["scan", "--no-progress", "--jobs", "1", *args])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    """A project with one finding on main, and a branch whose commit adds two more."""
    repo = Repo(tmp_path / "project")
    repo.write("requirements.txt", "numpy\ncupy-cuda12x\n")
    repo.write("train.py", "import torch\nx = 1\n")
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("train.py", "import torch\nx = 1\nimport pynvml\n")
    repo.write("Dockerfile", "FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\n")
    repo.commit("feature")
    return repo


def rules_of(document: dict[str, object]) -> list[tuple[str, str, int]]:
    findings = document["findings"]
    assert isinstance(findings, list)
    return sorted((f["rule_id"], f["location"]["path"], f["location"]["line"]) for f in findings)


def test_only_the_findings_of_the_change_are_reported(repo: Repo) -> None:
    _, out, _ = run(str(repo.root), "--format", "json")
    everything = rules_of(json.loads(out))
    assert ("GP105", "requirements.txt", 2) in everything
    code, out, err = run(str(repo.root), "--diff", "main", "--format", "json")
    document = json.loads(out)
    assert rules_of(document) == [("GP201", "train.py", 3), ("GP401", "Dockerfile", 1)]
    assert document["change"]["base"] == "main"
    assert document["change"]["outside"] == 1
    assert code == 1  # a high finding in the change: at or above the default --fail-on
    assert "only lines changed since main" in err


def test_changed_since_is_the_same_option(repo: Repo) -> None:
    _, diff_out, _ = run(str(repo.root), "--diff", "main", "--format", "json")
    _, since_out, _ = run(str(repo.root), "--changed-since", "main", "--format", "json")
    assert rules_of(json.loads(diff_out)) == rules_of(json.loads(since_out))


def test_a_change_without_findings_exits_clean(repo: Repo) -> None:
    code, out, _ = run(str(repo.root), "--diff", "HEAD", "--format", "markdown")
    assert code == 0
    assert "This change adds no ROCm findings." in out


def test_the_pr_comment_lists_the_changes_findings_with_fingerprints(repo: Repo) -> None:
    code, out, _ = run(str(repo.root), "--diff", "main", "--format", "markdown")
    assert code == 1
    assert out.startswith(PR_COMMENT_MARKER + "\n")
    assert "This change adds **2 ROCm findings** (1 high, 1 medium)." in out
    assert "1 finding on lines this change does not touch is not listed." in out
    assert "GP105" not in out
    assert set(_fingerprints(out)) == {"GP201", "GP401"}


def _fingerprints(markdown: str) -> dict[str, str]:
    block = markdown.split(FINGERPRINTS_OPEN + "\n", 1)[1].split("\n-->", 1)[0]
    return {rule: fp for fp, rule in (line.split() for line in block.splitlines())}


def test_a_finding_moved_by_an_unrelated_edit_keeps_its_fingerprint(repo: Repo) -> None:
    _, before, _ = run(str(repo.root), "--diff", "main", "--format", "markdown")
    repo.write("train.py", "# a comment added above\nimport torch\nx = 1\nimport pynvml\n")
    repo.commit("unrelated edit")
    _, after, _ = run(str(repo.root), "--diff", "main", "--format", "markdown")
    assert "train.py:4" in after and "train.py:3" not in after
    assert _fingerprints(after) == _fingerprints(before)


def test_sarif_of_a_change_carries_fingerprints_and_the_base(repo: Repo) -> None:
    _, out, _ = run(str(repo.root), "--diff", "main", "--format", "sarif")
    run_ = json.loads(out)["runs"][0]
    assert {r["ruleId"] for r in run_["results"]} == {"GP201", "GP401"}
    assert all(
        re.fullmatch(r"[0-9a-f]{24}", next(iter(r["partialFingerprints"].values())))
        for r in run_["results"]
    )
    assert run_["properties"]["change"]["base"] == "main"


def test_an_unknown_ref_is_an_error_and_exit_2(repo: Repo) -> None:
    code, out, err = run(str(repo.root), "--diff", "no-such-ref")
    assert code == 2 and out == ""
    assert err.startswith("error: ") and "unknown git ref 'no-such-ref'" in err


def test_a_folder_outside_git_is_an_error_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "requirements.txt").write_text("cupy-cuda12x\n")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    code, out, err = run(str(plain), "--diff", "main")
    assert code == 2 and out == ""
    assert "not inside a git work tree" in err and "Traceback" not in err


def test_the_baseline_and_the_change_filter_together(repo: Repo, tmp_path: Path) -> None:
    _, out, _ = run(str(repo.root), "--diff", "main", "--format", "json")
    pynvml = next(f for f in json.loads(out)["findings"] if f["rule_id"] == "GP201")
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps({"fingerprints": [pynvml["fingerprint"]]}))
    _, out, _ = run(
        str(repo.root), "--diff", "main", "--baseline", str(baseline), "--format", "json"
    )
    document = json.loads(out)
    assert rules_of(document) == [("GP401", "Dockerfile", 1)]
    assert document["stats"]["baselined"] == 1 and document["change"]["outside"] == 1


def test_link_base_makes_the_comments_links_open_on_the_forge(repo: Repo) -> None:
    base = "https://github.com/acme/model/blob/0123abc"  # the slash is added
    _, out, _ = run(str(repo.root), "--diff", "main", "--format", "markdown", "--link-base", base)
    assert "(https://github.com/acme/model/blob/0123abc/train.py#L3)" in out
    assert "(https://github.com/acme/model/blob/0123abc/Dockerfile#L1)" in out
    _, plain, _ = run(str(repo.root), "--diff", "main", "--format", "markdown")
    assert "(train.py#L3)" in plain  # without it, relative as before


@pytest.mark.parametrize(
    "bad",
    [
        "javascript:alert(1)",
        "file:///etc/",
        "https://x.example/a)b",
        "https://x.example/a b",
        "https://x.example/?q=1",
        "/relative/",
    ],
)
def test_a_link_base_that_is_not_a_plain_http_url_is_refused(repo: Repo, bad: str) -> None:
    code, out, err = run(str(repo.root), "--format", "markdown", "--link-base", bad)
    assert code == 2 and out == ""
    assert "--link-base" in err


def test_write_baseline_with_diff_is_refused_before_anything_is_written(
    repo: Repo, tmp_path: Path
) -> None:
    baseline = tmp_path / "baseline.json"
    code, out, err = run(str(repo.root), "--diff", "main", "--write-baseline", str(baseline))
    assert code == 2 and out == "" and not baseline.exists()
    assert err.startswith("error: ") and "without --diff" in err


def test_the_html_report_says_it_shows_one_change(repo: Repo) -> None:
    code, out, _ = run(str(repo.root), "--diff", "main", "--format", "html")
    assert code == 1
    assert "2 findings in this change" in out
    assert "Only the lines changed since main (merge base" in out
    assert "1 finding on other lines is not listed." in out
