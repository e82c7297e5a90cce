"""Container rules (GP4xx): Dockerfiles, compose, Kubernetes, CI YAML and docker commands."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from expect import check_fixture, scan_fixture
from gpuport import kb
from gpuport.findings import Category, Confidence, SkipKind
from gpuport.port.model import ChangeStatus
from gpuport.scan.catalog import iter_rules
from gpuport.scan.containers import (
    analyze_commands,
    analyze_dockerfile,
    analyze_yaml,
    rocm_compose_access,
)
from gpuport.scan.engine import ScanOptions, scan_path
from gpuport.syntax.dockerfile import (
    dockerfile_instructions,
    expand_arguments,
    instruction_words,
    logical_text,
)
from gpuport.syntax.shell import shell_commands
from gpuport.syntax.text import LineIndex

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "containers"
MARKED = sorted(p for p in FIXTURES.rglob("*") if p.is_file() and p.name != "broken.yaml")


@pytest.mark.parametrize("path", MARKED, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_fixture_findings_match_markers(path: Path) -> None:
    check_fixture(path)


def test_every_container_rule_fires_in_some_fixture() -> None:
    fired: set[str] = set()
    for path in MARKED:
        fired |= {f.rule_id for f in scan_fixture(path).findings}
    declared = {r.id for r in iter_rules(Category.CONTAINERS)}
    assert declared <= fired, f"rules with no fixture: {sorted(declared - fired)}"


def test_container_rules_are_documented() -> None:
    rules = list(iter_rules(Category.CONTAINERS))
    assert [r.id for r in rules] == [f"GP4{n:02d}" for n in range(1, 12)]
    for r in rules:
        assert r.references and all(ref.startswith("https://") for ref in r.references)
        assert r.example.strip() and r.instead.strip()
        page = r.markdown()
        assert f"# {r.id} {r.slug}" in page and "## Why is this a problem on ROCm?" in page


def test_malformed_yaml_is_reported_with_its_line_and_still_checked_by_line() -> None:
    result = check_fixture(FIXTURES / "_shared" / "broken.yaml", allow_skipped=True)
    [skip] = result.skipped
    assert skip.kind is SkipKind.MALFORMED
    assert skip.partial
    assert skip.line == 8  # where the parser gave up, under the template line
    assert "Helm/Go template: '{{' on line 7" in skip.reason


def test_from_finding_offers_the_knowledge_base_image_as_replacement() -> None:
    result = scan_fixture(FIXTURES / "GP401-cuda-container-image" / "Dockerfile")
    [first] = [f for f in result.findings if f.rule_id == "GP401" and f.location.line == 6]
    expected = kb.find_docker_image("nvidia/cuda:12.1.0-devel-ubuntu22.04")
    assert expected is not None
    assert first.fix is not None
    assert first.fix.replacement == expected.image_for(
        kb.DEFAULT_ROCM_VERSION, original="nvidia/cuda:12.1.0-devel-ubuntu22.04"
    )
    assert first.fix.replacement == f"rocm/dev-ubuntu-22.04:{kb.DEFAULT_ROCM_VERSION}-complete"
    assert "nvidia/cuda:12.1.0-devel-ubuntu22.04" in first.message  # ARG values filled in
    assert first.location.column == 6  # points at the image, not at FROM


def test_from_an_arg_holding_the_whole_image_edits_the_arg_default() -> None:
    text = "ARG BASE=nvidia/cuda:12.4.1-runtime-ubuntu22.04\nFROM ${BASE}\n"
    [hit] = analyze_dockerfile(text, "6.4")
    [edit] = hit.edits
    assert text[edit.start : edit.end] == "nvidia/cuda:12.4.1-runtime-ubuntu22.04"
    assert LineIndex(text).position(hit.start) == (2, 6)  # reported on the FROM line


def test_stage_names_and_unknown_images_are_not_cuda_images() -> None:
    text = (
        "FROM ubuntu:22.04 AS base\nFROM base\nFROM BASE AS other\n"
        "FROM ghcr.io/acme/trainer:cuda12.1\n"
    )
    hits = analyze_dockerfile(text, "6.4")
    assert [LineIndex(text).position(h.start)[0] for h in hits] == [4]
    [hit] = hits
    assert hit.status is ChangeStatus.UNCONVERTED  # looks like CUDA; nothing known replaces it
    assert hit.confidence is Confidence.LOW


def test_expand_arguments_follows_docker_substitution_rules() -> None:
    args = {"A": "1", "EMPTY": ""}
    assert expand_arguments("x$A-${A}", args) == "x1-1"
    assert expand_arguments("${MISSING:-d}${EMPTY:-e}${A:-no}", args) == "de1"
    assert expand_arguments("${A:+yes}${EMPTY:+no}", args) == "yes"
    assert expand_arguments("$MISSING", args) == ""


def test_dockerfile_continuations_comments_and_escape_directive() -> None:
    text = (
        "# escape=`\n"
        "FROM mcr.microsoft.com/windows/servercore\n"
        "RUN echo a `\n"
        "# a comment line inside the instruction\n"
        "    b `\n"
        "\n"
        "    c\n"
        "ENV X=1\n"
    )
    instructions = dockerfile_instructions(text)
    assert [i.keyword for i in instructions] == ["FROM", "RUN", "ENV"]
    run = instructions[1]
    assert logical_text(text, run).split() == ["echo", "a", "b", "c"]
    [words] = instruction_words(text, run)
    assert [text[w.start : w.end] for w in words] == ["echo", "a", "b", "c"]


def test_heredoc_bodies_belong_to_their_instruction() -> None:
    text = "RUN <<EOT bash\npip install torch\nEOT\nRUN echo done\n"
    first, second = dockerfile_instructions(text)
    assert first.heredocs and text[first.heredocs[0][0] : first.heredocs[0][1]] == (
        "pip install torch\n"
    )
    assert second.keyword == "RUN"


def test_docker_run_replacement_comes_from_the_knowledge_base() -> None:
    text = "docker run --gpus=all --runtime nvidia img\n"
    hits = analyze_commands(text, shell_commands(text), "6.4")
    flag = kb.find_docker_flag("--gpus")
    assert flag is not None
    assert [h.rule.id for h in hits] == ["GP405", "GP405"]
    first, second = hits
    assert first.edits[0].text == " ".join(flag.rocm_flags)
    assert second.edits[0].text == ""  # the second NVIDIA flag goes


def test_pip_without_index_gets_the_rocm_index_once() -> None:
    text = "pip install torch torchvision numpy\n"
    [hit] = analyze_commands(text, shell_commands(text), "6.2")
    assert hit.rule.id == "GP403"
    assert hit.edits[0].text == " --index-url https://download.pytorch.org/whl/rocm6.2"
    text_with_index = "pip install -i https://download.pytorch.org/whl/rocm6.2 torch\n"
    assert analyze_commands(text_with_index, shell_commands(text_with_index), "6.2") == []


def test_compose_access_matches_the_docker_flags() -> None:
    access = rocm_compose_access()
    assert access["devices"] == ["/dev/kfd", "/dev/dri"]
    assert "video" in access["group_add"]
    assert access["security_opt"]


def test_yaml_documents_that_are_not_mappings_are_fine() -> None:
    for text in (
        "",
        "---\n",
        "- a\n- b\n",
        "just text\n",
        "---\n- image: nvidia/cuda:12.1.0-base-ubuntu22.04\n",
    ):
        hits, problem = analyze_yaml(text)
        assert problem is None
    assert [h.rule.id for h in hits] == ["GP401"]


def test_yaml_alias_bombs_stay_fast() -> None:
    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for n in range(1, 12):
        prev = chr(ord("a") + n - 1)
        name = chr(ord("a") + n)
        lines.append(f"{name}: &{name} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]")
    started = time.perf_counter()
    hits, problem = analyze_yaml("\n".join(lines) + "\n")
    assert problem is None and hits == []
    assert time.perf_counter() - started < 2


def test_yaml_tabs_are_malformed_with_line(tmp_path: Path) -> None:
    path = tmp_path / "deployment.yaml"
    path.write_text("kind: Pod\nspec:\n\tcontainers: []\n", encoding="utf-8")
    result = scan_path(path, ScanOptions(jobs=1), display_root=path.name)
    [skip] = result.skipped
    assert (skip.kind, skip.line) == (SkipKind.MALFORMED, 3)


def test_suppression_comment_silences_a_dockerfile_finding(tmp_path: Path) -> None:
    path = tmp_path / "Dockerfile"
    path.write_text(
        "# gpuport: ignore[GP401]\nFROM nvidia/cuda:12.1.0-base-ubuntu22.04\n", encoding="utf-8"
    )
    result = scan_path(path, ScanOptions(jobs=1))
    assert result.findings == [] and result.suppressed == 1


@settings(max_examples=150, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from(list("FROMRUNENV \\\n\t#=$\"'{}:-<>[]abc/.nvidia")), max_size=200
    )
)
def test_dockerfile_analysis_never_raises(text: str) -> None:
    for hit in analyze_dockerfile(text):
        assert 0 <= hit.start <= hit.end <= len(text)
        for edit in hit.edits:
            assert 0 <= edit.start <= edit.end <= len(text)


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab: -\n\t#&*[]{}|>'\"nvidia.com/gpu")), max_size=200))
def test_yaml_analysis_never_raises(text: str) -> None:
    hits, _ = analyze_yaml(text)
    for hit in hits:
        assert 0 <= hit.start <= hit.end <= len(text)


# ---------------------------------------------------------------------------------------------
# GP411 for `pip install .` on a ROCm image: the project's own build files say whether it
# compiles against torch (read inside the root, never run)

_ROCM_LOCAL_DOCKERFILE = (
    "FROM rocm/pytorch:rocm7.0_ubuntu24.04_py3.12_pytorch_release_2.8.0\n"
    "COPY . /src\n"
    "RUN cd /src && pip install -v .\n"
)


@pytest.mark.parametrize(
    ("build_files", "fires"),
    [
        ({"pyproject.toml": '[build-system]\nrequires = ["setuptools", "torch>=2.6"]\n'}, True),
        (
            {"setup.py": "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"},
            True,
        ),
        ({"pyproject.toml": '[build-system]\nrequires = ["hatchling"]\n'}, False),
        ({}, False),  # nothing says the build needs torch: no finding
    ],
)
def test_local_tree_on_rocm_image_uses_the_projects_build_files(
    tmp_path: Path, build_files: dict[str, str], fires: bool
) -> None:
    for name, text in build_files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "Dockerfile.rocm").write_text(_ROCM_LOCAL_DOCKERFILE, encoding="utf-8")
    result = scan_path(tmp_path, ScanOptions(jobs=1, select=frozenset({"GP411"})))
    lines = [f.location.line for f in result.findings if f.rule_id == "GP411"]
    assert lines == ([3] if fires else [])


def test_local_tree_on_a_cuda_image_is_not_reported(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools", "torch"]\n', encoding="utf-8"
    )
    dockerfile = _ROCM_LOCAL_DOCKERFILE.replace(
        "rocm/pytorch:rocm7.0_ubuntu24.04_py3.12_pytorch_release_2.8.0", "python:3.12-slim"
    )
    (tmp_path / "Dockerfile").write_text(dockerfile, encoding="utf-8")
    result = scan_path(tmp_path, ScanOptions(jobs=1, select=frozenset({"GP411"})))
    assert [f for f in result.findings if f.rule_id == "GP411"] == []
