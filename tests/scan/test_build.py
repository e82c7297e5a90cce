"""Build rules (GP5xx): CMake, Makefiles and shell scripts that compile CUDA."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from expect import check_fixture, scan_fixture
from gpuport.findings import Category, SkipKind
from gpuport.port.model import ChangeStatus
from gpuport.scan.build import (
    analyze_cmake,
    analyze_makefile,
    analyze_shell_build,
    delete_span,
)
from gpuport.scan.catalog import iter_rules
from gpuport.scan.engine import ScanOptions, scan_path
from gpuport.syntax.cmake import cmake_commands
from gpuport.syntax.shell import program_name, shell_commands
from gpuport.syntax.text import LineIndex

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "build"
MARKED = sorted(p for p in FIXTURES.rglob("*") if p.is_file())


@pytest.mark.parametrize("path", MARKED, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_fixture_findings_match_markers(path: Path) -> None:
    check_fixture(path)


def test_every_build_rule_fires_in_some_fixture() -> None:
    fired: set[str] = set()
    for path in MARKED:
        fired |= {f.rule_id for f in scan_fixture(path).findings}
    declared = {r.id for r in iter_rules(Category.BUILD) if r.id != "GP599"}
    assert declared <= fired, f"rules with no fixture: {sorted(declared - fired)}"


def test_build_rules_are_documented() -> None:
    rules = [r for r in iter_rules(Category.BUILD) if r.id != "GP599"]
    assert [r.id for r in rules] == [f"GP5{n:02d}" for n in range(1, 14)]
    for r in rules:
        assert r.references and all(ref.startswith("https://") for ref in r.references)
        assert r.example.strip() and r.instead.strip()


def test_cmake_lexer_keeps_offsets_and_skips_comments() -> None:
    text = (
        '#[==[ a bracket comment with ) and "\n]==]\n'
        'set(A "x ) y" [=[raw ]] text]=] B)  # project(x CUDA)\n'
        "if((A) AND B)\nendif()\n"
    )
    commands, problem = cmake_commands(text)
    assert problem is None
    assert [c.name for c in commands] == ["set", "if", "endif"]
    values = [a.value for a in commands[0].args]
    assert values == ["A", "x ) y", "raw ]] text", "B"]
    assert [text[a.start : a.end] for a in commands[0].args][1] == '"x ) y"'
    assert LineIndex(text).position(commands[1].start) == (4, 1)


def test_cmake_syntax_error_is_reported_and_earlier_findings_kept(tmp_path: Path) -> None:
    path = tmp_path / "CMakeLists.txt"
    path.write_text('enable_language(CUDA)\nset(X "unterminated\n', encoding="utf-8")
    result = scan_path(path, ScanOptions(jobs=1), display_root=path.name)
    assert [(f.rule_id, f.location.line) for f in result.findings] == [("GP501", 1)]
    [skip] = result.skipped
    assert (skip.kind, skip.line, skip.partial) == (SkipKind.SYNTAX, 2, True)


def test_cmake_sources_already_marked_hip_are_left_alone() -> None:
    text = "add_library(k a.cu b.cu)\nset_source_files_properties(a.cu PROPERTIES LANGUAGE HIP)\n"
    hits, _ = analyze_cmake(text)
    [hit] = hits
    assert hit.rule.id == "GP507"
    assert "set_source_files_properties(b.cu PROPERTIES LANGUAGE HIP)" in hit.edits[0].text


def test_find_package_insertion_follows_the_toolkit_package() -> None:
    text = "find_package(CUDAToolkit REQUIRED)\ntarget_link_libraries(k CUDA::cufft)\n"
    hits, _ = analyze_cmake(text)
    inserted = [e.text for h in hits for e in h.edits if e.start == e.end]
    assert inserted == ["\nfind_package(hipfft REQUIRED)"]


def test_unknown_cuda_target_is_unconverted_with_a_reason() -> None:
    hits, _ = analyze_cmake("target_link_libraries(k CUDA::nonexistent_lib)\n")
    [hit] = hits
    assert hit.status is ChangeStatus.UNCONVERTED and "no ROCm counterpart" in hit.note


def test_shell_words_have_exact_spans() -> None:
    text = 'A=1 sudo -E nvcc \'a b\' "c\\"d" $(echo x) x\\ y # nvcc\nnext'
    first, second = shell_commands(text)
    assert [w.text for w in first] == [
        "A=1",
        "sudo",
        "-E",
        "nvcc",
        "a b",
        'c"d',
        "$(echo x)",
        "x y",
    ]
    assert [text[w.start : w.end] for w in first][4:6] == ["'a b'", '"c\\"d"']
    assert program_name(first) == "nvcc"
    assert [w.text for w in second] == ["next"]


def test_shell_heredoc_bodies_are_skipped() -> None:
    text = "cat <<'EOF' > notes.txt\nnvcc -arch=sm_80\nEOF\necho done\n"
    assert [[w.text for w in c] for c in shell_commands(text)] == [
        ["cat", "notes.txt"],
        ["echo", "done"],
    ]
    assert analyze_shell_build(text) == []


def test_arch_flags_become_one_offload_list_per_command() -> None:
    text = "nvcc -gencode arch=compute_80,code=sm_80 -gencode=arch=compute_90,code=sm_90 k.cu\n"
    hits = [h for h in analyze_shell_build(text, ("gfx942",)) if h.rule.id == "GP504"]
    assert [e.text for h in hits for e in h.edits] == ["--offload-arch=gfx942", ""]


def test_make_comment_and_unrelated_tools_are_not_nvcc() -> None:
    text = "# nvcc -arch=sm_80\nzip:\n\tgzip --keep -x cu out.json\n\techo nvcc\n"
    hits = analyze_makefile(text)
    assert [(h.rule.id, text[h.start : h.end]) for h in hits] == [("GP509", "-x cu")]


def test_delete_span_keeps_continued_lines_well_formed() -> None:
    text = "X = a \\\n    -b \\\n    -c\nnext\n"
    middle = text.index("-b")
    edit = delete_span(text, middle, middle + 2)
    assert text[: edit.start] + text[edit.end :] == "X = a \\\n    -c\nnext\n"
    last = text.index("-c")
    edit = delete_span(text, last, last + 2)
    assert text[: edit.start] + text[edit.end :] == "X = a \\\n    -b\nnext\n"


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.sampled_from(list('()#[]="\\ \n\tCUDA_:$<>{}abc.cu')), max_size=200))
def test_cmake_analysis_never_raises(text: str) -> None:
    hits, _ = analyze_cmake(text)
    for hit in hits:
        assert 0 <= hit.start <= hit.end <= len(text)


@settings(max_examples=150, deadline=None)
@given(
    st.text(alphabet=st.sampled_from(list("nvcc -arch=sm_80'\"\\$(){}<>|&;#\n\t=")), max_size=200)
)
def test_shell_analysis_never_raises(text: str) -> None:
    for hit in analyze_shell_build(text) + analyze_makefile(text):
        assert 0 <= hit.start <= hit.end <= len(text)


def test_toolkit_paths_arch_lists_and_cuda_packages_are_told_once_per_file(tmp_path: Path) -> None:
    # One decision per file (where the toolkit lives, which GPUs to build for): the first site
    # carries the others' lines; the port still edits every site.
    script = tmp_path / "build_wheel.sh"
    script.write_text(
        "export CUDA_HOME=/usr/local/cuda\n"
        'export PATH="/usr/local/cuda/bin:$PATH"\n'
        'export LD_LIBRARY_PATH="/usr/local/cuda/lib64"\n'
        'export TORCH_CUDA_ARCH_LIST="8.0;9.0"\n',
        encoding="utf-8",
    )
    result = scan_path(script, ScanOptions(jobs=1, select=frozenset({"GP511", "GP504"})))
    by_rule = {f.rule_id: f for f in result.findings}
    assert sorted(f.rule_id for f in result.findings) == ["GP504", "GP511"]
    assert by_rule["GP511"].location.line == 1
    assert by_rule["GP511"].message.endswith("(and 2 more in this file: line 2, 3)")
    assert "more in this file" not in by_rule["GP504"].message
    text = script.read_text(encoding="utf-8")
    edited = {
        text.count("\n", 0, h.start) + 1 for h in analyze_shell_build(text) if h.rule.id == "GP511"
    }
    assert edited == {1, 2, 3}  # what `gpuport port` edits is not folded


def test_cmake_settings_and_cu_lists_are_told_once_per_file() -> None:
    # Carrying a file's CUDA-language settings over to HIP, and marking its .cu sources as HIP,
    # are one decision each: the first site carries the others' lines (one needing a person
    # makes the fold need one); a setting on a line whose nvcc option GP509 reports is told by
    # that GP509 finding. The port still edits every site.
    settings = FIXTURES / "GP506-cmake-cuda-settings" / "CMakeLists.txt"
    found = {(f.rule_id, f.location.line): f for f in scan_fixture(settings).findings}
    told = found[("GP506", 13)]
    assert told.message.endswith("(and 2 more in this file: line 22, 24)")
    assert told.fix is not None and not told.fix.mechanical  # CUDA_SEPARABLE_COMPILATION
    assert found[("GP509", 15)].message.endswith(
        "; CMAKE_CUDA_FLAGS applies to the CUDA language only"
    )
    text = settings.read_text(encoding="utf-8")
    hits, _ = analyze_cmake(text)
    edited = {text.count("\n", 0, h.start) + 1 for h in hits if h.rule.id == "GP506"}
    assert edited == {13, 15, 22, 24}
    sources = FIXTURES / "GP507-cmake-cuda-sources" / "CMakeLists.txt"
    (listed,) = [f for f in scan_fixture(sources).findings if f.rule_id == "GP507"]
    assert listed.location.line == 5
    assert listed.message.endswith("(and 2 more in this file: line 6, 13)")
