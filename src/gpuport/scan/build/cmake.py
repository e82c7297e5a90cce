"""CMake rules: the CUDA language, FindCUDA, the CUDA toolkit package and targets, CUDA settings
and .cu sources (GP501-GP503, GP505-GP507).

:func:`cmake_hits` walks the commands of one file and hands each to the rules, then to the word
rules of :mod:`gpuport.scan.build.words` (architectures, libraries, paths, nvcc options written
in CMake strings).
"""

from __future__ import annotations

import re
from dataclasses import replace

from gpuport import kb
from gpuport.edits import ChangeStatus, Hit, TextEdit, hit_after
from gpuport.findings import Category, Confidence, Severity
from gpuport.kb import build_tools
from gpuport.rules import case_variants, rule
from gpuport.scan.build.commands import command_hits
from gpuport.scan.build.common import BuildContext, library_replacement
from gpuport.scan.build.words import (
    CUDA_GPU_ARCHITECTURES,
    CUDA_LINK_LIBRARIES,
    CUDA_TOOLKIT_PATH,
    CMakeArchSettings,
    CMakeLinkItem,
    cuda_gpu_architectures,
    cuda_link_libraries,
    cuda_toolkit_path,
)
from gpuport.syntax.cmake import (
    IDENTIFIER_RE,
    CMakeArg,
    CMakeCommand,
    argument_word,
    genex_content,
    project_languages,
)

_HIP_CMAKE_DOC = "https://rocm.docs.amd.com/en/latest/conceptual/cmake-packages.html"

# ---------------------------------------------------------------------------------------------
# GP501

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
    needles=case_variants("cuda"),
)


def cmake_cuda_language(ctx: BuildContext, command: CMakeCommand | None) -> None:
    """GP501: CUDA among a command's languages; at the end of the file (``command`` None), an
    older ``cmake_minimum_required`` raised when the file uses the CUDA language."""
    if command is not None:
        name, args = command.name, command.args
        languages: list[CMakeArg] = []
        message = ""
        if name in ("enable_language", "check_language"):
            message = f"{name}(CUDA) needs nvcc"
            languages = list(args)
        elif name == "project" and len(args) > 1:
            message = "project() enables the CUDA language, which needs nvcc"
            languages = project_languages(args)
        for arg in languages:
            if arg.value.upper() == "CUDA":
                ctx.uses_cuda_language = True
                ctx.add(
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
        return
    if not ctx.uses_cuda_language:
        return
    # HIP as a language needs CMake 3.21: raise the file's first cmake_minimum_required.
    for required in ctx.commands:
        if required.name != "cmake_minimum_required":
            continue
        values = [a.value for a in required.args]
        if "VERSION" not in values or values.index("VERSION") + 1 >= len(values):
            return
        arg = required.args[values.index("VERSION") + 1]
        low, dots, high = arg.value.partition("...")
        try:
            parts = tuple(int(p) for p in low.split(".")[:2])
        except ValueError:
            return
        if parts >= (3, 21):
            return
        new = "3.21" + (dots + high if dots else "")
        ctx.add(
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


# ---------------------------------------------------------------------------------------------
# GP502

# FindCUDA's commands and the variables it sets (kb/build_tools.toml [[findcuda]]).
_FINDCUDA_COMMANDS = frozenset(p.name for p in build_tools.findcuda_names() if p.kind == "command")
_FINDCUDA_VARIABLE_RE = re.compile(
    r"(?<![\w])"
    + build_tools.alternatives(p for p in build_tools.findcuda_names() if p.kind == "variable")
    + r"(?![\w])"
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
    # find_package(CUDA), cuda_add_library() (any case), CUDA_LIBRARIES...
    needles=case_variants("cuda"),
)


def cmake_findcuda_module(ctx: BuildContext, command: CMakeCommand) -> None:
    """GP502: find_package(CUDA), a FindCUDA command, FindCUDA's variables in the arguments."""
    name, args = command.name, command.args
    if name == "find_package" and args and args[0].value == "CUDA":
        ctx.add(
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
    if name in _FINDCUDA_COMMANDS:
        ctx.add(
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
        return
    if name in ("message", "find_package"):
        return
    for arg in args:
        for match in _FINDCUDA_VARIABLE_RE.finditer(ctx.text[arg.start : arg.end]):
            ctx.add(
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


# ---------------------------------------------------------------------------------------------
# GP503

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
    needles=("CUDAToolkit",),
)


def cmake_cuda_toolkit_package(ctx: BuildContext, command: CMakeCommand) -> None:
    """GP503: find_package(CUDAToolkit) becomes find_package(hip)."""
    args = command.args
    if not (command.name == "find_package" and args and args[0].value == "CUDAToolkit"):
        return
    keywords = [a.value for a in args[1:] if a.value in ("REQUIRED", "QUIET")]
    new = "find_package(hip" + "".join(f" {k}" for k in keywords) + ")"
    ctx.add(
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


# ---------------------------------------------------------------------------------------------
# GP505

_CUDA_TARGET_RE = re.compile(r"(?<!\w)(?<!::)CUDA::[A-Za-z0-9_]+")  # also inside $<...:CUDA::x>

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
    needles=("CUDA::",),
)


def cmake_cuda_library_target(ctx: BuildContext, command: CMakeCommand) -> None:
    """GP505: ``CUDA::`` targets in the arguments, replaced by their ROCm package's target."""
    for arg in command.args:
        for match in _CUDA_TARGET_RE.finditer(ctx.text[arg.start : arg.end]):
            start, end, target = arg.start + match.start(), arg.start + match.end(), match.group(0)
            library = kb.library_for_cmake_target(target)
            if library is None:
                ctx.add(
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
                continue
            status, edits, note = library_replacement(ctx.text, library, start, end, "cmake")
            ctx.add(
                Hit(
                    CMAKE_CUDA_TARGET,
                    start,
                    end,
                    f"{target} is a CUDA toolkit target; ROCm's counterpart is "
                    f"{library.amd_counterpart}",
                    "cmake-target",
                    status,
                    edits,
                    note=note,
                )
            )
            if edits and library.amd_find_package:
                ctx.need_package(library.amd_find_package, command)


# ---------------------------------------------------------------------------------------------
# GP506

# Variables and properties of the CUDA language (kb/build_tools.toml [[cmake_setting]]): HIP's
# have the same names with HIP for CUDA (CMake 3.21 and later), unless a note says why not;
# and the generator expressions that test for the CUDA language.
# https://cmake.org/cmake/help/latest/manual/cmake-generator-expressions.7.html
_CMAKE_SETTING_RE = re.compile(
    r"(?<![\w])(?P<name>" + "|".join(p.pattern for p in build_tools.cmake_settings()) + r")(?![\w])"
    r"|(?P<genex>\$<COMPILE_LANGUAGE:CUDA>|\$<COMPILE_LANG_AND_ID:CUDA,[^>]*>)"
)
_SETTING_NO_COUNTERPART = {p.name: p.note for p in build_tools.cmake_settings() if p.note}

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
        " The scan tells a file's settings once, the first naming the other lines (one "
        "decision, carrying them over to HIP, fixes them), and a setting on a line whose "
        "nvcc-only option GP509 reports in that finding; `gpuport port` edits each."
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
    needles=("CUDA_", ":CUDA"),
)


def cmake_cuda_settings(ctx: BuildContext, command: CMakeCommand) -> None:
    """GP506: CUDA-language variables, properties and generator expressions in the arguments."""
    for arg in command.args:
        for match in _CMAKE_SETTING_RE.finditer(ctx.text[arg.start : arg.end]):
            start, end = arg.start + match.start(), arg.start + match.end()
            genex = match.group("genex")
            if genex:
                if genex == "$<COMPILE_LANGUAGE:CUDA>":
                    edits: tuple[TextEdit, ...] = (TextEdit(start, end, "$<COMPILE_LANGUAGE:HIP>"),)
                    status, note = ChangeStatus.CONVERTED, ""
                else:
                    edits, status = (), ChangeStatus.UNCONVERTED
                    note = "compiler ids differ on ROCm (Clang)"
                ctx.add(
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
                continue
            name = match.group("name")
            if name in _SETTING_NO_COUNTERPART:
                ctx.add(
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
                continue
            new = name.replace("CUDA", "HIP", 1)
            status, note = ChangeStatus.CONVERTED, ""
            edits = (TextEdit(start, end, new),)
            if (
                name == "CMAKE_CUDA_COMPILER"
                and command.name == "set"
                and command.args
                and command.args[0] is arg
            ):
                status, edits = ChangeStatus.UNCONVERTED, ()
                note = (
                    "set CMAKE_HIP_COMPILER to ROCm's clang++ (e.g. /opt/rocm/llvm/bin/clang++), "
                    "not hipcc"
                )
            elif name.endswith(("_VERSION", "_ID")):
                status = ChangeStatus.NEEDS_REVIEW
                note = "HIP compiler ids and versions differ from nvcc's"
            ctx.add(
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


# ---------------------------------------------------------------------------------------------
# GP507

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
        " The scan tells a file's lists once, the first naming the other lines (one "
        "decision, marking the file's `.cu` sources as HIP); `gpuport port` marks each."
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
    needles=(".cu",),
)


def cmake_cuda_sources(ctx: BuildContext, command: CMakeCommand) -> None:
    """GP507: ``.cu`` sources of one command that nothing marks as HIP yet: mark them after it."""
    name, args = command.name, command.args
    if not (
        name in _SOURCE_COMMANDS
        or (name == "file" and args and args[0].value.upper().startswith("GLOB"))
    ):
        return
    if name == "list" and not (args and args[0].value in ("APPEND", "INSERT", "PREPEND")):
        return
    sources = [a for a in args if a.value.endswith(".cu") and "$<" not in a.value]
    if not sources:
        return
    covered = ctx.hip_sources
    if name in ("set", "list") and args:
        variable = args[1 if name == "list" else 0].value if len(args) > 1 else ""
        if variable and f"${{{variable}}}" in covered:
            return  # set(GPU_FILES ops.cu) and, later, set_source_files_properties(${GPU_FILES} … HIP)
    if name == "file":
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
    assert ctx.index is not None
    indent = ctx.index.indentation(command.start)
    line_end = ctx.index.line_end(command.end)
    first = sources[0]
    ctx.add(
        Hit(
            CMAKE_CUDA_SOURCES,
            first.start,
            first.end,
            f"{name}() {what}, which CMake compiles as CUDA by their extension",
            "cmake-sources",
            ChangeStatus.CONVERTED,
            (TextEdit(line_end, line_end, f"\n{indent}{marking}"),),
            fix=f"Add {marking}.",
            after=marking,
        )
    )


# ---------------------------------------------------------------------------------------------
# The walk over one file's commands

_LINK_COMMANDS = frozenset({"target_link_libraries", "link_libraries"})
_LINK_KEYWORDS = frozenset(
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
CMAKE_RULES = (
    CMAKE_CUDA_LANGUAGE,
    CMAKE_FINDCUDA,
    CMAKE_CUDA_TOOLKIT,
    CMAKE_CUDA_TARGET,
    CMAKE_CUDA_SETTINGS,
    CMAKE_CUDA_SOURCES,
)
# Both link ROCm targets whose package the file must find: the first of their hits in the
# file carries the find_package edit, so both run whenever they can fire.
CMAKE_STEERING = frozenset({CMAKE_CUDA_TARGET.id, CUDA_LINK_LIBRARIES.id})


def cmake_hits(ctx: BuildContext) -> None:
    """The hits of every build rule in ``ctx.commands``, the commands of one CMake file."""
    run = ctx.run
    for command in ctx.commands:
        if command.name == "find_package" and command.args:
            ctx.found_packages.add(command.args[0].value.lower())
            if command.args[0].value == "CUDAToolkit":
                ctx.toolkit_command = command
        elif command.name == "set_source_files_properties":
            ctx.hip_sources.update(_hip_marked(command))
    checks = [
        (rule_, check)
        for rule_, check in (
            (CMAKE_CUDA_LANGUAGE, cmake_cuda_language),
            (CMAKE_FINDCUDA, cmake_findcuda_module),
            (CMAKE_CUDA_TOOLKIT, cmake_cuda_toolkit_package),
        )
        if run.runs(rule_)
    ]
    arch, paths, targets, settings, links, sources = (
        run.runs(CUDA_GPU_ARCHITECTURES),
        run.runs(CUDA_TOOLKIT_PATH),
        run.runs(CMAKE_CUDA_TARGET),
        run.runs(CMAKE_CUDA_SETTINGS),
        run.runs(CUDA_LINK_LIBRARIES),
        run.runs(CMAKE_CUDA_SOURCES),
    )
    for command in ctx.commands:
        for _, check in checks:
            check(ctx, command)
        if command.name in ("message", "option"):  # prose, not settings (an option's help text)
            continue
        if arch:
            cuda_gpu_architectures(ctx, CMakeArchSettings(command))
        if paths:
            for arg in command.args:
                cuda_toolkit_path(ctx, arg.start, arg.end)
        if targets:
            cmake_cuda_library_target(ctx, command)
        if settings:
            cmake_cuda_settings(ctx, command)
        if links and command.name in _LINK_COMMANDS:
            items = command.args[1:] if command.name == "target_link_libraries" else command.args
            for arg in items:
                if (
                    not arg.quoted
                    and arg.value not in _LINK_KEYWORDS
                    and IDENTIFIER_RE.fullmatch(arg.value)
                ):
                    cuda_link_libraries(ctx, CMakeLinkItem(command, arg))
        if sources:
            cmake_cuda_sources(ctx, command)
        # nvcc options, architectures and libraries written in CMake strings
        command_hits(ctx, [[genex_content(argument_word(a)) for a in command.args]])
    if run.runs(CMAKE_CUDA_LANGUAGE):
        cmake_cuda_language(ctx, None)
    _find_needed_packages(ctx)


def _hip_marked(command: CMakeCommand) -> list[str]:
    """The sources ``set_source_files_properties(... PROPERTIES LANGUAGE HIP)`` marks."""
    values = [a.value for a in command.args]
    if "PROPERTIES" not in values:
        return []
    props = values[values.index("PROPERTIES") + 1 :]
    if any(props[i] == "LANGUAGE" and props[i + 1] == "HIP" for i in range(len(props) - 1)):
        return values[: values.index("PROPERTIES")]
    return []


def _find_needed_packages(ctx: BuildContext) -> None:
    """Add ``find_package(<rocm package> REQUIRED)`` for each ROCm target the port links.

    The edit joins the first hit that needs the package, whichever rule it is of.
    """
    assert ctx.index is not None
    index, hits = ctx.index, ctx.run.hits
    if ctx.toolkit_command is not None:
        ctx.found_packages.add("hip")  # find_package(CUDAToolkit) becomes find_package(hip)
    for package, hit_index in ctx.needed_packages.items():
        if package.lower() in ctx.found_packages:
            continue
        if ctx.toolkit_command is not None:
            anchor = ctx.toolkit_command
            at = index.line_end(anchor.end)
            edit = TextEdit(
                at, at, f"\n{index.indentation(anchor.start)}find_package({package} REQUIRED)"
            )
        else:
            use = ctx.first_use[package]
            at = index.line_start(use)
            edit = TextEdit(at, at, f"{index.indentation(use)}find_package({package} REQUIRED)\n")
        hit = hits[hit_index]
        hits[hit_index] = replace(
            hit,
            edits=(*hit.edits, edit),
            fix=hit.fix or f"Link the ROCm target and add find_package({package} REQUIRED).",
            after=hit.after or hit_after(hit, ctx.text),
        )
