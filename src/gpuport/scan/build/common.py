"""What the build rules share and no rule owns: which rule functions run, and edit helpers.

A file's analysis runs a rule's function only where the rule can fire (its needles are in the
text) and is enabled, or where the rule *steers* others: its function decides how the words
around it are read (an option consumes its value) or which hit carries a shared edit. Steering
rules run whenever their needles are there, and their hits are dropped at the end when they
are not enabled, so that the hits of the enabled rules never depend on which others are on.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from gpuport import kb
from gpuport.edits import ChangeStatus, Hit, TextEdit, hits_to_findings
from gpuport.files import SourceText
from gpuport.findings import Finding
from gpuport.rules import NeedleSet, Rule, needles_of
from gpuport.scan.base import ScanOutput
from gpuport.syntax.cmake import CMakeCommand
from gpuport.syntax.text import LineIndex

_PREFILTERS: dict[tuple[int, frozenset[str]], tuple[Sequence[Rule], NeedleSet | None]] = {}


def may_fire(text: str, rules: Sequence[Rule], enabled: frozenset[str]) -> bool:
    """Whether any enabled rule among ``rules`` can fire in ``text`` (their needles are there)."""
    key = (id(rules), enabled)  # a scanner passes the same tuple of rules for every file
    cached = _PREFILTERS.get(key)
    if cached is None or cached[0] is not rules:
        cached = _PREFILTERS[key] = (rules, NeedleSet.of(r for r in rules if r.id in enabled))
    needles = cached[1]
    return needles is None or needles.found_in(text)


class Analysis(Protocol):
    """A file analysis: the text's hits of the ``enabled`` rules (None: every rule)."""

    def __call__(self, text: str, *, enabled: frozenset[str] | None = None) -> list[Hit]: ...


# Rules whose sites in one file are one decision (where the toolkit lives, which GPUs to build
# for, where system packages come from, which CUDA-language settings a CMake file carries over
# to HIP, which of its .cu sources it marks as HIP): the scan tells each once per file, with the
# other lines; `gpuport port` still edits every site (it reads the hits, not these findings).
PER_FILE_RULES = frozenset({"GP404", "GP504", "GP506", "GP507", "GP511"})


def once_per_file(findings: Iterable[Finding]) -> Iterator[Finding]:
    """``findings`` with those of :data:`PER_FILE_RULES` folded into their first, whose
    message names the other lines. The folded line is mechanical only when every site is: one
    site that needs a person makes the decision need one."""
    kept: list[Finding] = []
    later: dict[str, list[int]] = {}
    first: dict[str, int] = {}
    manual: set[str] = set()
    for finding in findings:
        rule_id = finding.rule_id
        if rule_id not in PER_FILE_RULES:
            kept.append(finding)
            continue
        if rule_id in first:
            later[rule_id].append(finding.location.line)
        else:
            first[rule_id] = len(kept)
            later[rule_id] = []
            kept.append(finding)
        if finding.fix is None or not finding.fix.mechanical:
            manual.add(rule_id)
    for rule_id, position in first.items():
        lines = later[rule_id]
        if lines:
            shown = ", ".join(str(n) for n in lines[:8]) + (", …" if len(lines) > 8 else "")
            finding = kept[position]
            fix = finding.fix
            if rule_id in manual and fix is not None and fix.mechanical:
                fix = replace(fix, mechanical=False)
            kept[position] = replace(
                finding,
                message=f"{finding.message} (and {len(lines)} more in this file: line {shown})",
                fix=fix,
            )
    yield from kept


def prefiltered_findings(
    source: SourceText, enabled: frozenset[str], rules: Sequence[Rule], analysis: Analysis
) -> ScanOutput:
    """A scanner's findings: those of ``analysis``, unless no enabled rule among ``rules`` can
    fire in the file (then it is not read)."""
    if not may_fire(source.text, rules, enabled):
        return
    hits = analysis(source.text, enabled=enabled)
    yield from once_per_file(hits_to_findings(source.file.rel, source.text, hits))


class RuleRun:
    """The hits of one file's analysis, and which rule functions run on it.

    ``enabled`` None: every rule. ``steering``: rules that run whenever they can fire, enabled
    or not (see the module's docstring). Whether a rule runs is decided the first time a walk
    asks, so rules no walk reaches in a file never have their needles looked for.
    """

    __slots__ = ("_decided", "_lowered", "_nothing", "enabled", "hits", "rules", "steering", "text")

    def __init__(
        self,
        text: str,
        rules: Sequence[Rule],
        enabled: frozenset[str] | None = None,
        steering: frozenset[str] = frozenset(),
    ) -> None:
        self.text = text
        self.rules = rules
        self.enabled = enabled
        self.steering = steering
        self.hits: list[Hit] = []
        self._decided: dict[str, bool] = {}
        self._lowered: str | None = None
        # No enabled rule among them: nothing to find, so nothing to steer either.
        self._nothing = enabled is not None and not any(r.id in enabled for r in rules)

    def _lower(self) -> str:  # once per file, and only when a rule's needles need it
        if self._lowered is None:
            self._lowered = self.text.lower()
        return self._lowered

    def runs(self, rule: Rule) -> bool:
        """Whether ``rule``'s function runs on this file."""
        decided = self._decided.get(rule.id)
        if decided is None:
            enabled = self.enabled
            decided = self._decided[rule.id] = (
                not self._nothing
                and (enabled is None or rule.id in enabled or rule.id in self.steering)
                and (not rule.needles or needles_of(rule).found_in(self.text, self._lower))
            )
        return decided

    def anything(self) -> bool:
        """Whether any of the rules runs on this file."""
        return not self._nothing and any(self.runs(r) for r in self.rules)

    def result(self) -> list[Hit]:
        """The hits of the enabled rules, in the order they were found."""
        if self.enabled is None:
            return self.hits
        return [h for h in self.hits if h.rule.id in self.enabled]


@dataclass(slots=True)
class BuildContext:
    """One file's analysis: the rules' run, where the words come from, the GPU targets to write.

    ``kind`` is 'shell', 'make', 'docker' or 'cmake'. The CMake fields are facts of the whole
    file (what it finds, which sources are HIP already) and the ROCm packages the port's edits
    need, shared by the rules that link libraries.
    """

    run: RuleRun
    kind: str
    offload_archs: tuple[str, ...]
    first_arch_flag: bool = True  # within one command: only the first arch flag is replaced
    commands: Sequence[CMakeCommand] = ()
    index: LineIndex | None = None
    found_packages: set[str] = field(default_factory=set)  # lower case
    toolkit_command: CMakeCommand | None = None  # the find_package(CUDAToolkit) of the file
    hip_sources: set[str] = field(default_factory=set)  # sources already compiled as HIP
    needed_packages: dict[str, int] = field(default_factory=dict)  # package -> index of its hit
    first_use: dict[str, int] = field(default_factory=dict)  # package -> offset of first user
    uses_cuda_language: bool = False  # GP501 found the CUDA language (it then checks the version)

    @property
    def text(self) -> str:
        return self.run.text

    def add(self, hit: Hit) -> None:
        self.run.hits.append(hit)

    def need_package(self, package: str, command: CMakeCommand) -> None:
        """The hit just added links a target of ``package``, which the file must find."""
        self.needed_packages.setdefault(package, len(self.run.hits) - 1)
        self.first_use.setdefault(package, command.start)


def delete_span(text: str, start: int, end: int) -> TextEdit:
    """An edit removing ``text[start:end]`` and the blanks before it on the same line.

    When nothing but blanks and a trailing line continuation would be left on the line, the
    whole line goes, so that a continued command stays well formed.
    """
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    before = text[line_start:start]
    after = text[end:line_end].strip()
    previous_continues = text[: max(line_start - 1, 0)].rstrip(" \t\r").endswith("\\")
    if not before.strip() and (after == "\\" or (not after and not previous_continues)):
        return TextEdit(line_start, min(line_end + 1, len(text)), "")
    if not before.strip() and not after:  # last piece of a continued line: join it back
        backslash = text.rfind("\\", 0, line_start)
        while backslash > 0 and text[backslash - 1] in " \t":
            backslash -= 1
        return TextEdit(backslash, end, "")
    cut = start
    while cut > line_start and text[cut - 1] in " \t":
        cut -= 1
    if cut == line_start:  # first thing on its line: eat the blanks after it instead
        tail = end
        while tail < line_end and text[tail] in " \t":
            tail += 1
        return TextEdit(start, tail, "")
    return TextEdit(cut, end, "")


def offload_flags(archs: Sequence[str]) -> str:
    """hipcc's flags for the AMD GPU targets ``archs``."""
    return " ".join(f"--offload-arch={arch}" for arch in archs)


def arch_note(archs: Sequence[str]) -> str:
    """The review note of every edit that writes GPU targets."""
    return (
        f"wrote {', '.join(archs)}; set the gfx targets of the GPUs you run on "
        "(rocminfo | grep gfx)"
    )


def library_replacement(
    text: str, library: kb.CudaLibrary, start: int, end: int, form: str
) -> tuple[ChangeStatus, tuple[TextEdit, ...], str]:
    """How the port replaces a CUDA library reference (``form``: 'link' or 'cmake')."""
    status_of = {
        kb.LibraryStatus.EQUIVALENT: ChangeStatus.CONVERTED,
        kb.LibraryStatus.PARTIAL: ChangeStatus.NEEDS_REVIEW,
    }
    notes = library.notes or f"{library.name} -> {library.amd_counterpart}"
    if library.status is kb.LibraryStatus.NOT_NEEDED and not (
        library.amd_link_names or library.amd_cmake_targets
    ):
        return ChangeStatus.CONVERTED, (delete_span(text, start, end),), ""
    # The first name is the library itself; the others are what it builds on, which the
    # linker pulls in through it.
    if form == "link":
        names = library.amd_link_names[:1]
        replacement = " ".join(f"-l{n}" for n in names)
    else:
        names = (library.amd_cmake_targets or library.amd_link_names)[:1]
        replacement = " ".join(names)
    if library.status in status_of and names:
        status = status_of[library.status]
        return (
            status,
            (TextEdit(start, end, replacement),),
            notes if status is not ChangeStatus.CONVERTED else "",
        )
    if library.status is kb.LibraryStatus.NOT_NEEDED and names:
        return ChangeStatus.CONVERTED, (TextEdit(start, end, replacement),), ""
    reason = {
        kb.LibraryStatus.DIFFERENT_API: f"{library.amd_counterpart} has a different API: the code needs porting first",
        kb.LibraryStatus.NONE: f"ROCm has no counterpart to {library.name}",
    }.get(library.status, f"no ROCm library name recorded for {library.name}")
    return ChangeStatus.UNCONVERTED, (), f"{reason}. {library.notes}".strip()
