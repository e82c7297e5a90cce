"""Build gpuport's CUDA→HIP API map (src/gpuport/kb/cuda_hip_api.tsv) from the HIPIFY tables.

The input is /work/shared/data/cuda_hip_api_map.tsv: the ROCm/HIPIFY project's
``docs/tables/*.md`` (MIT licence) converted to one TSV, one row per CUDA name and table.
The output keeps what the translator needs, one row per CUDA name:

    cuda  hip  family  hip_added  hip_deprecated  hip_removed  cuda_removed  note

``hip`` is empty when HIPIFY lists no HIP counterpart. ``note`` carries what helps a person
port a name that has none (the MIOpen or roc* counterpart from the ``*_and_*`` tables), and
the experimental/changed marks.

    .venv/bin/python tools/build_api_map.py [--source PATH] [--out PATH] [--date YYYY-MM-DD]
"""

from __future__ import annotations

import argparse
import csv
import datetime
import sys
from collections.abc import Iterable
from pathlib import Path

from gpuport.port.apimap import API_COLUMNS

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SOURCE = ROOT.parent / "shared" / "data" / "cuda_hip_api_map.tsv"
DEFAULT_OUT = ROOT / "src" / "gpuport" / "kb" / "cuda_hip_api.tsv"
# Where the input came from (see /work/shared/data/README.md).
SOURCE_DESCRIPTION = (
    "ROCm/HIPIFY docs/tables/*.md at commit 014177bc (MIT licence), "
    "https://github.com/ROCm/HIPIFY/tree/014177bc/docs/tables"
)

# HIPIFY table name -> family. Order matters: when a CUDA name appears in several tables
# (e.g. CUstream_st in both the runtime and driver tables) the first family wins.
TABLE_FAMILY: tuple[tuple[str, str], ...] = (
    ("CUDA_Runtime_API_functions_supported_by_HIP", "runtime"),
    ("CUDA_Driver_API_functions_supported_by_HIP", "driver"),
    ("CUDA_Device_API_supported_by_HIP", "device"),
    ("CUDA_RTC_API_supported_by_HIP", "rtc"),
    ("CUBLAS_API_supported_by_HIP", "cublas"),
    ("CURAND_API_supported_by_HIP", "curand"),
    ("CUFFT_API_supported_by_HIP", "cufft"),
    ("CUSPARSE_API_supported_by_HIP", "cusparse"),
    ("CUSOLVER_API_supported_by_HIP", "cusolver"),
    ("CUB_API_supported_by_HIP", "cub"),
    ("cuComplex_API_supported_by_HIP", "complex"),
    ("CUDNN_API_supported_by_HIP", "cudnn"),
)
FAMILIES = tuple(f for _, f in TABLE_FAMILY)
# Tables whose second target is the AMD-native library (rocBLAS, rocRAND, ..., MIOpen).
SECOND_TARGET_TABLES = {
    "CUBLAS_API_supported_by_HIP_and_ROC": "rocBLAS",
    "CURAND_API_supported_by_HIP_and_ROC": "rocRAND",
    "CUSPARSE_API_supported_by_HIP_and_ROC": "rocSPARSE",
    "CUSOLVER_API_supported_by_HIP_and_ROC": "rocSOLVER",
    "CUDNN_API_supported_by_HIP_and_MIOPEN": "MIOpen",
}
# The columns, in the order gpuport.port.apimap reads them (it refuses any other header).
COLUMNS = API_COLUMNS


def _clean(text: str) -> str:
    return " ".join(text.replace("\t", " ").split())


def build_rows(source_rows: Iterable[dict[str, str]]) -> list[dict[str, str]]:
    """One output row per CUDA name, in name order."""
    rows = list(source_rows)
    family_of = dict(TABLE_FAMILY)
    priority = {table: i for i, (table, _) in enumerate(TABLE_FAMILY)}
    native: dict[str, str] = {}
    for row in rows:
        lib = SECOND_TARGET_TABLES.get(row["table"])
        if lib and row.get("target2"):
            added = row.get("target2_added", "")
            since = f" (ROCm {added})" if added else ""
            native.setdefault(row["cuda"], f"{lib}: {row['target2']}{since}")
    chosen: dict[str, tuple[int, dict[str, str]]] = {}
    for row in rows:
        table = row["table"]
        if table not in family_of:
            continue
        name = row["cuda"].strip()
        if not name:
            continue
        rank = priority[table]
        # Prefer the table that maps the name; among equals, the earlier table.
        key = (0 if row.get("target") else 1, rank)
        held = chosen.get(name)
        if held is None or key < (0 if held[1].get("target") else 1, held[0]):
            chosen[name] = (rank, row)
    out: list[dict[str, str]] = []
    for name in sorted(chosen):
        rank, row = chosen[name]
        notes: list[str] = []
        if row.get("target_experimental"):
            notes.append(f"experimental in ROCm {row['target_experimental']}")
        if row.get("target_changed"):
            notes.append(f"changed in ROCm {row['target_changed']}")
        hip = row.get("target", "").strip()
        if hip and not row.get("target_added") and TABLE_FAMILY[rank][1] == "cudnn":
            # HIPIFY's cuDNN targets are hipDNN names without a release version: no ROCm
            # release ships that API, so the name has no usable counterpart yet.
            notes.append(f"HIPIFY names hipDNN's {hip}, which no ROCm release ships")
            hip = ""
        if not hip and name in native:
            notes.append(native[name])
        out.append(
            {
                "cuda": name,
                "hip": hip,
                "family": TABLE_FAMILY[rank][1],
                "hip_added": row.get("target_added", "").strip(),
                "hip_deprecated": row.get("target_deprecated", "").strip(),
                "hip_removed": row.get("target_removed", "").strip(),
                "cuda_removed": row.get("cuda_removed", "").strip(),
                "note": _clean("; ".join(notes)),
            }
        )
    return out


def render(rows: list[dict[str, str]], date: str) -> str:
    lines = [
        "# CUDA -> HIP API map for gpuport's translator, generated by tools/build_api_map.py.",
        f"# source: {SOURCE_DESCRIPTION}",
        "# source commit: 014177bc",
        f"# generated: {date}",
        "# hip empty = HIPIFY lists no HIP counterpart; versions are ROCm/HIP releases.",
        "\t".join(COLUMNS),
    ]
    for row in rows:
        lines.append("\t".join(row[c] for c in COLUMNS))
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--date", default=datetime.date.today().isoformat())
    args = parser.parse_args(argv)
    if not args.source.is_file():
        print(f"error: no such file {args.source}", file=sys.stderr)
        return 2
    with args.source.open(encoding="utf-8", newline="") as handle:
        rows = build_rows(csv.DictReader(handle, delimiter="\t"))
    args.out.write_text(render(rows, args.date), encoding="utf-8")
    print(f"wrote {len(rows):,} names to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
