"""Helpers of the verify tests: the CLI run in-process, a reference file's metadata rewritten."""

from __future__ import annotations

import json
import struct
from collections.abc import Callable
from typing import Any

from click.testing import CliRunner

from gpuport.cli import main


def run_cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def rewrite_metadata(data: bytes, change: Callable[[dict[str, Any]], None]) -> bytes:
    """The file with its gpuport metadata changed (tensors and digest untouched)."""
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + length])
    document = json.loads(header["__metadata__"]["gpuport_verify"])
    change(document)
    header["__metadata__"]["gpuport_verify"] = json.dumps(document)
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    return struct.pack("<Q", len(raw)) + raw + data[8 + length :]
