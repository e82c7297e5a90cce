"""AMD GPU targets (gpu_arch.toml): gfx ids, the products that carry them, wavefront sizes."""

from __future__ import annotations

import datetime
import functools
from collections.abc import Mapping
from dataclasses import dataclass

from gpuport.kb.loader import keyed, load_toml


@dataclass(frozen=True, slots=True)
class GpuArch:
    """An AMD GPU target (``gfx`` id) with its products and wavefront size."""

    gfx: str
    family: str  # e.g. "CDNA3", "RDNA3"
    products: tuple[str, ...]
    wavefront: int  # the default wavefront size HIP compiles for (64 on GCN/CDNA, 32 on RDNA)
    notes: str
    sources: tuple[str, ...]
    checked: datetime.date
    wavefronts_supported: tuple[int, ...] = ()  # RDNA can also run wave64
    officially_supported: bool = False  # listed in AMD's ROCm on Linux support matrix
    support_note: str = ""  # which ROCm release the support statement refers to
    rocm_since: str = ""  # the first ROCm release that supports it, where a source names one
    hsa_override: str = ""  # the HSA_OVERRIDE_GFX_VERSION users set for it ("10.3.0"), if any


@functools.cache
def gpu_architectures() -> Mapping[str, GpuArch]:
    """Every AMD GPU target, keyed by gfx id."""
    data = load_toml("gpu_arch.toml")
    return keyed(
        data,
        "gpu",
        "gpu_arch.toml",
        "gfx",
        "duplicate gfx id",
        lambda entry, gfx: GpuArch(
            gfx=gfx,
            family=entry.text("family"),
            products=entry.texts("products", required=True),
            wavefront=entry.integer("wavefront"),
            notes=entry.text("notes", ""),
            sources=entry.sources(),
            checked=entry.date(),
            wavefronts_supported=entry.ints("wavefronts_supported"),
            officially_supported=entry.flag("officially_supported"),
            support_note=entry.text("support_note", ""),
            rocm_since=entry.text("rocm_since", ""),
            hsa_override=entry.text("hsa_override", ""),
        ),
    )


def find_gpu_arch(name: str) -> GpuArch | None:
    """The entry for a gfx id (``gfx942``, ``gfx942:sramecc+:xnack-``) or a product name."""
    wanted = name.strip().lower()
    table = gpu_architectures()
    gfx = wanted.split(":", 1)[0]
    if gfx in table:
        return table[gfx]
    for arch in table.values():
        if any(wanted == product.lower() for product in arch.products):
            return arch
    return None
