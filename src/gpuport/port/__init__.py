"""The ``port`` stage: translate CUDA sources to HIP and rewrite the files around them."""
