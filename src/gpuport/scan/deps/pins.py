"""Dependency rules about pinned versions: CUDA local labels (GP101), releases too old for ROCm (GP112)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from gpuport.findings import Category, Confidence, Severity
from gpuport.rules import rule
from gpuport.scan.deps.context import (
    Context,
    bare_version,
    spelled,
    spelled_after,
    with_stale_hashes,
)
from gpuport.scan.deps.hits import DependencyHit, Place, replacing, unconverted
from gpuport.scan.deps.knowledge import (
    PEP440_LOCAL,
    PYTORCH_ROCM_DOCS,
    TORCH_FAMILY,
    confidence_of,
    find_package,
    is_cuda_label,
    kb_package_needles,
    known_package,
    torch_rocm_releases,
)
from gpuport.syntax.dependencies import Requirement
from gpuport.syntax.pyproject import allowed_versions

CUDA_LOCAL_VERSION = rule(
    id="GP101",
    slug="cuda-local-version",
    category=Category.DEPENDENCIES,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="Version pinned to a CUDA build through a local version label such as +cu121",
    what=(
        "Finds requirements whose pinned version carries a CUDA local label: `+cu121`, "
        "`+cu118`, `+cuda12.cudnn89`, `+pt23cu121`, in a version specifier, a Poetry or "
        "Pipfile table, or the file name of a direct wheel URL."
    ),
    why=(
        "The local label selects one build of a release. `torch==2.3.0+cu121` can only ever "
        "install the CUDA 12.1 build, so on a ROCm machine torch imports but sees no GPU "
        "(`torch.cuda.is_available()` is False). PyTorch's ROCm wheels carry `+rocmX.Y` "
        "labels instead."
    ),
    example="--extra-index-url https://download.pytorch.org/whl/cu121\ntorch==2.3.0+cu121",
    instead="--index-url https://download.pytorch.org/whl/rocm6.4\ntorch==2.3.0+rocm6.4",
    fix=(
        "For torch, torchvision and torchaudio, replace the label with the ROCm one of the "
        "index you install from (`+rocm6.4`); for other packages, drop the label and install "
        "the package's ROCm build (see the package rules)."
    ),
    mechanical=True,
    references=(PEP440_LOCAL, PYTORCH_ROCM_DOCS),
    # The label follows a "+" (written, or %2B in a wheel URL's file name).
    needles=("+", "%2B", "%2b"),
)


def cuda_local_version(requirement: Requirement, context: Context) -> Iterator[DependencyHit]:
    """GP101: a version pinned to a CUDA build by its local label (``+cu121``)."""
    label = requirement.local_version
    if not is_cuda_label(label):
        return
    shown = spelled(requirement)
    place = Place.of_requirement(context.source, requirement, "local-version")
    if requirement.url:
        target = (
            f"`{requirement.name}==<version>+{context.label}` from {context.torch_index}"
            if requirement.key in TORCH_FAMILY
            else f"the ROCm build of {requirement.name or 'the package'}"
        )
        yield unconverted(
            CUDA_LOCAL_VERSION,
            place,
            f"{requirement.url} is a CUDA build (+{label}) of {requirement.name or 'a package'}"
            f"; on ROCm install {target} instead",
            f"Replace the wheel URL with {target}.",
        )
        return
    if requirement.key in TORCH_FAMILY:
        new_label = context.label
        after = f"+{new_label}"
        yield replacing(
            CUDA_LOCAL_VERSION,
            place,
            f"{shown} pins the CUDA build (+{label}) of {requirement.name}; on ROCm pin the "
            f"ROCm build instead: `{spelled_after(requirement, f'+{label}', after)}` from "
            f"{context.torch_index}",
            f"Replace +{label} with {after} and install from {context.torch_index}. "
            f"{requirement.name} releases are built only for the ROCm versions current at "
            "their release: if pip finds no such build, move to a newer version.",
            ((f"+{label}", after),),
            review=with_stale_hashes(
                requirement,
                f"check that {requirement.name} {bare_version(requirement)} was built for "
                f"{new_label} ({context.torch_index})",
            ),
        )
        return
    after_text = spelled_after(requirement, f"+{label}", "")
    package = find_package(requirement.key) if requirement.key else None
    then = (
        f"{package.instead.rstrip('.')}."
        if package is not None
        else f"Then install the ROCm build of {requirement.name}."
    )
    yield replacing(
        CUDA_LOCAL_VERSION,
        place,
        f"{shown} pins a CUDA build (+{label}) of {requirement.name}; drop the label: "
        f"`{after_text}`. {then}",
        f"Remove +{label} from the version and install the package's ROCm build.",
        ((f"+{label}", ""),),
        review=with_stale_hashes(
            requirement,
            f"{requirement.name} {bare_version(requirement)} must now come from a ROCm build",
        ),
    )


VERSION_BEFORE_ROCM_SUPPORT = rule(
    id="GP112",
    slug="version-before-rocm-support",
    category=Category.DEPENDENCIES,
    severity=Severity.MEDIUM,
    confidence=Confidence.MEDIUM,
    summary="Pinned version is older than the package's first ROCm-capable release",
    what=(
        "Finds requirements whose version constraint allows only releases older than the "
        "first one that works on ROCm from its ordinary channel (the knowledge base's "
        "`rocm_min_version`, e.g. bitsandbytes 0.50)."
    ),
    why=(
        "The package itself works on ROCm, but not the pinned release: it installs, then "
        "fails at import or at its first GPU call, or silently runs without GPU kernels."
    ),
    example="bitsandbytes==0.43.3",
    instead="bitsandbytes>=0.50",
    fix="Raise the pin to the first ROCm-capable release or newer, and test the upgrade.",
    mechanical=False,
    # The names of the packages with a first ROCm-capable release, in any spelling (PEP 503).
    needles=kb_package_needles(lambda p: bool(p.rocm_min_version)),
)


def version_before_rocm_support(
    requirement: Requirement, context: Context
) -> Iterator[DependencyHit]:
    """GP112: the constraint admits only releases older than the first ROCm-capable one."""
    found = known_package(requirement)
    if found is None:
        return
    package, _ = found
    if not package.rocm_min_version or not requirement.specifier:
        return
    from packaging.version import InvalidVersion, Version  # where a version is read (40 ms)

    allowed = allowed_versions(requirement)
    try:
        first = Version(package.rocm_min_version)
    except InvalidVersion:
        return
    if allowed is None:
        return  # a form gpuport does not read: say nothing rather than guess
    # Too old when no release from the first ROCm-capable one on is allowed: try that release,
    # a far-future one, and every version the constraint itself names at or above it.
    named = (Version(m) for m in re.findall(r"\d+(?:\.\d+)*", str(allowed)))
    candidates = [first, Version("99999"), *(v for v in named if v >= first)]
    if any(allowed.contains(v, prereleases=True) for v in candidates):
        return
    yield unconverted(
        VERSION_BEFORE_ROCM_SUPPORT,
        Place.of_requirement(context.source, requirement, "package"),
        f"{spelled(requirement)} allows only releases older than {package.rocm_min_version}, "
        f"the first {requirement.name} release that works on ROCm. "
        f"{package.instead.rstrip('.')}.",
        f"Require {requirement.name}>={package.rocm_min_version} and test the upgrade.",
        confidence=confidence_of(package.confidence),
    )


TORCH_BOUND_BELOW_ROCM = rule(
    id="GP115",
    slug="torch-bound-below-rocm-wheels",
    category=Category.DEPENDENCIES,
    severity=Severity.MEDIUM,
    confidence=Confidence.MEDIUM,
    summary="torch upper bound excludes the releases the newest ROCm PyTorch indexes serve",
    what=(
        "Finds a torch requirement with an upper bound (`torch>=2.4,<2.11`, `~=2.9.0`, "
        "`<=2.10`) that allows no torch release the newest ROCm PyTorch index serves, as the "
        "knowledge base lists them (kb/platform.toml `[pytorch_rocm.releases]`). Exact pins "
        "(`==`) are left to the rules on pins."
    ),
    why=(
        "On a ROCm machine torch comes from PyTorch's ROCm index (`2.11.0+rocm7.2`). "
        "Installing a package whose metadata caps torch below that release makes pip replace "
        "the ROCm build with the newest allowed torch from PyPI, which on Linux is a CUDA "
        "build: the environment silently loses its GPU."
    ),
    example='dependencies = ["torch>=2.4.0,<2.11.0"]',
    instead='dependencies = ["torch>=2.4.0"]  # or a cap above the newest ROCm wheel',
    fix=(
        "Raise or drop the torch upper bound; to stay on an older torch, install it from the "
        "ROCm index that serves it before installing the package."
    ),
    mechanical=False,
    references=(PYTORCH_ROCM_DOCS, "https://github.com/unslothai/unsloth/pull/7278"),
    needles=("torch",),
)

_UPPER_BOUND_RE = re.compile(r"<|~=|\^|~(?!=)")


def torch_bound_below_rocm_wheels(
    requirement: Requirement, context: Context
) -> Iterator[DependencyHit]:
    """GP115: the torch constraint's upper bound leaves out the newest ROCm index's releases."""
    if requirement.key != "torch" or not _UPPER_BOUND_RE.search(requirement.specifier):
        return
    allowed = allowed_versions(requirement)
    if allowed is None:
        return
    releases = torch_rocm_releases()
    from packaging.version import Version  # where a version is read (about 40 ms)

    def admits(release: str) -> bool:
        return any(
            allowed.contains(Version(f"{release}.{patch}"), prereleases=True) for patch in range(10)
        )

    newest_rocm = max((rocm for rocms in releases.values() for rocm in rocms), key=_version_tuple)
    if any(admits(r) for r, rocms in releases.items() if newest_rocm in rocms):
        return
    newest_allowed = max((r for r in releases if admits(r)), key=_version_tuple, default="")
    floor = _version_tuple(newest_allowed) if newest_allowed else ()
    # The ROCm versions left out above the cap: every release their index serves is newer.
    excluded = sorted(
        {
            rocm
            for rocms in releases.values()
            for rocm in rocms
            if all(_version_tuple(r) > floor for r, served in releases.items() if rocm in served)
        },
        key=_version_tuple,
    )
    below = (
        f"the newest torch it allows with a ROCm wheel is {newest_allowed} "
        f"(ROCm {', '.join(releases[newest_allowed])})"
        if newest_allowed
        else "it allows no torch release that has ROCm wheels"
    )
    yield unconverted(
        TORCH_BOUND_BELOW_ROCM,
        Place.of_requirement(context.source, requirement, "package"),
        f"{spelled(requirement)} excludes every torch on the ROCm {', '.join(excluded)} "
        f"PyTorch indexes; {below}. Installing it where a newer ROCm torch is installed "
        "makes pip replace that torch with PyPI's, a CUDA build",
        "Raise the torch upper bound to include the ROCm wheels your users install, or drop it.",
    )


def _version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split(".") if part.isdigit())
