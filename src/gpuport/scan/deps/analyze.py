"""The dependency scanner: one walk over a file's records dispatching to the enabled rules' checks.

:func:`analyze` is the public entry point the port uses; the scanner registered here turns its
hits into findings, with the input problems the readers met.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path, PurePosixPath

from gpuport import kb
from gpuport.files import FileKind, ProjectFile, SourceText, classify
from gpuport.findings import Finding, SkipKind, Skipped
from gpuport.read_policy import ReadRefused, read_within
from gpuport.rules import NeedleSet, Rule, prefilter
from gpuport.scan.base import scanner
from gpuport.scan.deps.build_inputs import (
    COMPUTED_REQUIREMENTS,
    TORCH_BUILD_REQUIREMENT,
    computed_requirements,
    torch_build_requirement,
)
from gpuport.scan.deps.conda import (
    CONDA_CUDA_PACKAGE,
    CONDA_NVIDIA_CHANNEL,
    conda_cuda_package,
    conda_nvidia_channel,
)
from gpuport.scan.deps.context import Context
from gpuport.scan.deps.hits import DependencyHit
from gpuport.scan.deps.indexes import (
    CUDA_PIP_INDEX,
    ROCM_INDEX_AS_EXTRA,
    TORCH_WITHOUT_INDEX,
    TORCH_WITHOUT_INDEX_EVIDENCE,
    cuda_pip_index,
    rocm_index_as_extra,
    torch_without_index,
)
from gpuport.scan.deps.knowledge import known_package, on_linux
from gpuport.scan.deps.packages import (
    CUDA_RUNTIME_WHEEL,
    NEEDS_ROCM_BUILD,
    NO_ROCM_BUILD,
    PARTIAL_ROCM_SUPPORT,
    ROCM_PACKAGE_REPLACEMENT,
    cuda_runtime_wheel,
    needs_rocm_build,
    no_rocm_build,
    partial_rocm_support,
    rocm_package_replacement,
)
from gpuport.scan.deps.pins import (
    CUDA_LOCAL_VERSION,
    TORCH_BOUND_BELOW_ROCM,
    VERSION_BEFORE_ROCM_SUPPORT,
    cuda_local_version,
    torch_bound_below_rocm_wheels,
    version_before_rocm_support,
)
from gpuport.syntax.dependencies import (
    ComputedList,
    CondaPackage,
    DependencyFile,
    FileFormat,
    IndexSource,
    Requirement,
)
from gpuport.syntax.requirements import parse_requirements
from gpuport.syntax.setuppy import parse_setup_py

# Each kind of record, and the checks that read it, in the order they run (GP111's message names
# the first evidence it finds, so the order is part of the output).
REQUIREMENT_CHECKS: tuple[
    tuple[Rule, Callable[[Requirement, Context], Iterable[DependencyHit]]], ...
] = (
    (CUDA_LOCAL_VERSION, cuda_local_version),
    (VERSION_BEFORE_ROCM_SUPPORT, version_before_rocm_support),
    (CUDA_RUNTIME_WHEEL, cuda_runtime_wheel),
    (NO_ROCM_BUILD, no_rocm_build),
    (PARTIAL_ROCM_SUPPORT, partial_rocm_support),
    (ROCM_PACKAGE_REPLACEMENT, rocm_package_replacement),
    (NEEDS_ROCM_BUILD, needs_rocm_build),
    (TORCH_BUILD_REQUIREMENT, torch_build_requirement),
    (TORCH_BOUND_BELOW_ROCM, torch_bound_below_rocm_wheels),
)
INDEX_CHECKS: tuple[tuple[Rule, Callable[[IndexSource, Context], Iterable[DependencyHit]]], ...] = (
    (CUDA_PIP_INDEX, cuda_pip_index),
    (ROCM_INDEX_AS_EXTRA, rocm_index_as_extra),
    (CONDA_NVIDIA_CHANNEL, conda_nvidia_channel),
)
CONDA_CHECKS: tuple[
    tuple[Rule, Callable[[CondaPackage, Context], Iterable[DependencyHit]]], ...
] = (
    (CONDA_CUDA_PACKAGE, conda_cuda_package),
    (NO_ROCM_BUILD, no_rocm_build),
    (PARTIAL_ROCM_SUPPORT, partial_rocm_support),
    (NEEDS_ROCM_BUILD, needs_rocm_build),
)

# Every dependency rule, by id.
DEPENDENCY_RULES: dict[str, Rule] = {
    r.id: r for checks in (REQUIREMENT_CHECKS, INDEX_CHECKS, CONDA_CHECKS) for r, _ in checks
} | {TORCH_WITHOUT_INDEX.id: TORCH_WITHOUT_INDEX, COMPUTED_REQUIREMENTS.id: COMPUTED_REQUIREMENTS}


def analyze(
    dep: DependencyFile,
    rocm_version: str = kb.DEFAULT_ROCM_VERSION,
    enabled: frozenset[str] | None = None,
    own: frozenset[str] = frozenset(),
) -> list[DependencyHit]:
    """Every hit of the ``enabled`` rules (all when None) on the records written in ``dep``.

    Included files give context only: their own records are analysed on their own. Sorted by
    line, column and rule. Requirements on the project itself (``own``: normalized names, and
    the name ``dep`` gives its project), such as ``unsloth[huggingface]`` in unsloth's own
    extras, are not third-party dependencies and are left alone; so are its companion packages,
    those the knowledge base files under the project's own entry (``unsloth-zoo`` under
    ``unsloth``, :func:`_own_family`).
    """
    own = own | own_names((dep.project_name,))
    wanted = set(DEPENDENCY_RULES) if enabled is None else enabled & set(DEPENDENCY_RULES)
    run = set(wanted)
    if TORCH_WITHOUT_INDEX.id in wanted:
        run |= TORCH_WITHOUT_INDEX_EVIDENCE  # GP111 needs to know what else fires
    context = Context.of(dep, rocm_version)
    hits: list[DependencyHit] = []
    requirement_checks = [c for c in REQUIREMENT_CHECKS if c[0].id in run]
    for requirement in dep.requirements:
        if on_linux(requirement) and not _own_family(requirement, own):
            for _, check in requirement_checks:
                hits.extend(check(requirement, context))
    index_checks = [c for c in INDEX_CHECKS if c[0].id in run]
    for index in dep.indexes:
        for _, index_check in index_checks:
            hits.extend(index_check(index, context))
    conda_checks = [c for c in CONDA_CHECKS if c[0].id in run]
    for package in dep.conda_packages:
        for _, conda_check in conda_checks:
            hits.extend(conda_check(package, context))
    if TORCH_WITHOUT_INDEX.id in wanted:
        hits.extend(torch_without_index(context, hits, REQUIREMENT_CHECKS))
    if COMPUTED_REQUIREMENTS.id in wanted:
        hits.extend(computed_requirements(context))
    kept = [h for h in hits if h.rule.id in wanted]
    kept.sort(key=lambda h: (h.line, h.column, h.rule.id))
    return kept


def _own_family(requirement: Requirement, own: frozenset[str]) -> bool:
    """The requirement names the project itself, or a package the knowledge base files under
    the project's own entry (an entry whose import names are the project's): a companion
    such as ``unsloth-zoo``, which unsloth's entry covers. What that entry says about ROCm is
    what the scan of the project itself works out; as a dependency it is no separate work."""
    if own_name(requirement.key) in own:
        return True
    found = known_package(requirement) if own else None
    return found is not None and any(own_name(n) in own for n in found[0].import_names)


def own_name(name: str) -> str:
    """A distribution or import name in one spelling: ``Flash-Attn`` and ``flash_attn`` match."""
    return name.lower().replace("-", "_").replace(".", "_")


def own_names(names: Iterable[str]) -> frozenset[str]:
    """The project's own names (import names from ProjectFacts, its declared name) compared
    with requirement names."""
    return frozenset(own_name(name) for name in names if name)


# ---------------------------------------------------------------------------------------------
# The scanner


def parse_source(source: SourceText) -> DependencyFile:
    """Parse one dependency file by its kind; includes are read relative to it.

    The readers of TOML, setup.cfg and conda's YAML are imported for the first file that
    needs them: a tree of Python files with a setup.py never loads them (PyYAML alone is
    about 10 ms of every start-up, benchmarks/results/python_vs_bandit.md)."""
    rel = source.file.rel
    text = source.text
    kind = source.file.kind
    if kind is FileKind.REQUIREMENTS:
        return parse_requirements(text, rel, read=_reader(source.file))
    if kind is FileKind.SETUP_PY:
        return parse_setup_py(text, rel)
    if kind is FileKind.PYPROJECT:
        from gpuport.syntax.pyproject import parse_pyproject

        return parse_pyproject(text, rel)
    if kind is FileKind.SETUP_CFG:
        from gpuport.syntax.setuppy import parse_setup_cfg

        return parse_setup_cfg(text, rel)
    if kind is FileKind.CONDA_ENV:
        from gpuport.syntax.conda import parse_conda_env

        return parse_conda_env(text, rel, read=_reader(source.file))
    if kind is FileKind.PIPFILE:
        from gpuport.syntax.pipfile import parse_pipfile

        return parse_pipfile(text, rel)
    return DependencyFile(rel, FileFormat.PIP, text)


_INCLUDE_MAX_BYTES = 8 * 1024 * 1024


def _reader(file: ProjectFile) -> Callable[[str], str | None]:
    """Read included files by their path relative to the scan root, never outside it.

    An include that leads out of the root (``-r /proc/self/environ``, ``-r ../../etc/passwd``, a
    link out), that is not a regular file, or that is over the size cap raises
    :class:`~gpuport.read_policy.ReadRefused`, which the include line reports; a missing file
    is None.
    """
    root = file.root

    def read(target: str) -> str | None:
        try:
            data = read_within(root, root / target, _INCLUDE_MAX_BYTES)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise ReadRefused(SkipKind.UNREADABLE, f"{exc.strerror or exc}; not read") from None
        return data.decode("utf-8", "replace")

    return read


def _scanned_on_its_own(path: str, root: Path) -> bool:
    """Whether the walk finds ``path`` by its name (so its own scan reports what is in it)."""
    # The walk passes the folder's name too (`requirements/base.txt`), the root's included.
    return classify(PurePosixPath(path).name, (root / path).parent.name) is not None


def unlisted_includes(dep: DependencyFile, root: Path) -> list[DependencyFile]:
    """Files reached through ``-r``/``-c`` whose names the walk does not recognise, once each.

    Nothing else scans them (``common/base.txt``, ``pins/gpu.txt``), so the files that include
    them report their findings; files outside the scan root are left alone.
    """
    out: list[DependencyFile] = []
    seen = {dep.path}
    for other in dep.walk():
        posix = PurePosixPath(other.path)
        if other.path in seen or posix.is_absolute() or ".." in posix.parts:
            continue
        seen.add(other.path)
        if not _scanned_on_its_own(other.path, root):
            out.append(other)
    return out


def _checked_elsewhere(computed: ComputedList, rel: str, root: Path) -> bool:
    """Every file the computed list's code reads is a requirements file the walk scans on its
    own (DeepSpeed's fetch_requirements('requirements/requirements.txt')): its dependencies
    are checked there, so the list is not a gap."""
    if not computed.reads:
        return False
    folder = PurePosixPath(rel).parent
    for read in computed.reads:
        path = folder / read
        if ".." in path.parts or path.is_absolute():
            return False
        if not (root / path).is_file() or not _scanned_on_its_own(str(path), root):
            return False
    return True


def _own_problems(dep: DependencyFile, root: Path) -> Iterable[Skipped]:
    """Problems of this file, and of included files that are not scanned on their own."""
    yield from dep.problems
    for other in dep.walk():
        if other is dep:
            continue
        if _scanned_on_its_own(other.path, root):
            continue
        yield from other.problems


# The kinds of file the dependency scanner reads.
DEPENDENCY_KINDS = (
    FileKind.REQUIREMENTS,
    FileKind.PYPROJECT,
    FileKind.SETUP_PY,
    FileKind.SETUP_CFG,
    FileKind.CONDA_ENV,
    FileKind.PIPFILE,
)


# A requirements file (or a conda environment's pip section) that includes another with -r/-c
# (--requirement, --constraint) must be read whatever its own text holds: a rule may fire there.
_INCLUDE_WORDS = ("-r", "-c")


@functools.lru_cache(maxsize=64)
def _enabled_rules(enabled: frozenset[str]) -> tuple[tuple[Rule, ...], NeedleSet | None]:
    """The enabled dependency rules, and the words a file needs for one of them to fire (their
    needles, or an include); None when one of them may fire anywhere."""
    rules = tuple(r for r in DEPENDENCY_RULES.values() if r.id in enabled)
    words = prefilter(rules)
    return rules, None if words is None else NeedleSet((*words, *_INCLUDE_WORDS))


@scanner(*DEPENDENCY_KINDS, name="dependencies")
def scan_dependencies(source: SourceText, enabled: frozenset[str]) -> Iterator[Finding | Skipped]:
    """Findings GP101-GP114 for one dependency file, and the input problems met reading it.

    Every file is read, so that what makes it unreadable is reported whichever rules are
    enabled; the rules look at a file only when one of their needles, or an include, is in it.
    """
    rules, needles = _enabled_rules(enabled)
    if not rules:
        return
    dep = parse_source(source)
    seen: set[Skipped] = set()
    root = source.file.root
    read_elsewhere = [c for c in dep.computed if _checked_elsewhere(c, source.file.rel, root)]
    dropped = {id(c.problem) for c in read_elsewhere}
    # GP114 reports a computed dependency list as a finding; its input problem would repeat it.
    told = {id(c.problem) for c in dep.computed} if COMPUTED_REQUIREMENTS in rules else set()
    told |= dropped
    dep.computed = [c for c in dep.computed if id(c.problem) not in dropped]
    for problem in _own_problems(dep, root):
        if problem not in seen and id(problem) not in told:
            seen.add(problem)
            yield problem
    if needles is not None and not needles.found_in(source.text):
        return  # no enabled rule can fire here
    own = own_names(source.facts.first_party)
    hits = analyze(dep, enabled=enabled, own=own)
    for other in unlisted_includes(dep, root):
        hits.extend(analyze(other, enabled=enabled, own=own))
    for hit in hits:
        yield hit.finding()
