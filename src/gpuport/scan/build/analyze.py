"""The build rules over whole files: CMake, Makefiles, shell scripts, and the words of others.

Each public function runs the rules that can fire in the text (see
:class:`~gpuport.scan.build.common.RuleRun`) and returns their hits; ``enabled`` None means
every rule, as ``gpuport port`` wants. The scanners registered here turn hits into findings.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace

from gpuport import kb
from gpuport.edits import Hit, hits_to_findings
from gpuport.files import FileKind, SourceText
from gpuport.findings import Finding, SkipKind, Skipped
from gpuport.scan.base import ScanOutput, scanner
from gpuport.scan.build.branches import cuda_only_spans
from gpuport.scan.build.cmake import (
    CMAKE_CUDA_SETTINGS,
    CMAKE_RULES,
    CMAKE_STEERING,
    cmake_hits,
)
from gpuport.scan.build.commands import WORD_RULES, WORD_STEERING, command_hits
from gpuport.scan.build.common import BuildContext, RuleRun, once_per_file, prefiltered_findings
from gpuport.scan.build.shell_branches import shell_cuda_only_spans
from gpuport.scan.build.words import (
    CUDA_GPU_ARCHITECTURES,
    CUDA_TOOLKIT_PATH,
    NVCC_ONLY_FLAGS,
    EnvArchSetting,
    cuda_gpu_architectures,
    cuda_toolkit_path,
)
from gpuport.syntax.cmake import CMakeCommand, CMakeProblem, cmake_commands
from gpuport.syntax.shell import Word, shell_commands
from gpuport.syntax.text import LineIndex

# The AMD GPU targets written where a CUDA architecture list was (kb/platform.toml [defaults]).
# A person should narrow this to their own GPUs (`rocminfo | grep gfx`); every edit that writes
# it is marked for review.
DEFAULT_OFFLOAD_ARCHS = kb.DEFAULT_OFFLOAD_ARCHS
BUILD_RULES = (*CMAKE_RULES, *WORD_RULES)
_MORE_ON_LINE_RE = re.compile(r" \(and \d+ more on this line\)$")


def analyze_cmake(
    text: str,
    offload_archs: tuple[str, ...] = DEFAULT_OFFLOAD_ARCHS,
    enabled: frozenset[str] | None = None,
) -> tuple[list[Hit], CMakeProblem | None]:
    """GP5xx hits in a CMake file, and the syntax problem that stopped reading, if any."""
    commands, problem = cmake_commands(text)
    return analyze_cmake_commands(text, commands, offload_archs, enabled), problem


def analyze_cmake_commands(
    text: str,
    commands: Sequence[CMakeCommand],
    offload_archs: tuple[str, ...] = DEFAULT_OFFLOAD_ARCHS,
    enabled: frozenset[str] | None = None,
) -> list[Hit]:
    """GP5xx hits in the (already read) commands of a CMake file."""
    run = RuleRun(text, BUILD_RULES, enabled, CMAKE_STEERING | WORD_STEERING)
    if not run.anything():
        return []
    ctx = BuildContext(run, "cmake", offload_archs, commands=commands, index=LineIndex(text))
    cmake_hits(ctx)
    spans = cuda_only_spans(commands)
    if spans:  # the CUDA branches beside a ROCm branch: not porting work
        run.hits = [h for h in run.hits if not any(a <= h.start < b for a, b in spans)]
    return run.result()


def analyze_makefile(
    text: str,
    offload_archs: tuple[str, ...] = DEFAULT_OFFLOAD_ARCHS,
    enabled: frozenset[str] | None = None,
) -> list[Hit]:
    """GP5xx hits in a Makefile: variable values and recipe lines alike."""
    return _command_words_hits(text, "make", offload_archs, enabled, heredocs=False)


def analyze_shell_build(
    text: str,
    offload_archs: tuple[str, ...] = DEFAULT_OFFLOAD_ARCHS,
    enabled: frozenset[str] | None = None,
) -> list[Hit]:
    """GP5xx hits in a shell script."""
    return _command_words_hits(text, "shell", offload_archs, enabled, heredocs=True)


def _command_words_hits(
    text: str,
    kind: str,
    offload_archs: tuple[str, ...],
    enabled: frozenset[str] | None,
    *,
    heredocs: bool,
) -> list[Hit]:
    """The word rules over the shell commands of ``text``, read only if a rule can fire."""
    words = BuildWords(text, kind, offload_archs, enabled)
    if not words.runs:
        return words.hits()
    commands = shell_commands(text, heredocs=heredocs)
    words.commands(commands)
    hits = words.hits()
    spans = shell_cuda_only_spans(commands, text) if kind == "shell" else []
    if spans:  # the CUDA branches beside a ROCm branch: not porting work
        hits = [h for h in hits if not any(a <= h.start < b for a, b in spans)]
    return hits


class BuildWords:
    """The build rules' hits in the shell words and environment settings of one file.

    For files of other kinds that run build steps: Dockerfile RUN lines, CI steps (``kind``
    'docker' or 'shell'), container environments.
    """

    def __init__(
        self,
        text: str,
        kind: str,
        offload_archs: tuple[str, ...] = DEFAULT_OFFLOAD_ARCHS,
        enabled: frozenset[str] | None = None,
    ) -> None:
        self._run = RuleRun(text, WORD_RULES, enabled, WORD_STEERING)
        self._ctx = BuildContext(self._run, kind, offload_archs)
        self._runs: bool | None = None

    @property
    def runs(self) -> bool:
        """Whether any word rule can fire in the file."""
        if self._runs is None:
            self._runs = self._run.anything()
        return self._runs

    def commands(self, commands: Iterable[Sequence[Word]]) -> None:
        if self.runs:
            command_hits(self._ctx, commands)

    def env_setting(
        self,
        name: str,
        name_span: tuple[int, int],
        value_span: tuple[int, int],
        *,
        quote: str = '"',
    ) -> None:
        """One environment variable setting (Dockerfile ENV, compose, Kubernetes).

        ``value_span`` is the value's raw span; an architecture list there is replaced by the
        gfx targets wrapped in ``quote``.
        """
        ctx, run = self._ctx, self._run
        if run.runs(CUDA_GPU_ARCHITECTURES):
            cuda_gpu_architectures(ctx, EnvArchSetting(name, name_span, value_span, quote))
        if run.runs(CUDA_TOOLKIT_PATH):
            cuda_toolkit_path(ctx, *name_span)
            cuda_toolkit_path(ctx, *value_span)

    def hits(self) -> list[Hit]:
        return self._run.result()


def _problem_skip(source: SourceText, problem: CMakeProblem) -> Skipped:
    line, _ = LineIndex(source.text).position(problem.offset)
    return Skipped(
        source.file.rel,
        SkipKind.SYNTAX,
        f"CMake syntax error ({problem.reason}); the rest of the file was not read",
        line,
        partial=True,
    )


def _settings_beside_nvcc_options(findings: Iterable[Finding]) -> list[Finding]:
    """GP506 on a line whose nvcc-only option GP509 reports is told by that GP509 finding.

    ``set(CMAKE_CUDA_FLAGS "${CMAKE_CUDA_FLAGS} --expt-relaxed-constexpr")`` is one edit of one
    line (what the HIP build passes instead), not two decisions; the port still renames the
    variable (it reads the hits).
    """
    found = list(findings)
    nvcc = {f.location.line for f in found if f.rule_id == NVCC_ONLY_FLAGS.id}
    beside = {
        f.location.line: f
        for f in found
        if f.rule_id == CMAKE_CUDA_SETTINGS.id and f.location.line in nvcc
    }
    if not beside:
        return found
    kept: list[Finding] = []
    for finding in found:
        setting = beside.get(finding.location.line)
        if setting is not None and finding.rule_id == CMAKE_CUDA_SETTINGS.id:
            continue
        if setting is not None and finding.rule_id == NVCC_ONLY_FLAGS.id:
            told = _MORE_ON_LINE_RE.sub("", setting.message)
            finding = replace(finding, message=f"{finding.message}; {told}")
        kept.append(finding)
    return kept


@scanner(FileKind.CMAKE, name="cmake")
def scan_cmake(source: SourceText, enabled: frozenset[str]) -> ScanOutput:
    # Read even where no rule can fire: a syntax error is reported whatever the rules.
    hits, problem = analyze_cmake(source.text, enabled=enabled)
    findings = _settings_beside_nvcc_options(hits_to_findings(source.file.rel, source.text, hits))
    yield from once_per_file(findings)
    if problem is not None:
        yield _problem_skip(source, problem)


@scanner(FileKind.MAKEFILE, name="makefile")
def scan_makefile(source: SourceText, enabled: frozenset[str]) -> ScanOutput:
    return prefiltered_findings(source, enabled, WORD_RULES, analyze_makefile)


@scanner(FileKind.SHELL, name="shell-build")
def scan_shell_build(source: SourceText, enabled: frozenset[str]) -> ScanOutput:
    return prefiltered_findings(source, enabled, WORD_RULES, analyze_shell_build)
