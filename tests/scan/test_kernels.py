"""The CUDA/C++ scanner (GP3xx): fixtures line by line, fixes, messages, gating and speed."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from expect import check_fixture
from gpuport.files import FileKind, ProjectFile, SourceText
from gpuport.findings import CallFacts, Category, Finding, Severity
from gpuport.scan.base import scanners_for
from gpuport.scan.catalog import all_rules, get_rule
from gpuport.scan.engine import ScanOptions, scan_path
from gpuport.scan.kernels import (
    CHECKS,
    FULL_MASK_64,
    KERNEL_RULES,
    analyze,
    scan_kernels,
    uses_cuda,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "kernels"
# One folder per rule, GP3xx-<slug>/, holding the fixture files mainly about that rule.
FIXTURE_FILES = sorted(
    p for p in FIXTURES.rglob("*") if p.suffix in (".cu", ".cuh", ".cpp") and p.is_file()
)


def by_rule(findings: list[Finding], rule_id: str) -> list[Finding]:
    return [f for f in findings if f.rule_id == rule_id]


def apply(text: str, finding: Finding) -> str:
    """Apply a finding's replacement to ``text`` (single-line spans)."""
    assert finding.fix is not None and finding.fix.replacement is not None
    loc = finding.location
    assert loc.line == loc.end_line
    lines = text.split("\n")
    line = lines[loc.line - 1]
    lines[loc.line - 1] = (
        line[: loc.column - 1] + finding.fix.replacement + line[loc.end_column - 1 :]
    )
    return "\n".join(lines)


# -- fixtures ---------------------------------------------------------------------------------


def test_fixture_set_covers_every_rule() -> None:
    expected = set()
    for path in FIXTURE_FILES:
        for line in path.read_text(encoding="utf-8").splitlines():
            if "expect:" in line:
                expected.update(part.strip() for part in line.split("expect:", 1)[1].split(","))
    assert {r.id for r in KERNEL_RULES} <= expected


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.name)
def test_fixture(path: Path) -> None:
    check_fixture(path)


def _nvcc_flags(path: Path) -> list[str]:
    for line in path.read_text(encoding="utf-8").splitlines()[:5]:
        if "nvcc-flags:" in line:
            return line.split("nvcc-flags:", 1)[1].split()
    return []


@pytest.mark.compilers
@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.name)
def test_fixture_is_valid_cuda(path: Path, tmp_path: Path) -> None:
    nvcc = shutil.which("nvcc") or (
        "/usr/local/bin/nvcc" if Path("/usr/local/bin/nvcc").exists() else None
    )
    if nvcc is None:
        pytest.skip("nvcc is not installed: fixtures are not compiled")
    language = ["-x", "cu"] if path.suffix == ".cuh" else []
    command = [nvcc, *_nvcc_flags(path), *language, "-c", "-o", str(tmp_path / "out.o"), str(path)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, f"{path.name} does not compile:\n{done.stderr[-3000:]}"


# -- rule declarations --------------------------------------------------------------------------


def test_rules_are_declared_once_with_docs() -> None:
    registered = {r.id: r for r in all_rules() if r.category is Category.KERNELS}
    assert set(registered) == {r.id for r in KERNEL_RULES}
    for rule in KERNEL_RULES:
        assert registered[rule.id] is rule
        assert rule.references, rule.id
        assert all(ref.startswith("https://") for ref in rule.references)
        assert rule.example.strip() and rule.instead.strip(), rule.id
        assert f"# {rule.id} {rule.slug}" in rule.markdown()
    assert get_rule("inline-ptx-assembly").id == "GP301"


def test_each_rule_is_one_function_named_after_its_slug_beside_its_declaration() -> None:
    assert [rule.id for rule, _ in CHECKS] == sorted(rule.id for rule in KERNEL_RULES)
    for rule, check in CHECKS:
        assert check.__name__ == rule.slug.replace("-", "_"), rule.id
        declared_in = vars(sys.modules[check.__module__]).values()
        assert any(value is rule for value in declared_in), f"{rule.id} is declared elsewhere"
        assert rule.needles, f"{rule.id} declares no needles: no file could ever be skipped"


def test_a_file_without_the_enabled_rules_needles_is_skipped() -> None:
    text = "__global__ void k(float* x) { x[threadIdx.x & 31] = __shfl_sync(~0u, *x, 0); }\n"
    source = SourceText(ProjectFile(Path("k.cu"), "k.cu", FileKind.CUDA, len(text)), text)
    # no rule runs; the file still gives its part of the device call index
    assert [type(x) for x in scan_kernels(source, frozenset({"GP319"}))] == [CallFacts]
    found = [
        f.rule_id for f in scan_kernels(source, frozenset({"GP302"})) if isinstance(f, Finding)
    ]
    assert found == ["GP302"]


# -- GP303 masks and their opt-in mechanical fix -----------------------------------------------


def test_literal_full_mask_gets_a_mechanical_64_bit_replacement() -> None:
    text = "__device__ float f(float v) {\n  return __shfl_xor_sync(0xffffffff, v, 1);\n}\n"
    (finding,) = by_rule(analyze("k.cu", text), "GP303")
    assert finding.fix is not None and finding.fix.mechanical
    assert finding.fix.replacement == FULL_MASK_64 == "0xffffffffffffffffULL"
    assert (finding.location.line, finding.location.column) == (2, 26)
    assert apply(text, finding).splitlines()[1] == (
        "  return __shfl_xor_sync(0xffffffffffffffffULL, v, 1);"
    )
    assert "static_assert" in finding.message


@pytest.mark.parametrize(
    ("mask", "flagged"),
    [
        ("0xffffffff", True),
        ("0xFFFFFFFFu", True),
        ("~0u", True),
        ("~0", True),
        ("-1", True),
        ("(unsigned)-1", True),
        ("0xffffffffULL", True),
        ("0xffffffffffffffffULL", False),
        ("~0ull", False),
        ("~0ULL", False),
        ("__activemask()", False),
        ("0x0000ffff", False),
        ("mask", False),
    ],
)
def test_which_masks_are_full_32_lane_masks(mask: str, flagged: bool) -> None:
    text = f"__device__ int f(int p, unsigned long long mask) {{ return __any_sync({mask}, p); }}\n"
    assert bool(by_rule(analyze("k.cu", text), "GP303")) is flagged


def test_wide_32_bit_mask_is_explained_as_half_a_wavefront() -> None:
    text = "__device__ int f(int p) { return __all_sync(0xffffffffull, p); }\n"
    (finding,) = by_rule(analyze("k.cu", text), "GP303")
    assert "lanes 0-31" in finding.message


def test_mask_macro_is_fixed_at_its_definition_once() -> None:
    text = (
        "#define FULL 0xffffffffu\n"
        "__device__ float f(float v) {\n"
        "  v += __shfl_down_sync(FULL, v, 1);\n"
        "  return v + __shfl_down_sync(FULL, v, 2);\n"
        "}\n"
    )
    (finding,) = by_rule(analyze("k.cu", text), "GP303")
    assert finding.location.line == 1
    assert finding.fix is not None and finding.fix.mechanical
    assert apply(text, finding).splitlines()[0] == "#define FULL 0xffffffffffffffffULL"


def test_mask_variable_needs_review_because_its_type_changes() -> None:
    text = (
        "__device__ float f(float v) {\n"
        "  const unsigned full = 0xffffffff;\n"
        "  return __shfl_sync(full, v, 0);\n"
        "}\n"
    )
    (finding,) = by_rule(analyze("k.cu", text), "GP303")
    assert finding.location.line == 2
    assert finding.fix is not None and not finding.fix.mechanical
    assert "unsigned long long" in finding.message


# -- GP301 PTX --------------------------------------------------------------------------------


def test_ptx_message_names_the_instruction_and_the_hip_replacement() -> None:
    text = (
        "__device__ unsigned f(unsigned a, unsigned b) {\n"
        "  unsigned id, r;\n"
        '  asm volatile("mov.u32 %0, %%laneid;" : "=r"(id));\n'
        '  asm("prmt.b32 %0, %1, %2, 0x3210;" : "=r"(r) : "r"(a), "r"(b));\n'
        '  asm("vabsdiff4.u32.u32.u32.add %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(r));\n'
        "  return id + r;\n"
        "}\n"
    )
    findings = by_rule(analyze("k.cu", text), "GP301")
    assert [f.location.line for f in findings] == [3, 4, 5]
    assert "mov.u32 %laneid → __lane_id()" in findings[0].message
    assert "prmt.b32 → __byte_perm()" in findings[1].message
    assert "vabsdiff4.u32.u32.u32.add (no direct HIP equivalent)" in findings[2].message
    assert all(f.severity is Severity.HIGH for f in findings)


def test_asm_spanning_lines_is_one_finding_with_its_extent() -> None:
    text = (
        "__device__ float f(float v) {\n"
        "  float r;\n"
        "  asm volatile(\n"
        '      "{\\n\\t.reg .pred p;\\n\\t"\n'
        '      "shfl.sync.down.b32 %0|p, %1, 1, 0x1f, 0xffffffff;\\n\\t}"\n'
        '      : "=f"(r) : "f"(v));\n'
        "  return r;\n"
        "}\n"
    )
    (finding,) = analyze("k.cu", text)
    assert finding.rule_id == "GP301"
    assert (finding.location.line, finding.location.end_line) == (3, 6)
    assert "__shfl_down_sync" in finding.message


def test_unterminated_asm_does_not_break_the_scan() -> None:
    text = '__device__ void f() {\n  asm volatile("mov.u32 %0, %%laneid;" : "=r"(x)\n'
    (finding,) = analyze("k.cu", text)
    assert finding.rule_id == "GP301"


# -- GP300 the mechanical count ---------------------------------------------------------------


def test_api_renames_are_counted_once_per_file() -> None:
    text = (
        "#include <cuda_runtime.h>\n"
        "#include <cublas_v2.h>\n"
        "#define CUDA_CHECK(x) x\n"
        "static void cudaCheck(cudaError_t e) { (void)e; }\n"
        "void f(float* h, cublasHandle_t blas) {\n"
        "  float* d;\n"
        "  CUDA_CHECK(cudaMalloc(&d, 4));\n"
        "  cudaCheck(cudaMemcpy(d, h, 4, cudaMemcpyHostToDevice));\n"
        "  cudaCheck(cudaMemcpy(h, d, 4, cudaMemcpyDeviceToHost));\n"
        "  cublasSscal(blas, 1, h, d, 1);\n"
        "  // cudaFree(d) in a comment does not count\n"
        "}\n"
    )
    (finding,) = by_rule(analyze("k.cu", text), "GP300")
    assert finding.location.line == 1
    assert finding.severity is Severity.LOW
    assert finding.fix is not None and finding.fix.mechanical
    assert finding.message == (
        "10 CUDA API references that gpuport port renames to HIP: "
        "runtime 6 (cudaMemcpy x2, cudaError_t, cudaMalloc, …); "
        "cuBLAS 2 (cublasHandle_t, cublasSscal); "
        "headers 2 (cuda_runtime.h, cublas_v2.h)"
    )


def test_no_count_without_cuda_apis() -> None:
    text = "__global__ void k(float* x) { x[threadIdx.x] = 0.f; }\n"
    assert analyze("k.cu", text) == []


# -- GP304 fix span -----------------------------------------------------------------------------


def test_popc_of_a_ballot_becomes_popcll() -> None:
    text = "__device__ int f(bool p) { return __popc(__ballot_sync(~0ull, p)); }\n"
    (finding,) = analyze("k.cu", text)
    assert finding.rule_id == "GP304"
    assert apply(text, finding) == (
        "__device__ int f(bool p) { return __popcll(__ballot_sync(~0ull, p)); }\n"
    )


# -- which files are scanned --------------------------------------------------------------------


def test_scanner_is_registered_for_cuda_and_cxx() -> None:
    assert any(s.name == "kernels" for s in scanners_for(FileKind.CUDA))
    assert any(s.name == "kernels" for s in scanners_for(FileKind.CXX))


def test_cxx_files_are_scanned_only_when_their_code_uses_cuda(tmp_path: Path) -> None:
    body = "#define WARP_SIZE 32\nint lane(int i) { return i % WARP_SIZE; }\n"
    (tmp_path / "cpu.cpp").write_text("// ported from cudaMalloc-based code\n" + body)
    (tmp_path / "gpu.cpp").write_text("#include <cuda_runtime.h>\n" + body)
    (tmp_path / "gpu.cu").write_text(body)
    result = scan_path(tmp_path, ScanOptions(jobs=1), display_root="p")
    got = sorted((f.location.path, f.rule_id) for f in result.findings)
    assert got == [("gpu.cpp", "GP300"), ("gpu.cpp", "GP305"), ("gpu.cu", "GP305")]
    assert not result.skipped


def test_uses_cuda_ignores_comments_and_strings() -> None:
    assert uses_cuda("__global__ void k() {}\n")
    assert uses_cuda("#include <cublas_v2.h>\n")
    assert uses_cuda("void f() { cudaDeviceSynchronize(); }\n")
    assert not uses_cuda("// __global__ cudaMalloc <<<\nint x;\n")
    assert not uses_cuda('const char* s = "threadIdx.x";\n')
    assert not uses_cuda("int cuda = 1; int cub = 2;\n")


# -- robustness and speed ---------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "asm(",
                'asm volatile("',
                "mov.u32 %0, %%laneid;",
                '")',
                "__shfl_xor_sync(",
                "0xffffffff",
                ",",
                ")",
                "(",
                "{",
                "}",
                "for (int o = 16; o > 0; o >>= 1)",
                "threadIdx.x & 31",
                "/*",
                "*/",
                "//",
                "\n",
                '"',
                "'",
                "#define WARP_SIZE 32\n",
                "__shared__ float s[32];",
                "s[lane]",
                "<<<",
                "__global__ void k()",
                "\\\n",
                'R"x(',
                "\udcff",
            ]
        ),
        max_size=40,
    )
)
def test_any_input_scans_without_raising(pieces: list[str]) -> None:
    findings = analyze("fuzz.cu", "".join(pieces))
    for f in findings:
        assert f.rule_id.startswith("GP3")
        assert f.location.line >= 1 and f.location.column >= 1


def test_a_large_file_scans_quickly() -> None:
    unit = (FIXTURES / "GP302-lane-math-assumes-warp-32" / "warp_width.cu").read_text(
        encoding="utf-8"
    )
    text = unit * 40  # about 5,000 lines
    started = time.perf_counter()
    findings = analyze("big.cu", text)
    elapsed = time.perf_counter() - started
    assert len(by_rule(findings, "GP302")) == 40 * len(by_rule(analyze("u.cu", unit), "GP302"))
    assert elapsed < 5.0, f"{elapsed:.2f}s for {len(text):,} characters"


def test_new_warp_size_rules_say_what_to_do() -> None:
    text = (
        "#ifdef __HIP_PLATFORM_AMD__\n#define BLOCK_WARP_SIZE 64\n#else\n#define BLOCK_WARP_SIZE 32\n"
        "#endif\n__global__ void k(int* o) {\n  const int lane = threadIdx.x % warpSize;\n"
        "  unsigned long long b = __ballot_sync(~0ull, o[lane] > 0);\n"
        "  o[lane] = __popcll(b & ((1u << lane) - 1)) + __shfl(o[lane], 31) + BLOCK_WARP_SIZE;\n}\n"
    )
    found = {f.rule_id: f for f in analyze("k.cu", text, renames=False)}
    assert set(found) == {"GP327", "GP328", "GP329"}
    assert found["GP327"].location.line == 2 and "RDNA" in found["GP327"].message
    assert "hipDeviceAttributeWarpSize" in found["GP327"].message
    assert found["GP328"].location.line == 9 and "warpSize - 1" in found["GP328"].message
    assert found["GP329"].location.line == 9 and "1ull" in found["GP329"].message
    # the same 64 chosen per target is right: no GP327
    per_target = text.replace("#ifdef __HIP_PLATFORM_AMD__", "#if defined(__GFX9__)")
    assert "GP327" not in {f.rule_id for f in analyze("k.cu", per_target, renames=False)}


def test_a_header_that_selects_code_by_hip_platform_is_gpu_code() -> None:
    header = "#ifdef __HIP_PLATFORM_AMD__\nconstexpr int hw_warp_size = 64;\n#endif\n"
    assert uses_cuda(header)
    assert not uses_cuda("// __HIP_PLATFORM_AMD__ only in a comment\nint x;\n")


def test_ptx_ordering_qualifiers_name_the_hip_atomic_with_its_scope() -> None:
    # ld.acquire is a spin-wait's load and st.volatile a volatile store: advising "a plain
    # load (__ldg)" or "a plain store" would drop the ordering the code relies on.
    path = FIXTURES / "GP301-inline-ptx-assembly" / "memory_order.cu"
    messages = {f.location.line: f.message for f in analyze(path.name, path.read_text())}
    acquire, release, volatile, red, plain = (messages[n] for n in (10, 16, 21, 26, 32))
    assert "__hip_atomic_load(p, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_AGENT)" in acquire
    assert "a plain load (" not in acquire
    assert "__hip_atomic_store(p, v, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_SYSTEM)" in release
    assert "a volatile store" in volatile and "plain" not in volatile
    assert "__ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_WORKGROUP" in red
    assert "__ldg for read-only data" in plain
