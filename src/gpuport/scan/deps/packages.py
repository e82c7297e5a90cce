"""Dependency rules about packages: no ROCm build (GP104), another name (GP105), a build from
elsewhere (GP106), partial support (GP107), CUDA runtime wheels (GP108).

Each reads the knowledge base's entry for the package (``kb/packages.toml``); GP104, GP106 and
GP107 also check conda packages by their names, where GP109 does not speak for them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from gpuport import kb
from gpuport.findings import Category, Confidence, Severity
from gpuport.rules import rule
from gpuport.scan.deps.context import Context, checked_as_conda_cuda, spelled, with_stale_hashes
from gpuport.scan.deps.hits import (
    DependencyHit,
    Place,
    commenting_out,
    replacing,
    unconverted,
)
from gpuport.scan.deps.knowledge import (
    confidence_of,
    cuda_index,
    find_package,
    is_central,
    is_cuda_label,
    kb_package_needles,
    known_package,
    normal_url,
    template_regex,
)
from gpuport.syntax.dependencies import CondaPackage, Form, IndexRole, Requirement
from gpuport.syntax.pep508 import normalize


def _status(record: Requirement | CondaPackage, context: Context) -> _Known | None:
    """The knowledge base's entry for a requirement or a conda package the rules below check."""
    if isinstance(record, CondaPackage):
        if checked_as_conda_cuda(record, context):
            return None
        entry = find_package(record.name)
        return None if entry is None else _Known(entry, (), record, context)
    found = known_package(record)
    return None if found is None else _Known(found[0], found[1], record, context)


def _with_status(
    record: Requirement | CondaPackage, context: Context, status: kb.PackageStatus
) -> _Known | None:
    """The knowledge base's entry for the record, when its package has ``status``."""
    known = _status(record, context)
    return known if known is not None and known.package.status is status else None


def _status_needles(status: kb.PackageStatus) -> tuple[str, ...]:
    """The needles of a rule about the packages with ``status``: their names, any spelling."""
    return kb_package_needles(lambda p: p.status is status)


@dataclass(frozen=True, slots=True)
class _Known:
    package: kb.Package
    cuda_extras: tuple[str, ...]  # the extras of the requirement that select CUDA builds
    record: Requirement | CondaPackage
    context: Context

    @property
    def shown(self) -> str:
        """The record as the user wrote it."""
        if isinstance(self.record, CondaPackage):
            return f"conda {self.record.text}"
        return spelled(self.record)

    @property
    def place(self) -> Place:
        if isinstance(self.record, CondaPackage):
            return Place.of_conda(self.context.source, self.record, "conda")
        return Place.of_requirement(self.context.source, self.record, "package")

    @property
    def instead(self) -> str:
        return self.package.instead.rstrip(".")

    @property
    def confidence(self) -> Confidence:
        return confidence_of(self.package.confidence)


NO_ROCM_BUILD = rule(
    id="GP104",
    slug="no-rocm-build",
    category=Category.DEPENDENCIES,
    severity=Severity.HIGH,
    confidence=Confidence.HIGH,
    summary="Package has no ROCm build",
    what=(
        "Finds dependencies that gpuport's knowledge base lists as not supported on ROCm: "
        "TensorRT, TensorRT-LLM, pycuda, NVIDIA DALI, RAPIDS and the like. The severity is "
        "blocker when the package is an engine the project is built around (an inference "
        "engine, a serving stack, a framework, an attention kernel, a compiler), high otherwise."
    ),
    why=(
        "There is no build of the package for AMD GPUs, so it either fails to install, fails "
        "to load, or finds no GPU. The code that uses it has to move to another library."
    ),
    example="tensorrt==10.0.1",
    instead="onnxruntime-migraphx  # and run the ONNX model with MIGraphXExecutionProvider",
    fix=(
        "Replace the package with the alternative the message names and port the code that "
        "uses it; gpuport cannot do this for you."
    ),
    mechanical=False,
    references=("https://rocm.docs.amd.com/en/latest/compatibility/compatibility-matrix.html",),
    # The names of the packages it reads: any case, any separators (PEP 503).
    needles=_status_needles(kb.PackageStatus.NOT_SUPPORTED),
)


def no_rocm_build(record: Requirement | CondaPackage, context: Context) -> Iterator[DependencyHit]:
    """GP104: the package has no ROCm build at all."""
    known = _with_status(record, context, kb.PackageStatus.NOT_SUPPORTED)
    if known is None:
        return
    package = known.package
    severity = Severity.BLOCKER if is_central(package) else Severity.HIGH
    if isinstance(record, CondaPackage):
        message = f"{known.shown} has no ROCm build. {known.instead}."
        fix = known.instead + "."
    else:
        alternative = f" (for example {package.rocm_package})" if package.rocm_package else ""
        message = f"{known.shown} has no ROCm build{alternative}. {known.instead}."
        fix = f"Replace {record.name} and port the code that uses it: {known.instead}."
    yield unconverted(
        NO_ROCM_BUILD, known.place, message, fix, severity=severity, confidence=known.confidence
    )


ROCM_PACKAGE_REPLACEMENT = rule(
    id="GP105",
    slug="rocm-package-replacement",
    category=Category.DEPENDENCIES,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="Package or extra selects a CUDA build; a ROCm build is published under another name",
    what=(
        "Finds requirements whose CUDA build has a ROCm counterpart under another name or "
        "extra: `cupy-cuda12x` (CuPy's ROCm wheels are `cupy-rocm-*`), `onnxruntime-gpu`, "
        "`tensorflow[and-cuda]`, `jax[cuda12]`, `jax-cuda12-plugin`, `torch-scatter`..."
    ),
    why=(
        "The CUDA wheel installs on an AMD machine but finds no CUDA driver, so the package "
        "falls back to the CPU or fails at import. Its ROCm build has a different name."
    ),
    example="cupy-cuda12x>=13\nonnxruntime-gpu==1.18.0",
    instead="cupy-rocm-7-0\nonnxruntime-migraphx",
    fix=(
        "Replace the requirement name with the ROCm package the message names (and drop the "
        "CUDA extra); check that the version constraint exists for it."
    ),
    mechanical=True,
    references=(
        "https://docs.cupy.dev/en/stable/install.html#using-cupy-on-amd-gpu-experimental",
        "https://onnxruntime.ai/docs/execution-providers/MIGraphX-ExecutionProvider.html",
    ),
    # The names of the packages it reads (a CUDA build, or a CUDA extra), in any spelling.
    needles=kb_package_needles(
        lambda p: (
            p.status is kb.PackageStatus.NEEDS_ROCM_BUILD
            or (p.status is kb.PackageStatus.WORKS and bool(p.cuda_extras))
        )
    ),
)


def rocm_package_replacement(
    record: Requirement | CondaPackage, context: Context
) -> Iterator[DependencyHit]:
    """GP105: a CUDA build whose ROCm build has another name, or a CUDA-selecting extra."""
    if isinstance(record, CondaPackage):
        return
    known = _status(record, context)
    if known is None:
        return
    package, cuda_extras = known.package, known.cuda_extras
    if package.status is kb.PackageStatus.WORKS:
        if not cuda_extras:
            return
    elif package.status is not kb.PackageStatus.NEEDS_ROCM_BUILD:
        return
    if not (package.rocm_package or cuda_extras):
        return
    requirement = record
    kept_extras = [e for e in requirement.extras if e not in cuda_extras]
    new_name = package.rocm_package or requirement.name
    new_head = new_name + (f"[{','.join(kept_extras)}]" if kept_extras else "")
    written_head = _written_head(requirement)
    mechanical = bool(package.rocm_package) and written_head is not None
    if requirement.form is Form.TABLE and requirement.extras:
        mechanical = False  # Poetry/Pipfile extras live in an inline table: edit by hand
    new_text = (
        requirement.text.replace(written_head, new_head, 1)
        if written_head and requirement.text
        else f"{new_head}{requirement.specifier}"
    )
    if requirement.form is Form.TABLE:
        new_text = f'{new_name} = "{requirement.specifier or "*"}"'
    if not mechanical or not written_head:
        extras = ", ".join(f"[{e}]" for e in cuda_extras)
        what = f"the {extras} extra of {requirement.name}" if cuda_extras else requirement.name
        yield unconverted(
            ROCM_PACKAGE_REPLACEMENT,
            known.place,
            f"{known.shown}: {what} selects the CUDA build. {known.instead}.",
            known.instead + ".",
            confidence=known.confidence,
        )
        return
    review = ""
    if requirement.specifier:
        specifier = requirement.specifier.strip()
        if is_cuda_label(requirement.local_version):
            specifier = specifier.replace(f"+{requirement.local_version}", "")
        review = (
            f"check that {new_name} has a release matching {specifier} "
            f"(its versions need not follow {requirement.name}'s)"
        )
    yield replacing(
        ROCM_PACKAGE_REPLACEMENT,
        known.place,
        f"{known.shown} is the CUDA build; on ROCm use {new_name}: "
        f"`{new_text.split(';')[0].strip()}`",
        f"Replace {written_head} with {new_head}. {known.instead}.",
        ((written_head, new_head),),
        review=with_stale_hashes(requirement, review),
        confidence=known.confidence,
    )


def _written_head(requirement: Requirement) -> str | None:
    """``name[extras]`` exactly as written, so that a rewriter can replace it in place."""
    if requirement.form is Form.TABLE:
        return requirement.name if not requirement.extras else None
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?", requirement.text)
    if not match or normalize(match.group(1)) != requirement.key:
        return None
    return match.group(0).strip()


NEEDS_ROCM_BUILD = rule(
    id="GP106",
    slug="needs-rocm-build",
    category=Category.DEPENDENCIES,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="Package's PyPI build targets CUDA; the ROCm build comes from elsewhere",
    what=(
        "Finds dependencies whose ROCm build is not on PyPI under the same name: it comes "
        "from another index, a fork, an image, or a source build (flash-attn, vllm, "
        "deepspeed ops, mamba-ssm, xformers...)."
    ),
    why=(
        "`pip install` of these packages on a ROCm machine gets a CUDA wheel, or tries to "
        "build CUDA sources, and fails or runs without the GPU."
    ),
    example="flash-attn==2.6.3",
    instead="# build flash-attn from source on a ROCm torch (GPU_ARCHS=gfx942), or use torch SDPA",
    fix="Follow the install path the message gives (index, fork, image or source build).",
    mechanical=False,
    references=(
        "https://rocm.docs.amd.com/en/latest/how-to/rocm-for-ai/inference-optimization/"
        "model-acceleration-libraries.html",
    ),
    # The names of the packages it reads, in any spelling (PEP 503).
    needles=_status_needles(kb.PackageStatus.NEEDS_ROCM_BUILD),
)


def needs_rocm_build(
    record: Requirement | CondaPackage, context: Context
) -> Iterator[DependencyHit]:
    """GP106: the package's ROCm build comes from another index, a fork or a source build."""
    known = _with_status(record, context, kb.PackageStatus.NEEDS_ROCM_BUILD)
    if known is None:
        return
    package = known.package
    if isinstance(record, CondaPackage):
        message = f"{known.shown} is a CUDA build. {known.instead}."
        fix = known.instead + "."
    elif package.rocm_package or known.cuda_extras:
        return  # GP105 names the ROCm package
    elif package.rocm_index:
        if _index_available(package, context):
            return
        rocm_index = package.index_for(context.rocm_version) or package.rocm_index
        message = (
            f"{known.shown} from PyPI is a CUDA build; install {record.name} from "
            f"{rocm_index}. {known.instead}."
        )
        fix = f"Install {record.name} from {rocm_index}."
    else:
        message = f"{known.shown} needs a ROCm build from outside PyPI. {known.instead}."
        fix = known.instead + "."
    yield unconverted(NEEDS_ROCM_BUILD, known.place, message, fix, confidence=known.confidence)


def _index_available(package: kb.Package, context: Context) -> bool:
    """Whether the file (after gpuport's index rewrite) already names the package's ROCm index."""
    if not package.rocm_index:
        return False
    pattern = template_regex(package.rocm_index)
    for index in context.indexes:
        if index.role is IndexRole.CHANNEL:
            continue
        url = normal_url(index.url)
        replaced = cuda_index(index.url, context.rocm_version)
        if pattern.fullmatch(url) or (
            replaced
            and replaced.replacement
            and pattern.fullmatch(normal_url(replaced.replacement))
        ):
            return True
    return False


PARTIAL_ROCM_SUPPORT = rule(
    id="GP107",
    slug="partial-rocm-support",
    category=Category.DEPENDENCIES,
    severity=Severity.MEDIUM,
    confidence=Confidence.MEDIUM,
    summary="Package supports ROCm only in part",
    what=(
        "Finds dependencies that work on ROCm with limits: some kernels, GPUs or features "
        "only, an experimental backend, or a legacy path (flash-attn-3, flashinfer, autoawq...). "
        "A package whose CPU path works anywhere and whose GPU path is asked for by a "
        "parameter (xgboost's `device='cuda'`) is left to GP201, which reports the import "
        "in code that asks for the GPU."
    ),
    why=(
        "The project may install and import fine and then fail, or fall back to slow paths, "
        "on the features it actually uses."
    ),
    example="flashinfer-python==0.2.0",
    instead="# check the features you use against the package's ROCm notes",
    fix="Read the package's ROCm notes in the message and test the features the project uses.",
    mechanical=False,
    # The names of the packages it reads, in any spelling (PEP 503).
    needles=_status_needles(kb.PackageStatus.PARTIAL),
)


def partial_rocm_support(
    record: Requirement | CondaPackage, context: Context
) -> Iterator[DependencyHit]:
    """GP107: the package works on ROCm with limits."""
    known = _with_status(record, context, kb.PackageStatus.PARTIAL)
    if known is None or known.package.gpu_words:
        # A package whose CPU path works anywhere and whose GPU path a parameter asks for
        # (xgboost): installing it is no porting work; GP201 reports the code that asks.
        return
    yield unconverted(
        PARTIAL_ROCM_SUPPORT,
        known.place,
        f"{known.shown} supports ROCm only in part. {known.instead}.",
        known.instead + ".",
        confidence=known.confidence,
    )


CUDA_RUNTIME_WHEEL = rule(
    id="GP108",
    slug="cuda-runtime-wheel",
    category=Category.DEPENDENCIES,
    severity=Severity.LOW,
    confidence=Confidence.HIGH,
    summary="NVIDIA CUDA runtime wheel pinned as a dependency",
    what=(
        "Finds `nvidia-*` runtime wheels (`nvidia-cublas-cu12`, `nvidia-cudnn-cu12`, "
        "`nvidia-nccl-cu12`...), `cuda-toolkit`, `pytorch-triton` and other packages the "
        "knowledge base marks as CUDA-only artifacts."
    ),
    why=(
        "They are CUDA torch's transitive dependencies, usually frozen into a lock file. On "
        "ROCm nothing loads them: they cost gigabytes of download, and their pins can clash "
        "with the ROCm torch's own requirements."
    ),
    example="nvidia-cudnn-cu12==8.9.2.26",
    instead="# nvidia-cudnn-cu12==8.9.2.26  (not needed on ROCm)",
    fix="Remove the requirement; `gpuport port` comments it out with a note.",
    mechanical=True,
    references=("https://pypi.org/project/nvidia-cuda-runtime-cu12/",),
    # The names of the packages it reads, in any spelling (PEP 503).
    needles=_status_needles(kb.PackageStatus.NOT_APPLICABLE),
)


def cuda_runtime_wheel(
    record: Requirement | CondaPackage, context: Context
) -> Iterator[DependencyHit]:
    """GP108: a CUDA-only artifact (nvidia-* runtime wheels...): commented out by the port."""
    if isinstance(record, CondaPackage):
        return
    known = _with_status(record, context, kb.PackageStatus.NOT_APPLICABLE)
    if known is None:
        return
    yield commenting_out(
        CUDA_RUNTIME_WHEEL,
        known.place,
        f"{known.shown} is a CUDA-only artifact, not needed on ROCm. {known.instead}.",
        f"Remove {record.name}; `gpuport port` comments it out with a note.",
        "not needed on ROCm (CUDA-only package; ROCm torch brings its own libraries)",
        confidence=known.confidence,
    )
