"""[tool.gpuport.decision] and its flags: read, merged (flags win), and bad values refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpuport.assess.settings import load_decision_settings
from gpuport.cli import main
from gpuport.config import ConfigError, load_settings


def project(tmp_path: Path, table: str, tool: str = "") -> Path:
    (tmp_path / "pyproject.toml").write_text(
        f'[project]\nname = "svc"\n{tool}\n[tool.gpuport.decision]\n{table}\n', encoding="utf-8"
    )
    (tmp_path / "requirements.txt").write_text("torch\n", encoding="utf-8")
    return tmp_path


def test_every_key_is_read_from_the_table(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        """current_gpu = "H100"
current_gpu_count = 8
gpu_hours_per_month = 5000
tokens_per_month = 2e9
engineer_usd_per_hour = 120
rocm_experience = "some"
regulated = true
revalidation-hours = 80
latency_target_ms = 40
deployment = "on-premises"
workload = "inference"
candidate_gpus = ["MI300X", "mi325x"]
batch = 64""",
    )
    settings = load_decision_settings(root)
    assert settings.current_gpu == "h100-sxm"
    assert settings.current_gpu_count == 8
    assert settings.gpu_hours_per_month == 5000.0
    assert settings.tokens_per_month == 2e9
    assert settings.engineer_usd_per_hour == 120.0
    assert settings.rocm_experience == "some"
    assert settings.regulated is True
    assert settings.revalidation_hours == 80.0  # kebab-case spelling taken too
    assert settings.latency_target_ms == 40.0
    assert settings.deployment == "on-premises"
    assert settings.workload == "inference"
    assert settings.candidate_gpus == ("mi300x", "mi325x")
    assert settings.batch == 64
    # shown relative to the project: reports are shared, this machine's paths stay out
    assert settings.source == "pyproject.toml [tool.gpuport.decision]"


def test_flags_win_over_the_file(tmp_path: Path) -> None:
    root = project(tmp_path, 'rocm_experience = "none"\nbatch = 2')
    settings = load_decision_settings(
        root, {"rocm_experience": "strong", "batch": None, "candidate_gpus": "mi300x,mi300x"}
    )
    assert settings.rocm_experience == "strong"
    assert settings.batch == 2  # not given on the command line: the file's value
    assert settings.candidate_gpus == ("mi300x",)
    assert settings.source.endswith("; command line")


def test_no_table_gives_empty_settings(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n', encoding="utf-8")
    settings = load_decision_settings(tmp_path)
    assert settings.current_gpu is None and settings.candidate_gpus == () and not settings.source


def test_the_scan_settings_leave_the_decision_table_alone(tmp_path: Path) -> None:
    root = project(tmp_path, 'workload = "training"', tool='[tool.gpuport]\nfail-on = "high"')
    assert load_settings(root).fail_on is not None  # no "unknown key 'decision'"


@pytest.mark.parametrize(
    ("line", "key", "words"),
    [
        ("gpu_hours_per_month = -5", "gpu_hours_per_month", "more than zero"),
        ("engineer_usd_per_hour = 0", "engineer_usd_per_hour", "more than zero"),
        ('tokens_per_month = "lots"', "tokens_per_month", "not a number"),
        ("latency_target_ms = nan", "latency_target_ms", "not a finite number"),
        ("current_gpu_count = 2.5", "current_gpu_count", "not a whole number"),
        ("batch = 0", "batch", "1 or more"),
        ('current_gpu = "h1000"', "current_gpu", "not a GPU gpuport knows"),
        ('current_gpu = "mi300x"', "current_gpu", "AMD GPU"),
        ('candidate_gpus = ["h100"]', "candidate_gpus", "not an AMD GPU"),
        ('candidate_gpus = ["mi9000"]', "candidate_gpus", "not a GPU gpuport knows"),
        ('rocm_experience = "lots"', "rocm_experience", "none, some, strong"),
        ('deployment = "moon"', "deployment", "cloud, on-premises"),
        ('workload = "gaming"', "workload", "inference, training, both"),
        ('regulated = "yes"', "regulated", "true or false"),
        ("colour = 1", "colour", "unknown key"),
        ("regulated = false\nrevalidation_hours = 40", "revalidation_hours", "not regulated"),
        ("current_gpu_count = 4", "current_gpu_count", "needs current_gpu"),
        (
            'current_gpu = "h100"\ncurrent_gpu_count = 2\ngpu_hours_per_month = 2000',
            "gpu_hours_per_month",
            "more than 2 GPU(s) can run",
        ),
    ],
)
def test_bad_values_name_the_key_and_the_file(
    tmp_path: Path, line: str, key: str, words: str
) -> None:
    root = project(tmp_path, line)
    with pytest.raises(ConfigError) as caught:
        load_decision_settings(root)
    message = str(caught.value)
    assert str(root / "pyproject.toml") in message
    assert key in message and words in message


def test_a_bad_flag_is_named_as_the_flag(tmp_path: Path) -> None:
    root = project(tmp_path, "")
    with pytest.raises(ConfigError, match=r"^--serving-batch: -1 must be 1 or more"):
        load_decision_settings(root, {"batch": -1})
    with pytest.raises(ConfigError, match=r"^--gpu-hours-per-month: .* more than zero"):
        load_decision_settings(root, {"gpu_hours_per_month": -3.0})


@pytest.mark.parametrize(
    ("args", "table", "shown"),
    [
        ((), "gpu_hours_per_month = -1", "[tool.gpuport.decision] gpu_hours_per_month"),
        ((), 'current_gpu = "h1000"', "[tool.gpuport.decision] current_gpu"),
        (("--engineer-usd-per-hour", "-20"), "", "--engineer-usd-per-hour"),
        (("--candidate-gpus", "h100"), "", "--candidate-gpus"),
    ],
)
def test_assess_exits_2_with_one_error_line(
    tmp_path: Path, args: tuple[str, ...], table: str, shown: str
) -> None:
    root = project(tmp_path, table)
    result = CliRunner().invoke(main, ["assess", str(root), "--no-html", *args])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    error = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(error) == 1 and shown in error[0]
    if not args:
        assert "pyproject.toml" in error[0]


def test_the_declared_model_feeds_the_plan_and_stays_inside_the_project(tmp_path: Path) -> None:
    (tmp_path / "svc").mkdir()
    root = project(tmp_path / "svc", 'model = "llama-3.1-8b"\ntokens_per_month = 1e9\n'
                   'current_gpu = "h100-sxm"\nengineer_usd_per_hour = 100\n')  # fmt: skip
    assert load_decision_settings(root).model == "llama-3.1-8b"
    args = ["assess", str(root), "--no-html", "--fail-on", "never", "--format", "json"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert "llama-3.1-8b" in json.dumps(report["plan"])  # no --model given: the table's
    assert report["recommendation"]["economics"]["today"]["gpu_id"] == "h100-sxm"
    (tmp_path / "config.json").write_text("{}", encoding="utf-8")  # beside, not inside
    outside = project(tmp_path / "svc", 'model = "../config.json"\n')
    escaped = CliRunner().invoke(main, ["assess", str(outside), "--no-html"])
    assert escaped.exit_code == 2 and "outside the project" in escaped.stderr
    with pytest.raises(ConfigError, match="model"):
        load_decision_settings(project(tmp_path / "svc", "model = 3\n"))
