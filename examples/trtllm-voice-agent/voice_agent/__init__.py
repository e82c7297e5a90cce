"""The voice agent's language model client and engine build."""
