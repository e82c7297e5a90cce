"""Settings: defaults, the nearest [tool.gpuport] table walking up, flags on top."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuport.config import ConfigError, load_settings, parse_size
from gpuport.findings import Severity


def test_defaults_without_pyproject(tmp_path: Path) -> None:
    s = load_settings(tmp_path)
    assert s.fail_on is Severity.MEDIUM
    assert s.source_of("fail_on") == "default"


def test_nearest_table_walking_up_and_flags_override(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.gpuport]\nfail-on = "high"\nexclude = ["third_party"]\nmax-file-size = "1M"\n'
    )
    sub = tmp_path / "a" / "b"
    sub.mkdir(parents=True)
    (tmp_path / "a" / "pyproject.toml").write_text('[project]\nname = "no-gpuport-table"\n')
    s = load_settings(sub)
    assert s.fail_on is Severity.HIGH
    assert s.exclude == ("third_party",)
    assert s.max_file_size == 1024**2
    assert s.source_of("fail_on") == str(tmp_path / "pyproject.toml")
    s2 = load_settings(sub, {"fail_on": "never", "exclude": ("x",)})
    assert s2.fail_on is None and s2.exclude == ("x",)
    assert s2.source_of("fail_on") == "flag"


def test_unknown_key_and_bad_values_name_the_file(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.gpuport]\nfail_onn = "high"\n')
    with pytest.raises(ConfigError, match=r"pyproject.toml: unknown key 'fail_onn'"):
        load_settings(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.gpuport]\nfail-on = "severe"\n')
    with pytest.raises(ConfigError, match="unknown severity 'severe'"):
        load_settings(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.gpuport]\nexclude = 3\n")
    with pytest.raises(ConfigError, match="list of strings"):
        load_settings(tmp_path)


@pytest.mark.parametrize(
    ("text", "value"), [("512", 512), ("4k", 4096), ("8M", 8 << 20), ("1GB", 1 << 30)]
)
def test_parse_size(text: str, value: int) -> None:
    assert parse_size(text) == value


@pytest.mark.parametrize("text", ["", "abc", "-1", "0"])
def test_parse_size_rejects(text: str) -> None:
    with pytest.raises(ConfigError):
        parse_size(text)


def test_a_configured_baseline_is_relative_to_its_pyproject(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.gpuport]\nbaseline = "ci/base.json"\n')
    (tmp_path / "src").mkdir()
    s = load_settings(tmp_path / "src")
    assert s.baseline == str(tmp_path / "ci" / "base.json")
    assert load_settings(tmp_path, {"baseline": "mine.json"}).baseline == "mine.json"


@pytest.mark.parametrize("value", [8.5, True, [], "1e400", "inf", "nan", 1 << 50])
def test_parse_size_rejects_values_that_are_not_sizes(value: object) -> None:
    with pytest.raises(ConfigError, match="size"):
        parse_size(value)


def test_a_bad_value_names_the_file_and_the_key(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "pyproject.toml").write_text("[tool.gpuport]\nmax-file-size = 8.5\n")
    with pytest.raises(ConfigError) as error:
        load_settings(tmp_path / "a")
    assert str(error.value).startswith(
        f"{tmp_path / 'a' / 'pyproject.toml'}: [tool.gpuport] max-file-size: size 8.5 "
    )
    with pytest.raises(ConfigError, match=r"^--max-file-size: size '8\.5x' is not"):
        load_settings(tmp_path, {"max_file_size": "8.5x"})


def test_a_configured_baseline_is_read_inside_its_folder_only(tmp_path: Path) -> None:
    from gpuport.config import load_baseline

    (tmp_path / "ci").mkdir()
    (tmp_path / "ci" / "base.json").write_text('{"fingerprints": ["a", "b"]}')
    (tmp_path / "project" / "ci").mkdir(parents=True)
    (tmp_path / "project" / "ci" / "base.json").symlink_to(tmp_path / "ci" / "base.json")
    (tmp_path / "project" / "pyproject.toml").write_text(
        '[tool.gpuport]\nbaseline = "ci/base.json"\n'
    )
    with pytest.raises(
        ConfigError, match=r"\[tool.gpuport\] baseline: .* leads out of the project"
    ):
        load_baseline(load_settings(tmp_path / "project"))
    (tmp_path / "project" / "ci" / "base.json").unlink()
    (tmp_path / "project" / "ci" / "base.json").write_text('{"fingerprints": ["a", "b"]}')
    assert load_baseline(load_settings(tmp_path / "project")) == {"a", "b"}


@pytest.mark.parametrize(
    "text", ['{"fingerprints": [1]}', '["fingerprints"]', '{"fingerprints": "ab"}', "\xff"]
)
def test_a_baseline_that_is_not_one_is_a_config_error(tmp_path: Path, text: str) -> None:
    from gpuport.config import load_baseline

    (tmp_path / "b.json").write_text(text, encoding="latin-1")
    with pytest.raises(ConfigError, match="not a gpuport baseline file"):
        load_baseline(load_settings(tmp_path, {"baseline": str(tmp_path / "b.json")}))
