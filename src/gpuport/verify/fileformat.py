"""The reference file (``.gpv``): one safetensors file, tensors plus JSON metadata, never pickle.

Layout (https://github.com/huggingface/safetensors#format, read 2026-11-25): 8 bytes of header
length, a JSON header naming each tensor's dtype, shape and byte range, then the bytes. The
header's ``__metadata__`` (string to string) holds one key, ``gpuport_verify``, whose value is
this module's JSON: schema version, the recording machine, the size and seed, the tolerances
it used and one entry per case (its inputs', outputs' and references' names, dtypes, shapes).
Tensor names are ``CASE/in/NAME``, ``CASE/out/NAME``, ``CASE/ref/NAME`` (the fp64 CPU
reference) and, for a user model, ``CASE/param/NAME`` (its weights).

A file from another machine is untrusted: safetensors checks the header and every byte range,
and the metadata carries a SHA-256 digest of every tensor (name, dtype, shape and bytes) so a
flipped byte in the data is caught. The digest catches damage and careless edits, not a forger
who recomputes it: it is not a signature.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuport.io import write_atomic
from gpuport.machine import MachineDescription

if TYPE_CHECKING:
    from torch import Tensor

SCHEMA_VERSION = 1
METADATA_KEY = "gpuport_verify"
# safetensors refuses headers over 100 MB; a reference file's header is far smaller.
MAX_HEADER_BYTES = 100_000_000


class ReferenceFileError(ValueError):
    """The reference file cannot be used; the message names the file and says why."""


@dataclass(frozen=True, slots=True)
class TensorSpec:
    name: str
    dtype: str  # torch dtype name without "torch."
    shape: tuple[int, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "dtype": self.dtype, "shape": list(self.shape)}


@dataclass(frozen=True, slots=True)
class RecordedCase:
    """One case as the file describes it."""

    name: str
    dtype: str
    status: str  # "recorded" or "skipped"
    note: str
    nondeterministic: bool
    inputs: tuple[TensorSpec, ...]
    outputs: tuple[TensorSpec, ...]
    params: tuple[TensorSpec, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "dtype": self.dtype,
            "status": self.status,
            "note": self.note,
            "nondeterministic": self.nondeterministic,
            "inputs": [spec.to_dict() for spec in self.inputs],
            "outputs": [spec.to_dict() for spec in self.outputs],
            "params": [spec.to_dict() for spec in self.params],
        }


@dataclass(frozen=True, slots=True)
class Recording:
    """Everything a reference file holds."""

    kind: str  # "suite" or "model"
    model: str | None  # package.module:factory of a model recording
    size: str
    seed: int
    device: str
    machine: MachineDescription
    tolerances: Mapping[str, tuple[float, float]]
    cases: tuple[RecordedCase, ...]
    tensors: Mapping[str, Tensor]
    settings: Mapping[str, Any]


def dtype_name(tensor: Tensor) -> str:
    return str(tensor.dtype).removeprefix("torch.")


def tensor_digest(tensors: Mapping[str, Tensor]) -> str:
    """SHA-256 over every tensor's name, dtype, shape and bytes, in name order."""
    import torch

    digest = hashlib.sha256()
    for name in sorted(tensors):
        tensor = tensors[name].detach().to("cpu").contiguous()
        header = json.dumps([name, dtype_name(tensor), list(tensor.shape)]).encode()
        digest.update(struct.pack("<Q", len(header)) + header)
        raw = tensor.reshape(-1).view(torch.uint8) if tensor.numel() else tensor.new_empty(0)
        data = raw.numpy().tobytes()
        digest.update(struct.pack("<Q", len(data)) + data)
    return "sha256:" + digest.hexdigest()


def encode(recording: Recording) -> bytes:
    """The bytes of the reference file of ``recording``."""
    from safetensors.torch import save

    tensors = {name: t.detach().to("cpu").contiguous() for name, t in recording.tensors.items()}
    document = {
        "schema": SCHEMA_VERSION,
        "kind": recording.kind,
        "model": recording.model,
        "size": recording.size,
        "seed": recording.seed,
        "device": recording.device,
        "machine": recording.machine.to_dict(),
        "settings": dict(recording.settings),
        "tolerances": {k: list(v) for k, v in sorted(recording.tolerances.items())},
        "cases": [case.to_dict() for case in recording.cases],
        "digest": tensor_digest(tensors),
    }
    return save(tensors, metadata={METADATA_KEY: json.dumps(document, sort_keys=True)})


def write_reference(path: Path, recording: Recording) -> None:
    """Write the reference file atomically (never through a symbolic link)."""
    write_atomic(path, encode(recording))


# --- reading ---------------------------------------------------------------------------------


def _header(data: bytes, shown: str) -> dict[str, Any]:
    if len(data) < 8:
        raise ReferenceFileError(f"{shown}: truncated: too short to be a reference file")
    (length,) = struct.unpack("<Q", data[:8])
    if length > MAX_HEADER_BYTES:
        raise ReferenceFileError(f"{shown}: not a reference file (its header size is absurd)")
    if 8 + length > len(data):
        raise ReferenceFileError(
            f"{shown}: truncated: the header says {length:,} bytes but the file ends first"
        )
    try:
        header = json.loads(data[8 : 8 + length].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ReferenceFileError(
            f"{shown}: damaged or not a reference file: its header is not valid JSON"
        ) from None
    if not isinstance(header, dict):
        raise ReferenceFileError(f"{shown}: damaged: its header is not a JSON object")
    return header


def _metadata(header: Mapping[str, Any], shown: str) -> dict[str, Any]:
    meta = header.get("__metadata__")
    if not isinstance(meta, dict) or not isinstance(meta.get(METADATA_KEY), str):
        raise ReferenceFileError(
            f"{shown}: a safetensors file but not a gpuport verify reference "
            "(no gpuport_verify metadata)"
        )
    try:
        document = json.loads(meta[METADATA_KEY])
    except json.JSONDecodeError:
        raise ReferenceFileError(f"{shown}: damaged: its metadata is not valid JSON") from None
    if not isinstance(document, dict):
        raise ReferenceFileError(f"{shown}: damaged: its metadata is not a JSON object")
    schema = document.get("schema")
    if not isinstance(schema, int) or isinstance(schema, bool) or schema < 1:
        raise ReferenceFileError(f"{shown}: damaged: its schema version is missing or invalid")
    if schema > SCHEMA_VERSION:
        raise ReferenceFileError(
            f"{shown}: written by a newer gpuport (schema {schema}; this one reads up to "
            f"{SCHEMA_VERSION}): upgrade gpuport on this machine"
        )
    return document


def _want(document: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    value = document.get(key)
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise ReferenceFileError(f"{where}: {key!r} is missing or of the wrong type")
    return value


def _specs(entry: Mapping[str, Any], key: str, where: str) -> tuple[TensorSpec, ...]:
    items = entry.get(key, [])
    if not isinstance(items, list):
        raise ReferenceFileError(f"{where}: {key!r} is not a list")
    specs = []
    for item in items:
        if not isinstance(item, dict):
            raise ReferenceFileError(f"{where}: an entry of {key!r} is not an object")
        name = _want(item, "name", str, where)
        dtype = _want(item, "dtype", str, where)
        shape = _want(item, "shape", list, where)
        if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape):
            raise ReferenceFileError(f"{where}: the shape of {name!r} is not a list of sizes")
        specs.append(TensorSpec(name, dtype, tuple(shape)))
    return tuple(specs)


def _case(entry: object, shown: str) -> RecordedCase:
    if not isinstance(entry, dict):
        raise ReferenceFileError(f"{shown}: damaged: a case entry is not an object")
    name = _want(entry, "name", str, f"{shown}: a case")
    where = f"{shown}: case {name}"
    status = _want(entry, "status", str, where)
    if status not in ("recorded", "skipped"):
        raise ReferenceFileError(f"{where}: unknown status {status!r}")
    return RecordedCase(
        name=name,
        dtype=_want(entry, "dtype", str, where),
        status=status,
        note=_want(entry, "note", str, where),
        nondeterministic=_want(entry, "nondeterministic", bool, where),
        inputs=_specs(entry, "inputs", where),
        outputs=_specs(entry, "outputs", where),
        params=_specs(entry, "params", where),
    )


def _check_length(header: Mapping[str, Any], data: bytes, shown: str) -> None:
    """A file cut short says so (safetensors would call it "not fully covered")."""
    (length,) = struct.unpack("<Q", data[:8])
    ends = [
        entry["data_offsets"][1]
        for name, entry in header.items()
        if name != "__metadata__"
        and isinstance(entry, dict)
        and isinstance(entry.get("data_offsets"), list)
        and len(entry["data_offsets"]) == 2
        and isinstance(entry["data_offsets"][1], int)
    ]
    missing = 8 + length + max(ends, default=0) - len(data)
    if missing > 0:
        raise ReferenceFileError(f"{shown}: truncated: {missing:,} bytes of tensors are missing")


def decode(data: bytes, shown: str) -> Recording:
    """Read a reference file's bytes; :class:`ReferenceFileError` for anything amiss."""
    from safetensors import SafetensorError
    from safetensors.torch import load

    header = _header(data, shown)
    document = _metadata(header, shown)
    _check_length(header, data, shown)
    try:
        tensors = load(data)
    except (SafetensorError, ValueError, RuntimeError, OverflowError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ReferenceFileError(f"{shown}: damaged: {reason}") from None
    digest = document.get("digest")
    if not isinstance(digest, str) or tensor_digest(tensors) != digest:
        raise ReferenceFileError(
            f"{shown}: the tensors do not match the digest in its metadata: the file was "
            "changed or damaged after it was recorded"
        )
    try:
        machine = MachineDescription.from_dict(document.get("machine"))
    except ValueError as exc:
        raise ReferenceFileError(f"{shown}: {exc}") from None
    kind = _want(document, "kind", str, shown)
    if kind not in ("suite", "model"):
        raise ReferenceFileError(f"{shown}: unknown kind {kind!r}")
    model = document.get("model")
    if model is not None and not isinstance(model, str):
        raise ReferenceFileError(f"{shown}: 'model' is not a string")
    tolerances: dict[str, tuple[float, float]] = {}
    for dtype, pair in _want(document, "tolerances", dict, shown).items():
        if (
            not isinstance(pair, list)
            or len(pair) != 2
            or not all(isinstance(x, int | float) and not isinstance(x, bool) for x in pair)
        ):
            raise ReferenceFileError(f"{shown}: the tolerance of {dtype} is not [rtol, atol]")
        tolerances[dtype] = (float(pair[0]), float(pair[1]))
    settings = document.get("settings", {})
    cases = tuple(_case(entry, shown) for entry in _want(document, "cases", list, shown))
    names = [case.name for case in cases]
    if len(set(names)) != len(names):
        raise ReferenceFileError(f"{shown}: damaged: a case is listed twice")
    return Recording(
        kind=kind,
        model=model,
        size=_want(document, "size", str, shown),
        seed=_want(document, "seed", int, shown),
        device=_want(document, "device", str, shown),
        machine=machine,
        tolerances=tolerances,
        cases=cases,
        tensors=tensors,
        settings=settings if isinstance(settings, dict) else {},
    )


def _open_nonblocking(path: str, flags: int) -> int:
    # A FIFO given as the reference must not block the open; it is then refused as not regular.
    return os.open(path, flags | getattr(os, "O_NONBLOCK", 0))


def read_reference(path: Path) -> Recording:
    """Read and check a reference file (never unpickles anything)."""
    with open(path, "rb", opener=_open_nonblocking) as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise ReferenceFileError(f"{path}: not a regular file")
        data = handle.read()
    return decode(data, str(path))
