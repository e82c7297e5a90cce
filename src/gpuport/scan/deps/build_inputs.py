"""Dependency rules about how a package gets built: torch among its build requirements (GP113),
dependency lists its setup.py computes (GP114)."""

from __future__ import annotations

from collections.abc import Iterator

from gpuport.findings import Category, Confidence, Severity
from gpuport.rules import rule
from gpuport.scan.deps.context import Context
from gpuport.scan.deps.hits import DependencyHit, Place, unconverted
from gpuport.scan.deps.knowledge import PYTORCH_ROCM_DOCS
from gpuport.syntax.dependencies import ComputedList, Requirement

# Where a file lists what pip installs into the isolated build environment (PEP 517/518), and
# setuptools' older keyword for the same.
_BUILD_SECTIONS = frozenset({"build-system.requires", "setup_requires"})
_PIP_BUILD_ISOLATION = "https://pip.pypa.io/en/stable/cli/pip_install/#cmdoption-no-build-isolation"

TORCH_BUILD_REQUIREMENT = rule(
    id="GP113",
    slug="torch-build-requirement",
    category=Category.DEPENDENCIES,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="torch is a build requirement: pip's isolated build pulls PyPI's CUDA torch",
    what=(
        "Finds `torch` in pyproject.toml's `[build-system] requires` (or setup.py's "
        "`setup_requires`)."
    ),
    why=(
        "pip builds a package in an isolated environment and installs its build requirements "
        "there from PyPI, whose Linux torch wheels are CUDA builds. The extension is then "
        "compiled against CUDA torch, not the ROCm torch installed beside it: the build fails "
        "without a CUDA toolkit, or produces a module that does not load on ROCm. Projects "
        "such as flash-attention and mamba tell users to pass --no-build-isolation for this "
        "reason."
    ),
    example='[build-system]\nrequires = ["setuptools", "torch>=2.1", "ninja"]\n',
    instead=(
        "# install ROCm torch first, then build against it:\npip install --no-build-isolation .\n"
    ),
    fix=(
        "Document (and use in CI/Dockerfiles) `pip install --no-build-isolation` after "
        "installing ROCm torch from PyTorch's ROCm index; keep torch out of the isolated "
        "build or pin it to that index."
    ),
    mechanical=False,
    references=(_PIP_BUILD_ISOLATION, PYTORCH_ROCM_DOCS),
    needles=("torch",),
)


def torch_build_requirement(record: Requirement, context: Context) -> Iterator[DependencyHit]:
    """GP113: torch listed among the requirements of the isolated build."""
    if record.key != "torch" or record.section not in _BUILD_SECTIONS:
        return
    where = "[build-system] requires" if record.section.startswith("build") else "setup_requires"
    message = (
        f"torch in {where}: pip's isolated build installs PyPI's torch (a CUDA build on "
        "Linux) and compiles against it, not against the ROCm torch you installed"
    )
    yield unconverted(
        TORCH_BUILD_REQUIREMENT,
        Place.of_requirement(context.source, record, "build"),
        message,
        "Install with `pip install --no-build-isolation` after installing ROCm torch.",
    )


# setuptools' ``tests_require`` is installed by nothing a user runs: only the ``setup.py test``
# command read it, and setuptools 72 removed that command (_SETUPTOOLS_TEST_REMOVED). A computed
# test list hides nothing that a `pip install` brings onto a ROCm machine.
_NEVER_INSTALLED = frozenset({"tests_require"})
_SETUPTOOLS_TEST_REMOVED = "https://setuptools.pypa.io/en/latest/history.html#v72-0-0"


COMPUTED_REQUIREMENTS = rule(
    id="GP114",
    slug="computed-requirements",
    category=Category.DEPENDENCIES,
    severity=Severity.LOW,
    confidence=Confidence.HIGH,
    summary="setup.py computes its dependency list, so gpuport could not check it",
    what=(
        "Finds `install_requires`, `extras_require` and `setup_requires` values in setup.py "
        "that are not literal lists (a function call, a file read, a comprehension), and "
        "names the requirements files their code mentions. A name bound to a literal list in "
        "each branch of an `if` is read, every branch's list; `tests_require` is left alone "
        "(no install reads it)."
    ),
    why=(
        "gpuport never runs a project's setup.py, so a computed list is not checked for "
        "CUDA-only packages: a dependency that needs a ROCm build can hide there. Files it "
        "reads (requirements/*.txt) are checked on their own when the scan finds them."
    ),
    example="setup(install_requires=fetch_requirements('requirements/requirements.txt'))\n",
    instead=(
        "# pyproject.toml\n[project]\ndynamic = ['dependencies']\n"
        "[tool.setuptools.dynamic]\ndependencies = {file = ['requirements/requirements.txt']}\n"
    ),
    fix=(
        "Check the computed list by hand, or declare it where tools can read it (pyproject "
        "dependencies, or setuptools' dynamic `file =` pointing at the requirements file)."
    ),
    mechanical=False,
    references=(
        "https://setuptools.pypa.io/en/latest/userguide/pyproject_config.html#dynamic-metadata",
        _SETUPTOOLS_TEST_REMOVED,
    ),
    needles=("_require",),
)


def computed_requirements(context: Context) -> Iterator[DependencyHit]:
    """GP114: each dependency list setup.py computes, once (not ``tests_require``, which no
    install reads)."""
    file = context.file
    for computed in file.computed:
        if computed.section in _NEVER_INSTALLED:
            continue
        yield unconverted(
            COMPUTED_REQUIREMENTS,
            Place(
                file,
                context.source.lines,
                computed.line,
                computed.column,
                computed.line,
                "computed",
                computed.section,
            ),
            _message(computed),
            "Check the list by hand, or declare it in pyproject.toml / a requirements file.",
        )


def _message(computed: ComputedList) -> str:
    message = (
        f"{computed.section} is computed ({computed.shown}); setup.py is never run, so "
        "gpuport did not check these dependencies"
    )
    if computed.reads:
        files = ", ".join(computed.reads)
        message += f"; its code names {files}, which the scan checks on its own if it finds it"
    return message
