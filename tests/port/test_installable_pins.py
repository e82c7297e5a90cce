"""Pins `gpuport port` writes are ones the knowledge base says have a wheel on the index named.

PyTorch publishes each release for the ROCm versions current when it came out (kb/platform.toml
[pytorch_rocm.releases]); swapping ``+cu121`` for ``+rocm6.4`` alone would pin a wheel that was
never built.
"""

from __future__ import annotations

import pytest

from gpuport import kb
from gpuport.edits import ChangeStatus
from gpuport.port.rewrite_deps import (
    companion_version,
    rewrite_conda_env,
    rewrite_pyproject,
    rewrite_requirements,
    torch_companions,
    torch_releases,
)


def releases_on(rocm: str) -> list[str]:
    return [release for release, rocms in torch_releases().items() if rocm in rocms]


def test_the_release_table_agrees_with_the_published_indexes() -> None:
    published = set(kb.pytorch_rocm_versions())
    for release, rocms in torch_releases().items():
        assert rocms and set(rocms) <= published, release
    # every published index carries some release
    assert {r for rocms in torch_releases().values() for r in rocms} == published


def test_a_release_built_for_the_index_keeps_its_version() -> None:
    result = rewrite_requirements("requirements.txt", "torch==2.8.0+cu126\n", "6.4")
    assert result.translated == "torch==2.8.0+rocm6.4\n"
    assert "has no wheel" not in result.changes[0].note


@pytest.mark.parametrize(
    ("pinned", "rocm", "written"),
    [
        ("2.3.0", "6.4", "2.8.0"),  # 2.3 was built for rocm6.0 only
        ("2.1.2", "6.4", "2.8.0"),
        ("2.12.1", "6.4", "2.9.0"),  # newer than any rocm6.4 build: the newest there
        ("2.8.0", "7.2", "2.11.0"),
        ("2.3.0", "6.1", "2.4.0"),  # 2.4, 2.5 and 2.6 are on rocm6.1: the nearest is 2.4
    ],
)
def test_a_release_without_a_wheel_there_becomes_the_nearest_listed_one(
    pinned: str, rocm: str, written: str
) -> None:
    result = rewrite_requirements("requirements.txt", f"torch=={pinned}+cu121\n", rocm)
    label = kb.pytorch_rocm_index(rocm).rsplit("/", 1)[-1]
    assert result.translated == f"torch=={written}+{label}\n"
    change = result.changes[0]
    assert change.status is ChangeStatus.NEEDS_REVIEW
    assert change.after == f"torch=={written}+{label}"
    assert f"torch {pinned} has no wheel on https://download.pytorch.org/whl/{label}" in change.note
    assert f"pinned the nearest release it lists, {written}" in change.note
    assert "check that torch" not in change.note  # the rule's question is answered
    listed = ", ".join(releases_on(label.removeprefix("rocm")))
    assert f"(the knowledge base lists {listed} there)" in change.note


def test_every_pin_written_is_in_the_knowledge_base() -> None:
    for rocm in kb.pytorch_rocm_versions():
        for minor in range(0, 15):
            text = f"torch==2.{minor}.0+cu118\n"
            result = rewrite_requirements("requirements.txt", text, rocm)
            assert result.translated is not None
            written = result.translated.strip().removeprefix("torch==")
            version, label = written.split("+")
            assert label == f"rocm{rocm}"
            release = ".".join(version.split(".")[:2])
            assert rocm in torch_releases()[release], (text, rocm, written)


def test_hash_advice_survives_the_new_pin() -> None:
    text = "torch==2.3.0+cu121 --hash=sha256:aaaa\n"
    result = rewrite_requirements("requirements.txt", text, "6.4")
    assert result.translated is not None and result.translated.startswith("torch==2.8.0+rocm6.4")
    assert "regenerate them" in result.changes[0].note


def test_pyproject_pins_are_checked_too() -> None:
    text = '[project]\nname = "app"\ndependencies = ["torch==2.2.1+cu121"]\n'
    result = rewrite_pyproject("pyproject.toml", text, "6.4")
    assert result.translated is not None
    assert '"torch==2.8.0+rocm6.4"' in result.translated


def test_conda_pytorch_moved_to_pip_gets_an_installable_pin() -> None:
    text = (
        "name: app\nchannels:\n  - pytorch\n  - nvidia\ndependencies:\n"
        "  - pytorch=2.3.0\n  - pytorch-cuda=12.1\n  - pip\n"
    )
    result = rewrite_conda_env("environment.yml", text, "6.4")
    assert result.translated is not None
    assert "    - torch==2.8.0+rocm6.4\n" in result.translated
    moved = next(c for c in result.changes if c.after.startswith("pip: torch"))
    assert moved.status is ChangeStatus.NEEDS_REVIEW
    assert "torch 2.3.0 has no wheel on https://download.pytorch.org/whl/rocm6.4" in moved.note


# --- torchvision and torchaudio go with the torch pin -------------------------------------------


def test_the_companion_table_pairs_only_releases_the_index_carries() -> None:
    for package, pairs in torch_companions().items():
        assert package in ("torchvision", "torchaudio")
        releases = {".".join(v.split(".")[:2]) for v in pairs}
        assert pairs and releases <= set(torch_releases()), package
    assert companion_version("torchvision", "2.8.0") == "0.23.0"
    assert companion_version("torchaudio", "2.5.1") == "2.5.1"
    assert companion_version("torchaudio", "2.0.0") == "2.0.1"  # not always the same patch
    assert companion_version("torchvision", "2.8") == "0.23.0"
    assert companion_version("torchvision", "2.99.0") == ""


def pins(text: str) -> dict[str, str]:
    """package -> version of each ``name==version+label`` line."""
    out = {}
    for line in text.splitlines():
        name, _, rest = line.strip().removeprefix("- ").partition("==")
        if rest:
            out[name] = rest.split("+")[0]
    return out


def test_every_set_of_pins_written_can_be_installed_together() -> None:
    for rocm in kb.pytorch_rocm_versions():
        for minor in range(0, 15):
            text = (
                f"torch==2.{minor}.1+cu118\n"
                f"torchvision==0.{15 + minor}.1+cu118\n"
                "torchaudio==2.0.0+cu118\n"
            )
            result = rewrite_requirements("requirements.txt", text, rocm)
            assert result.translated is not None
            written = pins(result.translated)
            release = ".".join(written["torch"].split(".")[:2])
            assert rocm in torch_releases()[release]
            for package in ("torchvision", "torchaudio"):
                change = next(c for c in result.changes if c.before.startswith(package))
                wanted = companion_version(package, written["torch"])
                if wanted:  # the KB pairs them: the pin written is that pair
                    assert written[package] == wanted, (text, rocm, result.translated)
                else:  # no pair known: the line is left for review and the note says so
                    assert change.status is ChangeStatus.UNCONVERTED
                    assert "does not say which" in change.note
                    assert f"{package}==" in result.translated and "+cu118" in result.translated


def test_a_torch_bump_moves_torchvision_and_torchaudio_with_it() -> None:
    text = "torch==2.3.0+cu121\ntorchvision==0.18.0+cu121\ntorchaudio==2.3.0+cu121\n"
    result = rewrite_requirements("requirements.txt", text, "6.4")
    assert result.translated == (
        "torch==2.8.0+rocm6.4\ntorchvision==0.23.0+rocm6.4\ntorchaudio==2.8.0+rocm6.4\n"
    )
    vision = result.changes[1]
    assert vision.status is ChangeStatus.NEEDS_REVIEW
    assert vision.note == (
        "torchvision 0.18.0 cannot be installed with torch 2.8.0: pinned 0.23.0, the release "
        "built for it (PyTorch's compatibility table)"
    )


def test_a_matching_pair_is_left_alone() -> None:
    text = "torch==2.5.1+cu121\ntorchvision==0.20.1+cu121\n"
    result = rewrite_requirements("requirements.txt", text, "6.2")
    assert result.translated == "torch==2.5.1+rocm6.2\ntorchvision==0.20.1+rocm6.2\n"
    assert "cannot be installed" not in result.changes[1].note


def test_a_conda_torchvision_moves_to_pip_with_the_paired_release() -> None:
    text = (
        "channels:\n  - pytorch\n  - nvidia\ndependencies:\n  - python=3.11\n"
        "  - pytorch=2.3.0\n  - torchvision=0.18.0\n  - pytorch-cuda=12.1\n"
    )
    result = rewrite_conda_env("environment.yml", text, "6.4")
    assert result.translated is not None
    assert "    - torch==2.8.0+rocm6.4\n    - torchvision==0.23.0+rocm6.4\n" in result.translated
    change = next(c for c in result.changes if "torchvision" in c.before)
    assert change.after == "pip: torchvision==0.23.0+rocm6.4"
    assert change.status is ChangeStatus.NEEDS_REVIEW
