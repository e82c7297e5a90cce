"""The wheel and sdist carry every data file gpuport reads, and the installed wheel runs."""

from __future__ import annotations

import re
import shutil
import tarfile
import tomllib
import zipfile
from pathlib import Path

from packaging_support import GROUP, ROOT, Dist, Installed, run

PACKAGE = ROOT / "src" / "gpuport"

pytestmark = GROUP


def data_files() -> set[str]:
    """Every file of src/gpuport that is not Python source: KB tables, templates, presets..."""
    found = {
        p.relative_to(PACKAGE.parent).as_posix()
        for p in PACKAGE.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".py", ".pyc")
    }
    assert {"gpuport/py.typed", "gpuport/report/templates/report.html.j2"} <= found
    assert any(f.startswith("gpuport/kb/") and f.endswith(".toml") for f in found)
    assert any(f.startswith("gpuport/plan/presets/") for f in found)
    return found


def test_wheel_and_sdist_carry_every_data_file(dist: Dist) -> None:
    in_wheel = set(zipfile.ZipFile(dist.wheel).namelist())
    with tarfile.open(dist.sdist) as tar:
        top = f"{dist.sdist.name.removesuffix('.tar.gz')}/src/"
        in_sdist = {n.removeprefix(top) for n in tar.getnames() if n.startswith(top)}
    wanted = data_files()
    assert not wanted - in_wheel, f"left out of the wheel: {sorted(wanted - in_wheel)}"
    assert not wanted - in_sdist, f"left out of the sdist: {sorted(wanted - in_sdist)}"
    modules = {p.relative_to(PACKAGE.parent).as_posix() for p in PACKAGE.rglob("*.py")}
    assert not modules - in_wheel, sorted(modules - in_wheel)
    assert not any("__pycache__" in n or n.startswith("tests/") for n in in_wheel)


def test_every_data_file_the_code_names_is_shipped(dist: Dist) -> None:
    """Each data file a module names ("gpus.toml", "report.html.j2"...) is in the wheel."""
    in_wheel = {Path(n).name for n in zipfile.ZipFile(dist.wheel).namelist()}
    literal = re.compile(r"[\"'](\w[\w.-]*\.(?:toml|tsv|json|j2))[\"']")
    named = {
        name
        for source in PACKAGE.rglob("*.py")
        for name in literal.findall(source.read_text(encoding="utf-8"))
    } - {
        "pyproject.toml",  # the user's files, not gpuport's
        "config.json",
        "collectives.json",  # bench's collectives workload writes it to a temporary folder
    }
    assert {"gpus.toml", "cuda_hip_api.tsv", "report.html.j2"} <= named, named
    assert not named - in_wheel, sorted(named - in_wheel)
    presets = [n for n in zipfile.ZipFile(dist.wheel).namelist() if "/plan/presets/" in n]
    assert len(presets) == len(list((PACKAGE / "plan" / "presets").glob("*.json")))


def test_installed_wheel_runs_assess_outside_the_source_tree(installed: Installed) -> None:
    project = installed.workdir / "llm-service"
    shutil.copytree(ROOT / "examples" / "llm-service", project)
    where = run(
        [installed.bin("python"), "-c", "import gpuport; print(gpuport.__file__)"],
        cwd=installed.workdir,
        env=installed.env,
    )
    assert Path(where.stdout.strip()).is_relative_to(installed.venv), where
    html = installed.workdir / "report.html"
    # KB files (assess), a plan preset (--model) and the HTML template (--html), all from the wheel.
    done = run(
        [
            installed.bin("gpuport"),
            "assess",
            "llm-service",
            "--fail-on",
            "never",
            "--no-progress",
            "--model",
            "llama-3.1-8b",
            "--html",
            str(html),
        ],
        cwd=installed.workdir,
        env=installed.env,
    )
    assert done.returncode == 0, done.stderr
    assert "GP1" in done.stdout or "GP2" in done.stdout, done.stdout[:2000]
    assert "llama" in done.stdout.lower()
    assert html.read_text(encoding="utf-8").lstrip().lower().startswith("<!doctype html")


def test_installed_version_is_the_packages_version(installed: Installed) -> None:
    version = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "version"
    ]
    for command in ("gpuport", "gpuport-pre-commit"):
        done = run([installed.bin(command), "--version"], cwd=installed.workdir, env=installed.env)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == f"{command}, version {version}"
