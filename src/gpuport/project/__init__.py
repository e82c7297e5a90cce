"""The project model: what a project is before any rule runs (first-party names, components, tiers, ROCm path)."""

from gpuport.project.build import build_model

__all__ = ["build_model"]
