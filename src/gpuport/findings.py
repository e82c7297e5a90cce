"""The shared vocabulary of every stage: findings, locations, fixes and skipped inputs."""

from __future__ import annotations

import enum
import hashlib
from dataclasses import dataclass, field


class Severity(enum.IntEnum):
    """How much a finding matters for a move to ROCm, ordered so that comparisons work."""

    INFO = 0  # worth knowing; nothing breaks
    LOW = 1  # works, but slower or with a caveat
    MEDIUM = 2  # breaks or misbehaves until changed, usually a small edit
    HIGH = 3  # breaks; needs real porting work
    BLOCKER = 4  # no ROCm path today without replacing a component

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Severity:
        try:
            return cls[text.strip().upper()]
        except KeyError:
            choices = ", ".join(s.label for s in cls)
            raise ValueError(f"unknown severity {text!r} (choose from {choices})") from None


class Confidence(enum.IntEnum):
    """How sure the rule is that the code really has the problem."""

    LOW = 0
    MEDIUM = 1
    HIGH = 2

    @property
    def label(self) -> str:
        return self.name.lower()


class Category(enum.StrEnum):
    """Which part of a project a rule looks at; also the rule id's hundreds digit."""

    DEPENDENCIES = "dependencies"  # GP1xx
    PYTHON = "python"  # GP2xx
    KERNELS = "kernels"  # GP3xx: CUDA / C++ sources
    CONTAINERS = "containers"  # GP4xx: Docker, compose, Kubernetes, shell
    BUILD = "build"  # GP5xx: CMake, Makefiles, build scripts
    PROJECT = "project"  # GP6xx: the project as a whole (components its ROCm build leaves out)


class Tier(enum.StrEnum):
    """Which part of a project a file belongs to. Only product code drives the verdict and effort."""

    PRODUCT = "product"  # what the project ships and its users run
    TESTS = "tests"
    BENCHMARKS = "benchmarks"
    EXAMPLES = "examples"  # examples, tutorials, notebooks, recipes
    DOCS = "docs"
    CI = "ci"  # CI workflows and release tooling
    DEV = "dev"  # developer scripts and tools that do not ship
    DEPRECATED = "deprecated"  # legacy or deprecated code kept for old users
    VENDORED = "vendored"  # third-party code copied into the tree (third_party/, 3rdparty/)


@dataclass(frozen=True, slots=True, order=True)
class Location:
    """A place in a file. ``path`` is relative to the scan root, with forward slashes."""

    path: str
    line: int = 0  # 1-based; 0 means the whole file
    column: int = 0  # 1-based; 0 means the whole line
    end_line: int = 0
    end_column: int = 0

    def __str__(self) -> str:
        if self.line <= 0:
            return self.path
        if self.column <= 0:
            return f"{self.path}:{self.line}"
        return f"{self.path}:{self.line}:{self.column}"


@dataclass(frozen=True, slots=True)
class Fix:
    """What to do about a finding, and whether gpuport can do it for you (``gpuport port``)."""

    text: str
    mechanical: bool = False  # True: `gpuport port` applies it; False: needs a human's review
    replacement: str | None = None  # the exact new text, when there is one


@dataclass(frozen=True, slots=True)
class Excerpt:
    """A few lines of the scanned file around a finding, for reports."""

    start_line: int
    lines: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing that will break, or behave differently, on ROCm."""

    rule_id: str
    message: str
    location: Location
    severity: Severity
    confidence: Confidence
    category: Category
    fix: Fix | None = None
    references: tuple[str, ...] = ()
    excerpt: Excerpt | None = None
    tier: Tier = Tier.PRODUCT  # set by the project model after the scan

    @property
    def sort_key(self) -> tuple[str, int, int, str, str]:
        loc = self.location
        return (loc.path, loc.line, loc.column, self.rule_id, self.message)

    def fingerprint(self, line_text: str = "") -> str:
        """A location-tolerant identity for baselines: rule, file, and the stripped line text.

        Line numbers are left out so that a baseline survives edits above the finding.
        """
        basis = "\0".join((self.rule_id, self.location.path, " ".join(line_text.split())))
        return hashlib.sha256(basis.encode("utf-8", "surrogateescape")).hexdigest()[:24]


class SkipKind(enum.StrEnum):
    """Why a file was not (fully) analysed."""

    MISSING = "missing"
    UNREADABLE = "unreadable"
    BINARY = "binary"
    TOO_LARGE = "too-large"
    NOT_UTF8 = "not-utf8"  # analysed anyway, with replacement characters
    SYNTAX = "syntax-error"  # file read, but its own language could not be parsed
    MALFORMED = "malformed"  # TOML/YAML/requirements that do not parse
    SYMLINK_LOOP = "symlink-loop"
    OUTSIDE_ROOT = "outside-root"  # a symbolic link (or an include) that leads out of the root
    NOT_REGULAR = "not-regular"  # a FIFO, socket or device node with a source file's name
    PORT_ARTIFACT = "port-artifact"  # gpuport's own backup, journal or temporary file
    RULE_CRASH = "rule-crash"  # a bug in gpuport: reported, never swallowed


@dataclass(frozen=True, slots=True, order=True)
class Skipped:
    """Something that could not be analysed, or only in part; every format shows these."""

    path: str
    kind: SkipKind
    reason: str
    line: int = 0
    partial: bool = False  # True when the file was still analysed (e.g. decoded lossily)

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        verb = "partly analysed" if self.partial else "skipped"
        return f"{where}: {verb}: {self.reason}"


@dataclass(slots=True)
class ScanStats:
    files_seen: int = 0
    files_scanned: int = 0
    bytes_scanned: int = 0
    seconds: float = 0.0
    by_kind: dict[str, int] = field(default_factory=dict)


# The words a kernel finding's message carries when its asm statement uses an operand
# constraint of an NVPTX register class (scan/kernels/ptx.py): project triage keeps such a
# finding even inside a helper HIP never emits, since clang rejects the statement where it
# parses it (kb/ptx.toml [[constraint]]).
NVPTX_CONSTRAINT_MARK = (
    "its operand constraints are NVPTX register classes that HIP-Clang rejects wherever the "
    "statement is, even in a function nothing calls or a template never instantiated: guard it "
    "with #ifndef __HIP_PLATFORM_AMD__"
)


@dataclass(frozen=True, slots=True)
class DeviceHelper:
    """A ``__device__`` function defined in a CUDA file (scan/kernels/callers.py)."""

    name: str
    first: int  # its lines
    last: int
    calls: frozenset[str]  # the names its body holds in code ROCm compiles
    template: bool  # HIP compiles its body only when a call instantiates it
    inline: bool  # inline or static: HIP emits it only when something calls it
    host: bool  # also __host__: host code the index never reads may call it


@dataclass(frozen=True, slots=True)
class CallFacts:
    """One CUDA file's part of the project's device call index."""

    rel: str
    live: frozenset[str]  # identifiers in code a ROCm build compiles (outside device helpers)
    dead: frozenset[str]  # identifiers only in code a ROCm build never compiles
    helpers: tuple[DeviceHelper, ...]
    included: frozenset[str] = frozenset()  # the file names of the headers it includes
