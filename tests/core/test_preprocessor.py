"""The #if evaluator: which regions a ROCm build of a C/C++/CUDA file never compiles."""

from __future__ import annotations

import time

from hypothesis import given, settings
from hypothesis import strategies as st

from gpuport.syntax.cxx import code_only
from gpuport.syntax.preprocessor import (
    can_matter,
    conditions,
    has_conditionals,
    is_nvidia_only,
    names_rocm_macro,
    rocm_flag,
)


def dead_words(source: str, rocm_macros: frozenset[str] = frozenset()) -> set[str]:
    """The words on lines ROCm never compiles (one marker word per code line in the tests)."""
    code = code_only(source)
    found = conditions(code, rocm_macros)
    words: set[str] = set()
    offset = 0
    for line in source.splitlines(keepends=True):
        stripped = line.strip()
        if stripped and not stripped.startswith("#") and found.is_dead(offset):
            words.add(stripped.rstrip(";()"))
        offset += len(line)
    return words


def test_else_of_use_rocm_is_dead() -> None:
    src = "#ifdef USE_ROCM\nrocm();\n#else\ncuda();\n#endif\nafter();\n"
    assert dead_words(src) == {"cuda"}


def test_ifndef_use_rocm_is_dead() -> None:
    src = "#ifndef USE_ROCM\ncuda();\n#endif\n#if !defined(__HIP_PLATFORM_AMD__)\nnv();\n#endif\n"
    assert dead_words(src) == {"cuda", "nv"}


def test_an_include_guard_named_for_hip_is_live_on_first_inclusion() -> None:
    # AutoGPTQ's exllama/hip_compat.cuh opens with `#ifndef _hip_compat_cuh`: a guard, not a
    # ROCm switch, so its body is compiled; `#ifndef USE_ROCM` with no #define after stays dead.
    guarded = "#ifndef _hip_compat_cuh\n#define _hip_compat_cuh\nbody();\n#endif\n"
    assert dead_words(guarded) == set()
    not_defined = "#if !defined(HIP_COMPAT_H)\n#define HIP_COMPAT_H\nbody();\n#endif\n"
    assert dead_words(not_defined) == set()
    inner = guarded.replace("body();", "#ifndef USE_ROCM\ncuda();\n#endif")
    assert dead_words(inner) == {"cuda"}
    assert dead_words("#ifndef USE_ROCM\ncuda();\n#endif\n") == {"cuda"}


def test_cuda_arch_version_checks_are_dead_and_their_fallback_live() -> None:
    src = (
        "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\nampere();\n"
        "#elif defined(SOMETHING)\nmaybe();\n#else\nfallback();\n#endif\n"
        "#if __CUDA_ARCH__ == 750\nturing();\n#endif\n"
        "#ifdef __CUDA_ARCH__\ndevice();\n#else\nhost();\n#endif\n"
    )
    assert dead_words(src) == {"ampere", "turing", "device"}


def test_unknown_conditions_stay_live() -> None:
    src = (
        "#if CUDA_VERSION >= 12000\nnew_api();\n#else\nold_api();\n#endif\n"
        "#ifdef __HIP_DEVICE_COMPILE__\ndev();\n#else\nhost();\n#endif\n"
        "#if __has_include(<cuda_fp8.h>)\nfp8();\n#endif\n"
        "#if 1 +\nbroken();\n#endif\n"
    )
    assert dead_words(src) == set()


def test_elif_after_a_taken_branch_is_dead() -> None:
    src = (
        "#if defined(USE_ROCM)\nrocm();\n#elif __CUDA_ARCH__ >= 900\nhopper();\n"
        "#elif defined(X)\nx();\n#else\nother();\n#endif\n"
    )
    assert dead_words(src) == {"hopper", "x", "other"}


def test_nesting_inside_a_dead_region_is_dead() -> None:
    src = (
        "#ifndef USE_ROCM\n#if X\na();\n#else\nb();\n#endif\n#endif\n"
        "#ifdef X\n#ifndef __HIPCC__\nc();\n#endif\nd();\n#endif\n"
    )
    assert dead_words(src) == {"a", "b", "c"}


def test_continuations_comments_and_arithmetic() -> None:
    src = (
        "#if defined(__HIP_PLATFORM_AMD__) /* AMD */ \\\n  && (2 * 3 + 1 == 7)\nyes();\n"
        "#else\nno();\n#endif\n"
        "#if (1 << 4) % 5 != 1 || 0\nmath();\n#endif\n"
        "#if 0x10 > 010 ? 0 : 1\nternary();\n#endif\n"
    )
    assert dead_words(src) == {"no", "math", "ternary"}


def test_project_macros_and_rocm_named_macros() -> None:
    src = (
        "#ifdef WITH_GFX_KERNELS\nx();\n#else\nnot_x();\n#endif\n"
        "#if BUILD_HIP\nhip();\n#else\nnot_hip();\n#endif\n"
        "#if !GGML_USE_HIP\nggml_cuda();\n#endif\n"
        "#ifdef __HIP_PLATFORM_NVIDIA__\nnvidia();\n#endif\n"
    )
    assert dead_words(src, frozenset({"WITH_GFX_KERNELS"})) == {
        "not_x",
        "not_hip",
        "ggml_cuda",
        "nvidia",
    }
    # without the project's fact, a macro not named for ROCm is unknown: both branches live
    assert "not_x" not in dead_words(src)


def test_rocm_flag_reads_the_words_of_a_name() -> None:
    assert rocm_flag("USE_ROCM") is True
    assert rocm_flag("IS_ROCM") is True
    assert rocm_flag("GGML_USE_HIP") is True
    assert rocm_flag("HIP_VERSION") is None  # defined, value unknown
    assert rocm_flag("__HIP_PLATFORM_NVIDIA__") is False
    assert rocm_flag("NO_HIP") is False
    assert rocm_flag("SHIP_IT") is False
    assert is_nvidia_only("__CUDA_ARCH_FEAT_SM90_ALL")
    assert is_nvidia_only("__CUDACC_VER_MAJOR__")
    assert not is_nvidia_only("__CUDACC__")  # hipify tools rewrite it: unknown


def test_local_defines_are_followed_in_order() -> None:
    src = (
        "#define HAS_FP8 0\n#if HAS_FP8\nfp8();\n#endif\n"
        "#undef HAS_FP8\n#define HAS_FP8 (1 + 1)\n#if HAS_FP8 == 2\nfp8_two();\n#endif\n"
        "#ifdef MAYBE\n#define LATER 1\n#endif\n#if LATER\nlater();\n#endif\n"
        "#ifndef USE_ROCM\n#define CUDA_ONLY 1\n#endif\n#ifdef CUDA_ONLY\nc();\n#endif\n"
    )
    assert dead_words(src) == {"fp8", "c"}


def test_defines_remember_their_branch_and_rocm_aliases() -> None:
    src = (
        "#ifndef USE_ROCM\n#define WARP_SHFL_XOR __shfl_xor_sync\n#else\n"
        "#define __shfl_xor_sync(mask, var, lane) __shfl_xor(var, lane)\n#endif\n"
        "#if defined(USE_ROCM) || defined(__HIPCC__)\n#define __ballot_sync(m, p) __ballot(p)\n"
        "#endif\n#define NUM_WARPS (1024 / warpSize)\n"
        "#ifdef USE_ROCM\n#define LOCAL_HELPER 1\n#define cudaStream_t hipStream_t\n#endif\n"
    )
    found = conditions(code_only(src))
    by_name = {d.name: d for d in found.defines}
    assert "WARP_SHFL_XOR" not in by_name  # dead on ROCm: not remembered
    shfl = by_name["__shfl_xor_sync"]
    assert shfl.params == ("mask", "var", "lane")
    assert shfl.body == "__shfl_xor(var, lane)"
    assert shfl.compiled is True and shfl.rocm_branch
    assert by_name["NUM_WARPS"].params is None and not by_name["NUM_WARPS"].rocm_branch
    # a project's own name defined for ROCm is no alias of a CUDA name
    assert found.rocm_aliases() == {"__shfl_xor_sync", "__ballot_sync", "cudaStream_t"}


def test_stray_else_and_unclosed_if() -> None:
    assert dead_words("#else\na();\n#endif\nb();\n") == set()
    assert dead_words("#ifndef USE_ROCM\na();\n") == {"a"}


def test_has_conditionals() -> None:
    assert has_conditionals("#if X\n#endif\n")
    assert has_conditionals("  #  elif X\n")
    assert not has_conditionals('#include "x.h"\n#define A 1\n')


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "#if X\n",
                "#ifdef USE_ROCM\n",
                "#ifndef __HIPCC__\n",
                "#elif __CUDA_ARCH__ >= 800\n",
                "#elif (\n",
                "#else\n",
                "#endif\n",
                "#define X 1\n",
                "#undef X\n",
                "code();\n",
                "\\\n",
                "/* c */",
                "#if defined(\n",
            ]
        ),
        max_size=40,
    )
)
def test_any_directive_soup_gives_disjoint_ordered_spans(pieces: list[str]) -> None:
    code = code_only("".join(pieces))
    spans = conditions(code).dead
    last = 0
    for start, end in spans:
        assert last <= start < end <= len(code)
        last = end


def test_time_grows_linearly_with_the_directives() -> None:
    block = "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\na();\n#else\nb();\n#endif\n"

    def best(n: int) -> float:
        code = code_only(block * n)
        times = []
        for _ in range(3):
            start = time.perf_counter()
            conditions(code)
            times.append(time.perf_counter() - start)
        return min(times)

    small, large = best(2_000), best(8_000)
    assert large < small * 4 * 2.5  # linear, with room for a loaded machine


def test_names_rocm_macro() -> None:
    assert names_rocm_macro("#if __CUDA_ARCH__ >= 700 || defined(USE_ROCM)")
    assert names_rocm_macro("#if defined(__HIPCC__)")
    assert names_rocm_macro("#if X || Y", frozenset({"Y"}))
    assert not names_rocm_macro("#if __CUDA_ARCH__ >= 700 || defined(X)")
    assert not names_rocm_macro("#ifdef __HIP_PLATFORM_NVIDIA__")


def test_macros_defined_only_for_cuda_are_remembered_and_taken_as_undefined_elsewhere() -> None:
    header = (
        "#ifdef __HIP_PLATFORM_AMD__\nconstexpr int width = 64;\n#else\n"
        "#if __CUDA_ARCH__ >= 530\n#define PTX_AVAILABLE\n#endif\n#define BOTH 1\n#endif\n"
        "#define BOTH 1\n"
    )
    assert conditions(code_only(header)).cuda_only_macros == {"PTX_AVAILABLE"}
    user = "#ifdef PTX_AVAILABLE\nasm_path();\n#else\nplain_path();\n#endif\n"
    assert dead_words(user) == set()  # alone, PTX_AVAILABLE is unknown
    code = code_only(user)
    found = conditions(code, never_defined=frozenset({"PTX_AVAILABLE"}))
    assert found.is_dead(code.index("asm_path")) and not found.is_dead(code.index("plain"))
    # a file that defines it itself wins over what the project's headers say
    own = "#define PTX_AVAILABLE\n" + user
    code = code_only(own)
    found = conditions(code, never_defined=frozenset({"PTX_AVAILABLE"}))
    assert not found.is_dead(code.index("asm_path"))


def test_can_matter_only_with_a_decidable_name() -> None:
    assert not can_matter("#ifndef MY_HEADER_H\n#define MY_HEADER_H\n#endif\n")
    assert can_matter("#ifndef USE_ROCM\n#endif\n")
    assert can_matter("#if __CUDA_ARCH__ >= 800\n#endif\n")
    assert can_matter("#ifdef PTX_AVAILABLE\n#endif\n", frozenset({"PTX_AVAILABLE"}))
    assert not can_matter("#define USE_ROCM 1\n")  # no #if at all


def test_rocm_only_is_a_branch_every_rocm_build_and_no_cuda_build_compiles() -> None:
    src = (
        "#ifdef __HIP_PLATFORM_AMD__\nint amd_all;\n#if defined(__GFX9__)\nint gfx9;\n#else\n"
        "int rdna;\n#endif\nint amd_again;\n#else\nint nvidia;\n#endif\n"
        "#ifndef USE_ROCM\nint cuda_side;\n#else\nint rocm_else;\n#endif\n"
        "#if defined(USE_ROCM) || defined(__CUDACC__)\nint both;\n#endif\nint everywhere;\n"
    )
    code = code_only(src)
    found = conditions(code)

    def at(word: str) -> bool:
        return found.rocm_only(code.index(word))

    assert at("amd_all") and at("amd_again") and at("rocm_else")
    # a test of the GPU target between: not every ROCm build, so not "every AMD GPU"
    assert not at("gfx9") and not at("rdna")
    assert not at("nvidia") and not at("cuda_side") and not at("everywhere")
    assert not at("both")  # a CUDA build may compile it too
    assert not conditions(code_only("int plain;\n")).rocm_only(0)
