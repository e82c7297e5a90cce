"""Port speed: lines/s of the CUDA → HIP translator on one core, and its peak memory.

Takes a set of CUDA sources (tests/corpus/*.cu and examples/**/*.cu when present, plus a few
written here), repeats them until the input holds at least --lines lines (default 1,000,000),
and translates every copy with ``translate_source`` in a fresh interpreter — once with the
kernel scanner's diagnostics and once without — measuring wall time, lines/s and peak
memory (tracemalloc's peak of Python allocations, and the process's peak RSS). Writes
benchmarks/results/port_speed.md.

    .venv/bin/python benchmarks/port_speed.py [--lines 1000000] [--rocm-version 7.2]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_output import write_results  # benchmarks/ is the script's folder

from gpuport.kb import DEFAULT_ROCM_VERSION

ROOT = Path(__file__).resolve().parent.parent

# Sources written for this benchmark: host code, kernels, libraries, warp code and headers
# in the proportions of an ML project's csrc/ folder.
HOST_AND_KERNELS = r"""// Fused bias + GELU and a reduction, with their launchers.
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cstdio>
#include <vector>

#define CUDA_CHECK(expr)                                                        \
  do {                                                                          \
    cudaError_t err_ = (expr);                                                  \
    if (err_ != cudaSuccess) {                                                  \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
      return err_;                                                              \
    }                                                                           \
  } while (0)

template <typename T>
__device__ __forceinline__ T gelu(T x) {
  const float f = static_cast<float>(x);
  return static_cast<T>(0.5f * f * (1.0f + tanhf(0.7978845608f * (f + 0.044715f * f * f * f))));
}

template <typename T>
__global__ void bias_gelu_kernel(T* __restrict__ out, const T* __restrict__ in,
                                 const T* __restrict__ bias, int rows, int cols) {
  const int row = blockIdx.y;
  for (int col = blockIdx.x * blockDim.x + threadIdx.x; col < cols; col += gridDim.x * blockDim.x) {
    const int idx = row * cols + col;
    out[idx] = gelu(in[idx] + bias[col]);
  }
}

__inline__ __device__ float warp_reduce_sum(float val) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    val += __shfl_down_sync(0xffffffff, val, offset);
  }
  return val;
}

__global__ void row_sum_kernel(const float* __restrict__ in, float* __restrict__ out, int cols) {
  __shared__ float partial[32];
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  float acc = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    acc += in[blockIdx.x * cols + c];
  }
  acc = warp_reduce_sum(acc);
  if (lane == 0) partial[warp] = acc;
  __syncthreads();
  if (warp == 0) {
    acc = lane < blockDim.x / 32 ? partial[lane] : 0.0f;
    acc = warp_reduce_sum(acc);
    if (lane == 0) out[blockIdx.x] = acc;
  }
}

cudaError_t launch_bias_gelu(half* out, const half* in, const half* bias, int rows, int cols,
                             cudaStream_t stream) {
  dim3 block(256);
  dim3 grid((cols + block.x - 1) / block.x, rows);
  bias_gelu_kernel<half><<<grid, block, 0, stream>>>(out, in, bias, rows, cols);
  return cudaGetLastError();
}

cudaError_t launch_row_sum(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  row_sum_kernel<<<rows, 256, 0, stream>>>(in, out, cols);
  CUDA_CHECK(cudaGetLastError());
  return cudaStreamSynchronize(stream);
}

int selftest(int rows, int cols) {
  std::vector<float> host(static_cast<size_t>(rows) * cols, 1.0f);
  float *d_in = nullptr, *d_out = nullptr;
  cudaStream_t stream;
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  CUDA_CHECK(cudaMalloc(&d_in, host.size() * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&d_out, rows * sizeof(float)));
  CUDA_CHECK(cudaMemcpyAsync(d_in, host.data(), host.size() * sizeof(float),
                             cudaMemcpyHostToDevice, stream));
  CUDA_CHECK(cudaEventRecord(start, stream));
  CUDA_CHECK(launch_row_sum(d_in, d_out, rows, cols, stream));
  CUDA_CHECK(cudaEventRecord(stop, stream));
  CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0.0f;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  std::vector<float> sums(rows);
  CUDA_CHECK(cudaMemcpy(sums.data(), d_out, rows * sizeof(float), cudaMemcpyDeviceToHost));
  printf("row_sum: %d x %d in %.3f ms, first %f\n", rows, cols, ms, sums[0]);
  cudaFree(d_in);
  cudaFree(d_out);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaStreamDestroy(stream);
  return sums[0] == static_cast<float>(cols) ? 0 : 1;
}
"""

LIBRARY_CALLS = r"""// GEMM through cuBLAS and random init through cuRAND.
#include <cublas_v2.h>
#include <curand.h>
#include <cuda_runtime.h>

struct GemmWorkspace {
  cublasHandle_t handle = nullptr;
  curandGenerator_t gen = nullptr;
  float* a = nullptr;
  float* b = nullptr;
  float* c = nullptr;
};

int gemm_setup(GemmWorkspace& ws, int m, int n, int k, unsigned long long seed) {
  if (cublasCreate(&ws.handle) != CUBLAS_STATUS_SUCCESS) return 1;
  if (curandCreateGenerator(&ws.gen, CURAND_RNG_PSEUDO_DEFAULT) != CURAND_STATUS_SUCCESS) return 2;
  curandSetPseudoRandomGeneratorSeed(ws.gen, seed);
  cudaMalloc(&ws.a, sizeof(float) * m * k);
  cudaMalloc(&ws.b, sizeof(float) * k * n);
  cudaMalloc(&ws.c, sizeof(float) * m * n);
  curandGenerateUniform(ws.gen, ws.a, m * k);
  curandGenerateUniform(ws.gen, ws.b, k * n);
  return 0;
}

int gemm_run(GemmWorkspace& ws, int m, int n, int k, cudaStream_t stream) {
  const float alpha = 1.0f, beta = 0.0f;
  cublasSetStream(ws.handle, stream);
  cublasStatus_t st = cublasSgemm(ws.handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, ws.a, m,
                                  ws.b, k, &beta, ws.c, m);
  return st == CUBLAS_STATUS_SUCCESS ? 0 : 3;
}

void gemm_teardown(GemmWorkspace& ws) {
  cudaFree(ws.a);
  cudaFree(ws.b);
  cudaFree(ws.c);
  curandDestroyGenerator(ws.gen);
  cublasDestroy(ws.handle);
}
"""

HEADER = r"""#pragma once
// Small device helpers shared by the kernels.
#include <cuda_runtime.h>

namespace kernels {

template <typename T, int N>
struct alignas(sizeof(T) * N) Vec {
  T v[N];
};

__device__ __forceinline__ int lane_id() { return threadIdx.x & 31; }

__device__ __forceinline__ float block_max(float x, float* shared) {
  for (int o = 16; o > 0; o >>= 1) x = fmaxf(x, __shfl_xor_sync(0xffffffff, x, o));
  if (lane_id() == 0) shared[threadIdx.x / 32] = x;
  __syncthreads();
  return shared[0];
}

inline int ceil_div(int a, int b) { return (a + b - 1) / b; }

}  // namespace kernels
"""

BUILTIN = {"host_and_kernels.cu": HOST_AND_KERNELS, "library_calls.cu": LIBRARY_CALLS}
BUILTIN_HEADERS = {"helpers.cuh": HEADER}


def collect_sources() -> tuple[list[tuple[str, str]], str]:
    """(name, text) of every source, and a sentence saying where they came from."""
    sources = list(BUILTIN.items()) + list(BUILTIN_HEADERS.items())
    corpus = sorted((ROOT / "tests" / "corpus").glob("**/*.cu*"))
    examples = sorted((ROOT / "examples").glob("**/*.cu"))
    for path in corpus + examples:
        text = path.read_bytes().decode("utf-8", "surrogateescape")  # bytes kept as they are
        sources.append((path.relative_to(ROOT).as_posix(), text))
    origin = (
        f"{len(BUILTIN) + len(BUILTIN_HEADERS)} sources written for the benchmark, "
        f"{len(corpus)} from tests/corpus and {len(examples)} from examples/"
    )
    return sources, origin


def cub_sources() -> tuple[list[tuple[str, str]], str]:
    """The CUB headers of the local CUDA toolkit, if installed: real-world CUDA C++ (heavy
    templates, intrinsics, a little runtime API). They are read here, never copied."""
    home = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda"))
    for folder in (home / "include" / "cccl" / "cub", home / "include" / "cub"):
        paths = sorted(folder.glob("**/*.cuh"))
        if paths:
            texts = [
                (p.relative_to(folder.parent).as_posix(), p.read_bytes().decode("utf-8", "replace"))
                for p in paths
            ]
            return texts, f"the {len(paths)} CUB headers of the local CUDA toolkit ({folder})"
    return [], ""


def build_input(sources: list[tuple[str, str]], target_lines: int, folder: Path) -> Path:
    """Repeat the sources until they hold ``target_lines`` lines; save the list as JSON."""
    files: list[tuple[str, str]] = []
    lines = 0
    copy = 0
    while lines < target_lines:
        for name, text in sources:
            files.append((f"copy{copy}/{name}", text))
            lines += text.count("\n") + (0 if text.endswith("\n") else 1)
        copy += 1
    path = folder / "input.json"
    path.write_text(json.dumps(files))
    return path


MEASURE = r"""
import json, resource, sys, time, tracemalloc
from gpuport.port.translate import translate_source
files = json.loads(open(sys.argv[1], encoding="utf-8").read())
version, diagnostics, trace = sys.argv[2], sys.argv[3] == "1", sys.argv[4] == "1"
translate_source("warmup.cu", files[0][1], version, diagnostics=diagnostics)  # load the map
if trace:
    tracemalloc.start()
lines = sum(t.count("\n") for _, t in files)
changes = 0
start = time.perf_counter()
cpu0 = time.process_time()
for rel, text in files:
    result = translate_source(rel, text, version, diagnostics=diagnostics)
    changes += len(result.changes)
seconds = time.perf_counter() - start
cpu = time.process_time() - cpu0
peak = tracemalloc.get_traced_memory()[1] if trace else 0
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"files": len(files), "lines": lines, "bytes": sum(len(t) for _, t in files),
                  "seconds": seconds, "cpu_seconds": cpu, "changes": changes,
                  "tracemalloc_peak_mb": peak / 1e6, "rss_mb": rss / 1024}))
"""


def measure(input_path: Path, version: str, diagnostics: bool, trace: bool) -> dict[str, float]:
    """One run in a fresh interpreter (single-threaded: it uses one core)."""
    command = [sys.executable, "-c", MEASURE, str(input_path), version]
    command += ["1" if diagnostics else "0", "1" if trace else "0"]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return dict(json.loads(done.stdout))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--rocm-version", default=DEFAULT_ROCM_VERSION)
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).parent / "results" / "port_speed.md"
    )
    args = parser.parse_args()
    inputs = [("corpus", *collect_sources())]
    cub, cub_origin = cub_sources()
    if cub:
        inputs.append(("CUB", cub, cub_origin))
    rows = []
    with tempfile.TemporaryDirectory(prefix="gpuport-port-bench-") as tmp:
        for label, sources, origin in inputs:
            input_path = build_input(sources, args.lines, Path(tmp))
            for diagnostics in (False, True):
                timed = measure(input_path, args.rocm_version, diagnostics, trace=False)
                if not diagnostics:
                    traced = measure(input_path, args.rocm_version, diagnostics, trace=True)
                    timed["tracemalloc_peak_mb"] = traced["tracemalloc_peak_mb"]
                timed.update(diagnostics=diagnostics, label=label, origin=origin)
                rows.append(timed)
                print(
                    f"{label} diagnostics {'on ' if diagnostics else 'off'}: "
                    f"{timed['lines']:,.0f} lines in {timed['cpu_seconds']:.2f} CPU s = "
                    f"{timed['lines'] / timed['cpu_seconds']:,.0f} lines/s "
                    f"(wall {timed['seconds']:.2f} s); peak RSS {timed['rss_mb']:.0f} MB",
                    file=sys.stderr,
                )
    machine = (
        f"{platform.machine()}, {os.cpu_count()} cores (one used), "
        f"Python {platform.python_version()}, {platform.platform()}"
    )
    lines = [
        "# Port speed",
        "",
        f"Measured {time.strftime('%Y-%m-%d')} with `benchmarks/port_speed.py --lines "
        f"{args.lines} --rocm-version {args.rocm_version}` on: {machine}.",
        "",
        "Each run translates every file with `translate_source` in a fresh, single-threaded "
        "interpreter; the time excludes loading the API map (once per process, about 0.2 s). "
        "Lines/s is per CPU second of that one process (the work of one core). Inputs, each "
        "repeated until it holds the lines asked for:",
        "",
    ]
    seen = set()
    for m in rows:
        if m["label"] not in seen:
            seen.add(m["label"])
            lines.append(
                f"- **{m['label']}**: {m['origin']} — {m['files']:,.0f} files, "
                f"{m['lines']:,.0f} lines, {m['bytes'] / 1e6:.1f} MB."
            )
    lines += [
        "",
        "| input | diagnostics | CPU seconds | wall seconds | lines/s (one core) | MB/s "
        "| changes | peak traced (MB) | peak RSS (MB) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for m in rows:
        traced = f"{m['tracemalloc_peak_mb']:.1f}" if not m["diagnostics"] else "n/a"
        lines.append(
            f"| {m['label']} | "
            f"{'on (kernel scanner findings)' if m['diagnostics'] else 'off (renames only)'} | "
            f"{m['cpu_seconds']:.2f} | {m['seconds']:.2f} | "
            f"{m['lines'] / m['cpu_seconds']:,.0f} | "
            f"{m['bytes'] / 1e6 / m['cpu_seconds']:.1f} | {m['changes']:,.0f} | "
            f"{traced} | {m['rss_mb']:.0f} |"
        )
    lines += [
        "",
        "Peak traced memory is what Python allocated at most during the run (tracemalloc, "
        "measured in a second run because tracing slows it down); peak RSS is the whole "
        "process: interpreter, API map and the whole input, which the benchmark holds in "
        "memory. The translator's own memory does not grow with the input: each file's "
        "result is dropped once counted.",
        "",
        "The machine is shared (2 cores, several jobs at once), so wall time runs ahead of CPU "
        "time and varies from run to run; CPU seconds are the steadier measure.",
        "",
    ]
    write_results(args.out, lines)


if __name__ == "__main__":
    main()
