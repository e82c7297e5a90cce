"""The Python and notebook scanner (GP2xx): fixtures line by line, notebooks, bad input."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from expect import check_fixture, markers, scan_fixture
from gpuport.findings import Category, Severity, SkipKind
from gpuport.rules import NeedleSet, case_variants
from gpuport.scan.catalog import iter_rules
from gpuport.scan.engine import ScanOptions, scan_path
from gpuport.scan.python import checks

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "python"
# One folder per rule, named like GP201-cuda-only-import; the notebook (several rules) in _shared.
PY_FIXTURES = sorted(FIXTURES.glob("GP2*/*.py"))
NOTEBOOK = FIXTURES / "_shared" / "notebook.ipynb"


def scan(path: Path):
    return scan_path(path, ScanOptions(jobs=1), display_root=path.name)


def notebook(cells: list[object], **extra: object) -> dict[str, object]:
    """A notebook in nbformat 4; each cell is source text (a code cell) or a full cell dict."""
    built = []
    for cell in cells:
        if isinstance(cell, str):
            lines = cell.split("\n")
            source = [line + "\n" for line in lines[:-1]] + [lines[-1]]
            cell = {"cell_type": "code", "metadata": {}, "outputs": [], "source": source}
        built.append(cell)
    return {"cells": built, "metadata": {}, "nbformat": 4, "nbformat_minor": 5, **extra}


def write_notebook(path: Path, nb: object, indent: int | None = 1) -> str:
    text = json.dumps(nb, indent=indent)
    path.write_text(text, encoding="utf-8")
    return text


def line_of(text: str, needle: str) -> int:
    hits = [n for n, line in enumerate(text.splitlines(), start=1) if needle in line]
    assert len(hits) == 1, f"{needle!r} is on lines {hits}"
    return hits[0]


# -- fixtures ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path", PY_FIXTURES, ids=[f"{p.parent.name}/{p.name}" for p in PY_FIXTURES]
)
def test_fixture_findings_match_markers(path: Path) -> None:
    check_fixture(path)


def test_notebook_fixture_points_at_ipynb_lines() -> None:
    text = NOTEBOOK.read_text(encoding="utf-8")
    expected: set[tuple[str, int, str]] = set()
    for row in NOTEBOOK.with_name("notebook.ipynb.expected").read_text("utf-8").splitlines():
        if not row.strip() or row.startswith("#"):
            continue
        rule_id, where, needle = row.split(maxsplit=2)
        cell, cell_line = where.split(":")
        expected.add((rule_id, line_of(text, needle), f"cell {cell}, line {cell_line}: "))
    result = scan_fixture(NOTEBOOK)
    assert not result.skipped
    got = {
        (f.rule_id, f.location.line, f.message.split(": ", 1)[0] + ": ") for f in result.findings
    }
    assert got == expected


def test_every_python_rule_is_exercised_by_a_fixture() -> None:
    expected_ids: set[str] = set()
    for path in PY_FIXTURES:
        for ids in markers(path.read_text(encoding="utf-8"))[0].values():
            expected_ids |= ids
    sidecar = NOTEBOOK.with_name("notebook.ipynb.expected").read_text(encoding="utf-8")
    expected_ids |= set(re.findall(r"^(GP2\d\d)\b", sidecar, re.MULTILINE))
    declared = {r.id for r in iter_rules(Category.PYTHON)}
    assert declared, "no GP2xx rule is declared"
    assert declared <= expected_ids, f"rules without a fixture: {sorted(declared - expected_ids)}"


def test_every_python_rule_has_one_check_named_after_its_slug() -> None:
    by_rule: dict[str, set[str]] = {}
    for sub in checks.subscriptions():
        by_rule.setdefault(sub.rule.id, set()).add(sub.check.__name__)
    for r in iter_rules(Category.PYTHON):
        assert by_rule.get(r.id) == {r.slug.replace("-", "_")}, r.id
        assert r.needles, f"{r.id} declares no needles: no file could ever be skipped"


def test_every_python_rule_is_documented_with_a_source() -> None:
    for r in iter_rules(Category.PYTHON):
        assert r.id.startswith("GP2")
        assert r.references and all(ref.startswith("https://") for ref in r.references), r.id
        assert r.example.strip() and r.instead.strip(), r.id
        assert f"# {r.id} {r.slug}" in r.markdown()


def test_findings_carry_the_knowledge_base_fix_and_sources(tmp_path: Path) -> None:
    path = tmp_path / "monitor.py"
    path.write_text("import pynvml\n", encoding="utf-8")
    (finding,) = scan(path).findings
    assert finding.rule_id == "GP201"
    assert finding.severity is Severity.HIGH
    assert finding.fix is not None and "amdsmi" in finding.fix.text.lower()
    assert len(finding.references) > 1  # the rule's page and the package's own sources


# The tools GP206's documentation names; the knowledge base (platform.toml) is its only list.
GP206_TOOLS = ["nvidia-smi", "nvcc", "nvprof", "nsys", "ncu", "nv-nsight-cu-cli", "cuda-gdb"]
GP206_TOOLS += [
    "cuda-memcheck",
    "compute-sanitizer",
    "cuobjdump",
    "nvdisasm",
    "dcgmi",
    "deviceQuery",
]


@pytest.mark.parametrize("tool", GP206_TOOLS)
def test_every_nvidia_tool_gp206_names_is_found(tmp_path: Path, tool: str) -> None:
    path = tmp_path / "run.py"
    path.write_text(f"import subprocess\nsubprocess.run(['{tool}', '-h'])\n", encoding="utf-8")
    result = scan_path(path, ScanOptions(jobs=1, select=frozenset({"GP206"})))
    assert [(f.rule_id, f.location.line) for f in result.findings] == [("GP206", 2)]
    assert "on ROCm use" in result.findings[0].message


def test_setup_py_is_scanned_too(tmp_path: Path) -> None:
    (tmp_path / "setup.py").write_text(
        "from torch.utils.cpp_extension import CUDAExtension\n"
        "ext = CUDAExtension('ops', ['ops.cpp', 'ops_kernel.cu'],\n"
        "                    extra_compile_args={'nvcc': ['-arch=sm_80']})\n",
        encoding="utf-8",
    )
    result = scan_path(tmp_path, ScanOptions(jobs=1, select=frozenset({"GP2"})))
    (finding,) = result.findings
    assert (finding.location.path, finding.rule_id, finding.location.line) == (
        "setup.py",
        "GP210",
        2,
    )
    assert "ops_kernel.cu" in finding.message and "ops.cpp" not in finding.message


# -- bad input --------------------------------------------------------------------------------


def test_syntax_error_is_skipped_with_its_line_and_the_rest_goes_on(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text(
        "import torch\n\nif torch.version.cuda\n    pass\n", encoding="utf-8"
    )
    (tmp_path / "fine.py").write_text("import pynvml\n", encoding="utf-8")
    result = scan_path(tmp_path, ScanOptions(jobs=1))
    (skip,) = result.skipped
    assert (skip.path, skip.kind, skip.line, skip.partial) == (
        "broken.py",
        SkipKind.SYNTAX,
        3,
        False,
    )
    assert "syntax error" in skip.reason
    assert [(f.location.path, f.rule_id) for f in result.findings] == [("fine.py", "GP201")]


def test_python2_file_is_named_as_such(tmp_path: Path) -> None:
    path = tmp_path / "old.py"
    path.write_text('import torch\nprint "cuda", torch.version.cuda\n', encoding="utf-8")
    (skip,) = scan(path).skipped
    assert skip.kind is SkipKind.SYNTAX and skip.line == 2
    assert "Python 2" in skip.reason


def test_file_without_any_rule_word_is_not_parsed(tmp_path: Path) -> None:
    # Nothing could fire here, so the scanner does not even parse it (its syntax is broken).
    path = tmp_path / "plain.py"
    path.write_text("def f(:\n    return 1\n", encoding="utf-8")
    result = scan(path)
    assert result.findings == [] and result.skipped == []


def test_not_utf8_file_is_still_analysed(tmp_path: Path) -> None:
    path = tmp_path / "latin.py"
    path.write_bytes(b"# caf\xe9\nimport pynvml\n")
    result = scan(path)
    assert [f.rule_id for f in result.findings] == ["GP201"]
    assert [s.kind for s in result.skipped] == [SkipKind.NOT_UTF8]


def test_deeply_nested_code_does_not_crash_the_scanner(tmp_path: Path) -> None:
    # 2000 nested additions: deeper than Python's recursion limit, still parsable.
    path = tmp_path / "generated.py"
    chain = " + ".join(["major"] * 2000)
    path.write_text(
        "import torch\nmajor, minor = torch.cuda.get_device_capability()\n"
        f"score = {chain}\nif score >= 90:\n    pass\n",
        encoding="utf-8",
    )
    result = scan(path)
    assert not result.crashed and not result.skipped
    assert [(f.rule_id, f.location.line) for f in result.findings] == [("GP203", 4)]


def test_code_too_deep_for_the_parser_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "monster.py"
    path.write_text("import pynvml\nx = " + " + ".join(["1"] * 20000) + "\n", encoding="utf-8")
    (skip,) = scan(path).skipped
    assert skip.kind is SkipKind.SYNTAX and "could not be parsed" in skip.reason


def test_suppression_comment_works_in_python(tmp_path: Path) -> None:
    path = tmp_path / "quiet.py"
    path.write_text(
        "import subprocess\nsubprocess.run(['nvidia-smi'])  # gpuport: ignore[GP206]\n",
        encoding="utf-8",
    )
    result = scan(path)
    assert result.findings == [] and result.suppressed == 1


# -- notebooks --------------------------------------------------------------------------------


def test_malformed_notebook_is_skipped_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.ipynb"
    path.write_text('{\n "cells": [\n  {"cell_type": "code",,}\n ]\n}\n', encoding="utf-8")
    (skip,) = scan(path).skipped
    assert (skip.kind, skip.line) == (SkipKind.MALFORMED, 3)
    assert "not valid JSON" in skip.reason


@pytest.mark.parametrize("content", ["[1, 2, 3]", '{"metadata": {"nvidia": true}}'])
def test_json_that_is_not_a_notebook_is_skipped(tmp_path: Path, content: str) -> None:
    path = tmp_path / "data.ipynb"
    path.write_text(content, encoding="utf-8")
    (skip,) = scan(path).skipped
    assert skip.kind is SkipKind.MALFORMED and "not a Jupyter notebook" in skip.reason


def test_notebook_cell_with_syntax_error_is_skipped_and_other_cells_are_scanned(
    tmp_path: Path,
) -> None:
    path = tmp_path / "half.ipynb"
    text = write_notebook(
        path, notebook(["import torch\nif torch.version.cuda\n    pass", "import pynvml"])
    )
    result = scan(path)
    (skip,) = result.skipped
    assert skip.kind is SkipKind.SYNTAX and skip.partial
    assert skip.line == line_of(text, "if torch.version.cuda")
    assert "cell 1, line 2" in skip.reason
    assert [(f.rule_id, f.location.line) for f in result.findings] == [
        ("GP201", line_of(text, "import pynvml"))
    ]


def test_notebook_cells_share_their_imports(tmp_path: Path) -> None:
    path = tmp_path / "shared.ipynb"
    text = write_notebook(
        path, notebook(["import torch as T", "x = 1", "if T.version.cuda:\n    x = 2"])
    )
    (finding,) = scan(path).findings
    assert finding.rule_id == "GP202"
    assert finding.location.line == line_of(text, "if T.version.cuda")
    assert finding.message.startswith("cell 3, line 1: ")


def test_notebook_cell_checks_constants_bound_in_an_earlier_cell(tmp_path: Path) -> None:
    # The second cell holds no needle of the rule (its checks of lists are skipped in a text
    # without them): the first cell's does, and its string constant is what the list holds.
    path = tmp_path / "index.ipynb"
    rocm = "https://download.pytorch.org/whl/rocm6.0"
    cells = [
        'import subprocess\nIDX = "--extra-index-url"',
        f'subprocess.run(["pip", "install", "torch", IDX, "{rocm}"])',
    ]
    write_notebook(path, notebook(cells))
    assert [f.rule_id for f in scan(path).findings] == ["GP219"]


def test_minified_notebook_reports_cell_and_line_in_the_message(tmp_path: Path) -> None:
    path = tmp_path / "one_line.ipynb"
    write_notebook(path, notebook(["# setup", "import os\n\nos.system('nvidia-smi')"]), indent=None)
    (finding,) = scan(path).findings
    assert (finding.rule_id, finding.location.line) == ("GP206", 1)
    assert finding.message.startswith("cell 2, line 3: ")


def test_notebook_source_as_one_string_maps_to_its_json_line(tmp_path: Path) -> None:
    cell = {"cell_type": "code", "metadata": {}, "outputs": [], "source": "x = 1\n!nvcc -V"}
    path = tmp_path / "string_source.ipynb"
    text = write_notebook(path, notebook(["import os", cell]))
    (finding,) = scan(path).findings
    assert finding.location.line == line_of(text, "!nvcc -V")
    assert finding.message.startswith("cell 2, line 2: ")


def test_nbformat3_worksheets_are_read(tmp_path: Path) -> None:
    nb = {
        "nbformat": 3,
        "metadata": {},
        "worksheets": [
            {"cells": [{"cell_type": "code", "input": ["import os\n", "x = 1"], "outputs": []}]},
            {
                "cells": [
                    {"cell_type": "markdown", "source": ["nvidia-smi"]},
                    {"cell_type": "code", "input": ["import os\n", "os.popen('nvidia-smi')"]},
                ]
            },
        ],
    }
    path = tmp_path / "v3.ipynb"
    text = write_notebook(path, nb)
    (finding,) = scan(path).findings
    assert finding.location.line == line_of(text, "os.popen")
    assert finding.message.startswith("cell 3, line 2: ")


def test_notebook_shell_forms_are_read_and_other_magics_ignored(tmp_path: Path) -> None:
    path = tmp_path / "shell.ipynb"
    text = write_notebook(
        path,
        notebook(
            [
                "%%script bash\nnvidia-smi topo -m",
                "gpus = !nvidia-smi -L\n%sx nvcc -V\n%time x = 1",
                "%%html\n<pre>nvidia-smi</pre>",
                "%%writefile notes.txt\nrun nsys later",
            ]
        ),
    )
    result = scan(path)
    assert not result.skipped
    got = sorted((f.location.line, f.message.split(":", 1)[0]) for f in result.findings)
    assert got == [
        (line_of(text, "nvidia-smi topo -m"), "cell 1, line 2"),
        (line_of(text, "gpus = !nvidia-smi -L"), "cell 2, line 1"),
        (line_of(text, "%sx nvcc -V"), "cell 2, line 2"),
    ]
    assert {f.rule_id for f in result.findings} == {"GP206"}


def test_notebook_in_another_language_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "julia.ipynb"
    # Read (and its language told) where some rule may fire: here GP206's `nvidia-smi `.
    nb = notebook(
        ["using CUDA\nrun(`nvidia-smi -L`)"],
        metadata={"kernelspec": {"language": "julia", "name": "julia"}},
    )
    write_notebook(path, nb)
    result = scan(path)
    assert result.findings == []
    (skip,) = result.skipped
    assert "julia" in skip.reason


def test_suppression_comment_works_in_notebooks(tmp_path: Path) -> None:
    path = tmp_path / "quiet.ipynb"
    write_notebook(path, notebook(["!nvidia-smi  # gpuport: ignore[GP206]\nimport pynvml"]))
    result = scan(path)
    assert [f.rule_id for f in result.findings] == ["GP201"]
    assert result.suppressed == 1


# -- needles: the pre-filters come from the rules' declarations --------------------------------


@pytest.fixture
def needles_of() -> Iterator[object]:
    """Replace one rule's needles in its check's registration, for the length of a test."""
    original = checks._SUBSCRIPTIONS[:]

    def replace(rule_id: str, needles: tuple[str, ...]) -> None:
        checks._SUBSCRIPTIONS[:] = [
            dataclasses.replace(sub, rule=dataclasses.replace(sub.rule, needles=needles))
            if sub.rule.id == rule_id
            else sub
            for sub in checks._SUBSCRIPTIONS
        ]
        checks.forget_dispatches()

    yield replace
    checks._SUBSCRIPTIONS[:] = original
    checks.forget_dispatches()


def lines_alone(path: Path, rule_id: str) -> set[int]:
    """The lines ``rule_id`` fires on in ``path`` when it is the only rule enabled."""
    result = scan_path(path, ScanOptions(jobs=1, select=frozenset({rule_id})))
    return {f.location.line for f in result.findings if f.rule_id == rule_id}


def test_a_rule_without_its_needle_is_not_even_tried_on_a_file(needles_of) -> None:
    path = FIXTURES / "GP213-nvtx-markers" / "profiling.py"
    assert lines_alone(path, "GP213") == {14}
    needles_of("GP213", ("no-such-word",))
    assert lines_alone(path, "GP213") == set()


def test_a_statement_without_a_needle_or_a_tracked_name_is_stepped_over(needles_of) -> None:
    # The file still holds the replacement needle (`cdiv`), so it is parsed; of the statements
    # GP212 fires on, only the one naming `triton` (a tracked import) is still walked.
    path = FIXTURES / "GP212-hardcoded-warp-size" / "triton_kernels.py"
    assert lines_alone(path, "GP212") == {6, 7, 13, 14, 15, 16, 17, 18}
    needles_of("GP212", ("cdiv",))
    assert lines_alone(path, "GP212") == {16}  # n_warps = triton.cdiv(n, 32)


WORDS = st.text(alphabet="ab_'\" \n", min_size=1, max_size=4)
TEXTS = st.text(alphabet="ab_'\" \nx")


# A few needles: one substring search each. Many of one length (none holds another, so none
# is dropped): more than NeedleSet._FEW, the trie.
@pytest.mark.parametrize(("least", "most", "length"), [(1, 6, (1, 4)), (41, 80, (4, 4))])
@given(data=st.data())
def test_needle_set_finds_exactly_the_texts_holding_a_needle(
    least: int, most: int, length: tuple[int, int], data: st.DataObject
) -> None:
    words = st.text(alphabet="ab_'\" \n", min_size=length[0], max_size=length[1])
    needles = data.draw(st.lists(words, min_size=least, max_size=most, unique=True))
    texts = data.draw(st.lists(TEXTS, max_size=6))
    found = NeedleSet(tuple(needles))  # one set over several texts: recent hits tried first
    for text in texts:
        assert found.found_in(text) == any(n in text for n in needles), text


@given(
    words=st.lists(st.text(alphabet="ab_", min_size=1, max_size=3), min_size=1, max_size=3),
    others=st.lists(WORDS, max_size=3),
    texts=st.lists(st.text(alphabet="aAbB_ x"), max_size=6),
)
def test_needle_set_matches_every_case_spelling_of_a_case_insensitive_word(
    words: list[str], others: list[str], texts: list[str]
) -> None:
    needles = (*case_variants(*words), *others)
    found = NeedleSet(needles)  # the words' spellings are looked for in the lowered text
    for text in texts:
        assert found.found_in(text) == any(n in text for n in needles), text


def test_notebook_shell_lines_continue_after_a_backslash_and_pip_installs_are_checked(
    tmp_path: Path,
) -> None:
    # A Colab-style install cell: one `!pip` over three lines, then a source build of an
    # extension; the continuation lines are shell, not Python (no syntax error for the cell).
    cell = (
        "!pip install torch torchvision \\\n"
        "    --index-url https://download.pytorch.org/whl/cu121 \\\n"
        "    --upgrade\n"
        "!pip install flash-attn==2.7.4.post1\n"
        "!pip install --no-build-isolation causal-conv1d\n"
        "import torch"
    )
    text = write_notebook(tmp_path / "setup.ipynb", notebook([cell]))
    result = scan(tmp_path)
    assert not result.skipped
    found = sorted((f.rule_id, f.location.line) for f in result.findings)
    assert found == [
        ("GP403", line_of(text, "!pip install torch torchvision")),
        ("GP411", line_of(text, "flash-attn==2.7.4.post1")),
    ]
    assert "cu121" in result.findings[0].message or "cu121" in result.findings[1].message
