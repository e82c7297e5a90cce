"""Tests of ``gpuport port`` for dependency files: before/after texts, statuses, idempotence."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuport import kb
from gpuport.port.model import ChangeStatus, FileResult
from gpuport.port.project import port_project
from gpuport.port.rewrite_deps import (
    NOTE_PREFIX,
    rewrite_conda_env,
    rewrite_pipfile,
    rewrite_pyproject,
    rewrite_requirements,
)
from gpuport.scan.deps import analyze
from gpuport.syntax.conda import parse_conda_env
from gpuport.syntax.pipfile import parse_pipfile
from gpuport.syntax.pyproject import parse_pyproject
from gpuport.syntax.requirements import parse_requirements

ROCM = "6.4"
INDEX = kb.pytorch_rocm_index(ROCM)  # https://download.pytorch.org/whl/rocm6.4
LABEL = INDEX.rsplit("/", 1)[-1]  # rocm6.4


def rocm_name(cuda_name: str) -> str:
    entry = kb.find_package(cuda_name)
    assert entry is not None and entry.rocm_package, cuda_name
    return entry.rocm_package


def statuses(result: FileResult) -> list[tuple[int, str, ChangeStatus]]:
    return [(c.line, c.rule_id, c.status) for c in result.changes]


def assert_idempotent(result: FileResult, rewrite: object) -> None:
    assert result.translated is not None
    again = rewrite(result.path, result.translated, ROCM)  # type: ignore[operator]
    assert again.translated is None, again.translated
    assert all(c.status is ChangeStatus.UNCONVERTED for c in again.changes)


# ---------------------------------------------------------------------------------------------
# requirements.txt


REQUIREMENTS_BEFORE = """\
# CUDA stack
--extra-index-url https://download.pytorch.org/whl/cu121
torch==2.3.0+cu121  # pinned by hand
torchvision==0.18.0+cu121
transformers==4.40.0
nvidia-cudnn-cu12==8.9.2.26
cupy-cuda12x>=13
onnxruntime-gpu==1.18.0
tensorrt==10.0.1
"""


def requirements_after() -> str:
    return f"""\
# CUDA stack
--extra-index-url {INDEX}
torch==2.8.0+{LABEL}  # pinned by hand
torchvision==0.23.0+{LABEL}
transformers==4.40.0
# {NOTE_PREFIX} not needed on ROCm (CUDA-only package; ROCm torch brings its own libraries)
# nvidia-cudnn-cu12==8.9.2.26
{rocm_name("cupy-cuda12x")}>=13
{rocm_name("onnxruntime-gpu")}==1.18.0
tensorrt==10.0.1
"""


def test_requirements_before_after() -> None:
    result = rewrite_requirements("requirements.txt", REQUIREMENTS_BEFORE, ROCM)
    assert result.translated == requirements_after()
    assert result.kind == "requirements" and result.path == result.new_path == "requirements.txt"
    assert statuses(result) == [
        (2, "GP102", ChangeStatus.CONVERTED),
        (3, "GP101", ChangeStatus.NEEDS_REVIEW),  # torch 2.3.0 has no rocm6.4 wheel: 2.8.0 pinned
        (4, "GP101", ChangeStatus.NEEDS_REVIEW),
        (6, "GP108", ChangeStatus.CONVERTED),
        (7, "GP105", ChangeStatus.NEEDS_REVIEW),  # does cupy-rocm-* have a >=13 release?
        (8, "GP105", ChangeStatus.NEEDS_REVIEW),
        (9, "GP104", ChangeStatus.UNCONVERTED),
    ]
    tensorrt = result.changes[-1]
    assert tensorrt.before == tensorrt.after == "tensorrt==10.0.1"
    assert "no ROCm build" in tensorrt.note
    assert_idempotent(result, rewrite_requirements)


def test_rewritten_requirements_have_no_mechanical_advice_left() -> None:
    result = rewrite_requirements("requirements.txt", REQUIREMENTS_BEFORE, ROCM)
    assert result.translated is not None
    left = analyze(parse_requirements(result.translated, "requirements.txt"), ROCM)
    assert [(a.line, a.rule.id, a.mechanical) for a in left] == [(10, "GP104", False)]


def test_torch_only_file_gets_index_url() -> None:
    before = "--extra-index-url https://download.pytorch.org/whl/cu118\ntorch==2.1.0+cu118\n"
    result = rewrite_requirements("requirements-torch.txt", before, ROCM)
    assert result.translated == f"--index-url {INDEX}\ntorch==2.8.0+{LABEL}\n"
    assert_idempotent(result, rewrite_requirements)


def test_unpinned_torch_beside_an_extra_index_needs_review() -> None:
    before = "--extra-index-url https://download.pytorch.org/whl/cu121\ntorch>=2.1\nrequests\n"
    result = rewrite_requirements("requirements.txt", before, ROCM)
    assert result.translated == f"--extra-index-url {INDEX}\ntorch>=2.1\nrequests\n"
    (change,) = result.changes
    assert change.status is ChangeStatus.NEEDS_REVIEW
    assert "torch is not pinned to a ROCm build" in change.note
    # The rewritten file is honest about the remaining risk: GP103, not mechanical.
    again = rewrite_requirements("requirements.txt", result.translated, ROCM)
    assert again.translated is None
    assert statuses(again) == [(1, "GP103", ChangeStatus.UNCONVERTED)]


def test_rocm_version_is_honoured() -> None:
    result = rewrite_requirements("r.txt", "-i https://download.pytorch.org/whl/cu121\n", "6.2")
    assert result.translated == "-i https://download.pytorch.org/whl/rocm6.2\n"


def test_crlf_continuations_and_hashes() -> None:
    before = (
        "torch==2.3.0+cu121 \\\r\n"
        "    --hash=sha256:aaaa\r\n"
        "nvidia-nccl-cu12==2.20.5 \\\r\n"
        "    --hash=sha256:bbbb\r\n"
    )
    result = rewrite_requirements("requirements.txt", before, ROCM)
    assert result.translated == (
        f"torch==2.8.0+{LABEL} \\\r\n"
        "    --hash=sha256:aaaa\r\n"
        f"# {NOTE_PREFIX} not needed on ROCm (CUDA-only package; ROCm torch brings its own "
        "libraries)\r\n"
        "# nvidia-nccl-cu12==2.20.5 \\\r\n"
        "    # --hash=sha256:bbbb\r\n"
    )
    torch = result.changes[0]
    assert torch.status is ChangeStatus.NEEDS_REVIEW
    assert "--hash values belong to the CUDA build" in torch.note
    assert_idempotent(result, rewrite_requirements)


def test_two_requirements_on_one_logical_line_position() -> None:
    before = "torch-scatter==2.1.2+pt23cu121\n"
    result = rewrite_requirements("requirements.txt", before, ROCM)
    assert result.translated == f"{rocm_name('torch-scatter')}==2.1.2\n"
    assert [c.rule_id for c in result.changes] == ["GP101", "GP105"]


def test_malformed_line_is_left_alone_and_listed() -> None:
    before = "torch==2.3.0+cu121\nthis is not valid!!\nnvidia-nccl-cu12\n"
    result = rewrite_requirements("requirements.txt", before, ROCM)
    assert result.translated is not None
    assert result.translated.splitlines()[1] == "this is not valid!!"
    bad = [c for c in result.changes if c.family == "input"]
    assert [(c.line, c.status) for c in bad] == [(2, ChangeStatus.UNCONVERTED)]
    assert "not a valid requirement" in bad[0].note


def test_already_ported_requirements_are_unchanged() -> None:
    before = f"--index-url {INDEX}\ntorch==2.7.1+{LABEL}\ntorchvision\n"
    result = rewrite_requirements("requirements.txt", before, ROCM)
    assert result.translated is None and result.changes == []


def test_includes_give_context_through_read() -> None:
    files = {"torch.txt": "--extra-index-url https://download.pytorch.org/whl/cu121\n"}
    before = "-r torch.txt\ntorch==2.3.0+cu121\nnumpy\n"
    result = rewrite_requirements("requirements.txt", before, ROCM, read=files.get)
    assert result.translated == f"-r torch.txt\ntorch==2.8.0+{LABEL}\nnumpy\n"


# ---------------------------------------------------------------------------------------------
# pyproject.toml


PYPROJECT_BEFORE = """\
[project]
name = "app"
dependencies = [
    "torch==2.3.0+cu121",  # the CUDA build
    'cupy-cuda12x>=13',
    "nvidia-nccl-cu12==2.20.5",
]

[project.optional-dependencies]
runtime = ["nvidia-cudnn-cu12", "numpy"]

[tool.poetry.dependencies]
"nvidia-cublas-cu12" = "12.1.3.1"
onnxruntime-gpu = { version = "^1.18" }

[[tool.uv.index]]
name = "pytorch-cu121"
url = "https://download.pytorch.org/whl/cu121"
explicit = true
"""


def pyproject_after() -> str:
    note = f"# {NOTE_PREFIX} not needed on ROCm (CUDA-only package; ROCm torch brings its own libraries)"
    return f"""\
[project]
name = "app"
dependencies = [
    "torch==2.8.0+{LABEL}",  # the CUDA build
    '{rocm_name("cupy-cuda12x")}>=13',
    {note}
    # "nvidia-nccl-cu12==2.20.5",
]

[project.optional-dependencies]
runtime = ["nvidia-cudnn-cu12", "numpy"]

[tool.poetry.dependencies]
{note}
# "nvidia-cublas-cu12" = "12.1.3.1"
{rocm_name("onnxruntime-gpu")} = {{ version = "^1.18" }}

[[tool.uv.index]]
name = "pytorch-cu121"
url = "{INDEX}"
explicit = true
"""


def test_pyproject_before_after() -> None:
    result = rewrite_pyproject("pyproject.toml", PYPROJECT_BEFORE, ROCM)
    assert result.translated == pyproject_after()
    tomllib.loads(result.translated)
    assert statuses(result) == [
        (4, "GP101", ChangeStatus.NEEDS_REVIEW),
        (5, "GP105", ChangeStatus.NEEDS_REVIEW),
        (6, "GP108", ChangeStatus.CONVERTED),
        (10, "GP108", ChangeStatus.UNCONVERTED),  # shares a one-line array
        (13, "GP108", ChangeStatus.CONVERTED),
        (14, "GP105", ChangeStatus.NEEDS_REVIEW),
        (18, "GP102", ChangeStatus.CONVERTED),
    ]
    shared = result.changes[3]
    assert "remove it by hand" in shared.note
    assert_idempotent(result, rewrite_pyproject)


def test_pyproject_rewrite_keeps_every_other_byte() -> None:
    result = rewrite_pyproject("pyproject.toml", PYPROJECT_BEFORE, ROCM)
    assert result.translated is not None
    before = PYPROJECT_BEFORE.splitlines()
    after = [
        line
        for line in result.translated.splitlines()
        if not line.strip().startswith(f"# {NOTE_PREFIX}")
    ]
    changed = {i + 1 for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b}
    assert changed == {4, 5, 6, 13, 14, 18}


def test_broken_pyproject_is_skipped_not_rewritten() -> None:
    result = rewrite_pyproject("pyproject.toml", '[project]\ndependencies = ["torch"\n', ROCM)
    assert result.translated is None
    assert "TOML does not parse" in result.skipped and "line" in result.skipped


def test_pipfile_before_after() -> None:
    before = (
        "[[source]]\n"
        'url = "https://download.pytorch.org/whl/cu121"\n'
        'name = "pytorch"\n\n'
        "[packages]\n"
        'torch = {version = "==2.3.0+cu121", index = "pytorch"}\n'
        'nvidia-cudnn-cu12 = "*"\n'
    )
    result = rewrite_pipfile("Pipfile", before, ROCM)
    assert result.translated == (
        "[[source]]\n"
        f'url = "{INDEX}"\n'
        'name = "pytorch"\n\n'
        "[packages]\n"
        f'torch = {{version = "==2.8.0+{LABEL}", index = "pytorch"}}\n'
        f"# {NOTE_PREFIX} not needed on ROCm (CUDA-only package; ROCm torch brings its own "
        "libraries)\n"
        '# nvidia-cudnn-cu12 = "*"\n'
    )
    assert_idempotent(result, rewrite_pipfile)
    assert parse_pipfile(result.translated, "Pipfile").problems == []


# ---------------------------------------------------------------------------------------------
# environment.yml


CONDA_BEFORE = """\
name: train
channels:
  - pytorch
  - nvidia
dependencies:
  - python=3.11
  - pytorch=2.3.0
  - pytorch-cuda=12.1  # selects CUDA
  - numpy
"""


def conda_after() -> str:
    return f"""\
name: train
channels:
  - pytorch
  # {NOTE_PREFIX} the nvidia channel only serves CUDA packages
  # - nvidia
dependencies:
  - python=3.11
  # {NOTE_PREFIX} conda has no ROCm build of PyTorch; installed with pip from the ROCm index below
  # - pytorch=2.3.0
  # {NOTE_PREFIX} CUDA package, not used on ROCm
  # - pytorch-cuda=12.1  # selects CUDA
  - numpy
  - pip
  - pip:
    - --index-url {INDEX}
    - torch==2.8.0+{LABEL}
"""


def test_conda_before_after_adds_a_pip_section() -> None:
    result = rewrite_conda_env("environment.yml", CONDA_BEFORE, ROCM)
    assert result.translated == conda_after()
    assert statuses(result) == [
        (4, "GP110", ChangeStatus.CONVERTED),
        (7, "GP109", ChangeStatus.NEEDS_REVIEW),  # torch 2.3.0 has no rocm6.4 wheel: 2.8.0
        (8, "GP109", ChangeStatus.CONVERTED),
    ]
    assert result.changes[1].after == f"pip: torch==2.8.0+{LABEL}"
    assert_idempotent(result, rewrite_conda_env)
    parsed = parse_conda_env(result.translated, "environment.yml")
    assert [r.text for r in parsed.requirements] == [f"torch==2.8.0+{LABEL}"]
    assert [i.url for i in parsed.indexes if i.option == "--index-url"] == [INDEX]


def test_conda_existing_pip_section_gets_an_extra_index_when_it_has_other_packages() -> None:
    before = (
        "dependencies:\n"
        "- pytorch::pytorch=2.3.0=py3.11_cuda12.1_cudnn8.9.2_0\n"
        "- pip:\n"
        "  - nvidia-cudnn-cu12==8.9.2.26\n"
        "  - transformers==4.40.0\n"
    )
    result = rewrite_conda_env("environment.yml", before, ROCM)
    assert result.translated == (
        "dependencies:\n"
        f"# {NOTE_PREFIX} conda has no ROCm build of PyTorch; installed with pip from the ROCm "
        "index below\n"
        "# - pytorch::pytorch=2.3.0=py3.11_cuda12.1_cudnn8.9.2_0\n"
        "- pip:\n"
        f"  # {NOTE_PREFIX} not needed on ROCm (CUDA-only package; ROCm torch brings its own "
        "libraries)\n"
        "  # - nvidia-cudnn-cu12==8.9.2.26\n"
        "  - transformers==4.40.0\n"
        f"  - --extra-index-url {INDEX}\n"
        f"  - torch==2.8.0+{LABEL}\n"
    )
    assert_idempotent(result, rewrite_conda_env)


def test_conda_unpinned_pytorch_needs_review() -> None:
    before = "dependencies:\n  - pytorch\n  - cudatoolkit=11.8\n"
    result = rewrite_conda_env("environment.yml", before, ROCM)
    torch = result.changes[0]
    assert torch.status is ChangeStatus.NEEDS_REVIEW and "not pinned" in torch.note
    assert result.translated is not None and "    - torch\n" in result.translated


def test_conda_flow_lists_are_not_touched() -> None:
    before = "dependencies: [python=3.11, pytorch-cuda=12.1]\nchannels: [nvidia]\n"
    result = rewrite_conda_env("environment.yml", before, ROCM)
    assert result.translated is None
    assert {c.status for c in result.changes} == {ChangeStatus.UNCONVERTED}
    assert len(result.changes) == 2


def test_conda_pip_entries_are_rewritten_in_place() -> None:
    before = (
        "dependencies:\n"
        "  - pip:\n"
        "    - --extra-index-url https://download.pytorch.org/whl/cu121\n"
        "    - torchaudio==2.3.0+cu121\n"
    )
    result = rewrite_conda_env("environment.yml", before, ROCM)
    assert result.translated == (
        f"dependencies:\n  - pip:\n    - --index-url {INDEX}\n    - torchaudio==2.3.0+{LABEL}\n"
    )
    yaml.safe_load(result.translated)
    assert_idempotent(result, rewrite_conda_env)


def test_broken_yaml_is_skipped() -> None:
    result = rewrite_conda_env("environment.yml", "dependencies:\n  - [a\n", ROCM)
    assert result.translated is None and "YAML does not parse" in result.skipped


@pytest.mark.parametrize(
    ("rewrite", "parse", "name", "text"),
    [
        (rewrite_requirements, parse_requirements, "requirements.txt", REQUIREMENTS_BEFORE),
        (rewrite_pyproject, parse_pyproject, "pyproject.toml", PYPROJECT_BEFORE),
        (rewrite_conda_env, parse_conda_env, "environment.yml", CONDA_BEFORE),
    ],
)
def test_every_mechanical_advice_becomes_a_change(
    rewrite: object, parse: object, name: str, text: str
) -> None:
    advice = analyze(parse(text, name), ROCM)  # type: ignore[operator]
    result = rewrite(name, text, ROCM)  # type: ignore[operator]
    assert len(result.changes) == len(advice)
    for item, change in zip(advice, result.changes, strict=True):
        assert (change.line, change.rule_id) == (item.line, item.rule.id)
        if not item.mechanical:
            assert change.status is ChangeStatus.UNCONVERTED


_LINES = st.sampled_from(
    [
        "--extra-index-url https://download.pytorch.org/whl/cu121",
        "-i https://download.pytorch.org/whl/cu118",
        "torch==2.3.0+cu121",
        "torchvision>=0.18",
        "nvidia-cudnn-cu12==8.9.2.26 \\",
        "    --hash=sha256:abcd",
        "cupy-cuda12x>=13  # gpu",
        "tensorrt",
        "transformers",
        "# a comment",
        "",
        "not a requirement!!",
    ]
)


@settings(max_examples=100, deadline=None)
@given(lines=st.lists(_LINES, max_size=12), crlf=st.booleans())
def test_requirements_rewrite_is_idempotent_and_keeps_unrelated_lines(
    lines: list[str], crlf: bool
) -> None:
    newline = "\r\n" if crlf else "\n"
    text = newline.join(lines) + (newline if lines else "")
    result = rewrite_requirements("requirements.txt", text, ROCM)
    if result.translated is None:
        return
    assert result.translated.count("\r\n") >= (text.count("\r\n") if crlf else 0)
    for keep in ("transformers", "tensorrt", "not a requirement!!", "# a comment"):
        assert result.translated.count(keep) >= text.count(keep)
    again = rewrite_requirements("requirements.txt", result.translated, ROCM)
    assert again.translated is None


# ---------------------------------------------------------------------------------------------
# Files reached only through -r/-c are rewritten by `gpuport port` too


def test_port_project_rewrites_unlisted_includes_once(tmp_path: Path) -> None:
    (tmp_path / "common").mkdir()
    (tmp_path / "pins").mkdir()
    (tmp_path / "vendor").mkdir()
    (tmp_path / "requirements.txt").write_text("-r common/base.txt\n-r vendor/x.txt\nnumpy\n")
    (tmp_path / "requirements-dev.txt").write_text("-r common/base.txt\n-c pins/gpu.txt\n")
    (tmp_path / "common" / "base.txt").write_text(
        "--extra-index-url https://download.pytorch.org/whl/cu121\ntorch==2.3.0+cu121\n"
    )
    (tmp_path / "pins" / "gpu.txt").write_text("nvidia-nccl-cu12==2.20.5\n")
    (tmp_path / "vendor" / "x.txt").write_text("torch==2.3.0+cu121\n")
    result = port_project(tmp_path, ROCM, exclude=("vendor",))
    by_path = {f.path: f for f in result.files}
    assert sorted(by_path) == ["common/base.txt", "pins/gpu.txt"]
    base = by_path["common/base.txt"]
    assert base.kind == "requirements"
    assert base.translated == f"--index-url {INDEX}\ntorch==2.8.0+{LABEL}\n"
    gpu = by_path["pins/gpu.txt"].translated
    assert gpu is not None and gpu.splitlines()[1] == "# nvidia-nccl-cu12==2.20.5"
    assert (tmp_path / "common" / "base.txt").read_text().startswith("--extra-index-url")
