"""``gpuport bench``: workloads on the local device, a results store, and comparisons.

The store (:mod:`gpuport.bench.store`) and the comparison need no torch; the workloads import
PyTorch lazily (the optional extra ``gpuport[bench]``), so the core package stays torch-free.
"""
