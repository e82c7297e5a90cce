"""Readers of the file formats gpuport scans, each keeping offsets so findings and edits land exactly."""
