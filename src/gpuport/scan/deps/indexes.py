"""Dependency rules about where packages come from: CUDA indexes (GP102), a ROCm index beside PyPI
(GP103), PyTorch with no index in a file written for CUDA (GP111)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace

from gpuport.findings import Category, Confidence, Severity
from gpuport.rules import Rule, rule
from gpuport.scan.deps.context import Context, label_of, shown_index, spelled
from gpuport.scan.deps.hits import DependencyHit, Place, replacing, unconverted
from gpuport.scan.deps.knowledge import (
    PIP_REQ_FILE_DOCS,
    PYTORCH_ROCM_DOCS,
    TORCH_FAMILY,
    CudaIndex,
    cuda_index,
    is_cuda_label,
    is_rocm_index,
    is_rocm_label,
    name_needles,
    normal_url,
    on_linux,
    served_by,
)
from gpuport.syntax.dependencies import IndexRole, IndexSource, Requirement

CUDA_PIP_INDEX = rule(
    id="GP102",
    slug="cuda-pip-index",
    category=Category.DEPENDENCIES,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="Package index or find-links page that serves CUDA builds",
    what=(
        "Finds `--index-url`, `--extra-index-url` and `--find-links` options, Poetry, uv, "
        "PDM and Pipenv sources, and setup.py `dependency_links` that point at a CUDA wheel "
        "index such as `https://download.pytorch.org/whl/cu121`."
    ),
    why=(
        "A CUDA index only has CUDA builds: whatever pip takes from it will not use an AMD "
        "GPU. PyTorch publishes one index per ROCm release (`whl/rocm6.4`) with the ROCm "
        "builds of torch, torchvision and torchaudio."
    ),
    example="--index-url https://download.pytorch.org/whl/cu121",
    instead="--index-url https://download.pytorch.org/whl/rocm6.4",
    fix=(
        "Point the option or source at the ROCm index gpuport names (the knowledge base's "
        "replacement for that CUDA index), or remove it when nothing replaces it."
    ),
    mechanical=True,
    references=(PYTORCH_ROCM_DOCS, PIP_REQ_FILE_DOCS),
    # Every way to name an index: -i/--index-url/--extra-index-url, -f/--find-links, TOML `url`,
    # uv's index-url/find-links, setup.py's dependency_links.
    needles=("-i", "-f", "url", "links"),
)


def cuda_pip_index(index: IndexSource, context: Context) -> Iterator[DependencyHit]:
    """GP102: an index or find-links page of CUDA builds, replaced by its ROCm counterpart."""
    if index.role is IndexRole.CHANNEL:
        return
    found = cuda_index(index.url, context.rocm_version)
    if found is None:
        return
    yield _cuda_index_hit(index, found, context)


def _cuda_index_hit(index: IndexSource, found: CudaIndex, context: Context) -> DependencyHit:
    shown = shown_index(index)
    place = Place.of_index(context.source, index, "index")
    if found.replacement is None:
        detail = f" ({found.notes.rstrip('.')})" if found.notes else ""
        guess = " looks like a CUDA wheel index and" if not found.known else ""
        return unconverted(
            CUDA_PIP_INDEX,
            place,
            f"{shown}{guess} serves CUDA builds; nothing replaces it on ROCm"
            f"{detail}: remove it and install the ROCm builds of what it provided",
            "Remove the index and install the packages it served from their ROCm sources.",
            confidence=None if found.known else Confidence.MEDIUM,
        )
    new_url = found.replacement
    if index.role is IndexRole.FIND_LINKS and normal_url(index.url).lower().endswith(".html"):
        # A page of links (…/cu121/torch_stable.html) is not an index: the ROCm index root
        # would list projects, not files, so the option itself has to change.
        return unconverted(
            CUDA_PIP_INDEX,
            place,
            f"{shown} lists CUDA builds; on ROCm drop it and use "
            f"`--extra-index-url {new_url}` (or `--index-url` when only the PyTorch "
            "packages come from it)",
            f"Replace the find-links page with the index {new_url}.",
        )
    replacements: list[tuple[str, str]] = [(index.url, new_url)]
    new_option = index.option
    review = ""
    if index.option == "--extra-index-url":
        if _only_served_packages(new_url, context):
            new_option = "--index-url"
            replacements.insert(0, ("--extra-index-url", "--index-url"))
        else:
            unpinned = [
                r
                for r in context.requirements
                if r.key in TORCH_FAMILY and not r.url and not r.local_version
            ]
            if unpinned:
                names = ", ".join(r.name for r in unpinned)
                review = (
                    f"{names} {'is' if len(unpinned) == 1 else 'are'} not pinned to a ROCm build "
                    "and PyPI is searched too; pin them with "
                    f"+{label_of(new_url) or context.label} or install them from a file of "
                    "their own with --index-url"
                )
    shown_new = shown_index(replace(index, option=new_option), new_url)
    return replacing(
        CUDA_PIP_INDEX,
        place,
        f"{shown} serves CUDA builds; on ROCm use `{shown_new}`",
        f"Replace it with {shown_new}.",
        tuple(replacements),
        review=review,
    )


def _only_served_packages(new_url: str, context: Context) -> bool:
    """Whether every requirement of the file can come from ``new_url`` (so --index-url is safe)."""
    if any(i.role is IndexRole.PRIMARY for i in context.indexes):
        return False  # another --index-url (a mirror?) would be overridden
    served = served_by(new_url)
    keys = [r.key for r in context.requirements if not r.url]
    return bool(keys) and all(k in served for k in keys)


ROCM_INDEX_AS_EXTRA = rule(
    id="GP103",
    slug="rocm-index-as-extra",
    category=Category.DEPENDENCIES,
    severity=Severity.MEDIUM,
    confidence=Confidence.MEDIUM,
    summary="ROCm PyTorch index added beside PyPI while torch is not pinned to a ROCm build",
    what=(
        "Finds a PyTorch ROCm index given with `--extra-index-url` (or `--find-links`, a "
        "Poetry supplemental source, a PDM source) in a file whose torch, torchvision or "
        "torchaudio requirement has no `+rocmX.Y` label."
    ),
    why=(
        "pip merges an extra index with PyPI and takes the highest version it finds. When "
        "PyPI has a newer torch than the ROCm index, or the ROCm index has no build of the "
        "pinned version, pip silently installs PyPI's torch, which on Linux is the CUDA build."
    ),
    example="--extra-index-url https://download.pytorch.org/whl/rocm6.4\ntorch>=2.4",
    instead=(
        "--index-url https://download.pytorch.org/whl/rocm6.4\ntorch>=2.4\n"
        "# or keep the extra index and pin the build:\ntorch==2.7.1+rocm6.4"
    ),
    fix=(
        "Install the PyTorch packages with `--index-url` (from a requirements file of their "
        "own when other packages need PyPI), or pin them with the index's `+rocmX.Y` label."
    ),
    mechanical=False,
    references=(PYTORCH_ROCM_DOCS, "https://github.com/pytorch/pytorch/issues/132570"),
    # Indexes searched beside PyPI: --extra-index-url, -f/--find-links, a TOML source's `url`,
    # uv's extra-index-url/find-links, setup.py's dependency_links.
    needles=("-f", "url", "links"),
)


def rocm_index_as_extra(index: IndexSource, context: Context) -> Iterator[DependencyHit]:
    """GP103: a ROCm index searched beside PyPI while the PyTorch packages are not pinned."""
    if index.role not in (IndexRole.EXTRA, IndexRole.FIND_LINKS):
        return
    if cuda_index(index.url, context.rocm_version) is not None or not is_rocm_index(index.url):
        return
    unpinned = [
        r
        for r in context.requirements
        if r.key in TORCH_FAMILY
        and not r.url
        and not is_rocm_label(r.local_version)
        and not is_cuda_label(r.local_version)  # GP101 handles those
        # A requirement tied to a named source (Poetry `source =`, uv sources, PDM
        # include_packages) is searched there only, so PyPI's wheel cannot win.
        and not r.index
    ]
    if not unpinned:
        return
    names = ", ".join(f"`{spelled(r)}`" for r in unpinned)
    label = label_of(index.url) or context.label
    example = unpinned[0]
    way = (
        f"use `--index-url {index.url}` for the PyTorch packages"
        if index.option.startswith("-")
        else "tie the PyTorch packages to this source (Poetry `source =`, an explicit "
        "uv index with [tool.uv.sources], PDM `include_packages`)"
    )
    yield unconverted(
        ROCM_INDEX_AS_EXTRA,
        Place.of_index(context.source, index, "index"),
        f"{shown_index(index)} is searched beside PyPI and "
        f"{names} {'is' if len(unpinned) == 1 else 'are'} not pinned to a ROCm "
        f"build, so the installer may take PyPI's CUDA wheel; {way}, or pin "
        f"`{example.name}==<version>+{label}`",
        f"{way[0].upper()}{way[1:]} (in a file of their own if other packages need "
        f"PyPI), or pin them with +{label}.",
    )


_PIP_UPGRADE_STRATEGY = "https://pip.pypa.io/en/stable/cli/pip_install/#cmdoption-upgrade-strategy"
# A package's own runtime metadata: what any install of the package checks against the
# environment. It cannot name an index (PEP 621, setuptools), and pip leaves an installed
# distribution that meets it as it is ("Requirement already satisfied": the default upgrade
# strategy is only-if-needed, _PIP_UPGRADE_STRATEGY). Build requirements are not in it: pip
# installs them into an empty, isolated build environment, where PyPI's CUDA torch lands.
_RUNTIME_METADATA = (
    "project.dependencies",
    "project.optional-dependencies.",
    "install_requires",
    "extras_require.",
)
# A constraint every recent torch meets: none, or only lower bounds and exclusions (>=2.1).
_MET_BY_ANY_RECENT_RE = re.compile(r"\s*(?:(?:>=|>|!=)\s*[0-9][\w.*+!]*\s*(?:,\s*|$))*")


def _met_by_installed_torch(requirement: Requirement) -> bool:
    """A package's runtime requirement on torch that an installed ROCm torch meets, so pip
    keeps it: no version, or only lower bounds, in the package's own metadata."""
    return requirement.section.startswith(_RUNTIME_METADATA) and bool(
        _MET_BY_ANY_RECENT_RE.fullmatch(requirement.specifier)
    )


TORCH_WITHOUT_INDEX = rule(
    id="GP111",
    slug="torch-without-index",
    category=Category.DEPENDENCIES,
    severity=Severity.LOW,
    confidence=Confidence.MEDIUM,
    summary="PyTorch installed with no index, from a file that also pins CUDA packages",
    what=(
        "Finds torch, torchvision or torchaudio requirements with no index, find-links page "
        "or source at all, in a file that also pins CUDA-only things (CUDA labels, CUDA "
        "indexes, nvidia-* wheels, CUDA builds of other packages). A package's own runtime "
        "metadata (`[project] dependencies` and extras, setup.py `install_requires` and "
        "`extras_require`) that asks for torch with no version or only a lower bound is left "
        "alone: any installed torch, a ROCm build included, satisfies it."
    ),
    why=(
        "On Linux, PyPI's torch wheel is the CUDA build. A file that pins CUDA packages beside "
        "a plain `torch` is written for CUDA: installed as-is on a ROCm machine it brings the "
        "CUDA build, in place of a ROCm torch whose version its pin rules out, or into a fresh "
        "environment (a requirements file, an isolated build's `[build-system] requires`). "
        "pip keeps an installed torch that meets a package's runtime requirement "
        "(`--upgrade-strategy only-if-needed`, its default), so an unpinned torch there is "
        "met by the ROCm build the user installed first."
    ),
    example="torch==2.3.0\nnvidia-cudnn-cu12==8.9.2.26",
    instead="--index-url https://download.pytorch.org/whl/rocm6.4\ntorch==2.3.0",
    fix=(
        "Install the PyTorch packages from the ROCm index (`--index-url`), or pin them with "
        "a `+rocmX.Y` label."
    ),
    mechanical=False,
    references=(PYTORCH_ROCM_DOCS, _PIP_UPGRADE_STRATEGY),
    # It fires on torch, torchvision and torchaudio requirements only, in any spelling.
    needles=name_needles(TORCH_FAMILY),
)


# What a file written for CUDA pins: any of these rules firing in it (or in a file it includes).
TORCH_WITHOUT_INDEX_EVIDENCE: frozenset[str] = frozenset(
    {"GP101", "GP102", "GP104", "GP105", "GP106", "GP108", "GP109", "GP110"}
)

# The requirement checks (rule, check) of an included file, in the order the walk runs them.
RequirementChecks = Iterable[tuple[Rule, Callable[[Requirement, Context], Iterable[DependencyHit]]]]


def torch_without_index(
    context: Context, hits: list[DependencyHit], requirement_checks: RequirementChecks
) -> Iterator[DependencyHit]:
    """GP111: torch with no index, in a file that pins CUDA things (``hits`` found so far).

    When this file's own hits show nothing, an included file's requirements count: every hit
    the ``requirement_checks`` find there on their own (their own scan reports them; here they
    are context).
    """
    dep = context.file
    if any(i.role is not IndexRole.CHANNEL for i in context.indexes):
        return
    signals = [h for h in hits if h.rule.id in TORCH_WITHOUT_INDEX_EVIDENCE]
    if not signals:
        checks = list(requirement_checks)
        for other in dep.walk():
            if other is dep:
                continue
            alone = context.alone(other)
            signals.extend(
                hit
                for requirement in other.requirements
                if on_linux(requirement)
                for _, check in checks
                for hit in check(requirement, alone)
            )
        if not signals:
            return
    first = signals[0]
    where = f"line {first.line}: {first.subject}" if first.path == dep.path else first.path
    for requirement in dep.requirements:
        if (
            requirement.key not in TORCH_FAMILY
            or not on_linux(requirement)
            or requirement.url
            or requirement.index
            or requirement.local_version
            or _met_by_installed_torch(requirement)
        ):
            continue
        pip_style = requirement.section in ("requirements", "constraints", "conda.pip")
        how = (
            f"add `--index-url {context.torch_index}`"
            if pip_style
            else f"install it from {context.torch_index} (a uv index or Poetry source)"
        )
        yield unconverted(
            TORCH_WITHOUT_INDEX,
            Place.of_requirement(context.source, requirement, "index"),
            f"{spelled(requirement)} has no index, so on Linux pip installs PyPI's CUDA build,"
            f" and this file pins CUDA packages ({where}); {how} or pin "
            f"`{requirement.name}==<version>+{context.label}`",
            f"Install {requirement.name} from {context.torch_index}.",
        )
