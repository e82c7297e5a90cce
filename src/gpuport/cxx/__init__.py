"""C, C++ and CUDA source handling shared by ``scan`` and ``port``."""
