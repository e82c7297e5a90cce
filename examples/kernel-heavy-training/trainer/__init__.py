"""Training with the team's fused kernels."""
