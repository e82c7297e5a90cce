"""The GitHub Action and the GitLab template: their YAML, and their shell steps run for real.

The steps run against a temporary git repository whose branch adds a finding. What cannot run
here (setup-python, the SARIF upload, the GitHub API) is replaced: ``uses:`` steps are
checked, not run, and ``gh`` is a fake that records what it would send.
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from git_repo import GIT_ENV, Repo
from gpuport.report.markdown import PR_COMMENT_MARKER
from gpuport.report.sarif import SECURITY_SEVERITY

ROOT = Path(__file__).resolve().parents[2]
ACTION = ROOT / "action.yml"
GITLAB = ROOT / "docs" / "ci" / "gitlab-ci.yml"
SCRIPT = ROOT / "scripts" / "ci" / "gpuport-ci.sh"
SARIF_SCHEMA = ROOT / "tests" / "data" / "sarif-schema-2.1.0.json"
SRC = ROOT / "src"


def load(path: Path) -> dict[str, Any]:
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(document, dict)
    return document


def script_commands() -> set[str]:
    text = SCRIPT.read_text(encoding="utf-8")
    return set(re.findall(r"^([a-z-]+)\)$", text, flags=re.MULTILINE))


def called_commands(text: str) -> set[str]:
    return set(re.findall(r"gpuport-ci\.sh\"? ([a-z-]+)", text))


# --- the YAML -------------------------------------------------------------------------------


def test_the_action_references_only_its_own_inputs_steps_and_script_commands() -> None:
    action = load(ACTION)
    text = ACTION.read_text(encoding="utf-8")
    declared = set(action["inputs"])
    assert {"path", "fail-on", "diff-base", "python-version"} <= declared
    assert set(re.findall(r"inputs\.([a-z-]+)", text)) <= declared
    steps = action["runs"]["steps"]
    assert action["runs"]["using"] == "composite"
    ids = {s["id"] for s in steps if "id" in s}
    for step_id, _output in re.findall(r"steps\.([a-z-]+)\.outputs\.([a-z-]+)", text):
        assert step_id in ids, step_id
    assert called_commands(text) <= script_commands()
    assert all(s.get("shell") == "bash" for s in steps if "run" in s)
    uses = [s["uses"] for s in steps if "uses" in s]
    assert uses[0].startswith("actions/setup-python@")
    upload = next(s for s in steps if "uses" in s and "upload-sarif" in s["uses"])
    assert upload["uses"].startswith("github/codeql-action/upload-sarif@")
    assert upload["with"]["sarif_file"] == "${{ steps.scan.outputs.sarif }}"


def test_the_gitlab_template_parses_and_calls_existing_script_commands() -> None:
    gitlab = load(GITLAB)
    text = GITLAB.read_text(encoding="utf-8")
    assert called_commands(text) <= script_commands()
    jobs = {
        name: job for name, job in gitlab.items() if isinstance(job, dict) and name != "variables"
    }
    for name, job in jobs.items():
        if "extends" in job:
            assert job["extends"] in jobs, name
    scan = jobs["gpuport-scan"]
    report = scan["artifacts"]["reports"]["codequality"]
    assert report.startswith(tuple(scan["artifacts"]["paths"]))
    assert jobs["gpuport-port-check"]["rules"][0]["when"] == "manual"
    # every GPUPORT_ variable the template reads is set in it or by the script's caller
    defined = set(gitlab["variables"]) | set(jobs[".gpuport-setup"]["variables"])
    used = set(re.findall(r"\$\{?(GPUPORT_[A-Z_]+)", text))
    assert used <= defined | {"GPUPORT_DIFF_BASE", "GPUPORT_LINK_BASE", "GPUPORT_GITLAB_TOKEN"}
    # no made-up repository that looks real: the user must say where gpuport comes from
    assert gitlab["variables"]["GPUPORT_REPO"] == ""
    assert "OWNER/gpuport" not in text and "OWNER/gpuport" not in ACTION.read_text()


# --- the shell steps, run -------------------------------------------------------------------


def make_repo(root: Path) -> Repo:
    """main has one finding (GP105); the branch adds a high one (GP201)."""
    repo = Repo(root)
    repo.write("requirements.txt", "numpy\ncupy-cuda12x\n")
    repo.write("train.py", "import torch\n")
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("train.py", "import torch\nimport pynvml\n")
    repo.commit("adds a finding")
    return repo


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return make_repo(tmp_path / "project")


@pytest.fixture(scope="module")
def action_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The action run once as a pull request's job (each gpuport start takes seconds here)."""
    tmp_path = tmp_path_factory.mktemp("action")
    repo = make_repo(tmp_path / "project")
    return {**run_action(repo, tmp_path), "repo": repo, "tmp": tmp_path}


def _fake_gh(folder: Path, existing_id: str) -> Path:
    """A `gh` that records its arguments and what it was given to send."""
    folder.mkdir()
    gh = folder / "gh"
    gh.write_text(
        "#!/bin/sh\n"
        f'echo "$*" >> "{folder}/calls"\n'
        'for a in "$@"; do [ -n "$next" ] && cp "$a" '
        f'"{folder}/sent.json"; next=; [ "$a" = --input ] && next=1; done\n'
        f'case "$*" in *--jq*) echo "{existing_id}";; esac\n',
        encoding="utf-8",
    )
    gh.chmod(gh.stat().st_mode | stat.S_IXUSR)
    return folder


_EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def _resolve(value: str, context: dict[str, str]) -> str:
    """A GitHub expression with `a || b` and plain names, as the runner would give it."""

    def one(match: re.Match[str]) -> str:
        for name in match.group(1).split("||"):
            if context.get(name.strip()):
                return context[name.strip()]
        return ""

    return _EXPRESSION.sub(one, value)


def run_action(repo: Repo, tmp_path: Path, existing_comment: str = "") -> dict[str, Any]:
    """Run the action's `run:` steps as a pull request's job would; return what they made."""
    action = load(ACTION)
    temp = tmp_path / "runner-temp"
    temp.mkdir(exist_ok=True)
    github_output = tmp_path / "github-output"
    summary = tmp_path / "step-summary"
    gh = _fake_gh(tmp_path / f"gh-{existing_comment or 'new'}", existing_comment)
    context = {
        **{f"inputs.{k}": str(v.get("default", "")) for k, v in action["inputs"].items()},
        "inputs.github-token": "test-token",
        "github.action_path": str(ROOT),
        "github.event_name": "pull_request",
        "github.event.pull_request.base.sha": repo.git("rev-parse", "main").strip(),
        "github.event.pull_request.number": "7",
        "github.event.pull_request.head.sha": repo.git("rev-parse", "HEAD").strip(),
        "github.server_url": "https://github.com",
        "github.repository": "owner/project",
    }
    base_env = {
        **GIT_ENV,
        "PATH": f"{gh}{os.pathsep}{GIT_ENV['PATH']}",
        "PYTHONPATH": str(SRC),
        "PYTHON": sys.executable,
        "GPUPORT": f"{sys.executable} -m gpuport.cli",
        "GITHUB_ACTION_PATH": str(ROOT),
        "GITHUB_REPOSITORY": "owner/project",
        "RUNNER_TEMP": str(temp),
        "GITHUB_OUTPUT": str(github_output),
        "GITHUB_STEP_SUMMARY": str(summary),
    }
    statuses: dict[str, int] = {}
    for step in action["runs"]["steps"]:
        if "run" not in step:
            continue
        name = step["name"]
        env = {k: _resolve(str(v), context) for k, v in step.get("env", {}).items()}
        if "install" in called_commands(step["run"]):
            assert env["GPUPORT_SOURCE"] == str(ROOT)  # pip installs the action's own folder
            continue  # never pip install here
        done = subprocess.run(
            ["bash", "-c", step["run"]],
            cwd=repo.root,
            env={**base_env, **env},
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        statuses[name] = done.returncode
        if "finish" not in called_commands(step["run"]):
            assert done.returncode == 0, (name, done.stderr)
        outputs = dict(
            line.split("=", 1) for line in github_output.read_text().splitlines() if "=" in line
        )
        if "id" in step:
            for key, value in outputs.items():
                context[f"steps.{step['id']}.outputs.{key}"] = value
    return {"statuses": statuses, "temp": temp / "gpuport", "gh": gh, "summary": summary}


def test_the_action_scans_comments_and_fails_on_what_the_pull_request_adds(
    action_run: dict[str, Any],
) -> None:
    made = action_run
    out: Path = made["temp"]
    # the SARIF for code scanning: the whole project, valid, with fingerprints
    sarif = json.loads((out / "gpuport.sarif").read_text(encoding="utf-8"))
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    jsonschema.validate(sarif, schema)
    results = sarif["runs"][0]["results"]
    assert {r["ruleId"] for r in results} == {"GP105", "GP201"}
    assert all(r["partialFingerprints"] for r in results)
    # the comment: only what the branch adds, sent as {"body": ...} with the marker first
    sent = json.loads((made["gh"] / "sent.json").read_text(encoding="utf-8"))
    assert sent["body"].startswith(PR_COMMENT_MARKER)
    assert "GP201" in sent["body"] and "GP105" not in sent["body"]
    assert sent["body"] == (out / "gpuport-pr.md").read_text(encoding="utf-8")
    # its file links open the pull request's head commit on GitHub
    head = made["repo"].git("rev-parse", "HEAD").strip()
    assert f"](https://github.com/owner/project/blob/{head}/train.py#L2)" in sent["body"]
    calls = (made["gh"] / "calls").read_text().splitlines()
    assert calls[-1].startswith("api --method POST repos/owner/project/issues/7/comments")
    assert PR_COMMENT_MARKER in made["summary"].read_text(encoding="utf-8")
    # a high finding added: the job fails (gpuport's default --fail-on is medium)
    assert made["statuses"]["Pass or fail on the findings"] == 1
    # and the project was only read
    assert made["repo"].git("status", "--porcelain") == ""


def test_a_rerun_edits_the_earlier_comment(action_run: dict[str, Any]) -> None:
    gh = _fake_gh(action_run["tmp"] / "gh-rerun", "42")
    done = _script(
        action_run["repo"],
        action_run["temp"],
        "post-comment",
        PATH=f"{gh}{os.pathsep}{GIT_ENV['PATH']}",
        GITHUB_REPOSITORY="owner/project",
        GPUPORT_PR_NUMBER="7",
    )
    assert done.returncode == 0, done.stderr
    calls = (gh / "calls").read_text().splitlines()
    assert calls[0].startswith("api --paginate repos/owner/project/issues/7/comments")
    assert calls[-1].startswith("api --method PATCH repos/owner/project/issues/comments/42")
    sent = json.loads((gh / "sent.json").read_text(encoding="utf-8"))
    assert sent["body"].startswith(PR_COMMENT_MARKER)


def test_a_pull_request_that_adds_nothing_passes(repo: Repo, tmp_path: Path) -> None:
    repo.git("checkout", "-q", "-b", "docs-only", "main")
    repo.write("notes.txt", "nothing for gpuport\n")
    repo.commit("docs")
    out = tmp_path / "out"
    done = _script(repo, out, "diff", GPUPORT_DIFF_BASE="main")
    assert done.returncode == 0, done.stderr
    assert "This change adds no ROCm findings." in (out / "gpuport-pr.md").read_text()
    # GP105 was there before the branch: the pull request passes
    assert _script(repo, out, "finish").returncode == 0


def test_links_start_at_the_scanned_folders_place_in_the_repository(
    tmp_path: Path,
) -> None:
    repo = Repo(tmp_path / "project")
    repo.write("ml/train.py", "import torch\n")
    repo.commit("base")
    repo.write("ml/train.py", "import torch\nimport pynvml\n")
    repo.commit("adds a finding")
    out = tmp_path / "out"
    done = _script(
        repo,
        out,
        "diff",
        GPUPORT_PATH="ml",
        GPUPORT_DIFF_BASE="HEAD~1",
        GPUPORT_LINK_BASE="https://gitlab.example/team/model/-/blob/abc123",
    )
    assert done.returncode == 0, done.stderr
    comment = (out / "gpuport-pr.md").read_text(encoding="utf-8")
    assert "](https://gitlab.example/team/model/-/blob/abc123/ml/train.py#L2)" in comment


def _script(repo: Repo, out: Path, command: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(SCRIPT), command],
        cwd=repo.root,
        env={
            **GIT_ENV,
            "PYTHONPATH": str(SRC),
            "PYTHON": sys.executable,
            "GPUPORT": f"{sys.executable} -m gpuport.cli",
            "GPUPORT_OUT": str(out),
            **env,
        },
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def test_the_gitlab_code_quality_report(action_run: dict[str, Any]) -> None:
    out = action_run["temp"]  # the SARIF the scan step wrote
    assert _script(action_run["repo"], out, "codequality").returncode == 0
    report = json.loads((out / "gl-code-quality-report.json").read_text(encoding="utf-8"))
    by_rule = {issue["check_name"]: issue for issue in report}
    assert set(by_rule) == {"GP105", "GP201"}
    assert by_rule["GP201"]["severity"] == "critical"  # gpuport's high
    assert by_rule["GP201"]["location"] == {"path": "train.py", "lines": {"begin": 2}}
    assert re.fullmatch(r"[0-9a-f]{24}", by_rule["GP201"]["fingerprint"])


def test_finish_without_any_result_fails(repo: Repo, tmp_path: Path) -> None:
    done = _script(repo, tmp_path / "empty", "finish")
    assert done.returncode == 2 and "no step recorded a result" in done.stderr


def test_an_unknown_base_fails_the_job_with_gpuports_error(repo: Repo, tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = _script(repo, out, "diff", GPUPORT_DIFF_BASE="no-such-branch")
    assert done.returncode == 0  # recorded, so that the upload still happens
    assert "error: " in done.stderr and "unknown git ref" in done.stderr
    assert _script(repo, out, "finish").returncode == 2


def test_the_readme_shows_the_ci_recipes_as_they_are() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("### In CI\n", 1)[1].split("\n## ", 1)[0]
    inputs = set(load(ACTION)["inputs"])
    listed = re.search(r"# inputs: (.*?)\n\s*# (.*?)\n", section)
    assert listed is not None
    named = {n.strip() for n in (listed.group(1) + listed.group(2)).split(",") if n.strip()}
    assert named == inputs - {"github-token"}
    for path in ("action.yml", "docs/ci/gitlab-ci.yml", "scripts/ci/gpuport-ci.sh"):
        assert f"]({path})" in section and (ROOT / path).is_file()
    for severity, score in SECURITY_SEVERITY.items():
        assert f"{severity.label} {score}" in section


def test_install_pip_installs_the_given_source(repo: Repo, tmp_path: Path) -> None:
    fake = tmp_path / "fake-python"
    record = tmp_path / "args"
    fake.write_text(f'#!/bin/sh\necho "$@" > "{record}"\n', encoding="utf-8")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    done = _script(repo, tmp_path / "out", "install", PYTHON=str(fake), GPUPORT_SOURCE=str(ROOT))
    assert done.returncode == 0, done.stderr
    assert record.read_text().split() == [
        "-m",
        "pip",
        "install",
        "--disable-pip-version-check",
        "--quiet",
        str(ROOT),
    ]
