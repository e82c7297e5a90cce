"""GP305 in headers: a warp-size constant every project reader uses only as a size is left."""

from __future__ import annotations

from pathlib import Path

import pytest

from expect import check_findings
from gpuport.scan.engine import ScanOptions, scan_path
from gpuport.scan.kernels.header_warp_sizes import size_only_header_constants

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "project" / "warp_size_headers"
HEADERS = (
    "csrc/tiles.h",
    "csrc/unused.h",
    "csrc/raw.h",
    "csrc/orphan.h",
    "include/tilelib/api.h",
    "csrc/groups.h",
    "csrc/bcast.h",
)


@pytest.mark.parametrize("rel", HEADERS)
def test_header_constants_follow_their_readers(rel: str) -> None:
    result = scan_path(FIXTURE, ScanOptions(jobs=1, select=frozenset({"GP305"})))
    found = [f for f in result.findings if f.location.path == rel and f.rule_id == "GP305"]
    check_findings((FIXTURE / rel).read_text(encoding="utf-8"), found, rel)


def test_the_fact_names_the_header_and_the_constant() -> None:
    texts = {
        "a/w.h": "#define WARP_SIZE 32\n",
        "a/k.cu": '#include "w.h"\n__global__ void k() { float s[WARP_SIZE]; (void)s; }\n',
    }
    assert size_only_header_constants(texts) == {"a/w.h:WARP_SIZE"}
    # one read as a shuffle offset keeps it
    texts["a/r.cu"] = (
        '#include "w.h"\n__global__ void r(float v) { v += __shfl_down_sync(~0u, v, '
        "WARP_SIZE / 2); }\n"
    )
    assert size_only_header_constants(texts) == frozenset()
    # a header under include/ is a public API: its readers are elsewhere
    public = {"include/w.h": "#define WARP_SIZE 32\n", "k.cu": '#include "include/w.h"\n'}
    assert size_only_header_constants(public) == frozenset()
