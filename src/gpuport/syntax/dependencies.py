"""What a dependency file declares: the records every dependency reader produces.

Each reader in ``gpuport.syntax`` (``requirements``, ``pyproject``, ``pipfile``, ``conda``,
``setuppy``) turns one file's text into a :class:`DependencyFile`: requirement records with the
line they were written on, the package indexes and channels the file names, and the input
problems met on the way (as :class:`~gpuport.findings.Skipped`, never exceptions). Nothing is
executed: ``setup.py`` is read with :mod:`ast`, and includes are read only through the
``read`` callback the caller passes in. The dependency scanner and the port's rewriter share
these records.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace

from gpuport.findings import SkipKind, Skipped
from gpuport.syntax.pep508 import normalize, parse_requirement_string

# Reads an included file by its path relative to the scan root; None when it does not exist,
# gpuport.read_policy.ReadRefused when it may not be read (outside the root, not regular, huge).
Reader = Callable[[str], str | None]


class IndexRole(enum.StrEnum):
    """How an index takes part in resolution; decides whether PyPI's CUDA wheel can win."""

    PRIMARY = "primary"  # replaces PyPI, or is searched first and wins (pip -i, uv, Poetry primary)
    EXTRA = "extra"  # searched beside PyPI; the highest version wins (pip --extra-index-url)
    FIND_LINKS = "find-links"  # a page of links searched beside the indexes
    NAMED = "named"  # used only by requirements that name it (uv/Poetry explicit, Pipenv)
    CHANNEL = "channel"  # a conda channel


class FileFormat(enum.StrEnum):
    """The syntax a dependency file is written in, which decides how a line is commented out."""

    PIP = "pip"  # requirements and constraints files
    TOML = "toml"  # pyproject.toml, Pipfile
    YAML = "yaml"  # conda environment files
    PYTHON = "python"  # setup.py
    INI = "ini"  # setup.cfg


class Form(enum.StrEnum):
    """How a requirement is written, which decides how a rewriter may edit it."""

    PEP508 = "pep508"  # one requirement string: a requirements line, an array item, a literal
    TABLE = "table"  # `name = "version"` or `name = {...}` in a TOML table (Poetry, Pipfile)


@dataclass(frozen=True, slots=True)
class Requirement:
    """One declared dependency, where it was written and what it asks for."""

    name: str  # as written ("" when a URL or path names no package)
    key: str  # PEP 503 normalized name
    extras: tuple[str, ...]
    specifier: str  # version constraint as written ("==2.3.0+cu121", Poetry's "^2.3"); "" if none
    marker: str  # environment marker as written; "" if none
    url: str  # direct reference, VCS URL or local path; "" if none
    path: str  # file it was declared in, relative to the scan root
    line: int  # 1-based line of the requirement text
    end_line: int
    column: int  # 1-based column where the requirement starts; 0 when unknown
    section: str  # "requirements", "project.dependencies", "tool.poetry.dependencies", ...
    form: Form = Form.PEP508
    text: str = ""  # the requirement string as written (PEP 508 forms only)
    editable: bool = False
    hashes: tuple[str, ...] = ()
    index: str = ""  # name of the index/source this requirement is tied to (uv, Poetry, Pipenv)
    local_version: str = ""  # local label of a pinned version: "cu121" in "==2.3.0+cu121"


@dataclass(frozen=True, slots=True)
class IndexSource:
    """A package index, find-links page or conda channel that a file names."""

    url: str
    role: IndexRole
    path: str
    line: int
    column: int = 0
    option: str = ""  # as written: "--extra-index-url", "-i", "url", "channels", "dependency_links"
    name: str = ""  # the source's name (Poetry, uv, PDM, Pipenv)


@dataclass(frozen=True, slots=True)
class CondaPackage:
    """A conda (not pip) dependency of an environment file."""

    name: str  # lower case
    spec: str  # everything after the name, as written ("=12.1", ">=2.1,<2.2=*cuda*")
    channel: str  # "nvidia" in "nvidia::cuda-toolkit"; "" when none
    build: str  # build string ("py3.11_cuda12.1_cudnn8.9.2_0"); "" when none
    text: str
    path: str
    line: int
    column: int


@dataclass(frozen=True, slots=True)
class Include:
    """A ``-r``/``-c`` line and the file it names."""

    target: str  # as written
    resolved: str  # relative to the scan root
    constraint: bool
    path: str
    line: int


@dataclass(frozen=True, slots=True)
class CondaLayout:
    """Where an environment file's dependency list and ``pip:`` subsection sit (1-based lines)."""

    dependencies_line: int  # the `dependencies:` key
    last_item_line: int  # last line of the last dependency item (0 when the list is empty)
    item_column: int  # column of the items' dashes (1-based)
    pip_line: int = 0  # the `- pip:` item, 0 when there is none
    pip_last_line: int = 0  # last line of the last pip item
    pip_item_column: int = 0  # column of the pip items' dashes (1-based)


@dataclass(frozen=True, slots=True)
class ComputedList:
    """A dependency list a build script computes (``install_requires=read_reqs()``): never run,
    so never checked. ``reads`` are the file names its code mentions (requirements files)."""

    section: str  # "install_requires", "extras_require.dev"…
    shown: str  # the expression as written, shortened
    line: int
    column: int
    reads: tuple[str, ...] = ()
    problem: Skipped | None = (
        None  # the input problem that says the same, for readers without GP114
    )


@dataclass(slots=True)
class DependencyFile:
    """Everything one dependency file declares, with the files it includes."""

    path: str
    format: FileFormat
    text: str  # the file's text, which the records' lines and columns point into
    requirements: list[Requirement] = field(default_factory=list)
    indexes: list[IndexSource] = field(default_factory=list)
    conda_packages: list[CondaPackage] = field(default_factory=list)
    includes: list[Include] = field(default_factory=list)
    included: list[DependencyFile] = field(default_factory=list)
    problems: list[Skipped] = field(default_factory=list)
    no_index: bool = False  # pip's --no-index: only find-links pages are searched
    conda_layout: CondaLayout | None = None
    # The name this file gives its own project ([project] name, setup(name=...)).
    project_name: str = ""
    computed: list[ComputedList] = field(default_factory=list)  # lists it could not read

    def walk(self) -> Iterator[DependencyFile]:
        """This file and every file it includes, depth first."""
        yield self
        for child in self.included:
            yield from child.walk()

    def all_requirements(self) -> list[Requirement]:
        return [r for f in self.walk() for r in f.requirements]

    def all_indexes(self) -> list[IndexSource]:
        return [i for f in self.walk() for i in f.indexes]


# ---------------------------------------------------------------------------------------------
# Records from requirement strings


def make_requirement(
    text: str,
    *,
    path: str,
    line: int,
    section: str,
    end_line: int = 0,
    column: int = 0,
    editable: bool = False,
    hashes: tuple[str, ...] = (),
    index: str = "",
) -> Requirement:
    """A PEP 508 requirement record (raises ValueError for a malformed string)."""
    spec = parse_requirement_string(text)
    return Requirement(
        name=spec.name,
        key=normalize(spec.name),
        extras=spec.extras,
        specifier=spec.specifier,
        marker=spec.marker,
        url=spec.url,
        path=path,
        line=line,
        end_line=end_line or line,
        column=column,
        section=section,
        form=Form.PEP508,
        text=text.strip(),
        editable=editable,
        hashes=hashes,
        index=index,
        local_version=spec.local_version,
    )


def string_requirement(
    text: str, result: DependencyFile, line: int, column: int, section: str
) -> Requirement | None:
    """The record of a requirement string in ``section``, or None with the problem noted."""
    try:
        return make_requirement(text, path=result.path, line=line, column=column, section=section)
    except ValueError as exc:
        result.problems.append(
            Skipped(
                result.path,
                SkipKind.MALFORMED,
                f"{text!r} in {section} is not a valid requirement ({exc})",
                line,
                True,
            )
        )
        return None


def with_index(requirement: Requirement, index: str) -> Requirement:
    return replace(requirement, index=index)
