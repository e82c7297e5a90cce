"""Tests of the dependency scanner (GP1xx): fixtures line by line, parsers, and bad input."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path, PurePosixPath

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from expect import check_findings, scan_fixture
from gpuport import kb
from gpuport.edits import ChangeStatus
from gpuport.files import classify
from gpuport.findings import Confidence, Finding, Severity, SkipKind, Skipped
from gpuport.scan.catalog import get_rule, iter_rules
from gpuport.scan.deps import DEPENDENCY_KINDS, analyze
from gpuport.scan.deps.knowledge import (
    TORCH_FAMILY,
    cuda_index,
    is_cuda_label,
    is_rocm_index,
    marker_allows_linux,
    pytorch_rocm_label,
    torch_rocm_releases,
)
from gpuport.scan.engine import ScanOptions, ScanResult, scan_path
from gpuport.syntax.conda import parse_conda_env, parse_conda_spec
from gpuport.syntax.dependencies import Form, IndexRole
from gpuport.syntax.pep508 import parse_requirement_string
from gpuport.syntax.pipfile import parse_pipfile
from gpuport.syntax.pyproject import parse_pyproject, poetry_specifier
from gpuport.syntax.requirements import logical_lines, parse_requirements
from gpuport.syntax.setuppy import parse_setup_cfg, parse_setup_py

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "deps"
FIXTURE_FILES = sorted(
    p for p in FIXTURES.rglob("*") if p.is_file() and classify(p.name) in DEPENDENCY_KINDS
)
RULE_IDS = [f"GP1{n:02d}" for n in range(1, 16)]


def scan(root: Path) -> ScanResult:
    return scan_path(root, ScanOptions(jobs=1), display_root=root.name)


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def only(findings: list[Finding], rule_id: str) -> Finding:
    matching = [f for f in findings if f.rule_id == rule_id]
    assert len(matching) == 1, [(f.rule_id, f.location.line) for f in findings]
    return matching[0]


# ---------------------------------------------------------------------------------------------
# Fixtures, line by line


_INCLUDE_LINE_RE = re.compile(r"^-[rc]\s*(\S+)", re.MULTILINE)


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_fixture(path: Path) -> None:
    """Each finding is checked against the markers of the file it is located in."""
    result = scan_fixture(path)
    assert not result.skipped, result.skipped
    text = path.read_text(encoding="utf-8")
    by_file: dict[str, list[Finding]] = defaultdict(list)
    for finding in result.findings:
        by_file[finding.location.path].append(finding)
    check_findings(text, by_file.pop(path.name, []), path.name)
    # Included files that no walk finds by name carry markers too: they must be reported.
    for target in _INCLUDE_LINE_RE.findall(text):
        included = PurePosixPath(target)
        if classify(included.name, included.parent.name) is None:
            by_file.setdefault(target, [])
    for rel, findings in sorted(by_file.items()):
        check_findings((path.parent / rel).read_text(encoding="utf-8"), findings, rel)


def test_every_rule_has_a_firing_fixture() -> None:
    fired: set[str] = set()
    for path in FIXTURE_FILES:
        fired |= {f.rule_id for f in scan(path).findings}
    assert fired == set(RULE_IDS)


# ---------------------------------------------------------------------------------------------
# Rules are declared once, with their documentation


def test_rules_are_declared_with_docs() -> None:
    rules = {r.id: r for r in iter_rules() if r.id.startswith("GP1")}
    assert sorted(rules) == RULE_IDS
    slugs = [r.slug for r in rules.values()]
    assert len(set(slugs)) == len(slugs)
    for r in rules.values():
        page = r.markdown()
        assert r.example.strip() and r.instead.strip(), r.id
        assert f"# {r.id} {r.slug}" in page
        assert get_rule(r.slug) is r


def test_mechanical_flags_match_what_port_can_do() -> None:
    mechanical = {r.id for r in iter_rules() if r.id.startswith("GP1") and r.mechanical}
    assert mechanical == {"GP101", "GP102", "GP105", "GP108", "GP109", "GP110"}


# ---------------------------------------------------------------------------------------------
# Messages name the package, the version and the exact replacement


def test_local_version_message_and_replacement(tmp_path: Path) -> None:
    write(tmp_path, "requirements.txt", "torch==2.3.0+cu121  # pinned\n")
    finding = only(scan(tmp_path).findings, "GP101")
    label = pytorch_rocm_label(kb.DEFAULT_ROCM_VERSION)
    assert "torch==2.3.0+cu121" in finding.message
    assert f"`torch==2.3.0+{label}`" in finding.message
    assert finding.fix is not None and finding.fix.mechanical
    assert finding.fix.replacement == f"torch==2.3.0+{label}  # pinned"
    assert (finding.location.line, finding.location.column) == (1, 1)


@pytest.mark.parametrize(
    ("other", "option"),
    [
        # transformers is not on PyTorch's index: --index-url would break it, and the pinned
        # +rocm label already keeps PyPI's CUDA torch out.
        ("transformers==4.40.0", "--extra-index-url"),
        # Everything comes from PyTorch's index: it can be the only one.
        ("torchvision", "--index-url"),
    ],
)
def test_cuda_index_replacement_keeps_extra_only_when_pypi_is_needed(
    tmp_path: Path, other: str, option: str
) -> None:
    write(
        tmp_path,
        "requirements.txt",
        f"--extra-index-url https://download.pytorch.org/whl/cu121\ntorch==2.3.0+cu121\n{other}\n",
    )
    finding = only(scan(tmp_path).findings, "GP102")
    rocm = kb.pytorch_rocm_index(kb.DEFAULT_ROCM_VERSION)
    assert finding.fix is not None
    assert finding.fix.replacement == f"{option} {rocm}"
    assert f"`{option} {rocm}`" in finding.message


def test_replacement_package_message(tmp_path: Path) -> None:
    write(tmp_path, "requirements.txt", "cupy-cuda12x>=13 ; python_version >= '3.9'\n")
    finding = only(scan(tmp_path).findings, "GP105")
    new = kb.find_package("cupy-cuda12x")
    assert new is not None and new.rocm_package
    assert "cupy-cuda12x>=13" in finding.message
    assert f"`{new.rocm_package}>=13 ; python_version >= '3.9'`" not in finding.message
    assert f"`{new.rocm_package}>=13`" in finding.message
    assert finding.fix is not None
    assert finding.fix.replacement == f"{new.rocm_package}>=13 ; python_version >= '3.9'"


def test_blocker_only_for_central_packages(tmp_path: Path) -> None:
    write(tmp_path, "requirements.txt", "tensorrt==10.0.1\npycuda==2024.1\n")
    findings = {f.location.line: f for f in scan(tmp_path).findings}
    assert findings[1].rule_id == findings[2].rule_id == "GP104"
    assert findings[1].severity is Severity.BLOCKER  # an inference engine
    assert findings[2].severity is Severity.HIGH  # CUDA bindings
    assert "tensorrt==10.0.1 has no ROCm build" in findings[1].message
    assert findings[1].fix is not None and not findings[1].fix.mechanical


def test_confidence_comes_from_the_knowledge_base(tmp_path: Path) -> None:
    write(tmp_path, "requirements.txt", "flash-attn-3\n")
    finding = only(scan(tmp_path).findings, "GP107")
    entry = kb.find_package("flash-attn-3")
    assert entry is not None
    expected = {"high": Confidence.HIGH, "medium": Confidence.MEDIUM}.get(
        entry.confidence, Confidence.LOW
    )
    assert finding.confidence is expected


def test_suppression_comment_applies(tmp_path: Path) -> None:
    write(
        tmp_path,
        "requirements.txt",
        "torch==2.3.0+cu121  # gpuport: ignore[GP101]\nnvidia-nccl-cu12\n",
    )
    result = scan(tmp_path)
    assert [f.rule_id for f in result.findings] == ["GP108"]
    assert result.suppressed == 1


def test_findings_from_included_files_are_not_repeated(tmp_path: Path) -> None:
    write(tmp_path, "requirements.txt", "-r requirements-gpu.txt\nnumpy\n")
    write(tmp_path, "requirements-gpu.txt", "nvidia-nccl-cu12==2.20.5\n")
    findings = scan(tmp_path).findings
    assert [(f.location.path, f.rule_id) for f in findings] == [("requirements-gpu.txt", "GP108")]


# ---------------------------------------------------------------------------------------------
# Bad input: a Skipped naming file and line, and the scan goes on


def skipped_in(result: ScanResult, path: str) -> list[Skipped]:
    return [s for s in result.skipped if s.path == path]


def test_bad_requirement_line_is_skipped_and_the_rest_scanned(tmp_path: Path) -> None:
    write(
        tmp_path,
        "requirements.txt",
        "torch==2.3.0+cu121\nthis is not a requirement!\n--no-such-option x\ncupy-cuda12x\n",
    )
    result = scan(tmp_path)
    problems = skipped_in(result, "requirements.txt")
    assert [(s.kind, s.line, s.partial) for s in problems] == [
        (SkipKind.MALFORMED, 2, True),
        (SkipKind.MALFORMED, 3, True),
    ]
    assert "this is not a requirement!" in problems[0].reason
    assert "--no-such-option" in problems[1].reason
    assert [(f.location.line, f.rule_id) for f in result.findings] == [(1, "GP101"), (4, "GP105")]


def test_bad_toml_names_the_line(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", '[project]\nname = "x"\ndependencies = [\n"torch",\n')
    write(tmp_path, "requirements.txt", "nvidia-nccl-cu12\n")
    result = scan(tmp_path)
    (problem,) = skipped_in(result, "pyproject.toml")
    assert problem.kind is SkipKind.MALFORMED
    assert problem.line == 4  # the file ends inside the array
    assert "TOML" in problem.reason
    assert [f.rule_id for f in result.findings] == ["GP108"]


def test_bad_pipfile_names_the_line(tmp_path: Path) -> None:
    write(tmp_path, "Pipfile", "[packages]\ntorch = \n")
    (problem,) = scan(tmp_path).skipped
    assert (problem.path, problem.kind, problem.line) == ("Pipfile", SkipKind.MALFORMED, 2)


def test_bad_yaml_names_the_line(tmp_path: Path) -> None:
    write(tmp_path, "environment.yml", "name: x\ndependencies:\n  - pytorch-cuda=12.1\n  - [a, b\n")
    write(tmp_path, "constraints.txt", "torch==2.3.0+cu121\n")
    result = scan(tmp_path)
    (problem,) = skipped_in(result, "environment.yml")
    assert problem.kind is SkipKind.MALFORMED
    assert problem.line == 5
    assert [f.location.path for f in result.findings] == ["constraints.txt"]


def test_bad_setup_cfg_names_the_line(tmp_path: Path) -> None:
    write(tmp_path, "setup.cfg", "[options]\ninstall_requires = torch\n[options]\n")
    (problem,) = scan(tmp_path).skipped
    assert (problem.kind, problem.line) == (SkipKind.MALFORMED, 3)


def test_include_cycle_is_reported_on_each_files_own_include_line(tmp_path: Path) -> None:
    write(tmp_path, "requirements-a.txt", "-r requirements-b.txt\ntorch==2.3.0+cu121\n")
    write(tmp_path, "requirements-b.txt", "numpy\n-r requirements-a.txt\n")
    result = scan(tmp_path)
    assert [(s.path, s.line, s.kind, s.partial) for s in result.skipped] == [
        ("requirements-a.txt", 1, SkipKind.MALFORMED, True),
        ("requirements-b.txt", 2, SkipKind.MALFORMED, True),
    ]
    assert "requirements-a.txt -> requirements-b.txt -> requirements-a.txt" in (
        result.skipped[0].reason
    )
    assert [(f.location.path, f.rule_id) for f in result.findings] == [
        ("requirements-a.txt", "GP101")
    ]


def test_include_cycle_in_parser() -> None:
    files = {"b.txt": "numpy\n-r c.txt\n", "c.txt": "-r b.txt\n"}
    parsed = parse_requirements("-r b.txt\ntorch\n", "a.txt", read=files.get)
    (problem,) = parsed.problems
    assert (problem.path, problem.line) == ("a.txt", 1)
    assert "-r b.txt leads to an include cycle (b.txt -> c.txt -> b.txt) at c.txt:1" in (
        problem.reason
    )
    assert [r.key for r in parsed.all_requirements()] == ["torch", "numpy"]
    direct = parse_requirements("-r a.txt\n", "a.txt", read={"a.txt": "-r a.txt\n"}.get)
    assert [(p.path, p.line) for p in direct.problems] == [("a.txt", 1)]


def test_missing_include(tmp_path: Path) -> None:
    write(tmp_path, "requirements.txt", "numpy\n-r extra/gpu.txt\nnvidia-nccl-cu12\n")
    result = scan(tmp_path)
    (problem,) = result.skipped
    assert (problem.path, problem.kind, problem.line) == ("requirements.txt", SkipKind.MISSING, 2)
    assert "extra/gpu.txt" in problem.reason
    assert [f.rule_id for f in result.findings] == ["GP108"]


def test_included_file_in_a_subfolder_is_read_relative_to_its_parent(tmp_path: Path) -> None:
    write(tmp_path, "reqs/requirements.txt", "-r ../shared/gpu.txt\ntorch\n")
    write(tmp_path, "shared/gpu.txt", "-r more/base.txt\n")
    write(tmp_path, "shared/more/base.txt", "cupy-cuda12x\nbad requirement !!\n")
    result = scan(tmp_path)
    # The included files are not requirements files by name, so their problems and findings
    # are shown here, at their own lines.
    assert [(s.path, s.line) for s in result.skipped] == [("shared/more/base.txt", 2)]
    assert [(f.location.path, f.location.line, f.rule_id) for f in result.findings] == [
        ("reqs/requirements.txt", 2, "GP111"),
        ("shared/more/base.txt", 1, "GP105"),
    ]


def test_unlisted_includes_are_reported_once_with_their_own_lines(tmp_path: Path) -> None:
    write(tmp_path, "requirements.txt", "-r common/base.txt\nnumpy\n")
    write(tmp_path, "requirements-dev.txt", "-r common/base.txt\n-c pins/gpu.txt\npytest\n")
    write(
        tmp_path,
        "common/base.txt",
        "--extra-index-url https://download.pytorch.org/whl/cu121\n"
        "tensorrt==10.0.1  # gpuport: ignore[GP104]\n"
        "torch==2.3.0+cu121\nbad requirement !!\n",
    )
    write(tmp_path, "pins/gpu.txt", "# pins\nnvidia-nccl-cu12==2.20.5\n")
    result = scan(tmp_path)
    assert [(f.location.path, f.location.line, f.rule_id) for f in result.findings] == [
        ("common/base.txt", 1, "GP102"),
        ("common/base.txt", 3, "GP101"),
        ("pins/gpu.txt", 2, "GP108"),
    ]
    assert result.suppressed == 1  # the tensorrt pin, counted once though two files include it
    assert [(s.path, s.line) for s in result.skipped] == [("common/base.txt", 4)]
    gp101 = only(result.findings, "GP101")
    assert gp101.excerpt is not None and "torch==2.3.0+cu121" in gp101.excerpt.lines
    assert gp101.fix is not None and gp101.fix.replacement == "torch==2.3.0+rocm7.2"


def test_included_files_found_by_name_are_not_reported_by_their_includer(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    write(project, "setup/requirements.txt", "-r ../requirements/base.txt\n")
    write(project, "requirements/base.txt", "torch==2.3.0+cu121\n")
    write(project, "app/requirements.txt", "-r ../../outside.txt\n")
    write(tmp_path, "outside.txt", "tensorrt==10.0.1\n")
    findings = scan(project).findings
    # requirements/base.txt is walked on its own; a file outside the root is never reported.
    assert [(f.location.path, f.rule_id) for f in findings] == [("requirements/base.txt", "GP101")]


def test_setup_py_syntax_error(tmp_path: Path) -> None:
    write(tmp_path, "setup.py", "from setuptools import setup\n\nsetup(name='x',\n")
    write(tmp_path, "requirements.txt", "tensorrt\n")
    result = scan(tmp_path)
    (problem,) = skipped_in(result, "setup.py")
    assert problem.kind is SkipKind.SYNTAX
    assert problem.line == 3
    assert [f.rule_id for f in result.findings] == ["GP104"]


def test_setup_py_computed_values_are_noted_not_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    write(
        tmp_path,
        "setup.py",
        "import pathlib\n"
        f"pathlib.Path({str(marker)!r}).write_text('x')\n"
        "from setuptools import setup\n"
        "setup(\n"
        "    install_requires=open('requirements.txt').read().splitlines(),\n"
        "    extras_require={'gpu': ['cupy-cuda12x']},\n"
        ")\n",
    )
    result = scan(tmp_path)
    assert not marker.exists()
    # The computed list is a finding (GP114), no longer an input problem as well.
    assert not result.skipped
    assert [(f.location.line, f.rule_id) for f in result.findings] == [
        (5, "GP114"),
        (6, "GP105"),
    ]
    assert "install_requires is computed" in result.findings[0].message
    (problem,) = parse_setup_py((tmp_path / "setup.py").read_text(), "setup.py").problems
    assert (problem.kind, problem.line, problem.partial) == (SkipKind.UNREADABLE, 5, True)
    assert "install_requires is computed" in problem.reason


def test_setup_py_lists_grown_after_their_assignment_are_read_whole() -> None:
    parsed = parse_setup_py(
        "from setuptools import setup\n"
        'REQS = ["numpy"]\n'
        'REQS += ["cupy-cuda12x>=13"]\n'
        'REQS.append("tensorrt==10.0.1")\n'
        'REQS.extend(["pycuda"])\n'
        'EXTRA = ["x"]\n'
        'EXTRA.insert(0, "flash-attn")\n'
        'setup(install_requires=REQS, extras_require={"e": EXTRA})\n',
        "setup.py",
    )
    assert [(r.key, r.line) for r in parsed.requirements] == [
        ("numpy", 2),
        ("cupy-cuda12x", 3),
        ("tensorrt", 4),
        ("pycuda", 5),
    ]
    # A change gpuport does not follow makes the list computed: noted, never half-read.
    (problem,) = parsed.problems
    assert (problem.kind, problem.line) == (SkipKind.UNREADABLE, 8)
    assert "extras_require.e is computed" in problem.reason


def test_binary_requirements_file_is_skipped_by_the_reader(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_bytes(b"torch\x00\x01")
    (problem,) = scan(tmp_path).skipped
    assert problem.kind is SkipKind.BINARY


# ---------------------------------------------------------------------------------------------
# Parsers


def test_logical_lines_join_continuations_and_drop_comments() -> None:
    text = "a==1 \\\n  --hash=sha256:x  # c\n# only a comment \\\nb\nurl#frag # c\n"
    got = [(ll.text, ll.line, ll.end_line) for ll in logical_lines(text)]
    assert got == [("a==1   --hash=sha256:x", 1, 2), ("b", 4, 4), ("url#frag", 5, 5)]


def test_requirements_records() -> None:
    text = (
        "-i https://mirror.example/simple\n"
        "--extra-index-url=https://download.pytorch.org/whl/cu121\n"
        "-f https://data.pyg.org/whl/torch-2.3.0+cu121.html\n"
        "torch==2.3.0+cu121 ; sys_platform == 'linux' \\\n"
        "    --hash=sha256:aa --hash=sha256:bb\n"
        "-e git+https://github.com/x/y.git#egg=yy[gpu]\n"
        "tool @ https://example.org/tool-1.0+cu118-py3-none-any.whl\n"
        "--no-index\n"
    )
    parsed = parse_requirements(text, "requirements.txt")
    assert not parsed.problems
    assert parsed.no_index
    assert [(i.role, i.line, i.option) for i in parsed.indexes] == [
        (IndexRole.PRIMARY, 1, "-i"),
        (IndexRole.EXTRA, 2, "--extra-index-url"),
        (IndexRole.FIND_LINKS, 3, "-f"),
    ]
    torch, editable, tool = parsed.requirements
    assert (torch.key, torch.local_version, torch.line, torch.end_line) == ("torch", "cu121", 4, 5)
    assert torch.hashes == ("sha256:aa", "sha256:bb")
    assert torch.marker == 'sys_platform == "linux"'
    assert editable.editable and editable.key == "yy" and editable.extras == ("gpu",)
    assert (tool.key, tool.local_version) == ("tool", "cu118")


def test_markers_that_rule_out_linux() -> None:
    assert marker_allows_linux("")
    assert marker_allows_linux("sys_platform == 'linux' and python_version >= '3.10'")
    assert not marker_allows_linux("sys_platform == 'darwin'")
    assert not marker_allows_linux("platform_system == 'Windows'")
    assert marker_allows_linux("extra == 'gpu' and sys_platform != 'win32'")
    assert marker_allows_linux("this is ( not a marker")  # unknown: assume it applies


def test_requirement_strings() -> None:
    spec = parse_requirement_string("jaxlib==0.4.23+cuda12.cudnn89")
    assert spec.local_version == "cuda12.cudnn89"
    spec = parse_requirement_string(
        "https://x.org/torch-2.3.0%2Bcu121-cp311-cp311-linux_x86_64.whl"
    )
    assert (spec.name, spec.local_version) == ("torch", "cu121")
    with pytest.raises(ValueError):
        parse_requirement_string("torch >= = 2")


def test_labels_and_indexes() -> None:
    assert is_cuda_label("cu121") and is_cuda_label("cuda12.cudnn89") and is_cuda_label("pt23cu121")
    assert not is_cuda_label("rocm6.1") and not is_cuda_label("cpu") and not is_cuda_label("")
    assert is_rocm_index("https://download.pytorch.org/whl/rocm6.2.4/")
    assert is_rocm_index("https://download.pytorch.org/whl/nightly/rocm6.4")
    assert not is_rocm_index("https://download.pytorch.org/whl/cu121")
    replaced = cuda_index("https://download.pytorch.org/whl/cu121/", "6.4")
    assert replaced is not None and replaced.replacement == kb.pytorch_rocm_index("6.4")
    guessed = cuda_index("https://example.org/wheels/cu118/", "6.4")
    assert guessed is not None and guessed.replacement is None and not guessed.known
    assert cuda_index("https://pypi.org/simple", "6.4") is None


def test_pyproject_lines_and_roles() -> None:
    text = (FIXTURES / "GP105-rocm-package-replacement" / "poetry" / "pyproject.toml").read_text(
        encoding="utf-8"
    )
    parsed = parse_pyproject(text, "pyproject.toml")
    by_key = {r.key: r for r in parsed.requirements}
    assert by_key["torch"].line == 9 and by_key["torch"].form is Form.TABLE
    assert by_key["torch"].index == "pytorch"
    assert by_key["tensorflow"].extras == ("and-cuda",)
    assert [(i.name, i.role, i.line) for i in parsed.indexes] == [
        ("pytorch", IndexRole.NAMED, 20),
        ("pytorch-rocm", IndexRole.NAMED, 25),
    ]
    text = (FIXTURES / "GP102-cuda-pip-index" / "uv" / "pyproject.toml").read_text(encoding="utf-8")
    parsed = parse_pyproject(text, "pyproject.toml")
    assert {r.key: r.index for r in parsed.requirements} == {
        "torch": "pytorch-cu121",
        "torchvision": "pytorch-cu121",
        "xformers": "",
    }
    assert [(i.role, i.line) for i in parsed.indexes] == [
        (IndexRole.NAMED, 17),
        (IndexRole.EXTRA, 21),
    ]


def test_pyproject_duplicate_strings_get_their_own_lines() -> None:
    text = '[project]\ndependencies = [\n  "torch",\n  "numpy",\n]\n[dependency-groups]\nx = ["torch"]\n'
    parsed = parse_pyproject(text, "pyproject.toml")
    assert [(r.key, r.line, r.section) for r in parsed.requirements] == [
        ("torch", 3, "project.dependencies"),
        ("numpy", 4, "project.dependencies"),
        ("torch", 7, "dependency-groups.x"),
    ]


PDM_TIED = """\
[project]
name = "x"
dependencies = ["torch>=2.4", "numpy"]

[[tool.pdm.source]]
name = "rocm"
url = "https://download.pytorch.org/whl/rocm6.2"
include_packages = ["torch*"]

[tool.pdm.dev-dependencies]
test = ["torchvision"]
"""


def test_pdm_include_packages_ties_requirements_to_the_source() -> None:
    parsed = parse_pyproject(PDM_TIED, "pyproject.toml")
    assert {r.key: r.index for r in parsed.requirements} == {
        "torch": "rocm",
        "numpy": "",
        "torchvision": "rocm",
    }
    # PDM searches include_packages in that source only: PyPI's CUDA torch cannot win.
    assert [a.rule.id for a in analyze(parsed)] == []
    untied = parse_pyproject(PDM_TIED.replace('include_packages = ["torch*"]\n', ""), "p")
    assert [(a.rule.id, a.line) for a in analyze(untied)] == [("GP103", 7)]


def test_torch_tied_to_a_supplemental_rocm_source_is_not_open_to_pypi() -> None:
    text = (
        '[tool.poetry.dependencies]\ntorch = {version = ">=2.4", source = "rocm"}\n'
        'torchaudio = ">=2.4"\n'
        '[[tool.poetry.source]]\nname = "rocm"\n'
        'url = "https://download.pytorch.org/whl/rocm6.2"\npriority = "supplemental"\n'
    )
    advice = analyze(parse_pyproject(text, "pyproject.toml"))
    assert [(a.rule.id, a.line) for a in advice] == [("GP103", 6)]
    assert "`torchaudio" in advice[0].message and "`torch " not in advice[0].message


def test_pipfile_roles() -> None:
    parsed = parse_pipfile(
        (FIXTURES / "GP102-cuda-pip-index" / "pipenv" / "Pipfile").read_text(), "Pipfile"
    )
    assert [(i.role, i.line) for i in parsed.indexes] == [
        (IndexRole.PRIMARY, 2),
        (IndexRole.NAMED, 7),
    ]
    torch = parsed.requirements[0]
    assert (torch.key, torch.specifier, torch.index) == (
        "torch",
        "==2.3.0+cu121",
        "pytorch",
    )


def test_setup_py_and_cfg_records() -> None:
    parsed = parse_setup_py((FIXTURES / "_shared" / "setuppy" / "setup.py").read_text(), "setup.py")
    assert [(r.key, r.line, r.section) for r in parsed.requirements] == [
        ("torch", 4, "install_requires"),
        ("numpy", 5, "install_requires"),
        ("cupy-cuda12x", 10, "install_requires"),
        ("tensorrt", 12, "extras_require.trt"),
        ("tqdm", 13, "extras_require.plain"),
    ]
    parsed = parse_setup_cfg(
        (FIXTURES / "_shared" / "setupcfg" / "setup.cfg").read_text(), "setup.cfg"
    )
    assert [(r.key, r.line, r.section) for r in parsed.requirements] == [
        ("torch", 7, "install_requires"),
        ("numpy", 9, "install_requires"),
        ("onnxruntime-gpu", 13, "extras_require.gpu"),
        ("gpustat", 16, "extras_require.monitor"),
    ]


def test_conda_specs() -> None:
    assert parse_conda_spec("nvidia::cuda-toolkit=12.1") == ("nvidia", "cuda-toolkit", "=12.1", "")
    assert parse_conda_spec("pytorch=2.1.0=py3.11_cuda12.1_0") == (
        "",
        "pytorch",
        "=2.1.0=py3.11_cuda12.1_0",
        "py3.11_cuda12.1_0",
    )
    assert parse_conda_spec("cudatoolkit 11.8.* h1") == ("", "cudatoolkit", "11.8.* h1", "h1")
    assert parse_conda_spec("pytorch[build=*cuda*]")[3] == "*cuda*"  # type: ignore[index]


def test_conda_pip_section_follows_includes_relative_to_the_env_file() -> None:
    env = "dependencies:\n  - pip:\n    - -r reqs/gpu.txt\n    - torch\n"
    parsed = parse_conda_env(env, "env/environment.yml", read={"env/reqs/gpu.txt": "cupy\n"}.get)
    assert [(r.key, r.path) for r in parsed.all_requirements()] == [
        ("torch", "env/environment.yml"),
        ("cupy", "env/reqs/gpu.txt"),
    ]


def test_advice_for_a_torch_family_pin_carries_a_review_note() -> None:
    text = "torchaudio==2.3.0+cu121\n"
    (item,) = analyze(parse_requirements(text, "requirements.txt"), "6.2")
    assert item.status is ChangeStatus.NEEDS_REVIEW and item.mechanical
    assert [(text[e.start : e.end], e.text) for e in item.edits] == [("+cu121", "+rocm6.2")]
    assert "2.3.0" in item.note and "rocm6.2" in item.note
    assert "torchaudio" in TORCH_FAMILY


# ---------------------------------------------------------------------------------------------
# Any text at all: problems are values, never exceptions or output

_PIECES = st.sampled_from(
    [
        "torch", "==", "2.3.0", "+cu121", "\n", " ", "\\", "#", "-r", "x.txt", "-c",
        "--extra-index-url", "https://download.pytorch.org/whl/cu121", "[", "]", '"', "'",
        "=", "{", "}", ";", "- ", "pip:", "dependencies:", "channels:", "nvidia",
        "pytorch-cuda=12.1", "[project]", "dependencies = [", "[tool.poetry.dependencies]",
        "nvidia-cudnn-cu12", "cupy-cuda12x", "setup(", "install_requires=", ")", ",",
        "\t", "\r\n", "[options]", "install_requires =", "é", "1if",
    ]
)  # fmt: skip
_TEXTS = st.lists(_PIECES, max_size=40).map("".join) | st.text(max_size=120)


@settings(max_examples=150, deadline=None)
@given(text=_TEXTS)
def test_parsers_never_raise(text: str) -> None:
    files = {"x.txt": text}
    parsers = (
        lambda: parse_requirements(text, "requirements.txt", read=files.get),
        lambda: parse_pyproject(text, "pyproject.toml"),
        lambda: parse_pipfile(text, "Pipfile"),
        lambda: parse_setup_py(text, "setup.py"),
        lambda: parse_setup_cfg(text, "setup.cfg"),
        lambda: parse_conda_env(text, "environment.yml", read=files.get),
    )
    for parse in parsers:
        parsed = parse()
        for problem in parsed.problems:
            assert problem.reason and problem.path
        for item in analyze(parsed):
            assert item.message and item.line >= 1


def test_cuda_find_links_page_is_not_replaced_by_an_index_root(tmp_path: Path) -> None:
    write(
        tmp_path,
        "requirements.txt",
        "-f https://download.pytorch.org/whl/cu111/torch_stable.html\n",
    )
    finding = only(scan(tmp_path).findings, "GP102")
    assert finding.fix is not None and not finding.fix.mechanical
    assert "--extra-index-url https://download.pytorch.org/whl/rocm" in finding.message


# ---------------------------------------------------------------------------------------------
# Poetry constraints as PEP 440 (GP112 on Poetry tables)


@pytest.mark.parametrize(
    ("poetry", "inside", "outside"),
    [
        ("0.43.3", ["0.43.3"], ["0.43.4", "0.43.2"]),
        ("^0.43", ["0.43", "0.43.9"], ["0.44", "0.42.9"]),
        ("~0.43.3", ["0.43.3", "0.43.10"], ["0.44.0", "0.43.2"]),
        ("^1.2.3", ["1.2.3", "1.99"], ["2.0", "1.2.2"]),
        ("^0.0.3", ["0.0.3"], ["0.0.4"]),
        ("^0", ["0.9"], ["1.0"]),
        ("~1", ["1.9"], ["2.0"]),
        ("~1.2", ["1.2.9"], ["1.3"]),
        ("1.2.*", ["1.2.7"], ["1.3"]),
        (">= 1.2, < 1.5", ["1.4"], ["1.5", "1.1"]),
        ("==2.0, !=2.0.1", ["2.0"], ["2.0.1"]),
        ("~=0.43", ["0.99"], ["1.0"]),
    ],
)
def test_poetry_specifier_translates_to_pep440(
    poetry: str, inside: list[str], outside: list[str]
) -> None:
    allowed = poetry_specifier(poetry)
    assert allowed is not None
    assert all(allowed.contains(v) for v in inside), (poetry, str(allowed))
    assert not any(allowed.contains(v) for v in outside), (poetry, str(allowed))


@pytest.mark.parametrize("poetry", ["1.0 || 2.0", "^1.2b1", "~x", "latest", ">=", "^", "1.2,"])
def test_poetry_forms_not_understood_are_none(poetry: str) -> None:
    assert poetry_specifier(poetry) is None


def test_gp112_reads_poetry_and_pipfile_tables_by_their_own_syntax() -> None:
    poetry = parse_pyproject(
        '[tool.poetry.dependencies]\nbitsandbytes = "0.43.3"\nliger-kernel = "==0.3.1"\n', "p"
    )
    pipfile = parse_pipfile('[packages]\nbitsandbytes = "0.43.3"\n', "Pipfile")
    assert [(a.rule.id, a.line) for a in analyze(poetry)] == [("GP112", 2), ("GP112", 3)]
    # The same bare version is not PEP 440, so in a Pipfile it is left alone.
    assert [a.rule.id for a in analyze(pipfile)] == []


def test_an_include_the_walk_knows_through_the_roots_name_is_not_repeated(
    tmp_path: Path,
) -> None:
    # In a root folder named `requirements`, the walk reads base.txt on its own.
    root = tmp_path / "requirements"
    write(root, "requirements.txt", "-r base.txt\n")
    write(root, "base.txt", "torch==2.3.0+cu121\n")
    findings = scan(root).findings
    assert [(f.location.path, f.rule_id) for f in findings] == [("base.txt", "GP101")]


def test_a_computed_list_read_from_a_scanned_requirements_file_is_no_gap(tmp_path: Path) -> None:
    # DeepSpeed's setup.py reads requirements/*.txt, which the scan checks on their own.
    write(tmp_path, "requirements/requirements.txt", "xformers\n")
    write(
        tmp_path,
        "setup.py",
        "from setuptools import setup\n"
        "def fetch_requirements(path):\n"
        "    return open(path).read().split()\n"
        "setup(\n"
        "    install_requires=fetch_requirements('requirements/requirements.txt'),\n"
        "    extras_require={'x': fetch_requirements('requirements/missing.txt')},\n"
        ")\n",
    )
    result = scan(tmp_path)
    assert not result.skipped
    found = sorted((f.location.path, f.location.line, f.rule_id) for f in result.findings)
    assert found == [
        ("requirements/requirements.txt", 1, "GP106"),
        ("setup.py", 6, "GP114"),
    ]


# ---------------------------------------------------------------------------------------------
# GP115: a torch cap below the newest ROCm index's releases (from the KB's release table)


def _gp115(text: str) -> list[str]:
    dep = parse_requirements(text, "requirements.txt")
    return [h.message for h in analyze(dep, enabled=frozenset({"GP115"}))]


def test_torch_cap_names_the_rocm_indexes_it_leaves_out() -> None:
    releases = torch_rocm_releases()
    newest = max(releases, key=lambda r: tuple(int(p) for p in r.split(".")))
    major, minor = newest.split(".")
    capped = f"torch<{major}.{minor}"  # leaves out only the newest release
    (message,) = _gp115(capped + "\n")
    for rocm in releases[newest]:
        assert f"ROCm {rocm}" in message or f", {rocm}" in message
    assert _gp115(f"torch<{major}.{int(minor) + 1}\n") == []  # the newest release is allowed
    assert _gp115("torch==2.3.0\n") == []  # an exact pin: the pin rules' business
    assert _gp115("torch>=2.4\n") == []
