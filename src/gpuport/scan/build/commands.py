"""The walk over shell-like commands: each word goes to the build rules that can fire on it.

Words come from shell scripts, Makefiles ('make'), Dockerfile RUN lines ('docker'), CI steps
('shell') and CMake arguments ('cmake'). Assignments, the program word and option values are
told apart here; the rules decide what is wrong.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

from gpuport.scan.build.common import BuildContext
from gpuport.scan.build.words import (
    CUDA_GPU_ARCHITECTURES,
    CUDA_LINK_LIBRARIES,
    CUDA_TOOLKIT_PATH,
    ENV_ARCH_VARIABLES,
    NVCC_COMPILER,
    NVCC_ONLY_FLAGS,
    NVCC_WORD_RE,
    ArchAssignment,
    ArchOption,
    LinkOption,
    MakeArchAssignment,
    cuda_gpu_architectures,
    cuda_link_libraries,
    cuda_toolkit_path,
    nvcc_compiler,
    nvcc_only_flags,
)
from gpuport.syntax.shell import ASSIGNMENT_RE, Word, program_index, program_name, split_word

_MAKE_ASSIGNMENT_OPERATORS = frozenset({"=", ":=", "::=", "?=", "+="})

WORD_RULES = (
    CUDA_GPU_ARCHITECTURES,
    NVCC_COMPILER,
    NVCC_ONLY_FLAGS,
    CUDA_LINK_LIBRARIES,
    CUDA_TOOLKIT_PATH,
)
# Options read by these rules take their values with them: they run whenever they can fire.
WORD_STEERING = frozenset({CUDA_GPU_ARCHITECTURES.id, NVCC_ONLY_FLAGS.id})


class _Running(NamedTuple):
    """Which word rules run on the file, asked once per batch of commands."""

    arch: bool
    nvcc: bool
    flags: bool
    link: bool
    paths: bool


def command_hits(ctx: BuildContext, commands: Iterable[Sequence[Word]]) -> None:
    """The word rules' hits in ``commands`` (each a list of shell-like words)."""
    run = ctx.run
    running = _Running(
        run.runs(CUDA_GPU_ARCHITECTURES),
        run.runs(NVCC_COMPILER),
        run.runs(NVCC_ONLY_FLAGS),
        run.runs(CUDA_LINK_LIBRARIES),
        run.runs(CUDA_TOOLKIT_PATH),
    )
    if any(running):
        for words in commands:
            _command(ctx, running, list(words))


def _command(ctx: BuildContext, running: _Running, words: list[Word]) -> None:
    if not words:
        return
    if ctx.kind != "cmake" and running.paths:  # CMake reads paths per argument
        for word in words:
            cuda_toolkit_path(ctx, word.start, word.end)
    prog_index = program_index(words)
    prog = program_name(words)
    if prog in ("echo", "printf", "message"):
        return
    # Spellings that other tools share (gzip --keep) count only where nvcc is in play: an nvcc
    # command, a $(NVCC) recipe, a CMake string, or a variable named for nvcc or CUDA.
    head = words[0].text.upper()
    is_nvcc_command = (
        prog == "nvcc"
        or ctx.kind == "cmake"
        or (prog_index is not None and "NVCC" in words[prog_index].text.upper())
        or (ctx.kind == "make" and ("NVCC" in head or "CUDA" in head or "CU_" in head))
    )
    nvcc = running.nvcc
    expanded: list[Word] = []
    assigns = prog_index is None or prog in ("export", "declare", "local", "readonly", "typeset")
    for index, word in enumerate(words):
        is_assignment = assigns or (prog_index is not None and index < prog_index)
        if ctx.kind in ("shell", "docker") and is_assignment and ASSIGNMENT_RE.match(word.text):
            name = word.text.split("=", 1)[0].rstrip("+")
            if nvcc:
                nvcc_compiler(ctx, word, assigned=True)
            if name in ENV_ARCH_VARIABLES:
                if running.arch:
                    cuda_gpu_architectures(ctx, ArchAssignment(word, name))
                continue
            pieces = split_word(ctx.text, word)
            if len(pieces) > 1:
                nvcc_variable = "NVCC" in name.upper() or "CUDA" in name.upper()
                _options(ctx, running, pieces[1:], nvcc_variable)
            continue
        if (
            ctx.kind == "make"
            and word.text in ENV_ARCH_VARIABLES
            and index + 2 < len(words)
            and words[index + 1].text in _MAKE_ASSIGNMENT_OPERATORS
        ):  # the rest of the line is the variable's value
            if running.arch:
                cuda_gpu_architectures(ctx, MakeArchAssignment(word, words[index + 2 :]))
            break
        if (
            (index == prog_index and NVCC_WORD_RE.search(word.text))
            or (ctx.kind == "make" and NVCC_WORD_RE.search(word.text.lstrip("@-+")))
            or (
                ctx.kind in ("shell", "docker")
                and prog in ("which", "type")
                and word.text == "nvcc"
            )
        ):
            if nvcc:
                nvcc_compiler(ctx, word)
            continue
        expanded.extend(split_word(ctx.text, word) if ctx.kind == "cmake" else [word])
    _options(ctx, running, expanded, is_nvcc_command)


def _options(ctx: BuildContext, running: _Running, words: list[Word], nvcc_context: bool) -> None:
    """Architecture options, nvcc-only options and -l options in one command's words."""
    arch, flags, link = running.arch, running.flags, running.link
    ctx.first_arch_flag = True
    make = ctx.kind == "make"
    i = 0
    while i < len(words):
        # Only options (they start with '-', every nvcc spelling in the knowledge base does)
        # are read here, and in Makefiles NAME=value settings, which only GP504 reads.
        if not words[i].text.startswith("-"):
            consumed = cuda_gpu_architectures(ctx, ArchOption(words, i)) if arch and make else 0
            i += consumed or 1
            continue
        consumed = cuda_gpu_architectures(ctx, ArchOption(words, i)) if arch else 0
        if not consumed:
            consumed = nvcc_only_flags(ctx, words, i, nvcc_context) if flags else 0
            if not consumed and link:
                cuda_link_libraries(ctx, LinkOption(words[i]))
        i += consumed or 1
