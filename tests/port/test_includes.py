"""port's include policy: the runtime include nvcc gave implicitly, one include per HIP header,
the library include style, the whole toolkit header list and the project's own headers."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpuport.cli import main
from gpuport.port.apimap import load_api_map
from gpuport.port.diff import unified_diff
from gpuport.port.knowledge import translation_facts
from gpuport.port.model import ChangeStatus, FileResult
from gpuport.port.project import port_project
from gpuport.port.translate import translate_source
from gpuport.port.translate.includes import project_files

CONVERTED = ChangeStatus.CONVERTED
UNCONVERTED = ChangeStatus.UNCONVERTED
RUNTIME = "#include <hip/hip_runtime.h>\n"
ROOT = Path(__file__).resolve().parents[2]


def port(
    text: str,
    version: str = "6.4",
    rel: str = "k.cu",
    *,
    style: str = "auto",
    files: tuple[str, ...] = (),
) -> FileResult:
    return translate_source(
        rel,
        text,
        version,
        diagnostics=False,
        include_style=style,
        project_files=project_files(files),
    )


def out(result: FileResult) -> str:
    return result.translated if result.translated is not None else result.original


# ------------------------------------------------------------- the implicit runtime include


@pytest.mark.parametrize("rel", ["util.h", "util.hpp", "detail/util.inl", "util.cuh"])
def test_a_header_with_gpu_code_and_no_runtime_gets_one(rel: str) -> None:
    r = port("#pragma once\ninline __device__ float sq(float x) { return x * x; }\n", rel=rel)
    assert out(r) == "#pragma once\n" + RUNTIME + (
        "inline __device__ float sq(float x) { return x * x; }\n"
    )
    added = r.changes[0]
    assert (added.line, added.after, added.status) == (2, RUNTIME.strip(), CONVERTED)


def test_a_header_using_runtime_names_gets_one_once() -> None:
    src = "#ifndef U_H\n#define U_H\ncudaStream_t s;\ncudaError_t e;\n#endif\n"
    r = port(src, rel="u.h")
    assert out(r) == (
        "#ifndef U_H\n#define U_H\n" + RUNTIME + "hipStream_t s;\nhipError_t e;\n#endif\n"
    )
    assert out(r).count("hip_runtime.h") == 1
    assert port(out(r), rel="u.h").translated is None  # a second port changes nothing


def test_a_header_also_built_by_host_compilers_gets_it_for_hipcc_only() -> None:
    src = (
        "#pragma once\n#ifdef __CUDACC__\n#define HD __host__ __device__\n#else\n#define HD\n"
        "#endif\nHD inline int one() { return 1; }\n"
    )
    r = port(src, rel="hd.h")
    assert out(r).startswith(
        "#pragma once\n#ifdef __HIPCC__\n" + RUNTIME + "#endif\n#ifdef __HIPCC__\n"
    )
    assert "#ifdef __HIPCC__" in r.changes[0].note


def test_no_runtime_include_where_nothing_relied_on_nvcc() -> None:
    # a header without GPU code, a .cpp file (it included the runtime itself), a file that has it
    assert port("#pragma once\nint add(int a, int b);\n", rel="a.h").translated is None
    assert out(port("void f() { cudaFree(0); }\n", rel="a.cpp")) == "void f() { hipFree(0); }\n"
    has = port("#include <hip/hip_runtime.h>\n__global__ void k() {}\n", rel="a.h")
    assert has.translated is None


def test_a_cu_file_using_only_kernel_syntax_gets_one() -> None:
    # nothing to rename: the launch and the qualifiers are the same in HIP
    src = '#include "util.h"\n__global__ void k() {}\nint main() { k<<<1, 1>>>(); }\n'
    assert out(port(src, files=("util.h",))) == RUNTIME + src


# --------------------------------------------------------------------------- duplicates


def test_cuda_h_and_cuda_runtime_h_become_one_include() -> None:
    src = "#include <cuda.h>\n#include <cstdio>\n#include <cuda_runtime.h>\nCUdevice d;\n"
    r = port(src)
    assert out(r) == RUNTIME + "#include <cstdio>\nhipDevice_t d;\n"
    removed = [c for c in r.changes if c.after == "" and c.family == "header"]
    assert [(c.line, c.before) for c in removed] == [(3, "#include <cuda_runtime.h>")]
    assert removed[0].note == "removed: hip/hip_runtime.h is included above already"


def test_an_include_already_in_hip_counts_as_the_first() -> None:
    src = '#include "hip/hip_runtime.h"\n#include <cuda_runtime.h>\nint x;\n'
    assert out(port(src)) == '#include "hip/hip_runtime.h"\nint x;\n'


def test_library_sub_headers_mapping_to_one_header_are_merged() -> None:
    src = "#include <curand_kernel.h>\n#include <curand_normal.h>\n#include <curand_uniform.h>\n"
    assert out(port(src, rel="a.cpp")) == "#include <hiprand/hiprand_kernel.h>\n"


def test_a_duplicate_behind_a_conditional_stays() -> None:
    # the later include may be the only one compiled: it is translated, not removed
    src = "#ifdef USE_DRIVER\n#include <cuda.h>\n#endif\n#include <cuda_runtime.h>\n"
    assert out(port(src, rel="a.cpp")) == ("#ifdef USE_DRIVER\n" + RUNTIME + "#endif\n" + RUNTIME)


# ----------------------------------------------------------------------- include style


@pytest.mark.parametrize(
    ("version", "style", "expected"),
    [
        ("6.4", "auto", "<hipblas/hipblas.h>"),
        ("5.2", "auto", "<hipblas/hipblas.h>"),  # the folders came with ROCm 5.2
        ("5.1", "auto", "<hipblas.h>"),
        ("6.4", "flat", "<hipblas.h>"),
        ("5.1", "nested", "<hipblas/hipblas.h>"),
    ],
)
def test_library_include_style(version: str, style: str, expected: str) -> None:
    r = port("#include <cublas_v2.h>\n", version, rel="a.cpp", style=style)
    assert out(r) == f"#include {expected}\n"


def test_include_style_leaves_headers_without_a_flat_form_alone() -> None:
    # HIP's own headers were never flat; __has_include takes the style too
    src = "#include <cuda_fp16.h>\n#if __has_include(<cufft.h>)\n#endif\n"
    assert out(port(src, rel="a.cpp", style="flat")) == (
        "#include <hip/hip_fp16.h>\n#if __has_include(<hipfft.h>)\n#endif\n"
    )


def test_an_unknown_include_style_is_refused() -> None:
    with pytest.raises(ValueError, match="include style 'deep'"):
        port("int x;\n", style="deep")


def test_cli_include_style_option(tmp_path: Path) -> None:
    (tmp_path / "a.cpp").write_text("#include <cusparse.h>\n")
    result = CliRunner().invoke(
        main, ["port", str(tmp_path), "--include-style", "flat", "--no-progress"]
    )
    assert result.exit_code == 0, result.output
    assert "+#include <hipsparse.h>" in result.stdout
    bad = CliRunner().invoke(main, ["port", str(tmp_path), "--include-style", "deep"])
    assert bad.exit_code == 2 and "--include-style" in bad.output


# ------------------------------------------------------------------ the toolkit's headers

# Every CUDA header in HIPIFY's include map (CUDA_INCLUDE_MAP in src/CUDA2HIP.cpp at
# https://github.com/ROCm/HIPIFY/blob/014177bc2e434ce3e834aa4f3d0e2abb1efa9796/src/CUDA2HIP.cpp),
# less caffe2's: gpuport knows each one (a counterpart, or a note saying there is none).
HIPIFY_INCLUDES = [
    "cuda.h",
    "cuda_runtime.h",
    "device_launch_parameters.h",
    "cuda_runtime_api.h",
    "channel_descriptor.h",
    "device_functions.h",
    "driver_types.h",
    "cuda_fp16.h",
    "cuda_texture_types.h",
    "texture_fetch_functions.h",
    "vector_types.h",
    "cuda_profiler_api.h",
    "cooperative_groups.h",
    "library_types.h",
    "math_constants.h",
    "cuComplex.h",
    "cublas.h",
    "cublas_v2.h",
    "cublas_api.h",
    "cublasLt.h",
    "curand.h",
    "curand_kernel.h",
    "curand_discrete.h",
    "curand_discrete2.h",
    "curand_globals.h",
    "curand_lognormal.h",
    "curand_mrg32k3a.h",
    "curand_mtgp32.h",
    "curand_mtgp32_host.h",
    "curand_mtgp32_kernel.h",
    "curand_mtgp32dc_p_11213.h",
    "curand_normal.h",
    "curand_normal_static.h",
    "curand_philox4x32_x.h",
    "curand_poisson.h",
    "curand_precalc.h",
    "curand_uniform.h",
    "cudnn.h",
    "cufft.h",
    "cufftXt.h",
    "cusparse.h",
    "cusparse_v2.h",
    "cusolverDn.h",
    "cusolverMg.h",
    "cusolverRf.h",
    "cusolverSp.h",
    "cusolverSp_LOWLEVEL_PREVIEW.h",
    "cusolver_common.h",
    "cub/cub.cuh",
    "nvrtc.h",
]


@pytest.mark.parametrize("header", HIPIFY_INCLUDES)
def test_every_header_hipify_maps_is_known(header: str) -> None:
    entry = load_api_map().header(header)
    assert entry is not None
    assert entry.hip or entry.drop or entry.keep or entry.note


@pytest.mark.parametrize(
    ("header", "version", "expected"),
    [
        ('"math_constants.h"', "6.4", '"hip/hip_math_constants.h"'),
        ("<cuda_texture_types.h>", "6.4", "<hip/hip_texture_types.h>"),
        ("<curand_mtgp32_host.h>", "6.4", "<hiprand/hiprand_mtgp32_host.h>"),
        ("<cusolver_common.h>", "6.4", "<hipsolver/hipsolver.h>"),
        ("<cusolverRf.h>", "6.4", "<hipsolver/hipsolver.h>"),
        ("<cusolverSp.h>", "6.4", "<hipsolver/hipsolver.h>"),
        ("<curand_philox4x32_x.h>", "5.1", "<hiprand_kernel.h>"),
        ("<cufftXt.h>", "6.4", "<hipfft/hipfftXt.h>"),
    ],
)
def test_new_toolkit_headers_map(header: str, version: str, expected: str) -> None:
    assert out(port(f"#include {header}\n", version, rel="a.cpp")) == f"#include {expected}\n"


def test_a_header_newer_than_the_target_is_reported() -> None:
    r = port('#include "math_constants.h"\n', "5.2", rel="a.cpp")
    assert r.translated is None
    assert r.changes[0].status is UNCONVERTED
    assert "not available before ROCm 5.3" in r.changes[0].note


@pytest.mark.parametrize("header", ['"cusparseLt.h"', '"cuda_gl_interop.h"', "<cudaEGL.h>"])
def test_unknown_toolkit_headers_are_reported_whatever_their_quotes(header: str) -> None:
    r = port(f"#include {header}\n", rel="a.cpp")
    assert [c.status for c in r.changes] == [UNCONVERTED]
    assert "CUDA toolkit header" in r.changes[0].note


# ---------------------------------------------------------------- the project's own headers


def test_the_projects_own_toolkit_named_headers_stay() -> None:
    src = (
        '#include "math_constants.h"\n#include "cuda/util.cuh"\n#include <cuda/ext.cuh>\n'
        '#include "cuda_runtime.h"\n'
    )
    files = ("src/math_constants.h", "src/cuda/util.cuh", "include/cuda/ext.cuh", "src/a.cpp")
    r = port(src, rel="src/a.cpp", files=files)
    # only the runtime header, which the project does not have, is CUDA's
    assert out(r) == src.replace('"cuda_runtime.h"', '"hip/hip_runtime.h"')
    assert [c.before for c in r.changes] == ['"cuda_runtime.h"']


def test_without_the_project_file_the_same_names_are_the_toolkits() -> None:
    r = port('#include "math_constants.h"\n#include "cuda/util.cuh"\n', rel="src/a.cpp")
    assert out(r).startswith('#include "hip/hip_math_constants.h"\n')
    libcu = [c for c in r.changes if c.before == "cuda/util.cuh"]
    assert libcu and libcu[0].status is UNCONVERTED and "libcu++" in libcu[0].note


def test_angle_brackets_name_the_toolkit_even_when_the_project_has_the_file() -> None:
    r = port("#include <cuda_runtime.h>\n", rel="a.cpp", files=("cuda_runtime.h", "a.cpp"))
    assert out(r) == RUNTIME
    # a vendored CUB still becomes hipCUB; vendored libcu++ (no file extension) is still flagged
    vendored = ("third_party/cub/cub/cub.cuh", "third_party/cccl/cuda/std/atomic", "a.cpp")
    r = port("#include <cub/cub.cuh>\n#include <cuda/std/atomic>\n", rel="a.cpp", files=vendored)
    assert out(r).startswith("#include <hipcub/hipcub.hpp>\n#include <cuda/std/atomic>\n")
    assert [c.before for c in r.changes if c.status is UNCONVERTED] == ["cuda/std/atomic"]


def test_port_project_knows_the_projects_files(tmp_path: Path) -> None:
    (tmp_path / "cuda").mkdir()
    (tmp_path / "cuda" / "util.cuh").write_text(
        "#pragma once\n__device__ inline int twice(int x) { return 2 * x; }\n"
    )
    (tmp_path / "main.cu").write_text(
        '#include "cuda/util.cuh"\n__global__ void k(int* p) { p[0] = twice(p[0]); }\n'
    )
    result = port_project(tmp_path, "6.4")
    changes = {f.path: f.changes for f in result.files}
    assert all(c.status is CONVERTED for found in changes.values() for c in found)
    main_cu = next(f for f in result.files if f.path == "main.cu")
    assert main_cu.translated is not None
    assert main_cu.translated.startswith(RUNTIME + '#include "cuda/util.cuh"\n')
    with pytest.raises(ValueError, match="include style"):
        port_project(tmp_path, "6.4", include_style="deep")


# ------------------------------------------------------------------------------- goldens

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
GOLDEN = Path(__file__).resolve().parent / "golden" / "includes"
INCLUDE_PROGRAMS = sorted(p.name for p in CORPUS.glob("includes_*") if p.is_dir())


def _updating(config: pytest.Config) -> bool:
    return bool(config.getoption("--update-goldens")) or (
        os.environ.get("GPUPORT_UPDATE_GOLDENS") == "1"
    )


@pytest.mark.parametrize("rocm", ["5.2", "7.2"])
@pytest.mark.parametrize("program", INCLUDE_PROGRAMS)
def test_include_corpus_translations_match_their_goldens(
    program: str, rocm: str, request: pytest.FixtureRequest
) -> None:
    """The whole translation of each includes_* corpus program, diff and notes, as reviewed.
    Rewrite with ``GPUPORT_UPDATE_GOLDENS=1`` (or ``--update-goldens``) and read the diff."""
    result = port_project(CORPUS / program, rocm, display_root=program)
    lines = [unified_diff(result)]
    for file in result.files:
        lines += [
            f"{file.path}:{c.line}:{c.column}: {c.status.value} [{c.family}] "
            f"{c.before!r} -> {c.after!r}: {c.note}\n"
            for c in file.changes
            if c.family == "header" or c.status is not CONVERTED
        ]
    actual = "".join(lines)
    path = GOLDEN / f"{program}-{rocm}.txt"
    if _updating(request.config):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8", newline="\n")
        return
    assert path.exists(), f"no golden {path.name}: run with GPUPORT_UPDATE_GOLDENS=1"
    assert actual == path.read_text(encoding="utf-8"), (
        f"{path.name} differs: if intended, rerun with GPUPORT_UPDATE_GOLDENS=1 and review"
    )


def _toolkit_include_dirs() -> list[Path]:
    """The include folders of the installed CUDA toolkit and of the library headers."""
    found = []
    nvcc = shutil.which("nvcc")
    if nvcc is not None:
        found.append(Path(nvcc).resolve().parent.parent / "include")
    found += [Path("/usr/local/cuda/include"), ROOT / ".cache" / "cuda-headers" / "include"]
    return [d for d in found if d.is_dir()]


def test_every_header_of_the_installed_toolkit_is_known() -> None:
    """Each header at the top of the toolkit's include folder (and in its CUPTI folders) is
    mapped, or a toolkit header port reports: none passes unnoticed (OpenMP's own
    omp-tools.h, which the toolkit carries too, is not CUDA's)."""
    folders = _toolkit_include_dirs()
    if not folders:
        pytest.skip("no CUDA toolkit include folder here")
    api, toolkit = load_api_map(), translation_facts().toolkit_header_re
    headers = {
        p.relative_to(folder).as_posix()
        for folder in folders
        for p in (*folder.glob("*.h*"), *folder.glob("Open*/cupti_*.h"))
        if p.is_file()
    }
    assert len(headers) > 50
    unknown = sorted(h for h in headers if api.header(h) is None and not toolkit.match(h))
    assert unknown == []
