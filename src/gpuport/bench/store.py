"""The results store: every benchmark run, its machine and its results, in one SQLite file.

One store holds runs of every kind (``"micro"``: the workload suite; ``"serve"``: a served
model; ``"verify"``: a ``verify compare --store``), from this machine or imported from another (``bench export`` / ``bench import``), so a
CUDA box's and a ROCm box's numbers meet in one place. Python's :mod:`sqlite3` in WAL mode
(https://www.sqlite.org/wal.html) so a reader never blocks the writer; every result is committed
as it is added, so an interrupted run keeps what it measured and stays marked incomplete.

The schema is versioned: ``PRAGMA user_version`` counts the :data:`MIGRATIONS` applied and
``PRAGMA application_id`` marks the file as gpuport's, so a foreign database or one written by a
newer gpuport is refused with a sentence instead of being changed. Values are JSON text; nothing
is pickled, and an imported document is validated field by field as untrusted input.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import re
import secrets
import sqlite3
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpuport.machine import MachineDescription

# "GPUB" as a big-endian 32-bit integer: marks a results store (https://www.sqlite.org/pragma.html#pragma_application_id).
APPLICATION_ID = 0x47505542
# The export document's format name and version; a newer version is refused on import.
EXPORT_FORMAT = "gpuport-bench-run"
EXPORT_VERSION = 1
KINDS = ("micro", "serve", "verify")
STATUSES = ("ok", "skipped", "failed")

# Each entry upgrades the schema by one version; user_version = how many have been applied.
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        label TEXT,
        started TEXT NOT NULL,
        finished TEXT,
        complete INTEGER NOT NULL DEFAULT 0,
        machine TEXT NOT NULL,
        settings TEXT NOT NULL,
        imported INTEGER NOT NULL DEFAULT 0
    );
    CREATE TABLE results (
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        workload TEXT NOT NULL,
        name TEXT NOT NULL,
        params TEXT NOT NULL,
        metrics TEXT NOT NULL,
        status TEXT NOT NULL,
        note TEXT NOT NULL,
        PRIMARY KEY (run_id, seq)
    );
    CREATE INDEX runs_started ON runs(started);
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)

_RUN_ID = re.compile(r"[0-9a-f]{12}")
_MAX_TEXT = 4096


class StoreError(Exception):
    """The store cannot do what was asked; the message is one sentence for the user."""


@dataclass(frozen=True, slots=True)
class ResultRecord:
    """One measured (or skipped, or failed) result of a run."""

    workload: str
    name: str
    params: Mapping[str, object] = field(default_factory=dict)
    metrics: Mapping[str, float | None] = field(default_factory=dict)
    status: str = "ok"
    note: str = ""

    def to_dict(self) -> dict[str, object]:
        return {
            "workload": self.workload,
            "name": self.name,
            "params": dict(self.params),
            "metrics": dict(self.metrics),
            "status": self.status,
            "note": self.note,
        }

    @classmethod
    def from_dict(cls, data: object, where: str = "the result") -> ResultRecord:
        """Validate one result (from the suite, another helper or an imported file)."""
        if not isinstance(data, Mapping):
            raise StoreError(f"{where} is not an object")
        workload = _text(data.get("workload"), f"{where}'s workload")
        name = _text(data.get("name"), f"{where}'s name")
        params = data.get("params", {})
        if not isinstance(params, Mapping):
            raise StoreError(f"{where}'s params is not an object")
        clean_params: dict[str, object] = {}
        for key, value in params.items():
            if not isinstance(key, str):
                raise StoreError(f"{where} has a param name that is not text")
            if value is not None and not isinstance(value, str | int | float | bool):
                raise StoreError(f"{where}'s param {key!r} is not text, a number or a flag")
            if isinstance(value, float) and not math.isfinite(value):
                raise StoreError(f"{where}'s param {key!r} is not a finite number")
            clean_params[key] = value
        metrics = data.get("metrics", {})
        if not isinstance(metrics, Mapping):
            raise StoreError(f"{where}'s metrics is not an object")
        clean_metrics: dict[str, float | None] = {}
        for key, value in metrics.items():
            if not isinstance(key, str):
                raise StoreError(f"{where} has a metric name that is not text")
            if value is None:
                clean_metrics[key] = None
            elif isinstance(value, int | float) and not isinstance(value, bool):
                if not math.isfinite(value):
                    raise StoreError(f"{where}'s metric {key!r} is not a finite number")
                clean_metrics[key] = float(value)
            else:
                raise StoreError(f"{where}'s metric {key!r} is not a number")
        status = data.get("status", "ok")
        if status not in STATUSES:
            raise StoreError(f"{where}'s status {status!r} is not one of {', '.join(STATUSES)}")
        note = data.get("note", "")
        if not isinstance(note, str):
            raise StoreError(f"{where}'s note is not text")
        return cls(workload, name, clean_params, clean_metrics, str(status), note[:_MAX_TEXT])


@dataclass(frozen=True, slots=True)
class RunSummary:
    """A run as ``bench list`` shows it."""

    id: str
    kind: str
    label: str | None
    started: str  # ISO 8601, UTC
    finished: str | None
    complete: bool
    imported: bool
    device_name: str
    accelerator: str
    hostname: str
    results: int


@dataclass(frozen=True, slots=True)
class StoredRun:
    """A whole run: its summary, the machine it ran on, its settings and results."""

    summary: RunSummary
    machine: MachineDescription
    settings: Mapping[str, object]
    results: tuple[ResultRecord, ...]

    @property
    def id(self) -> str:
        return self.summary.id


def default_path() -> Path:
    """``$XDG_DATA_HOME/gpuport/results.sqlite``, else ``~/.local/share/gpuport/results.sqlite``
    (https://specifications.freedesktop.org/basedir-spec/latest/)."""
    base = os.environ.get("XDG_DATA_HOME", "")
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".local" / "share"
    return root / "gpuport" / "results.sqlite"


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat()


def _text(value: object, what: str, *, optional: bool = False) -> str:
    if value is None and optional:
        return ""
    if not isinstance(value, str) or not value:
        raise StoreError(f"{what} is missing or not text")
    return value[:_MAX_TEXT]


def _json(value: object) -> str:
    return json.dumps(value, sort_keys=True, allow_nan=False)


class ResultsStore:
    """One open results database. Use :meth:`open`; close it (or use ``with``) when done."""

    def __init__(self, connection: sqlite3.Connection, path: Path) -> None:
        self._db = connection
        self.path = path

    # -- opening -------------------------------------------------------------------------------

    @classmethod
    def open(cls, path: Path | None = None) -> ResultsStore:
        """Open (creating it and its folder if needed) the store at ``path`` or the default one.

        Raises :class:`StoreError` for a file that is not a SQLite database, a database that is
        not a gpuport results store, or one written by a newer gpuport.
        """
        path = default_path() if path is None else path
        try:
            st = path.lstat()
        except FileNotFoundError:
            st = None
        except OSError as exc:
            raise StoreError(f"{path}: cannot read the results store ({exc.strerror})") from None
        if st is not None and stat.S_ISLNK(st.st_mode):
            raise StoreError(f"{path}: is a symbolic link; gpuport does not write through links")
        if st is not None and not stat.S_ISREG(st.st_mode):
            raise StoreError(f"{path}: is not a regular file, so not a results store")
        if st is None:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"{path.parent}: cannot create it ({exc.strerror})") from None
        try:
            db = sqlite3.connect(path, timeout=10.0, isolation_level=None)
        except sqlite3.Error as exc:
            raise StoreError(f"{path}: cannot open the results store ({exc})") from None
        try:
            cls._prepare(db, path)
        except BaseException:
            db.close()
            raise
        return cls(db, path)

    @staticmethod
    def _prepare(db: sqlite3.Connection, path: Path) -> None:
        try:
            app = db.execute("PRAGMA application_id").fetchone()[0]
            version = db.execute("PRAGMA user_version").fetchone()[0]
            tables = db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{path}: not a gpuport results store ({exc})") from None
        if app != APPLICATION_ID and (tables or app):
            raise StoreError(
                f"{path}: is a SQLite database but not a gpuport results store; "
                "give another file with --db"
            )
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{path}: the results store has schema version {version}, newer than this "
                f"gpuport reads ({SCHEMA_VERSION}); upgrade gpuport or use another --db"
            )
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA foreign_keys=ON")
            if version < SCHEMA_VERSION:
                db.execute("BEGIN IMMEDIATE")
                try:
                    for script in MIGRATIONS[version:]:
                        for statement in script.split(";"):
                            if statement.strip():
                                db.execute(statement)
                    db.execute(f"PRAGMA application_id={APPLICATION_ID}")
                    db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
                    db.execute("COMMIT")
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{path}: cannot prepare the results store ({exc})") from None

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> ResultsStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing -------------------------------------------------------------------------------

    def begin(
        self,
        kind: str,
        machine: MachineDescription,
        *,
        label: str | None = None,
        settings: Mapping[str, object] | None = None,
    ) -> str:
        """Start a run (marked incomplete until :meth:`finish`); returns its id."""
        if kind not in KINDS:
            raise StoreError(f"unknown run kind {kind!r}; one of {', '.join(KINDS)}")
        run_id = secrets.token_hex(6)
        try:
            settings_json = _json(dict(settings or {}))
        except (TypeError, ValueError) as exc:
            raise StoreError(f"the run's settings are not plain JSON ({exc})") from None
        self._execute(
            "INSERT INTO runs (id, kind, label, started, complete, machine, settings)"
            " VALUES (?, ?, ?, ?, 0, ?, ?)",
            (run_id, kind, label, _now(), _json(machine.to_dict()), settings_json),
        )
        return run_id

    def add(self, run_id: str, record: Mapping[str, object] | ResultRecord) -> None:
        """Add one result to a run; committed at once, so Ctrl-C later loses nothing."""
        result = (
            record
            if isinstance(record, ResultRecord)
            else ResultRecord.from_dict(record, "the result")
        )
        self._require(run_id)
        try:
            with self._db:
                self._db.execute("BEGIN IMMEDIATE")
                self._insert_result(run_id, result)
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: cannot store the result ({exc})") from None

    def _insert_result(self, run_id: str, result: ResultRecord) -> None:
        seq = self._db.execute(
            "SELECT coalesce(max(seq), -1) + 1 FROM results WHERE run_id = ?", (run_id,)
        ).fetchone()[0]
        self._db.execute(
            "INSERT INTO results (run_id, seq, workload, name, params, metrics, status, note)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run_id,
                seq,
                result.workload,
                result.name,
                _json(dict(result.params)),
                _json(dict(result.metrics)),
                result.status,
                result.note,
            ),
        )

    def finish(self, run_id: str, *, complete: bool = True) -> None:
        """Close a run; ``complete=False`` keeps it marked incomplete (Ctrl-C, a crash)."""
        self._require(run_id)
        self._execute(
            "UPDATE runs SET finished = ?, complete = ? WHERE id = ?",
            (_now(), int(complete), run_id),
        )

    def _execute(self, sql: str, args: tuple[object, ...]) -> None:
        try:
            self._db.execute(sql, args)
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: cannot write the results store ({exc})") from None

    def _require(self, run_id: str) -> None:
        row = self._db.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise StoreError(f"no run {run_id!r} in {self.path}")

    # -- reading -------------------------------------------------------------------------------

    _SUMMARY = (
        "SELECT r.id, r.kind, r.label, r.started, r.finished, r.complete, r.imported, r.machine,"
        " (SELECT count(*) FROM results s WHERE s.run_id = r.id) FROM runs r"
    )

    def _summary(self, row: tuple[Any, ...]) -> RunSummary:
        machine = self._machine(row[7], row[0])
        return RunSummary(
            id=row[0],
            kind=row[1],
            label=row[2],
            started=row[3],
            finished=row[4],
            complete=bool(row[5]),
            imported=bool(row[6]),
            device_name=machine.device_name,
            accelerator=machine.accelerator,
            hostname=machine.hostname,
            results=int(row[8]),
        )

    def _machine(self, text: str, run_id: str) -> MachineDescription:
        try:
            return MachineDescription.from_dict(json.loads(text))
        except (ValueError, TypeError) as exc:
            raise StoreError(
                f"{self.path}: run {run_id}'s machine description is damaged ({exc})"
            ) from None

    def runs(self, kind: str | None = None) -> list[RunSummary]:
        """Every run (of ``kind``), oldest first."""
        try:
            if kind is None:
                rows = self._db.execute(self._SUMMARY + " ORDER BY r.started, r.rowid").fetchall()
            else:
                rows = self._db.execute(
                    self._SUMMARY + " WHERE r.kind = ? ORDER BY r.started, r.rowid", (kind,)
                ).fetchall()
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: cannot read the results store ({exc})") from None
        return [self._summary(row) for row in rows]

    def resolve(self, run_id_or_prefix: str) -> str:
        """The full id of the run named by an id, a unique prefix of one, or ``latest``."""
        wanted = run_id_or_prefix.strip().lower()
        if wanted == "latest":
            row = self._db.execute(
                "SELECT id FROM runs ORDER BY started DESC, rowid DESC LIMIT 1"
            ).fetchone()
            if row is None:
                raise StoreError(f"no runs in {self.path} yet; run `gpuport bench` first")
            return str(row[0])
        if not wanted or not re.fullmatch(r"[0-9a-f]{1,12}", wanted):
            raise StoreError(
                f"{run_id_or_prefix!r} is not a run id (12 hex digits, a prefix, or 'latest')"
            )
        rows = self._db.execute(
            "SELECT id FROM runs WHERE substr(id, 1, ?) = ? ORDER BY id", (len(wanted), wanted)
        ).fetchall()
        if not rows:
            raise StoreError(
                f"no run {run_id_or_prefix!r} in {self.path} (see `gpuport bench list`)"
            )
        if len(rows) > 1:
            shown = ", ".join(str(r[0]) for r in rows[:5])
            raise StoreError(f"{run_id_or_prefix!r} names several runs ({shown}); give more digits")
        return str(rows[0][0])

    def load(self, run_id_or_prefix: str) -> StoredRun:
        """One whole run, by id, unique prefix or ``latest``."""
        run_id = self.resolve(run_id_or_prefix)
        row = self._db.execute(self._SUMMARY + " WHERE r.id = ?", (run_id,)).fetchone()
        settings_text = self._db.execute(
            "SELECT settings FROM runs WHERE id = ?", (run_id,)
        ).fetchone()[0]
        summary = self._summary(row)
        results = []
        for workload, name, params, metrics, status, note in self._db.execute(
            "SELECT workload, name, params, metrics, status, note FROM results"
            " WHERE run_id = ? ORDER BY seq",
            (run_id,),
        ):
            try:
                document = {
                    "workload": workload,
                    "name": name,
                    "params": json.loads(params),
                    "metrics": json.loads(metrics),
                    "status": status,
                    "note": note,
                }
            except ValueError:
                raise StoreError(f"{self.path}: a result of run {run_id} is damaged") from None
            results.append(ResultRecord.from_dict(document, f"a result of run {run_id}"))
        try:
            settings = json.loads(settings_text)
        except ValueError:
            settings = {}
        return StoredRun(
            summary=summary,
            machine=self._machine(row[7], run_id),
            settings=settings if isinstance(settings, dict) else {},
            results=tuple(results),
        )

    # -- moving runs between machines ------------------------------------------------------------

    def export(self, run_id: str) -> dict[str, object]:
        """The run as one JSON document (``bench export``), read back by :meth:`import_run`."""
        run = self.load(run_id)
        return {
            "format": EXPORT_FORMAT,
            "version": EXPORT_VERSION,
            "run": {
                "id": run.summary.id,
                "kind": run.summary.kind,
                "label": run.summary.label,
                "started": run.summary.started,
                "finished": run.summary.finished,
                "complete": run.summary.complete,
                "settings": dict(run.settings),
            },
            "machine": run.machine.to_dict(),
            "results": [r.to_dict() for r in run.results],
        }

    def import_run(self, document: object) -> str:
        """Store a run exported on another machine; returns its id (kept from the export).

        The document is untrusted: every field is checked and a bad one raises
        :class:`StoreError` naming it; a run already in the store is not stored twice.
        """
        if not isinstance(document, Mapping):
            raise StoreError("the export is not a JSON object")
        if document.get("format") != EXPORT_FORMAT:
            raise StoreError(f"not a gpuport bench export (its format is not {EXPORT_FORMAT!r})")
        version = document.get("version")
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise StoreError("the export has no valid version")
        if version > EXPORT_VERSION:
            raise StoreError(
                f"the export is version {version}, newer than this gpuport reads "
                f"({EXPORT_VERSION}); upgrade gpuport"
            )
        run = document.get("run")
        if not isinstance(run, Mapping):
            raise StoreError("the export has no run object")
        run_id = run.get("id")
        if not isinstance(run_id, str) or not _RUN_ID.fullmatch(run_id):
            raise StoreError("the export's run id is not 12 hex digits")
        kind = run.get("kind")
        if kind not in KINDS:
            raise StoreError(f"the export's run kind {kind!r} is not one of {', '.join(KINDS)}")
        label = run.get("label")
        if label is not None and not isinstance(label, str):
            raise StoreError("the export's run label is not text")
        started = _timestamp(run.get("started"), "started")
        finished = run.get("finished")
        if finished is not None:
            finished = _timestamp(finished, "finished")
        complete = run.get("complete")
        if not isinstance(complete, bool):
            raise StoreError("the export's run 'complete' is not true or false")
        settings = run.get("settings", {})
        if not isinstance(settings, Mapping):
            raise StoreError("the export's run settings is not an object")
        try:
            machine = MachineDescription.from_dict(document.get("machine"))
        except ValueError as exc:
            raise StoreError(f"the export's machine: {exc}") from None
        results = document.get("results")
        if not isinstance(results, list):
            raise StoreError("the export has no results list")
        records = [
            ResultRecord.from_dict(item, f"the export's result {i + 1}")
            for i, item in enumerate(results)
        ]
        if self._db.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone():
            raise StoreError(f"run {run_id} is already in {self.path}")
        try:
            with self._db:
                self._db.execute("BEGIN IMMEDIATE")
                self._db.execute(
                    "INSERT INTO runs (id, kind, label, started, finished, complete, machine,"
                    " settings, imported) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1)",
                    (
                        run_id,
                        kind,
                        label[:_MAX_TEXT] if label else None,
                        started,
                        finished,
                        int(complete),
                        _json(machine.to_dict()),
                        _json(dict(settings)),
                    ),
                )
                for record in records:
                    self._insert_result(run_id, record)
        except (sqlite3.Error, TypeError, ValueError) as exc:
            raise StoreError(f"{self.path}: cannot store the imported run ({exc})") from None
        return run_id


def _timestamp(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise StoreError(f"the export's run {what!r} is not a timestamp")
    try:
        _dt.datetime.fromisoformat(value)
    except ValueError:
        raise StoreError(f"the export's run {what!r} is not an ISO 8601 timestamp") from None
    return value
