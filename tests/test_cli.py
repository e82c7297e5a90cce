"""The command line as a user meets it: exit codes, outputs, baselines, bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from gpuport import __version__
from gpuport.assess import Assessment
from gpuport.cli import COMMAND_MODULES, COMMANDS, main
from gpuport.kb.query import KbCounts, KbLookup, KbTable
from gpuport.plan.planner import PlanResult
from gpuport.port.model import PortResult
from gpuport.report import formats_for
from gpuport.rules import Rule, RuleIndex
from gpuport.scan.engine import ScanResult


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def project(tmp_path: Path) -> Path:
    (tmp_path / "requirements.txt").write_text("torch==2.3.1+cu121\nnumpy\n")
    (tmp_path / "k.cu").write_text(
        "__global__ void k(int* x) { x[threadIdx.x & 31] = warp_sum(x[0]); }\n"
    )
    return tmp_path


def test_version() -> None:
    code, out, _ = run("--version")
    assert code == 0 and __version__ in out


def test_exit_codes_follow_fail_on(tmp_path: Path) -> None:
    root = project(tmp_path)
    assert run("scan", str(root), "--format", "json")[0] == 1  # medium findings
    assert run("scan", str(root), "--format", "json", "--fail-on", "high")[0] == 0
    assert run("scan", str(root), "--format", "json", "--fail-on", "never")[0] == 0
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run("scan", str(empty), "--format", "json")[0] == 0


def test_data_on_stdout_summary_on_stderr(tmp_path: Path) -> None:
    _code, out, err = run("scan", str(project(tmp_path)), "--format", "json")
    data = json.loads(out)
    assert {f["rule_id"] for f in data["findings"]} >= {"GP101", "GP302"}
    assert "finding(s)" in err and "finding(s)" not in out


def test_output_file_is_written_and_stdout_stays_empty(tmp_path: Path) -> None:
    target = tmp_path / "out" / "report.sarif"
    code, out, _err = run("scan", str(project(tmp_path)), "--format", "sarif", "-o", str(target))
    assert code == 1 and out == ""
    sarif = json.loads(target.read_text())
    assert sarif["version"] == "2.1.0" and sarif["runs"][0]["results"]


def test_missing_path_is_an_input_error(tmp_path: Path) -> None:
    # A usage error since issue 10: one line naming the path, and no report at all (it was a
    # JSON report whose only entry was the missing path).
    code, out, err = run("scan", str(tmp_path / "nope"), "--format", "json")
    assert code == 2
    assert out == "" and f"error: {tmp_path / 'nope'}: no such file or folder" in err


def test_a_file_that_cannot_be_read_makes_exit_2_but_the_rest_is_reported(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "blob.py").write_bytes(b"import torch\0\0\0")
    code, out, _ = run("scan", str(root), "--format", "json")
    data = json.loads(out)
    assert code == 2
    assert [s["path"] for s in data["skipped"]] == ["blob.py"]
    assert {f["rule_id"] for f in data["findings"]} >= {"GP101", "GP302"}


def test_partly_read_file_does_not_fail_the_run(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "latin.py").write_bytes(b"# caf\xe9\nx = 1\n")
    code, out, _ = run("scan", str(root), "--format", "json", "--fail-on", "never")
    assert code == 0
    assert json.loads(out)["skipped"][0]["kind"] == "not-utf8"


def test_bad_configuration_is_exit_2_with_the_file_named(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "pyproject.toml").write_text('[tool.gpuport]\nfail-on = "sometimes"\n')
    code, _, err = run("scan", str(root))
    assert code == 2 and "pyproject.toml" in err and "sometimes" in err
    code, _, err = run("scan", str(root), "--max-file-size", "lots")
    assert code == 2


def test_config_table_sets_fail_on_and_flags_override_it(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "pyproject.toml").write_text('[tool.gpuport]\nfail-on = "blocker"\n')
    assert run("scan", str(root), "--format", "json")[0] == 0
    assert run("scan", str(root), "--format", "json", "--fail-on", "low")[0] == 1


def test_baseline_round_trip(tmp_path: Path) -> None:
    (tmp_path / "p").mkdir()
    root = project(tmp_path / "p")
    baseline = tmp_path / "baseline.json"
    code, _, err = run("scan", str(root), "--format", "json", "--write-baseline", str(baseline))
    assert code == 1 and "wrote baseline" in err
    code, out, _ = run("scan", str(root), "--format", "json", "--baseline", str(baseline))
    assert code == 0 and json.loads(out)["findings"] == []
    (root / "k2.cu").write_text(
        "__global__ void k(int* x) { x[threadIdx.x % 32] = warp_sum(x[0]); }\n"
    )
    code, out, _ = run("scan", str(root), "--format", "json", "--baseline", str(baseline))
    assert code == 1
    assert {f["location"]["path"] for f in json.loads(out)["findings"]} == {"k2.cu"}
    (tmp_path / "broken.json").write_text("{}")
    assert run("scan", str(root), "--baseline", str(tmp_path / "broken.json"))[0] == 2


def test_explain_lists_and_explains_rules() -> None:
    code, out, _ = run("explain")
    assert code == 0 and "GP302" in out and "GP101" in out
    code, out, _ = run("explain", "GP302", "--format", "markdown")
    assert code == 0 and "## Why is this a problem on ROCm?" in out
    code, out, _ = run("explain", "lane-math-assumes-warp-32", "--format", "json")
    assert json.loads(out)["id"] == "GP302"
    code, _, err = run("explain", "GP3022")
    assert code == 2 and "did you mean" in err


def test_unknown_format_is_a_usage_error(tmp_path: Path) -> None:
    assert run("scan", str(project(tmp_path)), "--format", "xml")[0] == 2


def test_an_empty_path_is_a_usage_error_not_the_current_folder() -> None:
    for command in ("scan", "assess", "port"):
        code, out, err = run(command, "")
        assert code == 2 and "the path is empty" in err, command
        assert out == ""


def test_every_command_shares_one_set_of_exit_codes() -> None:
    from gpuport.cli.common import ExitCode

    assert [int(code) for code in ExitCode] == [0, 1, 2, 130]


def test_error_messages_keep_bracketed_text(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "pyproject.toml").write_text("[tool.gpuport]\nfoo = 1\n")
    for command in ("scan", "assess", "port"):
        code, out, err = run(command, str(root), "--no-progress")
        assert code == 2 and out == ""
        assert err.startswith("error: ") and "unknown key 'foo' in [tool.gpuport]" in err, command


def test_a_file_that_cannot_be_written_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    root = project(tmp_path)
    blocker = tmp_path / "file"
    blocker.write_text("")
    result = CliRunner().invoke(
        main, ["scan", str(root), "--format", "json", "-o", str(blocker / "report.json")]
    )
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: cannot use {blocker}")
    assert "Traceback" not in result.stderr


def test_interrupted_is_exit_130(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import gpuport.cli.scan as scan_command

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(scan_command, "run_scan", interrupted)
    code, out, err = run("scan", str(project(tmp_path)))
    assert code == 130 and out == "" and "interrupted" in err


def _format_choices(*path: str) -> list[str]:
    command: click.Command = main
    for name in path:
        assert isinstance(command, click.Group)
        command = command.commands[name]
    [option] = [p for p in command.params if p.name == "fmt"]
    assert isinstance(option.type, click.Choice)
    return list(option.type.choices)


@pytest.mark.parametrize(
    ("path", "result_types"),
    [
        (("scan",), (ScanResult,)),
        (("assess",), (Assessment,)),
        (("port",), (PortResult,)),
        (("plan",), (PlanResult,)),
        (("kb", "show"), (KbLookup,)),
        (("kb", "list"), (KbTable, KbCounts)),
        (("explain",), (Rule, RuleIndex)),
    ],
)
def test_format_choices_are_the_formats_the_result_types_declare(
    path: tuple[str, ...], result_types: tuple[type, ...]
) -> None:
    declared = [
        f.value
        for f in formats_for(result_types[0])
        if all(f in formats_for(t) for t in result_types)
    ]
    assert _format_choices(*path) == declared


def test_format_choices_keep_their_order() -> None:
    assert _format_choices("scan") == ["terminal", "json", "sarif", "markdown", "html"]
    assert _format_choices("explain") == ["terminal", "markdown", "json"]
    assert _format_choices("kb", "list") == ["terminal", "json"]


def test_a_command_loads_only_its_own_module() -> None:
    """`gpuport scan` does not import port's translation tables (about a third of start-up);
    COMMANDS and main.commands still give every command, with bench's and verify's `serve`."""
    code = (
        "import sys, gpuport.cli as cli; cli.main.commands['scan'];"
        "loaded = 'gpuport.cli.port' in sys.modules or 'gpuport.port.translate' in sys.modules;"
        "names = [c.name for c in cli.COMMANDS];"
        "print(loaded, names == list(cli.main.commands), 'serve' in cli.main.commands['bench'].commands)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["False", "True", "True"]
    assert [c.name for c in COMMANDS] == list(COMMAND_MODULES) == list(main.commands)


def test_a_python_only_scan_to_a_file_loads_no_requirement_reader_and_no_bar(
    tmp_path: Path,
) -> None:
    """`gpuport scan` of Python code written to a file starts without ``packaging`` (about 40
    ms, imported where a requirement is read), ``rich.progress`` (shown only on a terminal)
    and the C++ lexer's expressions (compiled where C++ is tokenized)."""
    (tmp_path / "m.py").write_text("import torch\nprint(torch.version.cuda)\n", encoding="utf-8")
    code = (
        "import sys\n"
        "from gpuport.cli import main\n"
        "try:\n"
        f"    main(['scan', {str(tmp_path)!r}, '--format', 'json', '-o', "
        f"{str(tmp_path / 'out.json')!r}])\n"
        "except SystemExit:\n"
        "    pass\n"
        "import gpuport.syntax.cxx as cxx\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'packaging'"
        " or m == 'rich.progress'), cxx._master.cache_info().currsize)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    ).stdout
    assert out.split("\n")[-2] == "[] 0"
    assert (tmp_path / "out.json").is_file()
