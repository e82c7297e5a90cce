"""The chat gateway in front of the vLLM server."""
