"""Build rules found in shell-like words: nvcc, its options, libraries, architectures and paths.

The words come from shell scripts, Makefiles, Dockerfile RUN lines, CI steps and CMake
arguments; :mod:`gpuport.scan.build.commands` walks them and hands each to these rules. The
rules that read an option's value (GP504, GP509) say how many words they took. GP504, GP510 and
GP511 also fire in CMake commands and container environments (their sites say where).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from gpuport import kb
from gpuport.edits import ChangeStatus, Hit, TextEdit
from gpuport.findings import Category, Confidence, Severity
from gpuport.kb import build_tools
from gpuport.rules import case_variants, rule
from gpuport.scan.build.common import (
    BuildContext,
    arch_note,
    delete_span,
    library_replacement,
    offload_flags,
)
from gpuport.syntax.cmake import CMakeArg, CMakeCommand, assigned_values
from gpuport.syntax.shell import Word

_HIPCC_DOC = "https://rocm.docs.amd.com/projects/HIP/en/latest/understand/compilers.html"
_CLANG_HIP_DOC = "https://clang.llvm.org/docs/HIPSupport.html"

# What an nvcc word looks like: `nvcc`, `/usr/local/cuda/bin/nvcc`, `$(CUDA)/bin/nvcc.exe`.
NVCC_WORD_RE = re.compile(r"(?<![\w.-])nvcc(?:\.exe)?(?![\w.-])")
_MAKE_ASSIGNMENT_OPERATORS = frozenset({"=", ":=", "::=", "?=", "+="})


# ---------------------------------------------------------------------------------------------
# GP504


class ArchOption(NamedTuple):
    """``words[position]`` of a command, which may be an architecture option or -D definition."""

    words: Sequence[Word]
    position: int


class ArchAssignment(NamedTuple):
    """A shell word ``NAME=value`` assigning one of the architecture variables."""

    word: Word
    name: str


class MakeArchAssignment(NamedTuple):
    """``NAME := values`` in a Makefile, NAME being one of the architecture variables."""

    name: Word
    values: Sequence[Word]


class CMakeArchSettings(NamedTuple):
    """A CMake command, whose arguments may name architecture variables or properties."""

    command: CMakeCommand


class EnvArchSetting(NamedTuple):
    """An environment setting (Dockerfile ENV, compose, Kubernetes) as raw spans."""

    name: str
    name_span: tuple[int, int]
    value_span: tuple[int, int]
    quote: str


ArchSite = ArchOption | ArchAssignment | MakeArchAssignment | CMakeArchSettings | EnvArchSetting

_ARCH_FLAG_RE = re.compile(
    r"^(?P<flag>-arch|--gpu-architecture|-gencode|--generate-code|-code|--gpu-code)(?:=(?P<value>.*))?$"
)
_ARCH_VALUE_RE = re.compile(r"(?:sm|compute|lto)_\d+[a-z]?|native|all-major|all")
# The variables listing GPU architectures, and the name that takes each one's place (empty:
# none), as set in the environment or on a command line, and as CMake variables or properties.
ENV_ARCH_VARIABLES = {
    v.name: v.rocm_name for v in build_tools.arch_variables().values() if v.environment
}
_CMAKE_ARCH_VARIABLES = {
    v.name: v.rocm_name for v in build_tools.arch_variables().values() if v.cmake
}
_CUDA_ARCH_ASSIGN_RE = re.compile(
    r"^(?P<dash>-D)?(?P<name>" + "|".join(map(re.escape, ENV_ARCH_VARIABLES)) + ")"
    r"(?::[A-Z]+)?=(?P<value>.*)$"
)
_ARCH_IDENT_RE = re.compile(
    r"(?<![\w])(?P<name>" + "|".join(map(re.escape, _CMAKE_ARCH_VARIABLES)) + r")(?![\w])"
)

CUDA_GPU_ARCHITECTURES = rule(
    id="GP504",
    slug="cuda-gpu-architectures",
    category=Category.BUILD,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="The build targets NVIDIA GPU architectures",
    what=(
        "Finds NVIDIA architecture choices: `CMAKE_CUDA_ARCHITECTURES` and the "
        "`CUDA_ARCHITECTURES` property, nvcc's `-arch=sm_XX`, `-gencode arch=compute_XX,"
        "code=sm_XX`, `--generate-code` and `-code=`, and the `TORCH_CUDA_ARCH_LIST` and "
        "`CUDAARCHS` variables."
        " The scan tells a file's sites once, the first naming the other lines (one "
        "decision fixes them); `gpuport port` edits each."
    ),
    why=(
        "`sm_XX` and `compute_XX` name NVIDIA GPUs. AMD GPUs are named by `gfx` ids (gfx90a "
        "for MI200, gfx942 for MI300); code built without the right gfx id does not load "
        "(`hipErrorNoBinaryForGpu`)."
    ),
    example="nvcc -gencode arch=compute_80,code=sm_80 -c kernel.cu",
    instead="hipcc --offload-arch=gfx90a --offload-arch=gfx942 -c kernel.cu",
    fix=(
        "Name AMD targets: `--offload-arch=gfxNNN` for hipcc, `CMAKE_HIP_ARCHITECTURES` / "
        "`HIP_ARCHITECTURES` for CMake, `PYTORCH_ROCM_ARCH` for PyTorch extensions. Check the "
        "targets against your GPUs (`rocminfo | grep gfx`)."
    ),
    mechanical=True,
    references=(
        _HIPCC_DOC,
        "https://cmake.org/cmake/help/latest/variable/CMAKE_HIP_ARCHITECTURES.html",
        "https://rocm.docs.amd.com/en/latest/reference/gpu-arch-specs.html",
    ),
    # --gpu-architecture holds -arch, --generate-code holds -code; the variables' names.
    needles=(
        "-arch",
        "-gencode",
        "-code",
        "TORCH_CUDA_ARCH_LIST",
        "CUDA_ARCHITECTURES",
        "CUDAARCHS",
    ),
)


def cuda_gpu_architectures(ctx: BuildContext, site: ArchSite) -> int:
    """GP504 at one site; for an :class:`ArchOption`, how many words the option spans (0: none)."""
    text, archs = ctx.text, ctx.offload_archs
    targets = ";".join(archs)
    consumed = 0
    variable: tuple[Word, str, str | None] | None = None  # (word, name, "-D" or None)
    if isinstance(site, ArchOption):
        words, i = site.words, site.position
        word = words[i]
        flag = _ARCH_FLAG_RE.match(word.text)
        if flag:
            value = flag.group("value")
            span_end, consumed = word.end, 1
            if value is None and i + 1 < len(words):
                value, span_end, consumed = words[i + 1].text, words[i + 1].end, 2
            if value is not None and _ARCH_VALUE_RE.search(value):
                replace = ctx.first_arch_flag
                ctx.first_arch_flag = False
                found = sorted(set(_ARCH_VALUE_RE.findall(value)))
                edit = (
                    TextEdit(word.start, span_end, offload_flags(archs))
                    if replace
                    else delete_span(text, word.start, span_end)
                )
                ctx.add(
                    Hit(
                        CUDA_GPU_ARCHITECTURES,
                        word.start,
                        span_end,
                        f"nvcc architecture flag targets NVIDIA GPUs ({', '.join(found)})",
                        "build-arch",
                        ChangeStatus.NEEDS_REVIEW,
                        (edit,),
                        note=arch_note(archs),
                        fix=f"Use {offload_flags(archs)}.",
                        after=offload_flags(archs) if replace else "",
                    )
                )
                return consumed
        define = _CUDA_ARCH_ASSIGN_RE.match(word.text)
        if not (define and ctx.kind != "cmake" and (define.group("dash") or ctx.kind == "make")):
            return 0
        variable, consumed = (word, define.group("name"), define.group("dash")), 1
    elif isinstance(site, ArchAssignment):
        variable = (site.word, site.name, None)
    elif isinstance(site, MakeArchAssignment):
        name_word, values = site.name, site.values
        new_name = ENV_ARCH_VARIABLES[name_word.text]
        message = f"{name_word.text} lists NVIDIA GPU architectures"
        # A make value is used as written: PyTorch splits PYTORCH_ROCM_ARCH on blanks as well
        # as semicolons, and a blank-separated list needs no quoting in recipes; CMake needs ';'.
        written = " ".join(archs) if new_name == "PYTORCH_ROCM_ARCH" else f'"{targets}"'
        _arch_variable(
            ctx,
            (name_word.start, values[-1].end),
            message,
            new_name,
            (
                TextEdit(name_word.start, name_word.end, new_name),
                TextEdit(values[0].start, values[-1].end, written),
            ),
        )
        return 0
    elif isinstance(site, CMakeArchSettings):
        command = site.command
        for position, arg in enumerate(command.args):
            for match in _ARCH_IDENT_RE.finditer(text[arg.start : arg.end]):
                ident = match.group("name")
                start, end = arg.start + match.start(), arg.start + match.end()
                new_name = _CMAKE_ARCH_VARIABLES[ident]
                if not new_name:
                    ctx.add(
                        Hit(
                            CUDA_GPU_ARCHITECTURES,
                            start,
                            end,
                            f"{ident} lists NVIDIA GPU architectures",
                            "build-arch",
                            ChangeStatus.UNCONVERTED,
                            note="no HIP-side environment variable; set CMAKE_HIP_ARCHITECTURES",
                        )
                    )
                    continue
                edits = [TextEdit(start, end, new_name)]
                status, note = ChangeStatus.CONVERTED, ""
                set_values = assigned_values(command, position) if arg.value == ident else []
                if set_values:
                    edits.append(TextEdit(set_values[0].start, set_values[-1].end, f'"{targets}"'))
                    status, note = ChangeStatus.NEEDS_REVIEW, arch_note(archs)
                shown = ", ".join(v.value for v in set_values)
                ctx.add(
                    Hit(
                        CUDA_GPU_ARCHITECTURES,
                        start,
                        end,
                        f"{ident} selects NVIDIA GPU architectures"
                        + (f" ({shown})" if shown else ""),
                        "build-arch",
                        status,
                        tuple(edits),
                        note=note,
                        fix=f"Use {new_name} with gfx targets ({targets}).",
                        after=new_name,
                    )
                )
        return 0
    else:  # EnvArchSetting
        if site.name not in ENV_ARCH_VARIABLES:
            return 0
        new_name = ENV_ARCH_VARIABLES[site.name]
        (name_start, name_end), (value_start, value_end) = site.name_span, site.value_span
        _arch_variable(
            ctx,
            (name_start, name_end),
            f"{site.name} lists NVIDIA GPU architectures",
            new_name,
            (
                TextEdit(name_start, name_end, new_name),
                TextEdit(value_start, value_end, f"{site.quote}{targets}{site.quote}"),
            ),
            unconverted_note="CUDAARCHS has no HIP-side variable; set CMAKE_HIP_ARCHITECTURES",
            after=new_name,
        )
        return 0
    # A variable set in a word: NAME=value in shell code, -DNAME=value on a command line.
    var_word, var_name, dash = variable
    new_name = ENV_ARCH_VARIABLES[var_name]
    prefix = dash or ""
    quote = '"' if ctx.kind != "cmake" else ""
    replacement = f"{prefix}{new_name}={quote}{targets}{quote}"
    if text[var_word.start : var_word.end].startswith(("'", '"')):  # the whole word was quoted
        replacement = f'"{prefix}{new_name}={targets}"'
    _arch_variable(
        ctx,
        (var_word.start, var_word.end),
        f"{var_name} lists NVIDIA GPU architectures",
        new_name,
        (TextEdit(var_word.start, var_word.end, replacement),),
        unconverted_fix=f"Set CMAKE_HIP_ARCHITECTURES={targets} instead.",
    )
    return consumed


def _arch_variable(
    ctx: BuildContext,
    span: tuple[int, int],
    message: str,
    new_name: str,
    edits: tuple[TextEdit, ...],
    *,
    unconverted_note: str = (
        "CUDAARCHS has no HIP-side variable; set CMAKE_HIP_ARCHITECTURES instead"
    ),
    unconverted_fix: str = "",
    after: str = "",
) -> None:
    """GP504 on a variable listing NVIDIA GPUs: renamed to ``new_name`` by ``edits`` for review,
    or left to a person where it has no HIP-side counterpart (``new_name`` empty)."""
    if not new_name:
        status, edits, note, fix = ChangeStatus.UNCONVERTED, (), unconverted_note, unconverted_fix
        after = ""
    else:
        status, note = ChangeStatus.NEEDS_REVIEW, arch_note(ctx.offload_archs)
        fix = f"Use {new_name} with gfx targets."
    ctx.add(
        Hit(
            CUDA_GPU_ARCHITECTURES,
            *span,
            message,
            "build-arch",
            status,
            edits,
            note=note,
            fix=fix,
            after=after,
        )
    )


# ---------------------------------------------------------------------------------------------
# GP508

NVCC_COMPILER = rule(
    id="GP508",
    slug="nvcc-compiler",
    category=Category.BUILD,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="The build calls nvcc",
    what="Finds nvcc invocations and variables set to nvcc in Makefiles, shell scripts and Dockerfiles.",
    why="nvcc compiles for NVIDIA GPUs only and is not installed with ROCm.",
    example="NVCC := /usr/local/cuda/bin/nvcc",
    instead="NVCC := /opt/rocm/bin/hipcc",
    fix="Compile with hipcc (or amdclang++ -x hip), which accepts .cu sources.",
    mechanical=True,
    references=(_HIPCC_DOC,),
    needles=("nvcc",),
)


def nvcc_compiler(ctx: BuildContext, word: Word, *, assigned: bool = False) -> None:
    """GP508 for a word that runs nvcc, or (``assigned``) a ``NAME=value`` setting it."""
    if assigned:
        value = word.text.split("=", 1)[1]
        if not (NVCC_WORD_RE.search(value) and re.search(r"(?:^|/)nvcc(?:\.exe)?$", value)):
            return
    raw = ctx.text[word.start : word.end]
    matches = list(NVCC_WORD_RE.finditer(raw))
    if not matches:
        return
    match = matches[-1]
    start, end = word.start + match.start(), word.start + match.end()
    ctx.add(
        Hit(
            NVCC_COMPILER,
            start,
            end,
            "nvcc compiles for NVIDIA GPUs only; hipcc compiles the same sources for AMD GPUs",
            "build-compiler",
            ChangeStatus.CONVERTED,
            (TextEdit(start, end, "hipcc"),),
            fix="Use hipcc.",
        )
    )


# ---------------------------------------------------------------------------------------------
# GP509

# nvcc's options with another spelling or none in hipcc (kb/build_tools.toml [[nvcc_flag]]).
_NVCC_FLAGS = build_tools.nvcc_flags()
_SPELLINGS = build_tools.nvcc_flag_spellings()  # every spelling -> the short one
# The options converted below; every other one has a `no_counterpart` reason in the knowledge
# base (a test checks it). https://rocm.docs.amd.com/projects/HIP/en/latest/understand/compilers.html
# (-fgpu-rdc, --offload-arch); https://clang.llvm.org/docs/ClangCommandLineReference.html
# (-ffast-math, -gline-tables-only, -fgpu-default-stream, -fgpu-flush-denormals-to-zero,
# -ffp-contract). Clang treats constexpr functions as host+device and accepts extended lambdas.
CONVERTED_NVCC_FLAGS = frozenset(
    {
        "-Xcompiler",
        "-use_fast_math",
        "-lineinfo",
        "--expt-relaxed-constexpr",
        "--expt-extended-lambda",
        "-Wno-deprecated-gpu-targets",
        "-rdc",
        "-dc",
        "-ccbin",
        "--default-stream",
        "-cudart",
        "-x",
        "-ftz",
        "-fmad",
    }
)

NVCC_ONLY_FLAGS = rule(
    id="GP509",
    slug="nvcc-only-flags",
    category=Category.BUILD,
    severity=Severity.MEDIUM,
    confidence=Confidence.MEDIUM,
    summary="nvcc-specific compiler flags that hipcc does not accept",
    what=(
        "Finds nvcc options with a different spelling or no counterpart in hipcc (clang): "
        "`-Xcompiler`, `--use_fast_math`, `-lineinfo`, `-rdc=true`, `--expt-relaxed-constexpr`, "
        "`-ccbin`, `-Xptxas`, `-maxrregcount`..."
    ),
    why=(
        "hipcc drives clang, which rejects unknown options: host flags are passed directly "
        "rather than through `-Xcompiler`, relocatable device code is `-fgpu-rdc`, and PTX "
        "assembler options have no meaning for AMD GPUs."
    ),
    example="NVCCFLAGS = -O3 --use_fast_math -Xcompiler -fPIC -rdc=true",
    instead="NVCCFLAGS = -O3 -ffast-math -fPIC -fgpu-rdc",
    fix="Use the clang spelling of each option; drop the ones with no AMD meaning after review.",
    mechanical=True,
    references=(_HIPCC_DOC, _CLANG_HIP_DOC),
    # Every spelling; `-x cu` needs `-x`.
    needles=tuple(sorted(_SPELLINGS)),
)


def nvcc_only_flags(ctx: BuildContext, words: Sequence[Word], i: int, nvcc_context: bool) -> int:
    """GP509 for ``words[i]``; how many words the option spans (0: not an nvcc-only option).

    ``nvcc_context``: the command is known to be nvcc's, so spellings other tools share count.
    """
    word = words[i]
    raw_flag, sep, inline_value = word.text.partition("=")
    flag = _SPELLINGS.get(raw_flag, "")
    option = _NVCC_FLAGS.get(flag)
    if option is None or (option.ambiguous and not nvcc_context):
        return 0
    if flag == "-x" and not (
        inline_value == "cu" or (i + 1 < len(words) and words[i + 1].text == "cu")
    ):
        return 0
    value: str | None = inline_value if sep else None
    end = word.end
    consumed = 1
    if option.takes_value and not sep:
        if i + 1 >= len(words):
            return 0
        value = words[i + 1].text
        end = words[i + 1].end
        consumed = 2
    replacement: str | None
    status = ChangeStatus.CONVERTED
    note = ""
    if flag == "-Xcompiler":
        pieces = [p for p in re.split(r"[,\s]+", value or "") if p]
        replacement = " ".join(pieces)
    elif flag == "-use_fast_math":
        replacement = "-ffast-math"
    elif flag == "-lineinfo":
        replacement = "-gline-tables-only"
    elif flag in (
        "--expt-relaxed-constexpr",
        "--expt-extended-lambda",
        "-Wno-deprecated-gpu-targets",
    ):
        replacement = ""
    elif flag == "-rdc":
        replacement = "-fgpu-rdc" if (value or "").lower() in ("true", "1") else ""
    elif flag == "-dc":
        replacement = "-fgpu-rdc -c"
    elif flag == "-ccbin":
        replacement = ""
        status = ChangeStatus.NEEDS_REVIEW
        note = "hipcc compiles host code with its own clang; the host compiler choice was dropped"
    elif flag == "--default-stream":
        if value in ("per-thread", "legacy"):
            replacement = f"-fgpu-default-stream={value}"
        else:
            replacement, status, note = (
                None,
                ChangeStatus.UNCONVERTED,
                f"no HIP default stream mode {value!r}",
            )
    elif flag == "-cudart":
        replacement = ""
    elif flag == "-x":
        replacement = "-x hip"
    elif flag == "-ftz":
        replacement = "-fgpu-flush-denormals-to-zero" if (value or "").lower() == "true" else ""
    elif flag == "-fmad":
        replacement = "-ffp-contract=off" if (value or "").lower() == "false" else ""
    else:
        replacement, status, note = None, ChangeStatus.UNCONVERTED, option.no_counterpart
    raw = ctx.text[word.start : end]
    if replacement is None:
        edits: tuple[TextEdit, ...] = ()
        fix = f"Remove `{raw}`: {note}."
    elif replacement == "":
        edits = (delete_span(ctx.text, word.start, end),)
        fix = f"Remove `{raw}`."
    else:
        edits = (TextEdit(word.start, end, replacement),)
        fix = f"Use `{replacement}`."
    ctx.add(
        Hit(
            NVCC_ONLY_FLAGS,
            word.start,
            end,
            f"`{raw}` is an nvcc option that hipcc does not accept",
            "build-flags",
            status,
            edits,
            note=note,
            fix=fix,
            after=replacement or "",
        )
    )
    return consumed


# ---------------------------------------------------------------------------------------------
# GP510


class LinkOption(NamedTuple):
    """A word of a command line, which may be a ``-l<name>`` option."""

    word: Word


class CMakeLinkItem(NamedTuple):
    """An unquoted plain-name item of a CMake link command (``target_link_libraries``)."""

    command: CMakeCommand
    arg: CMakeArg


CUDA_LINK_LIBRARIES = rule(
    id="GP510",
    slug="cuda-link-libraries",
    category=Category.BUILD,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="The build links CUDA libraries",
    what="Finds `-lcudart`, `-lcublas`, `-lcufft`... and bare CUDA library names in CMake link commands.",
    why=(
        "The CUDA libraries are not present on ROCm; each has a counterpart (libamdhip64 for "
        "the runtime, hipBLAS for cuBLAS...), some with a different API."
    ),
    example="LDLIBS += -lcudart -lcublas",
    instead="LDLIBS += -lamdhip64 -lhipblas",
    fix="Link the ROCm counterpart from the knowledge base; libraries with another API need a port.",
    mechanical=True,
    references=("https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_porting_guide.html",),
    # The knowledge base's link names are looked up in any case (`-lCUBLAS`): their first two
    # letters, in every case, are in any text naming one.
    needles=case_variants(
        *sorted({n[:2] for lib in kb.cuda_libraries().values() for n in lib.link_names})
    ),
)


def cuda_link_libraries(ctx: BuildContext, site: LinkOption | CMakeLinkItem) -> None:
    """GP510 for a ``-l`` option or a CMake link item naming a CUDA library."""
    if isinstance(site, LinkOption):
        word = site.word
        if not (word.text.startswith("-l") and len(word.text) > 2):
            return
        library = kb.library_for_link_name(word.text[2:])
        start, end, shown, form = word.start, word.end, word.text, "link"
    else:
        arg = site.arg
        library = kb.library_for_link_name(arg.value)
        if library is not None and arg.value.lower() not in {n.lower() for n in library.link_names}:
            return
        start, end, shown, form = arg.start, arg.end, arg.value, "cmake"
    if library is None:
        return
    status, edits, note = library_replacement(ctx.text, library, start, end, form)
    ctx.add(
        Hit(
            CUDA_LINK_LIBRARIES,
            start,
            end,
            f"links {library.name} ({shown}); ROCm's counterpart is {library.amd_counterpart}",
            "build-link",
            status,
            edits,
            note=note,
        )
    )
    if (
        isinstance(site, CMakeLinkItem)
        and edits
        and library.amd_find_package
        and library.amd_cmake_targets
    ):
        ctx.need_package(library.amd_find_package, site.command)


# ---------------------------------------------------------------------------------------------
# GP511

# The CUDA toolkit's install folder (with a version: /usr/local/cuda-12.1) and the variables
# naming it (kb/build_tools.toml [[toolkit_location]]); /lib64 after them becomes /lib.
_FOLDERS = [p for p in build_tools.toolkit_locations() if p.kind == "folder"]
_VARIABLES = [p for p in build_tools.toolkit_locations() if p.kind == "variable"]
CUDA_PATH_RE = re.compile(
    r"(?P<lit>" + build_tools.alternatives(_FOLDERS) + r"(?:-\d+(?:\.\d+)*)?)(?![\w.-])"
    r"(?P<lib1>/lib64(?![\w.-]))?"
    r"|(?<![\w])(?P<name>" + build_tools.alternatives(_VARIABLES) + r")(?![\w])"
    r"(?P<close>[})])?(?P<lib2>/lib64(?![\w.-]))?"
)

CUDA_TOOLKIT_PATH = rule(
    id="GP511",
    slug="cuda-toolkit-path",
    category=Category.BUILD,
    severity=Severity.MEDIUM,
    confidence=Confidence.MEDIUM,
    summary="A path or variable points at the CUDA toolkit",
    what=(
        "Finds `/usr/local/cuda` paths and the `CUDA_HOME`, `CUDA_PATH` and `CUDA_ROOT` "
        "variables in Makefiles, shell scripts, CMake files, Dockerfile `ENV` lines and "
        "container environments."
        " The scan tells a file's sites once, the first naming the other lines (one "
        "decision fixes them); `gpuport port` edits each."
    ),
    why=(
        "ROCm installs under /opt/rocm (its libraries mainly in lib, not lib64) and tools read "
        "`ROCM_PATH`; paths into the CUDA toolkit find nothing on an AMD machine."
    ),
    example="export CUDA_HOME=/usr/local/cuda\nexport LD_LIBRARY_PATH=$CUDA_HOME/lib64",
    instead="export ROCM_PATH=/opt/rocm\nexport LD_LIBRARY_PATH=$ROCM_PATH/lib",
    fix="Point at /opt/rocm and use ROCM_PATH; check every other reader of the old variable.",
    mechanical=False,
    references=(
        "https://rocm.docs.amd.com/projects/install-on-linux/en/docs-6.2.2/install/post-install.html",
    ),
    needles=tuple(build_tools.literal_prefix(p.pattern) for p in (*_FOLDERS, *_VARIABLES)),
)


def cuda_toolkit_path(ctx: BuildContext, start: int, end: int) -> None:
    """GP511 for CUDA toolkit paths and variables in ``text[start:end]``."""
    for match in CUDA_PATH_RE.finditer(ctx.text, start, end):
        edits: list[TextEdit] = []
        if match.group("lit"):
            edits.append(TextEdit(match.start("lit"), match.end("lit"), "/opt/rocm"))
            what = f"{match.group('lit')} is the CUDA toolkit's install folder"
        else:
            edits.append(TextEdit(match.start("name"), match.end("name"), "ROCM_PATH"))
            what = f"{match.group('name')} points at the CUDA toolkit"
        for lib in ("lib1", "lib2"):
            if match.group(lib):
                edits.append(TextEdit(match.start(lib), match.end(lib), "/lib"))
        ctx.add(
            Hit(
                CUDA_TOOLKIT_PATH,
                match.start(),
                match.end(),
                f"{what}; ROCm lives in /opt/rocm (ROCM_PATH)",
                "toolkit-path",
                ChangeStatus.NEEDS_REVIEW,
                tuple(edits),
                note="renamed to ROCM_PATH / /opt/rocm; check other readers of the old name",
                fix="Use /opt/rocm and ROCM_PATH.",
            )
        )
