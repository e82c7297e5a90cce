"""Build files that compile CUDA: CMake, Makefiles and shell scripts calling nvcc (rules GP5xx).

Each kind of file is read by a small lexer that keeps offsets (CMake commands and arguments;
shell words), so that a finding lands on the right line and ``gpuport port`` can edit exactly
the characters it names. Detection produces :class:`Hit` objects carrying both the finding's
message and the text edits that the port stage applies; the scan and the port therefore never
disagree about what is wrong or where.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from gpuport import kb
from gpuport.edits import ChangeStatus, Hit, TextEdit, hit_after, hits_to_findings
from gpuport.files import FileKind, SourceText
from gpuport.findings import Category, Confidence, Severity, SkipKind, Skipped
from gpuport.rules import rule
from gpuport.scan.base import ScanOutput, scanner
from gpuport.syntax.cmake import (
    IDENTIFIER_RE,
    CMakeArg,
    CMakeCommand,
    CMakeProblem,
    argument_word,
    assigned_values,
    cmake_commands,
    genex_content,
    project_languages,
)
from gpuport.syntax.shell import (
    ASSIGNMENT_RE,
    Word,
    program_index,
    program_name,
    shell_commands,
    split_word,
)
from gpuport.syntax.text import LineIndex

# The AMD GPU targets written where a CUDA architecture list was (kb/platform.toml [defaults]).
# A person should narrow this to their own GPUs (`rocminfo | grep gfx`); every edit that writes
# it is marked for review.
DEFAULT_OFFLOAD_ARCHS = kb.DEFAULT_OFFLOAD_ARCHS

_HIP_CMAKE_DOC = "https://rocm.docs.amd.com/en/latest/conceptual/cmake-packages.html"
_HIPCC_DOC = "https://rocm.docs.amd.com/projects/HIP/en/latest/understand/compilers.html"
_CLANG_HIP_DOC = "https://clang.llvm.org/docs/HIPSupport.html"


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


# ---------------------------------------------------------------------------------------------
# Rules


CMAKE_CUDA_LANGUAGE = rule(
    id="GP501",
    slug="cmake-cuda-language",
    category=Category.BUILD,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="CMake enables the CUDA language",
    what=(
        "Finds `enable_language(CUDA)`, `check_language(CUDA)` and `CUDA` in the languages of "
        "`project()`."
    ),
    why=(
        "The CUDA language makes CMake look for nvcc, which a ROCm machine does not have, so "
        "configuring fails. CMake (3.21 and later) has a first-class HIP language that compiles "
        "the same kernels with the ROCm compiler for AMD GPUs."
    ),
    example="project(demo LANGUAGES CXX CUDA)",
    instead="cmake_minimum_required(VERSION 3.21)\nproject(demo LANGUAGES CXX HIP)",
    fix="Enable the HIP language instead of CUDA (CMake 3.21 or later).",
    mechanical=True,
    references=(_HIP_CMAKE_DOC, "https://cmake.org/cmake/help/latest/command/enable_language.html"),
)

CMAKE_FINDCUDA = rule(
    id="GP502",
    slug="cmake-findcuda-module",
    category=Category.BUILD,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="CMake uses the FindCUDA module, which newer CMake no longer ships",
    what=(
        "Finds `find_package(CUDA)`, the FindCUDA commands (`cuda_add_executable`, "
        "`cuda_add_library`, `cuda_include_directories`...) and the variables the module sets "
        "(`CUDA_LIBRARIES`, `CUDA_NVCC_FLAGS`, `CUDA_TOOLKIT_ROOT_DIR`...)."
    ),
    why=(
        "FindCUDA has been deprecated since CMake 3.10 and is removed by policy CMP0146 from "
        "CMake 3.27. It only knows nvcc, so it cannot build for AMD GPUs at all; the port "
        "needs the HIP language and the ROCm CMake packages instead."
    ),
    example="find_package(CUDA REQUIRED)\ncuda_add_executable(app main.cu)",
    instead=(
        "enable_language(HIP)\nfind_package(hip REQUIRED)\nadd_executable(app main.cu)\n"
        "set_source_files_properties(main.cu PROPERTIES LANGUAGE HIP)"
    ),
    fix=(
        "Replace FindCUDA with `enable_language(HIP)`, plain `add_executable`/`add_library` "
        "and the ROCm packages' imported targets; this restructuring is left to a person."
    ),
    mechanical=False,
    references=("https://cmake.org/cmake/help/latest/policy/CMP0146.html", _HIP_CMAKE_DOC),
)

CMAKE_CUDA_TOOLKIT = rule(
    id="GP503",
    slug="cmake-cuda-toolkit-package",
    category=Category.BUILD,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="CMake looks for the CUDA toolkit package",
    what="Finds `find_package(CUDAToolkit ...)`.",
    why=(
        "FindCUDAToolkit locates nvcc and the CUDA libraries; on a ROCm machine it fails, and "
        "its `CUDA::` targets do not exist. ROCm ships CMake config packages (`hip`, "
        "`hipblas`, `hipfft`...) whose imported targets take their place."
    ),
    example="find_package(CUDAToolkit REQUIRED)",
    instead="find_package(hip REQUIRED)\nfind_package(hipblas REQUIRED)",
    fix="Find the `hip` package and one ROCm package per CUDA library the project links.",
    mechanical=True,
    references=(_HIP_CMAKE_DOC,),
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
)

CMAKE_CUDA_TARGET = rule(
    id="GP505",
    slug="cmake-cuda-library-target",
    category=Category.BUILD,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="CMake links a CUDA toolkit library target",
    what="Finds `CUDA::` imported targets such as `CUDA::cudart` and `CUDA::cublas`.",
    why=(
        "`CUDA::` targets come from FindCUDAToolkit and do not exist on ROCm. Each CUDA "
        "library has a ROCm counterpart with its own CMake package and imported target, e.g. "
        "`roc::hipblas` from `find_package(hipblas)`."
    ),
    example="target_link_libraries(app PRIVATE CUDA::cudart CUDA::cublas)",
    instead="find_package(hipblas REQUIRED)\ntarget_link_libraries(app PRIVATE hip::host roc::hipblas)",
    fix="Link the ROCm counterpart's target and find its package.",
    mechanical=True,
    references=(_HIP_CMAKE_DOC,),
)

CMAKE_CUDA_SETTINGS = rule(
    id="GP506",
    slug="cmake-cuda-settings",
    category=Category.BUILD,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="CMake sets CUDA-language variables or properties",
    what=(
        "Finds CUDA-language settings with a HIP counterpart or none: `CMAKE_CUDA_FLAGS`, "
        "`CMAKE_CUDA_STANDARD`, `CMAKE_CUDA_COMPILER`, the `CUDA_STANDARD` and "
        "`CUDA_SEPARABLE_COMPILATION` properties, `$<COMPILE_LANGUAGE:CUDA>`..."
    ),
    why=(
        "Once the sources are compiled as HIP, CUDA-language settings are ignored: flags, "
        "standards and generator expressions silently stop applying, and separable "
        "compilation must be asked for with `-fgpu-rdc`."
    ),
    example='set(CMAKE_CUDA_STANDARD 17)\nset(CMAKE_CUDA_FLAGS "${CMAKE_CUDA_FLAGS} -O3")',
    instead='set(CMAKE_HIP_STANDARD 17)\nset(CMAKE_HIP_FLAGS "${CMAKE_HIP_FLAGS} -O3")',
    fix="Use the HIP-language variable or property; settings without one need a person.",
    mechanical=True,
    references=(
        _HIP_CMAKE_DOC,
        "https://cmake.org/cmake/help/latest/manual/cmake-variables.7.html",
    ),
)

CMAKE_CUDA_SOURCES = rule(
    id="GP507",
    slug="cmake-cuda-sources",
    category=Category.BUILD,
    severity=Severity.MEDIUM,
    confidence=Confidence.MEDIUM,
    summary="CMake builds .cu sources, which it compiles as CUDA by their extension",
    what=(
        "Finds `.cu` files in `add_library`, `add_executable`, `target_sources`, `set`, "
        "`list(APPEND)` and `file(GLOB)` that no `set_source_files_properties(... LANGUAGE "
        "HIP)` covers."
    ),
    why=(
        "CMake picks a source's language from its extension, and `.cu` means CUDA. Without "
        "the LANGUAGE property the HIP build still tries to compile them with nvcc."
    ),
    example="add_library(kernels STATIC gemm.cu)",
    instead=(
        "add_library(kernels STATIC gemm.cu)\n"
        "set_source_files_properties(gemm.cu PROPERTIES LANGUAGE HIP)"
    ),
    fix="Mark the `.cu` sources as HIP with `set_source_files_properties`.",
    mechanical=True,
    references=(_HIP_CMAKE_DOC, "https://cmake.org/cmake/help/latest/prop_sf/LANGUAGE.html"),
)

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
)

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
)

# ---------------------------------------------------------------------------------------------
# Word-level checks shared by shell scripts, Makefiles, Dockerfile RUN lines and CMake strings


_NVCC_WORD_RE = re.compile(r"(?<![\w.-])nvcc(?:\.exe)?(?![\w.-])")
_ARCH_FLAG_RE = re.compile(
    r"^(?P<flag>-arch|--gpu-architecture|-gencode|--generate-code|-code|--gpu-code)(?:=(?P<value>.*))?$"
)
_ARCH_VALUE_RE = re.compile(r"(?:sm|compute|lto)_\d+[a-z]?|native|all-major|all")
_CUDA_ARCH_VARIABLES = {
    "TORCH_CUDA_ARCH_LIST": "PYTORCH_ROCM_ARCH",
    "CMAKE_CUDA_ARCHITECTURES": "CMAKE_HIP_ARCHITECTURES",
    "CUDAARCHS": "",  # no HIP-side environment variable: the CMake variable is set instead
}
_CUDA_ARCH_ASSIGN_RE = re.compile(
    r"^(?P<dash>-D)?(?P<name>TORCH_CUDA_ARCH_LIST|CMAKE_CUDA_ARCHITECTURES|CUDAARCHS)"
    r"(?::[A-Z]+)?=(?P<value>.*)$"
)
CUDA_PATH_RE = re.compile(
    r"(?P<lit>/usr/local/cuda(?:-\d+(?:\.\d+)*)?)(?![\w.-])(?P<lib1>/lib64(?![\w.-]))?"
    r"|(?<![\w])(?P<name>CUDA_(?:HOME|PATH|ROOT|DIR|INSTALL_PATH|TOOLKIT_PATH))(?![\w])"
    r"(?P<close>[})])?(?P<lib2>/lib64(?![\w.-]))?"
)

# nvcc options and what hipcc (clang) takes instead.
# https://rocm.docs.amd.com/projects/HIP/en/latest/understand/compilers.html (-fgpu-rdc,
# --offload-arch); https://clang.llvm.org/docs/ClangCommandLineReference.html (-ffast-math,
# -gline-tables-only, -fgpu-default-stream, -fgpu-flush-denormals-to-zero, -ffp-contract).
# Clang treats constexpr functions as host+device and accepts extended lambdas by default.
_FLAG_TAKES_VALUE = frozenset(
    {
        "-Xcompiler",
        "--compiler-options",
        "-rdc",
        "--relocatable-device-code",
        "-ccbin",
        "--compiler-bindir",
        "--default-stream",
        "-cudart",
        "--cudart",
        "-x",
        "-ftz",
        "--ftz",
        "-fmad",
        "--fmad",
        "-Xptxas",
        "--ptxas-options",
        "-maxrregcount",
        "--maxrregcount",
        "-Xcudafe",
        "-prec-div",
        "--prec-div",
        "-prec-sqrt",
        "--prec-sqrt",
        "-Xnvlink",
        "--nvlink-options",
    }
)
_FLAG_ALIASES = {
    "--compiler-options": "-Xcompiler",
    "--use_fast_math": "-use_fast_math",
    "--generate-line-info": "-lineinfo",
    "-expt-relaxed-constexpr": "--expt-relaxed-constexpr",
    "-expt-extended-lambda": "--expt-extended-lambda",
    "--extended-lambda": "--expt-extended-lambda",
    "-extended-lambda": "--expt-extended-lambda",
    "--relocatable-device-code": "-rdc",
    "--device-c": "-dc",
    "--compiler-bindir": "-ccbin",
    "--cudart": "-cudart",
    "--ftz": "-ftz",
    "--fmad": "-fmad",
    "--ptxas-options": "-Xptxas",
    "--maxrregcount": "-maxrregcount",
    "--prec-div": "-prec-div",
    "--prec-sqrt": "-prec-sqrt",
    "--nvlink-options": "-Xnvlink",
    "--resource-usage": "-res-usage",
}
_NO_COUNTERPART = {
    "-Xptxas": "PTX assembler options have no meaning for AMD GPUs",
    "-maxrregcount": "no per-file register cap in hipcc; use __launch_bounds__ in the source",
    "-Xcudafe": "front-end options of nvcc have no hipcc counterpart",
    "-prec-div": "hipcc has no switch for division precision",
    "-prec-sqrt": "hipcc has no switch for square-root precision",
    "-Xnvlink": "nvlink options have no meaning for AMD GPUs",
    "-res-usage": "use `-Rpass-analysis=kernel-resource-usage` to see register use",
    "-keep": "use `-save-temps` to keep intermediate files",
    "--keep": "use `-save-temps` to keep intermediate files",
}


# Spellings other tools use too (gzip --keep, bc -dc): only read as nvcc's inside nvcc commands.
_AMBIGUOUS_FLAGS = frozenset(
    {
        "-keep",
        "--keep",
        "-dc",
        "-cudart",
        "-ftz",
        "-fmad",
        "-prec-div",
        "-prec-sqrt",
        "-res-usage",
        "-maxrregcount",
    }
)


@dataclass(slots=True)
class _WordContext:
    """Where words come from: 'shell', 'make', 'docker' or 'cmake'."""

    kind: str
    text: str
    offload_archs: tuple[str, ...]
    hits: list[Hit] = field(default_factory=list)


def _offload_flags(archs: Sequence[str]) -> str:
    return " ".join(f"--offload-arch={arch}" for arch in archs)


def _arch_note(archs: Sequence[str]) -> str:
    return (
        f"wrote {', '.join(archs)}; set the gfx targets of the GPUs you run on "
        "(rocminfo | grep gfx)"
    )


def build_word_hits(
    text: str,
    commands: Iterable[Sequence[Word]],
    kind: str,
    offload_archs: tuple[str, ...] = DEFAULT_OFFLOAD_ARCHS,
) -> list[Hit]:
    """GP504/GP508/GP509/GP510/GP511 hits in shell-like words (``kind``: shell, make, docker, cmake)."""
    ctx = _WordContext(kind, text, offload_archs)
    for words in commands:
        _command_hits(ctx, list(words))
    return ctx.hits


def _command_hits(ctx: _WordContext, words: list[Word]) -> None:
    if not words:
        return
    for word in words:
        _path_hits(ctx, word)
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
    expanded: list[Word] = []
    assigns = prog_index is None or prog in ("export", "declare", "local", "readonly", "typeset")
    for index, word in enumerate(words):
        is_assignment = assigns or (prog_index is not None and index < prog_index)
        if ctx.kind in ("shell", "docker") and is_assignment and ASSIGNMENT_RE.match(word.text):
            _assignment_hits(ctx, word, word.text.split("=", 1)[0].rstrip("+"))
            continue
        if (
            ctx.kind == "make"
            and word.text in _CUDA_ARCH_VARIABLES
            and index + 1 < len(words)
            and _make_arch_assignment(ctx, words[index:])
        ):
            break
        if index == prog_index and _NVCC_WORD_RE.search(word.text):
            _nvcc_hit(ctx, word)
            continue
        if ctx.kind == "make" and _NVCC_WORD_RE.search(word.text.lstrip("@-+")):
            _nvcc_hit(ctx, word)
            continue
        if ctx.kind in ("shell", "docker") and prog in ("which", "type") and word.text == "nvcc":
            _nvcc_hit(ctx, word)
            continue
        expanded.extend(split_word(ctx.text, word) if ctx.kind == "cmake" else [word])
    _flag_hits(ctx, expanded, is_nvcc_command)


def _make_arch_assignment(ctx: _WordContext, words: list[Word]) -> bool:
    """``TORCH_CUDA_ARCH_LIST := 7.0 8.0`` in a Makefile: rename and replace the values."""
    name, operator, values = words[0], words[1], words[2:]
    if operator.text not in ("=", ":=", "::=", "?=", "+=") or not values:
        return False
    new_name = _CUDA_ARCH_VARIABLES[name.text]
    message = f"{name.text} lists NVIDIA GPU architectures"
    if not new_name:
        ctx.hits.append(
            Hit(
                CUDA_GPU_ARCHITECTURES,
                name.start,
                values[-1].end,
                message,
                "build-arch",
                ChangeStatus.UNCONVERTED,
                note="CUDAARCHS has no HIP-side variable; set CMAKE_HIP_ARCHITECTURES instead",
            )
        )
        return True
    # A make value is used as written: PyTorch splits PYTORCH_ROCM_ARCH on blanks as well as
    # semicolons, and a blank-separated list needs no quoting in recipes; CMake needs ';'.
    targets = (
        " ".join(ctx.offload_archs)
        if new_name == "PYTORCH_ROCM_ARCH"
        else '"' + ";".join(ctx.offload_archs) + '"'
    )
    ctx.hits.append(
        Hit(
            CUDA_GPU_ARCHITECTURES,
            name.start,
            values[-1].end,
            message,
            "build-arch",
            ChangeStatus.NEEDS_REVIEW,
            (
                TextEdit(name.start, name.end, new_name),
                TextEdit(values[0].start, values[-1].end, targets),
            ),
            note=_arch_note(ctx.offload_archs),
            fix=f"Use {new_name} with gfx targets.",
        )
    )
    return True


def _nvcc_hit(ctx: _WordContext, word: Word) -> None:
    raw = ctx.text[word.start : word.end]
    matches = list(_NVCC_WORD_RE.finditer(raw))
    if not matches:
        return
    match = matches[-1]
    start = word.start + match.start()
    ctx.hits.append(
        Hit(
            NVCC_COMPILER,
            start,
            word.start + match.end(),
            "nvcc compiles for NVIDIA GPUs only; hipcc compiles the same sources for AMD GPUs",
            "build-compiler",
            ChangeStatus.CONVERTED,
            (TextEdit(start, word.start + match.end(), "hipcc"),),
            fix="Use hipcc.",
        )
    )


def _assignment_hits(ctx: _WordContext, word: Word, name: str) -> None:
    """``VAR=value`` words in shell code: nvcc as a value, CUDA architecture variables."""
    value = word.text.split("=", 1)[1]
    if _NVCC_WORD_RE.search(value) and re.search(r"(?:^|/)nvcc(?:\.exe)?$", value):
        _nvcc_hit(ctx, word)
    if name in _CUDA_ARCH_VARIABLES:
        _arch_variable_hit(ctx, word, name, None)
        return
    pieces = split_word(ctx.text, word)
    if len(pieces) > 1:
        _flag_hits(ctx, pieces[1:], "NVCC" in name.upper() or "CUDA" in name.upper())


def _arch_variable_hit(ctx: _WordContext, word: Word, name: str, dash: str | None) -> None:
    new_name = _CUDA_ARCH_VARIABLES[name]
    targets = ";".join(ctx.offload_archs)
    message = f"{name} lists NVIDIA GPU architectures"
    if not new_name:
        ctx.hits.append(
            Hit(
                CUDA_GPU_ARCHITECTURES,
                word.start,
                word.end,
                message,
                "build-arch",
                ChangeStatus.UNCONVERTED,
                note="CUDAARCHS has no HIP-side variable; set CMAKE_HIP_ARCHITECTURES instead",
                fix=f"Set CMAKE_HIP_ARCHITECTURES={targets} instead.",
            )
        )
        return
    prefix = dash or ""
    quote = '"' if ctx.kind != "cmake" else ""
    replacement = f"{prefix}{new_name}={quote}{targets}{quote}"
    raw = ctx.text[word.start : word.end]
    if raw.startswith(("'", '"')):  # the whole word was quoted: keep one quoting only
        replacement = f'"{prefix}{new_name}={targets}"'
    ctx.hits.append(
        Hit(
            CUDA_GPU_ARCHITECTURES,
            word.start,
            word.end,
            message,
            "build-arch",
            ChangeStatus.NEEDS_REVIEW,
            (TextEdit(word.start, word.end, replacement),),
            note=_arch_note(ctx.offload_archs),
            fix=f"Use {new_name} with gfx targets.",
        )
    )


def _flag_hits(ctx: _WordContext, words: list[Word], nvcc_context: bool) -> None:
    """Architecture flags, nvcc-only flags and -l options in one command's words."""
    arch_done = False
    i = 0
    while i < len(words):
        word = words[i]
        value_text = word.text
        match = _ARCH_FLAG_RE.match(value_text)
        if match:
            value = match.group("value")
            span_end = word.end
            consumed = 1
            if value is None and i + 1 < len(words):
                value = words[i + 1].text
                span_end = words[i + 1].end
                consumed = 2
            if value is not None and _ARCH_VALUE_RE.search(value):
                _arch_flag_hit(ctx, word.start, span_end, value, replace=not arch_done)
                arch_done = True
                i += consumed
                continue
        define = _CUDA_ARCH_ASSIGN_RE.match(value_text)
        if define and ctx.kind != "cmake" and (define.group("dash") or ctx.kind == "make"):
            _arch_variable_hit(ctx, word, define.group("name"), define.group("dash"))
            i += 1
            continue
        consumed = _nvcc_flag_hit(ctx, words, i, nvcc_context)
        if not consumed and value_text.startswith("-l") and len(value_text) > 2:
            _link_hit(ctx, word, value_text[2:])
        i += consumed or 1


def _arch_flag_hit(ctx: _WordContext, start: int, end: int, value: str, replace: bool) -> None:
    archs = sorted(set(_ARCH_VALUE_RE.findall(value)))
    message = f"nvcc architecture flag targets NVIDIA GPUs ({', '.join(archs)})"
    edit = (
        TextEdit(start, end, _offload_flags(ctx.offload_archs))
        if replace
        else delete_span(ctx.text, start, end)
    )
    ctx.hits.append(
        Hit(
            CUDA_GPU_ARCHITECTURES,
            start,
            end,
            message,
            "build-arch",
            ChangeStatus.NEEDS_REVIEW,
            (edit,),
            note=_arch_note(ctx.offload_archs),
            fix=f"Use {_offload_flags(ctx.offload_archs)}.",
            after=_offload_flags(ctx.offload_archs) if replace else "",
        )
    )


def _link_hit(ctx: _WordContext, word: Word, name: str) -> None:
    library = kb.library_for_link_name(name)
    if library is None:
        return
    message = f"links {library.name} (-l{name}); ROCm's counterpart is {library.amd_counterpart}"
    status, edits, note = _library_replacement(ctx.text, library, word.start, word.end, "link")
    ctx.hits.append(
        Hit(
            CUDA_LINK_LIBRARIES,
            word.start,
            word.end,
            message,
            "build-link",
            status,
            edits,
            note=note,
        )
    )


def _library_replacement(
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


def _nvcc_flag_hit(ctx: _WordContext, words: list[Word], i: int, nvcc_context: bool) -> int:
    """Check ``words[i]`` for an nvcc-only option; returns how many words it spans (0: none)."""
    word = words[i]
    raw_flag, sep, inline_value = word.text.partition("=")
    flag = _FLAG_ALIASES.get(raw_flag, raw_flag)
    known = (
        flag in _FLAG_TAKES_VALUE
        or flag in _NO_COUNTERPART
        or flag
        in (
            "-use_fast_math",
            "-lineinfo",
            "--expt-relaxed-constexpr",
            "--expt-extended-lambda",
            "-dc",
            "-Wno-deprecated-gpu-targets",
        )
    )
    if not known or (flag in _AMBIGUOUS_FLAGS and not nvcc_context):
        return 0
    if flag == "-x" and not (
        inline_value == "cu" or (i + 1 < len(words) and words[i + 1].text == "cu")
    ):
        return 0
    value: str | None = inline_value if sep else None
    end = word.end
    consumed = 1
    if flag in _FLAG_TAKES_VALUE and not sep:
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
        replacement, status, note = None, ChangeStatus.UNCONVERTED, _NO_COUNTERPART[flag]
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
    ctx.hits.append(
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


def cuda_path_hits(text: str, start: int, end: int) -> list[Hit]:
    """GP511 hits for CUDA toolkit paths and variables in ``text[start:end]``."""
    hits: list[Hit] = []
    for match in CUDA_PATH_RE.finditer(text, start, end):
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
        hits.append(
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
    return hits


def env_assignment_hits(
    text: str,
    name: str,
    name_span: tuple[int, int],
    value_span: tuple[int, int],
    offload_archs: tuple[str, ...] = DEFAULT_OFFLOAD_ARCHS,
    *,
    quote: str = '"',
) -> list[Hit]:
    """GP504/GP511 hits for one environment variable setting (Dockerfile ENV, compose, k8s).

    ``value_span`` is the value's raw span; an architecture list there is replaced by the gfx
    targets wrapped in ``quote``.
    """
    hits: list[Hit] = []
    if name in _CUDA_ARCH_VARIABLES:
        new_name = _CUDA_ARCH_VARIABLES[name]
        message = f"{name} lists NVIDIA GPU architectures"
        if not new_name:
            hits.append(
                Hit(
                    CUDA_GPU_ARCHITECTURES,
                    name_span[0],
                    name_span[1],
                    message,
                    "build-arch",
                    ChangeStatus.UNCONVERTED,
                    note="CUDAARCHS has no HIP-side variable; set CMAKE_HIP_ARCHITECTURES",
                )
            )
        else:
            targets = ";".join(offload_archs)
            hits.append(
                Hit(
                    CUDA_GPU_ARCHITECTURES,
                    name_span[0],
                    name_span[1],
                    message,
                    "build-arch",
                    ChangeStatus.NEEDS_REVIEW,
                    (
                        TextEdit(name_span[0], name_span[1], new_name),
                        TextEdit(value_span[0], value_span[1], f"{quote}{targets}{quote}"),
                    ),
                    note=_arch_note(offload_archs),
                    fix=f"Use {new_name} with gfx targets.",
                    after=new_name,
                )
            )
    hits.extend(cuda_path_hits(text, name_span[0], name_span[1]))
    hits.extend(cuda_path_hits(text, value_span[0], value_span[1]))
    return hits


def _path_hits(ctx: _WordContext, word: Word) -> None:
    ctx.hits.extend(cuda_path_hits(ctx.text, word.start, word.end))


# ---------------------------------------------------------------------------------------------
# Shell scripts and Makefiles


def analyze_shell_build(
    text: str, offload_archs: tuple[str, ...] = DEFAULT_OFFLOAD_ARCHS
) -> list[Hit]:
    """GP5xx hits in a shell script."""
    return build_word_hits(text, shell_commands(text), "shell", offload_archs)


def analyze_makefile(
    text: str, offload_archs: tuple[str, ...] = DEFAULT_OFFLOAD_ARCHS
) -> list[Hit]:
    """GP5xx hits in a Makefile: variable values and recipe lines alike."""
    return build_word_hits(text, shell_commands(text, heredocs=False), "make", offload_archs)


# ---------------------------------------------------------------------------------------------
# CMake


# Variables and properties of the CUDA language, with their HIP counterparts
# (https://cmake.org/cmake/help/latest/manual/cmake-variables.7.html, "CMAKE_<LANG>_..."
# variables exist for HIP since CMake 3.21). None: no counterpart.
_CMAKE_SETTING_RE = re.compile(
    r"(?<![\w])(?P<name>CMAKE_CUDA_(?:FLAGS(?:_[A-Z]+)?|STANDARD(?:_REQUIRED)?|EXTENSIONS|COMPILER"
    r"(?:_ID|_VERSION|_LAUNCHER)?|HOST_COMPILER|SEPARABLE_COMPILATION|RUNTIME_LIBRARY"
    r"|RESOLVE_DEVICE_SYMBOLS)|CUDA_(?:STANDARD(?:_REQUIRED)?|EXTENSIONS|SEPARABLE_COMPILATION"
    r"|RESOLVE_DEVICE_SYMBOLS|RUNTIME_LIBRARY|PTX_COMPILATION))(?![\w])"
    r"|(?P<genex>\$<COMPILE_LANGUAGE:CUDA>|\$<COMPILE_LANG_AND_ID:CUDA,[^>]*>)"
)
_SETTING_NO_COUNTERPART = {
    "CMAKE_CUDA_HOST_COMPILER": "the HIP compiler compiles host code itself",
    "CMAKE_CUDA_SEPARABLE_COMPILATION": "add -fgpu-rdc to the HIP compile and link options",
    "CUDA_SEPARABLE_COMPILATION": "add -fgpu-rdc to the HIP compile and link options",
    "CMAKE_CUDA_RESOLVE_DEVICE_SYMBOLS": "no HIP counterpart; device linking follows -fgpu-rdc",
    "CUDA_RESOLVE_DEVICE_SYMBOLS": "no HIP counterpart; device linking follows -fgpu-rdc",
    "CMAKE_CUDA_RUNTIME_LIBRARY": "the HIP runtime is always linked as a shared library",
    "CUDA_RUNTIME_LIBRARY": "the HIP runtime is always linked as a shared library",
    "CUDA_PTX_COMPILATION": "AMD GPUs have no PTX; see hipcc --genco for code objects",
}
_FINDCUDA_COMMANDS = frozenset(
    {
        "cuda_add_executable",
        "cuda_add_library",
        "cuda_compile",
        "cuda_compile_ptx",
        "cuda_compile_fatbin",
        "cuda_compile_cubin",
        "cuda_wrap_srcs",
        "cuda_include_directories",
        "cuda_add_cublas_to_target",
        "cuda_add_cufft_to_target",
        "cuda_build_clean_target",
        "cuda_select_nvcc_arch_flags",
        "cuda_link_separable_compilation_objects",
        "cuda_compute_separable_compilation_object_file_name",
    }
)
_FINDCUDA_VARIABLE_RE = re.compile(
    r"(?<![\w])CUDA_(?:LIBRARIES|INCLUDE_DIRS|NVCC_FLAGS(?:_[A-Z]+)?|CUBLAS_LIBRARIES"
    r"|CUFFT_LIBRARIES|(?!RUNTIME_LIBRARY)[A-Za-z]+_LIBRARY|TOOLKIT_ROOT_DIR"
    r"|PROPAGATE_HOST_FLAGS|HOST_COMPILER|TOOLKIT_INCLUDE|NVCC_EXECUTABLE|SDK_ROOT_DIR"
    r"|64_BIT_DEVICE_CODE|ATTACH_VS_BUILD_RULE_TO_CUDA_FILE|BUILD_CUBIN|GENERATED_OUTPUT_DIR)(?![\w])"
)
_CUDA_TARGET_RE = re.compile(r"(?<!\w)(?<!::)CUDA::[A-Za-z0-9_]+")  # also inside $<...:CUDA::x>
_ARCH_IDENT_RE = re.compile(
    r"(?<![\w])(?P<name>CMAKE_CUDA_ARCHITECTURES|CUDA_ARCHITECTURES|CUDAARCHS)(?![\w])"
)
_SOURCE_COMMANDS = frozenset(
    {
        "add_library",
        "add_executable",
        "target_sources",
        "set",
        "list",
        "cuda_add_library",
        "cuda_add_executable",
    }
)
_LINK_COMMANDS = frozenset({"target_link_libraries", "link_libraries"})
_CMAKE_KEYWORDS = frozenset(
    {
        "PUBLIC",
        "PRIVATE",
        "INTERFACE",
        "LINK_PUBLIC",
        "LINK_PRIVATE",
        "LINK_INTERFACE_LIBRARIES",
        "debug",
        "optimized",
        "general",
    }
)


@dataclass(slots=True)
class _CMakeContext:
    text: str
    index: LineIndex
    offload_archs: tuple[str, ...]
    hits: list[Hit] = field(default_factory=list)
    needed_packages: dict[str, int] = field(default_factory=dict)  # package -> hit index
    found_packages: set[str] = field(default_factory=set)
    toolkit_command: CMakeCommand | None = None
    first_use: dict[str, int] = field(default_factory=dict)  # package -> offset of first user


def analyze_cmake(
    text: str, offload_archs: tuple[str, ...] = DEFAULT_OFFLOAD_ARCHS
) -> tuple[list[Hit], CMakeProblem | None]:
    """GP5xx hits in a CMake file, and the syntax problem that stopped reading, if any."""
    commands, problem = cmake_commands(text)
    ctx = _CMakeContext(text, LineIndex(text), offload_archs)
    covered = _hip_marked_sources(commands)
    for command in commands:
        if command.name == "find_package" and command.args:
            ctx.found_packages.add(command.args[0].value.lower())
    uses_cuda_language = False
    for command in commands:
        before = len(ctx.hits)
        _cmake_command_hits(ctx, command, covered)
        uses_cuda_language |= any(h.rule is CMAKE_CUDA_LANGUAGE for h in ctx.hits[before:])
    if uses_cuda_language:
        _minimum_version_hit(ctx, commands)
    _package_insertions(ctx)
    return ctx.hits, problem


def _cmake_command_hits(ctx: _CMakeContext, command: CMakeCommand, covered: set[str]) -> None:
    name = command.name
    args = command.args
    if name in ("enable_language", "check_language"):
        for arg in args:
            if arg.value.upper() == "CUDA":
                _language_hit(ctx, arg, f"{name}(CUDA) needs nvcc")
    elif name == "project" and len(args) > 1:
        for arg in project_languages(args):
            if arg.value.upper() == "CUDA":
                _language_hit(ctx, arg, "project() enables the CUDA language, which needs nvcc")
    elif name == "find_package" and args:
        package = args[0].value
        if package == "CUDA":
            ctx.hits.append(
                Hit(
                    CMAKE_FINDCUDA,
                    args[0].start,
                    args[0].end,
                    "find_package(CUDA) loads FindCUDA, removed in CMake 3.27 and nvcc-only",
                    "cmake-findcuda",
                    ChangeStatus.UNCONVERTED,
                    note="FindCUDA projects need restructuring around enable_language(HIP)",
                )
            )
        elif package == "CUDAToolkit":
            ctx.toolkit_command = command
            keywords = [a.value for a in args[1:] if a.value in ("REQUIRED", "QUIET")]
            new = "find_package(hip" + "".join(f" {k}" for k in keywords) + ")"
            ctx.hits.append(
                Hit(
                    CMAKE_CUDA_TOOLKIT,
                    command.start,
                    command.end,
                    "find_package(CUDAToolkit) looks for nvcc and the CUDA libraries",
                    "cmake-package",
                    ChangeStatus.CONVERTED,
                    (TextEdit(command.start, command.end, new),),
                    fix=f"Use {new}.",
                )
            )
    if name in _FINDCUDA_COMMANDS:
        ctx.hits.append(
            Hit(
                CMAKE_FINDCUDA,
                command.start,
                command.start + len(name),
                f"{name}() comes from FindCUDA, removed in CMake 3.27 and nvcc-only",
                "cmake-findcuda",
                ChangeStatus.UNCONVERTED,
                note="use add_executable/add_library with HIP-language sources instead",
            )
        )
    if name in ("message",):
        return
    _cmake_arch_hits(ctx, command)
    for arg in args:
        _cmake_arg_hits(ctx, command, arg)
    if name in _LINK_COMMANDS:
        for arg in args[1:] if name == "target_link_libraries" else args:
            if (
                not arg.quoted
                and arg.value not in _CMAKE_KEYWORDS
                and IDENTIFIER_RE.fullmatch(arg.value)
            ):
                _bare_link_hit(ctx, command, arg)
    if name in _SOURCE_COMMANDS or (
        name == "file" and args and args[0].value.upper().startswith("GLOB")
    ):
        _cuda_source_hit(ctx, command, covered)
    # nvcc flags written in CMake strings (CMAKE_CUDA_FLAGS, target_compile_options...)
    words = [genex_content(argument_word(a)) for a in args]
    ctx.hits.extend(
        h
        for h in build_word_hits(ctx.text, [words], "cmake", ctx.offload_archs)
        if h.rule is not CUDA_TOOLKIT_PATH  # already found per argument
    )


def _language_hit(ctx: _CMakeContext, arg: CMakeArg, message: str) -> None:
    ctx.hits.append(
        Hit(
            CMAKE_CUDA_LANGUAGE,
            arg.start,
            arg.end,
            message,
            "cmake-language",
            ChangeStatus.CONVERTED,
            (TextEdit(arg.start, arg.end, "HIP"),),
            fix="Use HIP.",
        )
    )


def _minimum_version_hit(ctx: _CMakeContext, commands: Sequence[CMakeCommand]) -> None:
    """HIP as a language needs CMake 3.21; raise an older cmake_minimum_required."""
    for command in commands:
        if command.name != "cmake_minimum_required":
            continue
        values = [a.value for a in command.args]
        if "VERSION" not in values or values.index("VERSION") + 1 >= len(values):
            return
        arg = command.args[values.index("VERSION") + 1]
        low, dots, high = arg.value.partition("...")
        try:
            parts = tuple(int(p) for p in low.split(".")[:2])
        except ValueError:
            return
        if parts >= (3, 21):
            return
        new = "3.21" + (dots + high if dots else "")
        ctx.hits.append(
            Hit(
                CMAKE_CUDA_LANGUAGE,
                arg.start,
                arg.end,
                f"the HIP language needs CMake 3.21; the project asks for {low}",
                "cmake-language",
                ChangeStatus.NEEDS_REVIEW,
                (TextEdit(arg.start, arg.end, new),),
                note="raised the minimum CMake version to 3.21 for the HIP language",
                fix="Require CMake 3.21 or later.",
            )
        )
        return


def _cmake_arch_hits(ctx: _CMakeContext, command: CMakeCommand) -> None:
    """CMAKE_CUDA_ARCHITECTURES / CUDA_ARCHITECTURES: rename, and replace values where set."""
    args = command.args
    targets = ";".join(ctx.offload_archs)
    for position, arg in enumerate(args):
        raw = ctx.text[arg.start : arg.end]
        for match in _ARCH_IDENT_RE.finditer(raw):
            name = match.group("name")
            start = arg.start + match.start()
            end = arg.start + match.end()
            if name == "CUDAARCHS":
                ctx.hits.append(
                    Hit(
                        CUDA_GPU_ARCHITECTURES,
                        start,
                        end,
                        "CUDAARCHS lists NVIDIA GPU architectures",
                        "build-arch",
                        ChangeStatus.UNCONVERTED,
                        note="no HIP-side environment variable; set CMAKE_HIP_ARCHITECTURES",
                    )
                )
                continue
            new_name = (
                "CMAKE_HIP_ARCHITECTURES" if name.startswith("CMAKE_") else "HIP_ARCHITECTURES"
            )
            edits = [TextEdit(start, end, new_name)]
            status = ChangeStatus.CONVERTED
            note = ""
            is_name_arg = arg.value == name
            values = assigned_values(command, position) if is_name_arg else []
            if values:
                edits.append(TextEdit(values[0].start, values[-1].end, f'"{targets}"'))
                status = ChangeStatus.NEEDS_REVIEW
                note = _arch_note(ctx.offload_archs)
            shown = ", ".join(v.value for v in values)
            ctx.hits.append(
                Hit(
                    CUDA_GPU_ARCHITECTURES,
                    start,
                    end,
                    f"{name} selects NVIDIA GPU architectures" + (f" ({shown})" if shown else ""),
                    "build-arch",
                    status,
                    tuple(edits),
                    note=note,
                    fix=f"Use {new_name} with gfx targets ({targets}).",
                    after=new_name,
                )
            )


def _cmake_arg_hits(ctx: _CMakeContext, command: CMakeCommand, arg: CMakeArg) -> None:
    raw_start, raw_end = arg.start, arg.end
    raw = ctx.text[raw_start:raw_end]
    ctx.hits.extend(cuda_path_hits(ctx.text, raw_start, raw_end))
    for match in _CUDA_TARGET_RE.finditer(raw):
        _cuda_target_hit(
            ctx, command, arg.start + match.start(), arg.start + match.end(), match.group(0)
        )
    for match in _CMAKE_SETTING_RE.finditer(raw):
        _setting_hit(ctx, command, arg, arg.start + match.start(), arg.start + match.end(), match)
    if command.name not in _FINDCUDA_COMMANDS:
        for match in _FINDCUDA_VARIABLE_RE.finditer(raw):
            if command.name == "find_package":
                continue
            ctx.hits.append(
                Hit(
                    CMAKE_FINDCUDA,
                    arg.start + match.start(),
                    arg.start + match.end(),
                    f"{match.group(0)} is set by FindCUDA, removed in CMake 3.27",
                    "cmake-findcuda",
                    ChangeStatus.UNCONVERTED,
                    note="FindCUDA variables have no HIP counterpart; use ROCm package targets",
                )
            )


def _cuda_target_hit(
    ctx: _CMakeContext, command: CMakeCommand, start: int, end: int, target: str
) -> None:
    library = kb.library_for_cmake_target(target)
    if library is None:
        ctx.hits.append(
            Hit(
                CMAKE_CUDA_TARGET,
                start,
                end,
                f"{target} is a CUDA toolkit target",
                "cmake-target",
                ChangeStatus.UNCONVERTED,
                note=f"the knowledge base has no ROCm counterpart for {target}",
            )
        )
        return
    status, edits, note = _library_replacement(ctx.text, library, start, end, "cmake")
    ctx.hits.append(
        Hit(
            CMAKE_CUDA_TARGET,
            start,
            end,
            f"{target} is a CUDA toolkit target; ROCm's counterpart is {library.amd_counterpart}",
            "cmake-target",
            status,
            edits,
            note=note,
        )
    )
    if edits and library.amd_find_package:
        package = library.amd_find_package
        ctx.needed_packages.setdefault(package, len(ctx.hits) - 1)
        ctx.first_use.setdefault(package, command.start)


def _bare_link_hit(ctx: _CMakeContext, command: CMakeCommand, arg: CMakeArg) -> None:
    library = kb.library_for_link_name(arg.value)
    if (
        library is None
        or not library.link_names
        or arg.value.lower() not in {n.lower() for n in library.link_names}
    ):
        return
    status, edits, note = _library_replacement(ctx.text, library, arg.start, arg.end, "cmake")
    ctx.hits.append(
        Hit(
            CUDA_LINK_LIBRARIES,
            arg.start,
            arg.end,
            f"links {library.name} ({arg.value}); ROCm's counterpart is {library.amd_counterpart}",
            "build-link",
            status,
            edits,
            note=note,
        )
    )
    if edits and library.amd_find_package and library.amd_cmake_targets:
        ctx.needed_packages.setdefault(library.amd_find_package, len(ctx.hits) - 1)
        ctx.first_use.setdefault(library.amd_find_package, command.start)


def _setting_hit(
    ctx: _CMakeContext,
    command: CMakeCommand,
    arg: CMakeArg,
    start: int,
    end: int,
    match: re.Match[str],
) -> None:
    if match.group("genex"):
        genex = match.group("genex")
        if genex == "$<COMPILE_LANGUAGE:CUDA>":
            edits: tuple[TextEdit, ...] = (TextEdit(start, end, "$<COMPILE_LANGUAGE:HIP>"),)
            status, note = ChangeStatus.CONVERTED, ""
        else:
            edits, status, note = (
                (),
                ChangeStatus.UNCONVERTED,
                "compiler ids differ on ROCm (Clang)",
            )
        ctx.hits.append(
            Hit(
                CMAKE_CUDA_SETTINGS,
                start,
                end,
                f"{genex} only matches CUDA-language sources",
                "cmake-setting",
                status,
                edits,
                note=note,
            )
        )
        return
    name = match.group("name")
    if name in _SETTING_NO_COUNTERPART:
        ctx.hits.append(
            Hit(
                CMAKE_CUDA_SETTINGS,
                start,
                end,
                f"{name} is a CUDA-language setting with no HIP counterpart",
                "cmake-setting",
                ChangeStatus.UNCONVERTED,
                note=_SETTING_NO_COUNTERPART[name],
            )
        )
        return
    new = name.replace("CUDA", "HIP", 1)
    status = ChangeStatus.CONVERTED
    note = ""
    edits = (TextEdit(start, end, new),)
    if (
        name == "CMAKE_CUDA_COMPILER"
        and command.name == "set"
        and command.args
        and command.args[0] is arg
    ):
        status = ChangeStatus.UNCONVERTED
        edits = ()
        note = (
            "set CMAKE_HIP_COMPILER to ROCm's clang++ (e.g. /opt/rocm/llvm/bin/clang++), not hipcc"
        )
    elif name.endswith(("_VERSION", "_ID")):
        status = ChangeStatus.NEEDS_REVIEW
        note = "HIP compiler ids and versions differ from nvcc's"
    ctx.hits.append(
        Hit(
            CMAKE_CUDA_SETTINGS,
            start,
            end,
            f"{name} applies to the CUDA language only",
            "cmake-setting",
            status,
            edits,
            note=note,
            fix=f"Use {new}." if edits else "",
        )
    )


def _hip_marked_sources(commands: Sequence[CMakeCommand]) -> set[str]:
    """Source arguments already given ``LANGUAGE HIP`` by set_source_files_properties."""
    covered: set[str] = set()
    for command in commands:
        if command.name != "set_source_files_properties":
            continue
        values = [a.value for a in command.args]
        if "PROPERTIES" not in values:
            continue
        props = values[values.index("PROPERTIES") + 1 :]
        if any(props[i] == "LANGUAGE" and props[i + 1] == "HIP" for i in range(len(props) - 1)):
            covered.update(values[: values.index("PROPERTIES")])
    return covered


def _cuda_source_hit(ctx: _CMakeContext, command: CMakeCommand, covered: set[str]) -> None:
    """``.cu`` sources of one command that nothing marks as HIP yet: mark them after it."""
    args = command.args
    if command.name == "list" and not (args and args[0].value in ("APPEND", "INSERT", "PREPEND")):
        return
    sources = [a for a in args if a.value.endswith(".cu") and "$<" not in a.value]
    if not sources:
        return
    is_glob = command.name == "file"
    if is_glob:
        if len(args) < 2:
            return
        names = f"${{{args[1].value}}}"
        if names in covered:
            return
        covered.add(names)
        what = "globs .cu sources"
    else:
        sources = [a for a in sources if a.value not in covered]
        if not sources:
            return
        covered.update(a.value for a in sources)
        names = " ".join(f'"{a.value}"' if a.quoted else a.value for a in sources)
        count = len(sources)
        what = f"lists {count} .cu source{'s' if count > 1 else ''}"
    marking = f"set_source_files_properties({names} PROPERTIES LANGUAGE HIP)"
    indent = ctx.index.indentation(command.start)
    line_end = ctx.index.line_end(command.end)
    first = sources[0]
    ctx.hits.append(
        Hit(
            CMAKE_CUDA_SOURCES,
            first.start,
            first.end,
            f"{command.name}() {what}, which CMake compiles as CUDA by their extension",
            "cmake-sources",
            ChangeStatus.CONVERTED,
            (TextEdit(line_end, line_end, f"\n{indent}{marking}"),),
            fix=f"Add {marking}.",
            after=marking,
        )
    )


def _package_insertions(ctx: _CMakeContext) -> None:
    """Add ``find_package(<rocm package> REQUIRED)`` for each ROCm target the port links."""
    if ctx.toolkit_command is not None:
        ctx.found_packages.add("hip")  # find_package(CUDAToolkit) becomes find_package(hip)
    for package, hit_index in ctx.needed_packages.items():
        if package.lower() in ctx.found_packages:
            continue
        if ctx.toolkit_command is not None:
            anchor = ctx.toolkit_command
            at = ctx.index.line_end(anchor.end)
            edit = TextEdit(
                at, at, f"\n{ctx.index.indentation(anchor.start)}find_package({package} REQUIRED)"
            )
        else:
            use = ctx.first_use[package]
            at = ctx.index.line_start(use)
            edit = TextEdit(
                at, at, f"{ctx.index.indentation(use)}find_package({package} REQUIRED)\n"
            )
        hit = ctx.hits[hit_index]
        ctx.hits[hit_index] = replace(
            hit,
            edits=(*hit.edits, edit),
            fix=hit.fix or f"Link the ROCm target and add find_package({package} REQUIRED).",
            after=hit.after or hit_after(hit, ctx.text),
        )


# ---------------------------------------------------------------------------------------------
# Scanners


def _problem_skip(source: SourceText, index: LineIndex, problem: CMakeProblem) -> Skipped:
    line, _ = index.position(problem.offset)
    return Skipped(
        source.file.rel,
        SkipKind.SYNTAX,
        f"CMake syntax error ({problem.reason}); the rest of the file was not read",
        line,
        partial=True,
    )


@scanner(FileKind.CMAKE, name="cmake")
def scan_cmake(source: SourceText, enabled: frozenset[str]) -> ScanOutput:
    hits, problem = analyze_cmake(source.text)
    yield from hits_to_findings(source.file.rel, source.text, hits)
    if problem is not None:
        yield _problem_skip(source, LineIndex(source.text), problem)


@scanner(FileKind.MAKEFILE, name="makefile")
def scan_makefile(source: SourceText, enabled: frozenset[str]) -> ScanOutput:
    yield from hits_to_findings(source.file.rel, source.text, analyze_makefile(source.text))


@scanner(FileKind.SHELL, name="shell-build")
def scan_shell_build(source: SourceText, enabled: frozenset[str]) -> ScanOutput:
    yield from hits_to_findings(source.file.rel, source.text, analyze_shell_build(source.text))
