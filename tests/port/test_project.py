"""The project driver: every kind of file goes to the translator, a rewriter, or nowhere on
purpose, and the rewriter of each kind is that kind's."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from gpuport.files import FileKind, ProjectFile
from gpuport.port import rewrite_deps, rewrite_infra
from gpuport.port.project import (
    REWRITERS,
    SOURCE_KINDS,
    UNPORTED_KINDS,
    PortOptions,
    port_file,
)

REWRITER_MODULES = {rewrite_deps.__name__, rewrite_infra.__name__}


def test_every_file_kind_is_translated_rewritten_or_left_alone_on_purpose() -> None:
    groups = {
        "translated": set(SOURCE_KINDS),
        "rewritten": set(REWRITERS),
        "left alone": set(UNPORTED_KINDS),
    }
    assert set().union(*groups.values()) == set(FileKind), "a kind of file nobody decided on"
    names = sorted(groups)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            assert not groups[a] & groups[b], f"{a} and {b} both claim {groups[a] & groups[b]}"


@pytest.mark.parametrize("kind", sorted(REWRITERS), ids=str)
def test_each_rewriter_is_a_rewriter_function_taking_rel_text_and_version(kind: FileKind) -> None:
    rewriter = REWRITERS[kind]
    assert callable(rewriter)
    assert rewriter.__module__ in REWRITER_MODULES, rewriter.__module__
    assert rewriter.__name__.startswith("rewrite_")
    positional = [
        p.name
        for p in inspect.signature(rewriter).parameters.values()
        if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    ]
    assert positional == ["rel", "text", "rocm_version"]


@pytest.mark.parametrize("kind", sorted(REWRITERS), ids=str)
def test_port_file_sends_each_kind_to_its_own_rewriter(kind: FileKind, tmp_path: Path) -> None:
    path = tmp_path / "file"
    path.write_text("\n", encoding="utf-8")
    problems: list[str] = []
    result = port_file(ProjectFile(path, "file", kind, 1), "6.4", PortOptions(), problems)
    assert result is not None
    assert not result.skipped, result.skipped
    assert result.kind == kind.value
    assert problems == []


@pytest.mark.parametrize("kind", sorted(UNPORTED_KINDS), ids=str)
def test_port_file_leaves_the_other_kinds_alone(kind: FileKind, tmp_path: Path) -> None:
    path = tmp_path / "file"
    path.write_text("import cupy\n", encoding="utf-8")
    assert port_file(ProjectFile(path, "file", kind, 12), "6.4", PortOptions(), []) is None


def test_rewriters_are_skipped_when_asked(tmp_path: Path) -> None:
    path = tmp_path / "Dockerfile"
    path.write_text("FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\n", encoding="utf-8")
    file = ProjectFile(path, "Dockerfile", FileKind.DOCKERFILE, 42)
    assert port_file(file, "6.4", PortOptions(rewrite_surroundings=False), []) is None
    ported = port_file(file, "6.4", PortOptions(), [])
    assert ported is not None and ported.changed
