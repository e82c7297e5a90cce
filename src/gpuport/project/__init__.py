"""The project model: what a project is before any rule runs (first-party names, components, tiers, ROCm path)."""
