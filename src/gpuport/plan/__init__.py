"""The ``plan`` stage: will a model fit on which GPUs, how fast, and at what cost per token."""
