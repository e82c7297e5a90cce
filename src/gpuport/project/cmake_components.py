"""NVIDIA-only sources of a CMake build: files only its CUDA branch compiles.

bitsandbytes' pattern: ``if(BUILD_CUDA)`` appends ``csrc/gemm_4bit_sm80.cu`` to the sources,
``elseif(BUILD_HIP)`` does not; the ROCm build compiles its own list instead. A branch counts
only when its condition names the backend plainly (``BUILD_HIP``, ``USE_ROCM``, ``BUILD_CUDA``;
no ``NOT``); sources outside such branches are common to both builds.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

from gpuport.project.model import Component, ComponentStatus, Evidence
from gpuport.project.texts import ProjectTexts, is_project_file
from gpuport.syntax.cmake import cmake_commands
from gpuport.syntax.text import LineIndex

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
    commands, _problem = cmake_commands(text)
    base = rel.rsplit("/", 1)[0] if "/" in rel else ""
    lines = LineIndex(text)
    sources: dict[str, dict[str, int]] = {"cuda": {}, "rocm": {}, "common": {}}
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
        elif name in _SOURCE_COMMANDS:
            where = next((b for b in reversed(stack) if b), "common")
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


def _backend(words: list[str]) -> str:
    if "NOT" in words:
        return ""
    text = " ".join(words)
    if _ROCM_WORD_RE.search(text):
        return "rocm"
    if _CUDA_WORD_RE.search(text):
        return "cuda"
    return ""
