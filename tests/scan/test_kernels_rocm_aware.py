"""The kernel rules in code that already has a ROCm path: #if branches, the project's ROCm
macros and aliases, its own headers, PyTorch extensions and warpSize through macros."""

from __future__ import annotations

from pathlib import Path

from gpuport.files import NO_PROJECT_FACTS, FileKind, ProjectFacts, ProjectFile, SourceText
from gpuport.findings import Finding, Severity
from gpuport.scan.engine import ScanOptions, scan_path
from gpuport.scan.kernels import CHECKS, analyze, scan_kernels
from gpuport.scan.kernels.source import KernelSource
from gpuport.syntax.cxx import code_only

ALL = frozenset(rule.id for rule, _ in CHECKS)


def scan(text: str, facts: ProjectFacts = NO_PROJECT_FACTS, name: str = "k.cu") -> list[Finding]:
    source = SourceText(ProjectFile(Path(name), name, FileKind.CUDA, len(text)), text, facts=facts)
    return [f for f in scan_kernels(source, ALL) if isinstance(f, Finding)]


def lines_of(findings: list[Finding], rule_id: str) -> list[int]:
    return [f.location.line for f in findings if f.rule_id == rule_id]


SHUFFLE_UNDER_PROJECT_MACRO = """\
__device__ float sum(float v) {
#ifdef WITH_GFX_KERNELS
  return v;
#else
  return v + __shfl_xor_sync(0xffffffff, v, 1);
#endif
}
"""


def test_the_projects_own_rocm_macro_makes_its_else_branch_dead() -> None:
    assert lines_of(scan(SHUFFLE_UNDER_PROJECT_MACRO), "GP303") == [5]
    facts = ProjectFacts(rocm_macros=frozenset({"WITH_GFX_KERNELS"}))
    assert lines_of(scan(SHUFFLE_UNDER_PROJECT_MACRO, facts), "GP303") == []


def test_a_compat_headers_alias_silences_the_mask_rule_in_other_files() -> None:
    text = "__device__ float f(float v) { return __shfl_xor_sync(0xffffffff, v, 1); }\n"
    assert lines_of(scan(text), "GP303") == [1]
    facts = ProjectFacts(rocm_aliases=frozenset({"__shfl_xor_sync"}))
    assert lines_of(scan(text, facts), "GP303") == []
    # an alias of another function changes nothing
    other = ProjectFacts(rocm_aliases=frozenset({"__shfl_down_sync"}))
    assert lines_of(scan(text, other), "GP303") == [1]


def test_a_cuda_only_alias_is_no_rocm_alias() -> None:
    text = (
        "#ifndef USE_ROCM\n#define __shfl_xor_sync(m, v, l) my_shfl(m, v, l)\n#endif\n"
        "__device__ float f(float v) { return __shfl_xor_sync(0xffffffff, v, 1); }\n"
    )
    assert lines_of(scan(text), "GP303") == [4]


def test_findings_in_dead_branches_go_for_every_rule_and_for_port_too() -> None:
    text = (
        "#include <cuda_runtime.h>\n"
        "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\n"
        '__device__ void f() { asm volatile("wgmma.fence.sync.aligned;"); }\n'
        "#endif\n"
    )
    assert {f.rule_id for f in scan(text)} == {"GP300", "GP324"}
    assert {f.rule_id for f in analyze("k.cu", text, renames=False)} == {"GP324"}


def test_renames_are_counted_in_live_code_only() -> None:
    text = (
        "#include <cuda_runtime.h>\n"
        "#ifdef USE_ROCM\nhipStream_t s;\n#else\ncudaStream_t s; cudaEvent_t e;\n#endif\n"
        "void f() { cudaDeviceSynchronize(); }\n"
    )
    (finding,) = [f for f in scan(text) if f.rule_id == "GP300"]
    assert finding.message.startswith("2 CUDA API references")


def test_renames_in_a_pytorch_extension_are_info_done_by_torchs_hipify() -> None:
    text = (
        "#include <torch/extension.h>\n#include <ATen/cuda/CUDAContext.h>\n"
        "void f(cudaStream_t s) { cudaStreamSynchronize(s); }\n"
    )
    (finding,) = scan(text)
    assert finding.rule_id == "GP300"
    assert finding.severity is Severity.INFO
    assert "hipify" in finding.message and "PyTorch extension" in finding.message
    assert finding.fix is not None and finding.fix.mechanical
    aten = '#include <ATen/ATen.h>\n#include "my_kernels.h"\nvoid f(cudaStream_t s);\n'
    assert [f.severity for f in scan(aten)] == [Severity.INFO]
    plain = "void f(cudaStream_t s) { cudaStreamSynchronize(s); }\n"
    (finding,) = scan(plain)
    assert finding.severity is Severity.LOW


def test_warpsize_through_a_macro_chain_is_caught_at_the_constant_use() -> None:
    text = (
        "#define WARPS (1024 / warpSize)\n#define SLOTS (WARPS * 2)\n"
        "__global__ void k(float* o) {\n"
        "  __shared__ float a[WARPS];\n"
        "  __shared__ float b[SLOTS];\n"
        "  for (int i = 0; i < WARPS; ++i) o[i] = a[i] + b[i];\n"
        "}\n"
    )
    found = [f for f in scan(text) if f.rule_id == "GP306"]
    assert [f.location.line for f in found] == [4, 5]
    assert "WARPS used as an array bound" in found[0].message
    assert "defined from warpSize (line 1)" in found[0].message
    assert "defined from warpSize (line 2)" in found[1].message


def test_a_warpsize_macro_of_the_cuda_branch_only_is_not_followed() -> None:
    text = (
        "#ifndef USE_ROCM\n#define WARPS (1024 / warpSize)\n#else\n#define WARPS 16\n#endif\n"
        "__global__ void k(float* o) { __shared__ float a[WARPS]; o[0] = a[0]; }\n"
    )
    assert lines_of(scan(text), "GP306") == []


def test_quoted_cuda_folder_header_of_the_project_is_not_libcudacxx(tmp_path: Path) -> None:
    (tmp_path / "src" / "cuda").mkdir(parents=True)
    (tmp_path / "src" / "cuda" / "atomic").write_text("// the project's own\n")
    (tmp_path / "src" / "mine.cu").write_text('#include "cuda/atomic"\n__global__ void k() {}\n')
    (tmp_path / "src" / "theirs.cu").write_text('#include "cuda/barrier_x"\n')
    (tmp_path / "src" / "lib.cu").write_text("#include <cuda/atomic>\n")
    result = scan_path(tmp_path, ScanOptions(jobs=1))
    reported = sorted(f.location.path for f in result.findings if f.rule_id == "GP316")
    assert reported == ["src/lib.cu", "src/theirs.cu"]


def test_a_quoted_header_outside_the_root_is_never_the_projects(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere" / "cuda"
    outside.mkdir(parents=True)
    (outside / "atomic").write_text("")
    root = tmp_path / "project"
    root.mkdir()
    (root / "cuda").symlink_to(outside, target_is_directory=True)
    (root / "k.cu").write_text('#include "cuda/atomic"\n')
    result = scan_path(root, ScanOptions(jobs=1))
    assert [f.rule_id for f in result.findings if f.rule_id == "GP316"] == ["GP316"]


def test_files_without_conditionals_never_build_the_preprocessor_view() -> None:
    text = "__global__ void k(int* x) { x[threadIdx.x & 31] = 0; }\n#define A 1\n"
    src = KernelSource("k.cu", text, code_only(text))
    assert src.conditions is None
    assert src.compiled_on_rocm(10) and src.compiled_line(1)
    guarded = "#ifndef USE_ROCM\nint x;\n#endif\n"
    src = KernelSource("k.cu", guarded, code_only(guarded))
    assert src.conditions is not None
    assert not src.compiled_line(2) and src.compiled_line(1) and src.compiled_line(3)


def test_an_arch_test_beside_the_projects_own_rocm_macro_is_written_for_both() -> None:
    text = "#if __CUDA_ARCH__ >= 700 || defined(WITH_GFX_KERNELS)\n#define FAST 1\n#endif\n"
    assert lines_of(scan(text), "GP324") == [1]
    facts = ProjectFacts(rocm_macros=frozenset({"WITH_GFX_KERNELS"}))
    assert lines_of(scan(text, facts), "GP324") == []


def test_lane_math_next_to_a_raw_shuffle_counts_even_with_tiles_of_32() -> None:
    tiles = (
        "__global__ void k(float* o) {\n"
        "  auto t = cg::tiled_partition<32>(cg::this_thread_block());\n"
        "  int gid = threadIdx.x >> 5;\n"
        "  o[gid] = t.shfl(o[0], 0);\n"
        "}\n"
    )
    assert lines_of(scan(tiles), "GP302") == []
    raw = tiles.replace("t.shfl(o[0], 0)", "__shfl_sync(~0ull, o[0], 0)")
    assert lines_of(scan(raw), "GP302") == [3]


def test_a_macro_the_projects_headers_define_only_for_cuda_is_undefined_on_rocm() -> None:
    text = (
        "__device__ int load(const int* p) {\n#ifdef PTX_AVAILABLE\n  int v;\n"
        '  asm volatile("ld.global.cg.b32 %0, [%1];" : "=r"(v) : "l"(p));\n'
        "  return v;\n#else\n  return *p;\n#endif\n}\n"
    )
    assert lines_of(scan(text), "GP301") == [4]
    facts = ProjectFacts(cuda_only_macros=frozenset({"PTX_AVAILABLE"}))
    assert lines_of(scan(text, facts), "GP301") == []


def test_a_mask_constant_from_an_included_project_header_reaches_gp303(tmp_path: Path) -> None:
    (tmp_path / "utils.cuh").write_text(
        "#pragma once\n#define FULL_MASK 0xffffffff\n#define WIDE_MASK 0xffffffffffffffffULL\n"
        "#ifndef USE_ROCM\n#define CUDA_MASK 0xffffffff\n#endif\n"
    )
    (tmp_path / "spmm.cu").write_text(
        '#include "utils.cuh"\n'
        "__device__ float f(float v, int i) {\n"
        "  v += __shfl_down_sync(FULL_MASK, v, i);\n"
        "  v += __shfl_down_sync(FULL_MASK, v, i);\n"  # once per name and file
        "  v += __shfl_xor_sync(WIDE_MASK, v, i);\n"  # 64-bit: fine
        "  return v + __shfl_xor_sync(CUDA_MASK, v, i);\n"  # defined where ROCm never looks
        "}\n"
    )
    result = scan_path(tmp_path, ScanOptions(jobs=1))
    found = [f for f in result.findings if f.rule_id == "GP303"]
    assert [(f.location.path, f.location.line) for f in found] == [("spmm.cu", 3)]
    assert "FULL_MASK" in found[0].message and "utils.cuh" in found[0].message
    # a header outside the scan root, or a name no header defines, is not followed
    assert (
        lines_of(scan('#include "utils.cuh"\n' + "int x = __ballot_sync(FULL_MASK, 1);\n"), "GP303")
        == []
    )


def test_gp324_reports_a_repeated_condition_once_with_its_other_lines() -> None:
    block = "#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 800)\nint a;\n#endif\n"
    text = block * 3 + "#if __CUDA_ARCH__ >= 700\nint b;\n#endif\n"
    found = [f for f in scan(text) if f.rule_id == "GP324"]
    assert [f.location.line for f in found] == [1, 10]
    assert "2 more lines with this condition: 4, 7" in found[0].message
    assert "more line" not in found[1].message


def test_gp309_is_not_repeated_on_a_directive_line_gp324_reports() -> None:
    text = (
        "#if __CUDA_ARCH_HAS_FEATURE__(SM90_ALL)\n__device__ void k() {}\n#endif\n"
        "__device__ void tma() { cuda::ptx::cp_async_bulk_tensor(); }\n"
    )
    found = {(f.rule_id, f.location.line) for f in scan(text) if f.rule_id in ("GP309", "GP324")}
    assert found == {("GP324", 1), ("GP309", 4)}  # GP309 stays where it is the only one


def _gp324_lines(text: str) -> list[int]:
    return lines_of(scan(text), "GP324")


def test_gp324_leaves_out_a_test_whose_rocm_branch_is_the_working_older_gpu_path() -> None:
    # `>= 800` with a plain-C++ #else: AMD takes the path Volta and Turing take
    fast = "#if __CUDA_ARCH__ >= 800\nreturn __hmax(a, b);\n#else\nreturn a > b ? a : b;\n#endif\n"
    assert _gp324_lines(fast) == []
    # the same test whose #else traps is porting work, whatever the trap is called
    for trap in (
        'assert(("sm80", false));',
        "__trap();",
        'NVTE_DEVICE_ERROR("sm80");',
        '#error "sm80"',
        'asm volatile("trap;");',
    ):
        text = f"#if __CUDA_ARCH__ >= 800\nreturn __hmax(a, b);\n#else\n{trap}\n#endif\n"
        assert _gp324_lines(text) == [1], trap


def test_gp324_leaves_out_old_gpu_workarounds_and_arch_specific_defaults() -> None:
    old = "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 700\nslow();\n#else\nfast();\n#endif\n"
    assert _gp324_lines(old) == []
    # an upper bound with a toolkit test: a current toolkit reads it as AMD does
    toolkit = (
        "#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ < 600 || CUDA_VERSION < 8000)\n"
        "cas_add();\n#else\natomicAdd(p, v);\n#endif\n"
    )
    assert _gp324_lines(toolkit) == []
    specific = "#ifdef __CUDA_ARCH_SPECIFIC__\n#define S __CUDA_ARCH_SPECIFIC__\n#else\n#define S 0\n#endif\n"
    assert _gp324_lines(specific) == []


def test_gp324_keeps_device_pass_tests_feature_calls_and_missing_bodies() -> None:
    device = "#ifdef __CUDA_ARCH__\nreturn 32;\n#else\nreturn 0;\n#endif\n"
    assert _gp324_lines(device) == [1]
    feature = "#if __CUDA_ARCH_HAS_FEATURE__(SM90_ALL)\n#define F 1\n#else\n#define F 0\n#endif\n"
    assert _gp324_lines(feature) == [1]
    # every current NVIDIA GPU compiles the body, AMD compiles nothing
    ampere = "#if __CUDA_ARCH__ >= 800\nout[i] = 1.0f;\n#endif\n"
    assert _gp324_lines(ampere) == [1]
    # a Hopper-only body: Ampere and Blackwell compile nothing either
    hopper = "#if __CUDA_ARCH__ >= 900 && __CUDA_ARCH__ < 1000\nout[i] = 1.0f;\n#endif\n"
    assert _gp324_lines(hopper) == []
    # a condition gpuport cannot read on AMD stays reported
    unknown = "#if __CUDA_ARCH__ >= 800 || MY_FLAG\nfast();\n#else\nslow();\n#endif\n"
    assert _gp324_lines(unknown) == [1]
