"""Shell completion through click: each shell's script, and `gpuport sc<TAB>` offering scan."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from gpuport.cli import main


def complete(shell: str, words: str, cword: str) -> str:
    env = {"_GPUPORT_COMPLETE": f"{shell}_complete", "COMP_WORDS": words, "COMP_CWORD": cword}
    done = CliRunner().invoke(main, [], prog_name="gpuport", env=env)
    assert done.exit_code == 0, done.output
    return done.output


@pytest.mark.parametrize(
    ("shell", "marker"),
    [
        ("bash", "complete -o nosort -F"),
        ("zsh", "#compdef gpuport"),
        ("fish", "complete --no-files"),
    ],
)
def test_each_shell_gets_its_script(shell: str, marker: str) -> None:
    done = CliRunner().invoke(
        main, [], prog_name="gpuport", env={"_GPUPORT_COMPLETE": f"{shell}_source"}
    )
    assert done.exit_code == 0, done.output
    assert marker in done.output
    assert "_GPUPORT_COMPLETE" in done.output


def test_bash_completes_sc_to_scan() -> None:
    assert complete("bash", "gpuport sc", "1").splitlines() == ["plain,scan"]


def test_zsh_and_fish_complete_sc_to_scan_with_its_help() -> None:
    zsh = complete("zsh", "gpuport sc", "1").splitlines()
    assert zsh[:2] == ["plain", "scan"] and zsh[2].startswith("Findings")
    assert complete("fish", "gpuport sc", "sc").startswith("plain,scan\tFindings")


def test_options_complete_too() -> None:
    assert "plain,--fail-on" in complete("bash", "gpuport scan --fail", "2").splitlines()
