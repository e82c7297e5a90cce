"""NVIDIA-only sources of a CMake build: files only its CUDA branch compiles.

bitsandbytes' pattern: ``if(BUILD_CUDA)`` appends ``csrc/gemm_4bit_sm80.cu`` to the sources,
``elseif(BUILD_HIP)`` does not; the ROCm build compiles its own list instead. A branch counts
only when its condition names the backend plainly (``BUILD_HIP``, ``USE_ROCM``, ``BUILD_CUDA``;
no ``NOT``); sources outside such branches are common to both builds.
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from gpuport.project.model import Component, ComponentStatus, Evidence
from gpuport.project.texts import SOURCE_BUDGET, SOURCE_BYTES, ProjectTexts, is_project_file
from gpuport.syntax.text import LineIndex

if TYPE_CHECKING:
    from gpuport.syntax.cmake import CMakeCommand

_SOURCE_RE = re.compile(r"^[\w./-]+\.(?:cu|cuh|cpp|cc|cxx|c|hip)$", re.IGNORECASE)
_ROCM_WORD_RE = re.compile(r"HIP|ROCM", re.IGNORECASE)
_CUDA_WORD_RE = re.compile(r"CUDA", re.IGNORECASE)
_SOURCE_COMMANDS = frozenset({"set", "list", "add_library", "target_sources", "cuda_add_library"})


def cmake_nvidia_only(
    root: Path, texts: ProjectTexts, rel: str, alternative_hint: str
) -> list[Component]:
    """Components of one CMakeLists.txt: CUDA-branch sources neither the ROCm branch nor the
    common part compiles; a folder when all its sources are such, else each file."""
    text = texts.text(rel)
    if text is None:
        return []
    from gpuport.syntax.cmake import cmake_commands  # only for a project with CMake files

    commands, _problem = cmake_commands(text)
    base = rel.rsplit("/", 1)[0] if "/" in rel else ""
    lines = LineIndex(text)
    sources: dict[str, dict[str, int]] = {"cuda": {}, "rocm": {}, "common": {}}
    for command, where in _branch_walk(commands):
        if command.name in _SOURCE_COMMANDS:
            words = [a.value for a in command.args]
            for word in words:
                if _SOURCE_RE.match(word) and ".." not in word:
                    path = f"{base}/{word}".strip("/") if base else word
                    sources[where].setdefault(path, lines.position(command.start)[0])
    if not sources["rocm"]:
        return []
    cuda_only = {
        path: line
        for path, line in sources["cuda"].items()
        if path not in sources["rocm"]
        and path not in sources["common"]
        and is_project_file(root, path)
    }
    built_elsewhere = {*sources["rocm"], *sources["common"]}
    alternative = ", ".join(sorted(sources["rocm"])[:4]) or alternative_hint
    by_folder: dict[str, list[str]] = defaultdict(list)
    for path in cuda_only:
        by_folder[path.rpartition("/")[0]].append(path)
    out: list[Component] = []
    for folder, paths in sorted(by_folder.items()):
        shared = any(p.rpartition("/")[0] == folder for p in built_elsewhere)
        units = paths if shared or not folder else [folder]
        for unit in sorted(units):
            first = min(paths if unit == folder else [unit], key=lambda p: cuda_only[p])
            why = f"CMake compiles {unit} only in its CUDA branch"
            evidence = (Evidence(rel, cuda_only[first], why),)
            out.append(Component(unit, ComponentStatus.NVIDIA_ONLY, evidence, alternative))
    return out


def _branch_walk(commands: list[CMakeCommand]) -> Iterator[tuple[CMakeCommand, str]]:
    """Each command with the backend branch it sits in: "cuda", "rocm" or "common"."""
    stack: list[str] = []  # each open if(): "cuda", "rocm" or "" (neither)
    for command in commands:
        name = command.name
        words = [a.value for a in command.args]
        if name == "if":
            stack.append(_backend(words))
        elif name == "elseif" and stack:
            stack[-1] = _backend(words)
        elif name == "else" and stack:
            stack[-1] = ""
        elif name == "endif" and stack:
            stack.pop()
        else:
            yield command, next((b for b in reversed(stack) if b), "common")


_DEFINITION_COMMANDS = frozenset(
    {"add_compile_definitions", "add_definitions", "target_compile_definitions"}
)
_SCOPES = frozenset({"PUBLIC", "PRIVATE", "INTERFACE"})
_DEFINITION_RE = re.compile(r"^(?:-D)?([A-Za-z_]\w*)(?:=.*)?$")


def cuda_only_definitions(texts: ProjectTexts, rel: str) -> dict[str, int]:
    """Macros one CMakeLists.txt with a ROCm branch defines only in its CUDA branch, with the
    line of the first definition (bitsandbytes' ``if(BUILD_CUDA)`` …
    ``add_compile_definitions(BNB_HAS_GEMM4BIT_SM75)`` … ``elseif(BUILD_HIP)``): the ROCm build
    never defines them, so ``#if defined(BNB_HAS_GEMM4BIT_SM75)`` is dead there. A file without
    a ROCm branch says nothing about ROCm (pytorch_scatter's ``-DWITH_CUDA``, which its
    setup.py defines for ROCm too)."""
    text = texts.text(rel)
    if text is None:
        return {}
    from gpuport.syntax.cmake import cmake_commands  # only for a project with CMake files

    commands, _problem = cmake_commands(text)
    lines = LineIndex(text)
    defined: dict[str, dict[str, int]] = {"cuda": {}, "rocm": {}, "common": {}}
    for command, where in _branch_walk(commands):
        if command.name not in _DEFINITION_COMMANDS:
            continue
        line = lines.position(command.start)[0]
        args = command.args[1:] if command.name == "target_compile_definitions" else command.args
        for arg in args:
            if arg.value in _SCOPES:
                continue
            m = _DEFINITION_RE.match(arg.value)
            if m is not None and (command.name != "add_definitions" or arg.value.startswith("-D")):
                defined[where].setdefault(m.group(1), line)
    if not defined["rocm"]:
        return {}
    return {
        name: line
        for name, line in defined["cuda"].items()
        if name not in defined["rocm"] and name not in defined["common"]
    }


def _backend(words: list[str]) -> str:
    if "NOT" in words:
        return ""
    text = " ".join(words)
    if _ROCM_WORD_RE.search(text):
        return "rocm"
    if _CUDA_WORD_RE.search(text):
        return "cuda"
    return ""


# A CMake build that compiles CUDA: the language enabled, or CUDA found the old way.
_CMAKE_CUDA_RE = re.compile(
    r"enable_language\s*\(\s*CUDA\b|\bLANGUAGES\b[^)]*\bCUDA\b|find_package\s*\(\s*CUDA(?:Toolkit)?\b"
    r"|project\s*\([^)]*\bCUDA\b",
    re.IGNORECASE,
)
# Any mention of ROCm or HIP ("hipcc", "BUILD_HIP", "find_package(hip)"), not "ship".
_ROCM_MENTION_RE = re.compile(r"rocm|(?<![a-z])hip", re.IGNORECASE)
# A Python build that runs CMake (scikit-build, a cmake call in setup.py, cmake in requires).
_RUNS_CMAKE_RE = re.compile(r"cmake", re.IGNORECASE)
# setup.py builds PyTorch extensions: on a ROCm PyTorch, cpp_extension hipifies their sources.
_TORCH_EXTENSION_RE = re.compile(r"\bcpp_extension\b|\bCUDAExtension\b")


def separate_cuda_cmake(
    root: Path, texts: ProjectTexts, python_builds: list[str], rocm_switch: Callable[[str], int]
) -> list[Component]:
    """A CMakeLists.txt beside a setup.py that builds the package's PyTorch extensions with a
    ROCm branch, when that CMake build is a second, CUDA-only one the Python build never runs
    (pytorch_scatter's C++-API build: ``option(WITH_CUDA)``, ``enable_language(CUDA)``, no HIP
    anywhere; its README builds it by hand with ``cmake``). On ROCm the project builds the
    package with setup.py; the CMake build is NVIDIA-only.

    ``python_builds``: every setup.py, pyproject and build helper of the project (none may run
    CMake); ``rocm_switch``: the line of a setup.py's ROCm switch (0: none)."""
    if any(_RUNS_CMAKE_RE.search(texts.text(rel) or "") for rel in python_builds):
        return []
    out: list[Component] = []
    for setup in python_builds:
        if not setup.endswith("setup.py"):
            continue
        text = texts.text(setup) or ""
        switch = rocm_switch(setup)
        if not switch or not _TORCH_EXTENSION_RE.search(text):
            continue
        base = setup.rpartition("/")[0]
        cmake = f"{base}/CMakeLists.txt" if base else "CMakeLists.txt"
        cmake_text = texts.text(cmake) if is_project_file(root, cmake) else None
        if cmake_text is None or _ROCM_MENTION_RE.search(cmake_text):
            continue
        enabled = _CMAKE_CUDA_RE.search(cmake_text)
        if enabled is None:
            continue
        line = LineIndex(cmake_text).position(enabled.start())[0]
        evidence = (
            Evidence(
                cmake,
                line,
                "a second build of the C++ library whose only GPU language is CUDA; it names "
                "no HIP, and no Python build file runs CMake",
            ),
            Evidence(setup, switch, "the package's build, with its ROCm branch"),
        )
        alternative = f"{setup} (its ROCm branch; torch's cpp_extension hipifies the sources)"
        out.append(Component(cmake, ComponentStatus.NVIDIA_ONLY, evidence, alternative))
    return out


def cmake_cuda_only_macros(
    texts: ProjectTexts, cmake_files: list[str], python_builds: list[str], sources: list[str]
) -> frozenset[str]:
    """Macros the project's CMake builds define only in their CUDA branches
    (:func:`cuda_only_definitions`), unless a Python build file names them (it may define them
    for ROCm: ``define_macros``, ``-D``) or a project header or source ``#define``s them."""
    found: set[str] = set()
    for rel in cmake_files:
        if rel.lower().endswith("cmakelists.txt"):
            found.update(cuda_only_definitions(texts, rel))
    for rel in python_builds:
        text = texts.text(rel) or ""
        found = {name for name in found if name not in text}
    if not found:
        return frozenset()
    defines = re.compile(
        rb"#[ \t]*define[ \t]+(" + "|".join(map(re.escape, found)).encode() + rb")\b"
    )
    spent = 0
    for rel in sources:
        if spent >= SOURCE_BUDGET:
            return frozenset()  # not every file was read: a definition may be missed
        data = texts.data(rel, SOURCE_BYTES)
        if data is None:
            continue
        spent += len(data)
        for m in defines.finditer(data):
            found.discard(m.group(1).decode())
    return frozenset(found)


def optional_cuda_subbuilds(root: Path, texts: ProjectTexts, rel: str) -> list[Component]:
    """Sub-builds one CMakeLists.txt adds only when an ``option()`` that is OFF by default is
    turned on, whose own CMakeLists.txt compiles CUDA and names no HIP/ROCm (TransformerEngine's
    ``option(NVTE_ENABLE_NVSHMEM ... OFF)`` / ``if (NVTE_ENABLE_NVSHMEM)``
    ``add_subdirectory(nvshmem_api)``, an NVSHMEM helper library): opt-in NVIDIA-only code that
    a ROCm build leaves off."""
    text = texts.text(rel)
    if text is None or "add_subdirectory" not in text:
        return []
    from gpuport.syntax.cmake import cmake_commands  # only for a project with CMake files

    commands, _problem = cmake_commands(text)
    lines = LineIndex(text)
    off: dict[str, int] = {}  # options OFF by default, with their line
    stack: list[str | None] = []  # each open if(): the OFF option it tests alone, or None
    base = rel.rpartition("/")[0]
    out: list[Component] = []
    for command in commands:
        words = [a.value for a in command.args]
        if command.name == "option" and len(words) >= 3 and words[-1].upper() == "OFF":
            off.setdefault(words[0], lines.position(command.start)[0])
        elif command.name == "if":
            stack.append(words[0] if len(words) == 1 and words[0] in off else None)
        elif command.name in ("elseif", "else") and stack:
            stack[-1] = None
        elif command.name == "endif" and stack:
            stack.pop()
        elif command.name == "add_subdirectory" and words and stack and stack[-1]:
            if any(s is None for s in stack):
                continue  # also under another test: leave it
            folder = posixpath.normpath(posixpath.join(base, words[0])) if base else words[0]
            sub = f"{folder}/CMakeLists.txt"
            sub_text = texts.text(sub) if is_project_file(root, sub) else None
            if sub_text is None or _ROCM_MENTION_RE.search(sub_text):
                continue
            if not _CMAKE_CUDA_RE.search(sub_text):
                continue
            option = stack[-1]
            why = (
                f"added only when the option {option}, OFF by default ({rel}:{off[option]}), is "
                "turned on; it compiles CUDA and names no HIP"
            )
            line = lines.position(command.start)[0]
            out.append(Component(folder, ComponentStatus.NVIDIA_ONLY, (Evidence(rel, line, why),)))
    return out
