"""Adversarial C/C++/CUDA input: lexing and porting time per input size, against a linear bound.

A hostile or merely odd repository must not make gpuport hang. Each shape below is text that
once made a regular expression read a line again from each of its characters, or a lookup
read back to a line's start or ahead to a call's end for each name (issue 10): a last line
ending in a backslash with many quotes took 25 s to scan and 86 s to port at 100 KB. This
times, for each shape and size (10 KB to 1 MB by default), on one core:

- ``tokenize``: the lossless lexer (``gpuport.syntax.cxx.tokenize``), every token;
- ``code_only``: the fast blanking of comments and literals that ``scan`` runs on every C/C++
  file (and ``port`` too);
- ``translate``: ``port``'s translator (``translate_source`` without the kernel scanner's
  diagnostics, which are ``scan``'s rules);
- ``port``: ``translate_source`` as ``gpuport port`` runs it, diagnostics included;
- ``scan``: the kernel scanner (GP3xx) as ``gpuport scan`` runs it on a ``.cu`` file, every
  kernel rule enabled: ``code_only`` and the rules' per-file indexes (brackets, constants).

and checks each time against a linear bound: ``BOUND_S_PER_MB[path] * MB + 0.05 s``. A
quadratic path blows through it by 100 KB. With ``--check`` the exit status is 1 when any
time is over its bound. The same shapes, at small sizes, are the growth tests of
tests/core/test_lexer.py, tests/port/test_translate_growth.py and
tests/scan/test_kernel_growth.py.

Writes benchmarks/results/lexer_adversarial.md.

    .venv/bin/python benchmarks/lexer_adversarial.py [--sizes 10000,100000,1000000] [--check]
"""

from __future__ import annotations

import argparse
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Each shape: a function of the size in characters (about) to the text.
SHAPES: dict[str, Callable[[int], str]] = {
    # open literals and comments
    '`"\\` repeated (open string, backslash last)': lambda n: '"\\' * (n // 2),
    "`'\\` repeated (open char, backslash last)": lambda n: "'\\" * (n // 2),
    "quotes, last line ends in a backslash": lambda n: "x\n" + '"' * n + "\\",
    "a long line of `'`": lambda n: "'" * n,
    '`"\\` then a line break, repeated': lambda n: '"\\\n' * (n // 3),
    "`/*` without end": lambda n: "/*" + "x" * n,
    "`/*` repeated": lambda n: "/*" * (n // 2),
    '`R"(` repeated, no end': lambda n: 'R"(' * (n // 3),
    '`R"x` repeated (no parenthesis)': lambda n: 'R"x ' * (n // 4),
    "`//` then backslash continuations": lambda n: "//" + "\\\n" * (n // 2),
    # line breaks
    "backslash-newline repeated": lambda n: "\\\n" * (n // 2),
    "backslash-CRLF repeated": lambda n: "\\\r\n" * (n // 3),
    "CR, LF and CRLF mixed with `'\\`": lambda n: "a\r\n\r\n\r'\\\r\n" * (n // 10),
    "a #define continued over every line": lambda n: "#define A \\\n" + "  x \\\n" * (n // 6),
    # directives
    "`#include <` repeated on one line": lambda n: "#include <" * (n // 10),
    '`#include "` repeated on one line': lambda n: '#include "' * (n // 10),
    "`#include <a.h> ` repeated on one line": lambda n: "#include <a.h> " * (n // 15),
    "`#if __CUDA_ARCH__ && ...` one long line": lambda n: (
        "#if " + "__CUDA_ARCH__ && " * (n // 17) + "1\n#endif\n"
    ),
    "`#if __CUDA_ARCH__` on every line": lambda n: "#if __CUDA_ARCH__\n" * (n // 18),
    # calls and templates without an end
    "`__shfl_sync(0xffffffff,` repeated": lambda n: "__shfl_sync(0xffffffff," * (n // 23),
    "`__shfl_sync(m, ` nested, closed at the end": lambda n: (
        "__shfl_sync(m, " * (n // 30) + ")" * (n // 30)
    ),
    "`__syncwarp(` repeated": lambda n: "__syncwarp(" * (n // 11),
    "`f() __syncwarp() ` repeated (definition test)": lambda n: "f() __syncwarp() " * (n // 17),
    "`cudaMalloc(&p, ` repeated": lambda n: "cudaMalloc(&p, " * (n // 15),
    "`operator+(` repeated": lambda n: "operator+(" * (n // 10),
    "`__has_include(<` repeated": lambda n: "__has_include(<" * (n // 15),
    "`thread_block_tile<` repeated": lambda n: (
        "thread_block_tile<" * (n // 18) + "\ncooperative_groups"
    ),
    "masks named by distinct macros, defined last": lambda n: (
        "".join(f"__shfl_sync(M{i}, v, 1);\n" for i in range(n // 48))
        + "".join(f"#define M{i} 0xffffffff\n" for i in range(n // 48))
    ),
    "masks named by distinct constants, declared last": lambda n: (
        "".join(f"__syncwarp(M{i});\n" for i in range(n // 60))
        + "".join(f"const unsigned M{i} = 0xffffffff;\n" for i in range(n // 60))
    ),
}

# Before linear lexing (main at 4e87c69, 2026-11-25, the same machine; wall seconds of one
# run, by the probe these shapes came from), for the record: what the bound now keeps out.
BEFORE = """\
| shape | path | 20 KB | 25 KB | 100 KB |
|---|---|---:|---:|---:|
| `"\\` repeated | tokenize | 3.8 | | |
| `"\\` repeated | code_only | 5.4 | | |
| `"\\` repeated | port | 9.1 | 15.3 | |
| `#include <` repeated on one line | port | 0.20 | 0.40 | 4.7 |
| `__shfl_sync(0xffffffff,` repeated | port | 1.7 | 2.1 | |
| `__syncwarp(` repeated | port | 3.6 | 5.1 | |
| `f() __syncwarp() ` repeated | port | | 45.3 | |
| `#if __CUDA_ARCH__ && ...` one long line | port | | 23.9 | |
| `__shfl_sync(m, ` nested | port | | 19.1 | |
| `operator+(` repeated | port | | 10.0 | |
"""

# The kernel scanner's rows of this table before its brackets and constants were indexed
# once per file (benchmarks/results/lexer_adversarial.md at c70a285).
BEFORE_KERNELS = """\
| shape | path | 10 KB | 100 KB | 1,000 KB |
|---|---|---:|---:|---:|
| `__shfl_sync(0xffffffff,` repeated | port | 0.024 | 0.762 | 8.894 |
| `__shfl_sync(m, ` nested, closed at the end | port | 0.080 | 1.601 | 9.643 |
| `__syncwarp(` repeated | port | 0.078 | 2.754 | 30.793 |
| masks named by distinct macros, defined last | port | 0.012 | 0.385 | 17.483 |
"""

PATHS = ("tokenize", "code_only", "translate", "port", "scan")
# Seconds per MB a path may take on any shape (several times its rate on real code: tokenize
# about 2.7 MB/s, code_only about 22 MB/s, the translator about 9 MB/s), plus 0.05 s.
BOUND_S_PER_MB = {"tokenize": 4.0, "code_only": 2.0, "translate": 8.0, "port": 8.0, "scan": 4.0}
CHECKED = PATHS
# A path that took this long at one size is not run at the larger ones.
GIVE_UP_S = 20.0


def runner(path: str) -> Callable[[str], object]:
    """The function that ``path`` times."""
    sys.path.insert(0, str(ROOT / "src"))
    from gpuport.port.translate import translate_source
    from gpuport.syntax.cxx import code_only, tokenize

    if path == "tokenize":
        return lambda text: sum(1 for _ in tokenize(text))
    if path == "code_only":
        return code_only
    if path == "scan":
        return scan_runner()
    diagnostics = path == "port"
    translate_source("warmup.cu", "int x;", "6.4", diagnostics=diagnostics)  # load the map
    return lambda text: translate_source("a.cu", text, "6.4", diagnostics=diagnostics)


def scan_runner() -> Callable[[str], object]:
    """The kernel scanner as ``gpuport scan`` runs it on one ``.cu`` file, every rule on."""
    from gpuport.files import FileKind, ProjectFile, SourceText
    from gpuport.scan.kernels import KERNEL_RULES, scan_kernels

    enabled = frozenset(rule.id for rule in KERNEL_RULES)
    file = ProjectFile(ROOT / "a.cu", "a.cu", FileKind.CUDA, 0)
    return lambda text: list(scan_kernels(SourceText(file, text), enabled))


def cpu_seconds(run: Callable[[str], object], text: str, repeats: int) -> float:
    """The least CPU time of ``repeats`` runs."""
    best = float("inf")
    for _ in range(repeats):
        started = time.process_time()
        run(text)
        best = min(best, time.process_time() - started)
    return best


def growth(
    run: Callable[[str], object],
    shape: Callable[[int], str],
    *,
    least_seconds: float = 0.002,
    largest: int = 1 << 18,
    tries: int = 3,
) -> tuple[int, float, float]:
    """For the growth tests: a size N (doubled from 4,000 until one run takes
    ``least_seconds``, at most ``largest``) and the least CPU times of 3 runs at N and 2N,
    measured again (up to ``tries`` times in all) while the time at 2N is 3 times that at N
    or more: a loaded machine slows one run, a quadratic path every one."""
    size = 4000
    while size < largest and cpu_seconds(run, shape(size), 1) < least_seconds:
        size *= 2
    small, large = shape(size), shape(2 * size)
    at_n = at_2n = 0.0
    for _ in range(tries):
        at_n = cpu_seconds(run, small, 3)
        at_2n = cpu_seconds(run, large, 3)
        if at_2n < 3 * at_n:
            break
    return size, at_n, at_2n


def bound(path: str, size: int) -> float:
    return BOUND_S_PER_MB[path] * size / 1e6 + 0.05


def machine() -> str:
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
    except OSError:
        lscpu = ""
    wanted = ("Model name", "CPU(s)", "Thread(s) per core", "CPU max MHz", "L2 cache", "L3 cache")
    facts = [
        " ".join(line.split())
        for line in lscpu.splitlines()
        if line.split(":")[0].strip() in wanted
    ]
    return (
        f"{platform.machine()}, Python {platform.python_version()}, {platform.platform()}; "
        + "; ".join(facts)
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--paths", default=",".join(PATHS))
    parser.add_argument("--check", action="store_true", help="exit 1 when a bound is broken")
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).parent / "results" / "lexer_adversarial.md"
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    paths = args.paths.split(",")
    runners = {path: runner(path) for path in paths}
    rows: list[str] = []
    broken: list[str] = []
    for name, shape in SHAPES.items():
        texts = [shape(size) for size in sizes]
        for path in paths:
            cells: list[str] = []
            seconds: list[float] = []
            for text in texts:
                if seconds and seconds[-1] > GIVE_UP_S:
                    cells.append("not run")
                    continue
                took = cpu_seconds(runners[path], text, 1 if len(text) > 200_000 else args.repeats)
                seconds.append(took)
                over = took > bound(path, len(text))
                if over and path in CHECKED:
                    broken.append(f"{name} / {path} / {len(text):,} chars: {took:.3f} s")
                cells.append(f"{took:.3f}{' **over**' if over else ''}")
            growth = (
                f"{seconds[-1] / seconds[0]:.0f}x"
                if len(seconds) == len(sizes) and seconds[0] > 0
                else ""
            )
            rows.append(f"| {name} | {path} | " + " | ".join(cells) + f" | {growth} |")
            print(rows[-1], flush=True)
    size_heads = " | ".join(f"{s / 1000:,.0f} KB" for s in sizes)
    bounds = ", ".join(f"{p} {BOUND_S_PER_MB[p]:g} s/MB" for p in paths)
    args.out.write_text(
        "# Adversarial C/C++/CUDA input: time per input size\n\n"
        f"Measured {time.strftime('%Y-%m-%d')} with `benchmarks/lexer_adversarial.py "
        f"--sizes {args.sizes}` on: {machine()}.\n\n"
        "CPU seconds on one core, the least of "
        f"{args.repeats} runs (one run above 200 KB). Bound per path: {bounds}, plus 0.05 s; "
        "**over** marks a time above it. Growth is the time at the largest size over the time "
        f"at the smallest: {sizes[-1] // sizes[0]}x the input, so about {sizes[-1] // sizes[0]}x "
        "for a linear path and its square for a quadratic one. `translate` is port's "
        "translator alone; `port` adds the kernel scanner's findings (scan's rules), as "
        "`gpuport port` runs it; `scan` is the kernel scanner alone, as `gpuport scan` runs "
        "it on a `.cu` file. 'not run': the size before took over "
        f"{GIVE_UP_S:g} s.\n\n"
        f"| shape | path | {size_heads} | growth |\n"
        f"|---|---|{'---:|' * len(sizes)}---:|\n" + "\n".join(rows) + "\n\n"
        "Before linear lexing (main at 4e87c69, the same machine, wall seconds of one run; "
        "`port` then as now with the kernel scanner's diagnostics):\n\n"
        + BEFORE
        + "\nBefore the kernel scanner's one-pass indexes (main at c70a285, the same machine, "
        "CPU seconds): `port`, which runs the kernel scanner:\n\n" + BEFORE_KERNELS,
        encoding="utf-8",
    )
    print(f"wrote {args.out}")
    if broken:
        print("over the bound:\n  " + "\n  ".join(broken), file=sys.stderr)
        return 1 if args.check else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
